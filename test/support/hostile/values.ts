import fc from 'fast-check'
import { Bytes, Obj, Raw, composed, longString, nested, rawNumber, type J } from './json.js'

/**
 * The values hostile requests are made of: plain words and hostile text (40,000-character words,
 * combining marks, lone surrogates), numbers past every boundary, prototype keys, values of the
 * wrong type, AIP-160 filters (valid, malformed, nested past the cap, long), resource names with
 * traversal, bodies that are not JSON, and file contents for uploads.
 */

const WORDS = ['desert', 'wind', 'copper', 'river', 'glacier', 'forest', 'the', 'a', 'and', 'running', 'café', 'naïve', 'Ωmega', '東京', '😀', 'x-y', "o'neil", 'co-op', 'e=mc2', '3.14', '__proto__', 'constructor', 'toString', 'sand', 'tracks']
export const sentence = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }).map((w) => w.join(' '))

/** Text a field should never choke on: long single words (40,000 characters and just under the caps), combining marks, lone surrogates... */
export const hostileText = fc.constantFrom<J>(
  longString('q', 40_000),
  longString('ab', 20_000),
  longString('q', 9_999),
  longString('ing', 3_333),
  longString('a\u0301', 4_000),
  longString('😀', 4_000),
  longString('x ', 4_999),
  longString('-', 9_000),
  longString('9', 9_000),
  longString('Supercalifragilistic', 450),
  longString('\u0000', 500),
  longString('%2e%2e/', 1_000),
  '\ud800',
  '\udfff\ud800x',
  '',
  '   ',
  '\n\t\r',
  '${jndi:ldap://x}',
  '<script>alert(1)</script>',
  "'; DROP TABLE x; --",
  '%s%n%x',
  '../../../../etc/passwd',
  '\u202e\u0000\uffff',
)
export const textValue: fc.Arbitrary<J> = fc.oneof(
  { weight: 8, arbitrary: sentence },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 3, arbitrary: hostileText },
)

/** Numbers at and past every boundary, and literals JSON.stringify cannot write. */
export const hostileNumber = fc.constantFrom<J>(
  0,
  -1,
  2147483647,
  2147483648,
  -2147483649,
  4294967296,
  Number.MAX_SAFE_INTEGER,
  1e15,
  1.5,
  -0.5,
  1e308,
  -1e308,
  5e-324,
  rawNumber('1e999'),
  rawNumber('-1e999'),
  rawNumber('-0'),
  rawNumber('9007199254740993'),
  rawNumber('123456789012345678901234567890'),
  rawNumber('0.1e-400'),
  '12',
  ' 7 ',
  '0x10',
  'NaN',
  'Infinity',
  '-Infinity',
  '',
  '1e3',
  longString('9', 400),
)
export const intValue: fc.Arbitrary<J> = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: -2, max: 60 }) }, { weight: 2, arbitrary: hostileNumber })
export const floatValue: fc.Arbitrary<J> = fc.oneof({ weight: 6, arbitrary: fc.double({ min: -2, max: 2, noNaN: true }) }, { weight: 2, arbitrary: hostileNumber })

export const polluted = new Obj([['polluted', 'yes']])
/** Keys that reach a prototype when copied carelessly. */
export const PROTO_ENTRIES: ReadonlyArray<readonly [string, J]> = [
  ['__proto__', polluted],
  ['constructor', new Obj([['prototype', polluted]])],
  ['prototype', polluted],
  ['__proto__', null],
  ['__proto__', 'x'],
  ['hasOwnProperty', 'x'],
  ['toString', 1],
  ['valueOf', new Obj([])],
  ['__defineGetter__', 'x'],
]
export const protoEntry = fc.constantFrom(...PROTO_ENTRIES)

export const mapKey = fc.constantFrom('year', 'tag', 'score', 'flag', 'when', 'tags', 'user_id', 'agent', 'session', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', ' ', 'a.b', 'a/b', '..', 'é', '😀', 'x'.repeat(300))

/** A value of any wrong type for a field. */
export const wrongValue: fc.Arbitrary<J> = fc.oneof(
  fc.constantFrom<J>(null, true, false, 0, -1, 'x', '', [], new Obj([]), [1, 'a', null], [[[]]], new Obj([['a', new Obj([['b', 1]])]])),
  hostileNumber,
  hostileText,
  protoEntry.map(([k, v]) => new Obj([[k, v]])),
  fc.constantFrom<J>(nested('list', 50), nested('object', 98), nested('list', 99), nested('list', 101), nested('object', 5_000), new Raw('list(20000 × "x")', () => `[${Array.from({ length: 20_000 }, () => '"x"').join(',')}]`)),
)

/** AIP-160 filters: valid, malformed, nested past the cap, long. Keys include the corpora's declared schema keys. */
export function filterArb(): fc.Arbitrary<J> {
  const key = fc.constantFrom('year', 'tag', 'score', 'flag', 'when', 'tags', 'fact', 'scope.user_id', 'metadata.year', 'topics', 'create_time', '__proto__', 'constructor', 'unknown', '`weird key`', 'a.b.c', 'AND', 'NOT')
  const value = fc.constantFrom('1', '-3', '2.5', '1e999', '9'.repeat(400), '"x"', '"a\\"b"', '"\\u12"', 'true', 'false', 'word', '"2025-01-01T00:00:00Z"', '*', '"é😀"', '""')
  const op = fc.constantFrom('=', '!=', '<', '<=', '>', '>=', ':')
  const leaf = fc.tuple(key, op, value).map(([k, o, v]) => `${k} ${o} ${v}`)
  const { expr } = fc.letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      tie('expr').map((e) => `NOT ${e}`),
      tie('expr').map((e) => `-${e}`),
      tie('expr').map((e) => `(${e})`),
      fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `${a} AND ${b}`),
      fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `${a} OR ${b}`),
      fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `${a} ${b}`),
    ),
  }))
  const pathological = fc.constantFrom<J>(
    composed([['(', 32], 'year = 1', [')', 32]]),
    composed([['(', 33], 'year = 1', [')', 33]]),
    composed([['(', 5_000], 'year = 1', [')', 5_000]]),
    composed([['NOT ', 31], 'year = 1']),
    composed([['NOT ', 4_000], 'year = 1']),
    composed([['-', 19_000], 'year = 1']),
    composed([['year = 1 OR ', 1_500], 'year = 2']),
    composed([['year = 1 AND ', 1_500], 'year = 2']),
    composed([['tag = "a" ', 1_900]]),
    composed([['(year = 1 AND ', 30], 'tag = "x"', [')', 30]]),
    composed(['tag = "', ['x', 19_000], '"']),
    composed(['"', ['x', 19_000]]),
    composed(['tag = ', ['w', 19_000]]),
    composed(['`', ['k', 5_000], '` = 1']),
    composed(['year = ', ['9', 5_000]]),
    composed([['(', 40_000]]),
    'year = 1 AND',
    ')',
    '((',
    'AND',
    'OR OR',
    '-',
    ':*',
    'a:*',
    'year = "\\',
    '\u0000',
    '',
  )
  return fc.oneof({ weight: 5, arbitrary: expr }, { weight: 3, arbitrary: pathological }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }) })
}

export const hostileName = fc.constantFrom<J>(
  '..',
  '../../../etc/passwd',
  'corpora/..',
  'corpora/../corpora/x',
  'corpora/%2e%2e',
  'corpora/__proto__',
  'corpora/constructor',
  'projects/p/locations/l/ragCorpora/__proto__',
  'projects/p/locations/l/ragCorpora/../../../..',
  'projects/p/locations/l/ragCorpora/1/ragFiles/..%2f..',
  'projects/p/locations/l/reasoningEngines/1/memories/prototype',
  'reasoningEngines/1/memories/constructor',
  'projects/../../locations/l',
  'projects/p/locations/l',
  '',
  '/',
  '//',
  'corpora/',
  'corpora/a/b/c/d/e/f/g',
  longString('corpora/x', 4_500),
  longString('a', 40_000),
  'corpora/\u0000',
  'corpora/é',
)

/** Simple filters on the fixture corpora's declared keys, as a valid request would send them. */
export const benignFilter = fc
  .array(
    fc.constantFrom('year = 2021', 'year > 2000', 'tag = "sand"', 'score >= 0.5', 'flag = true', 'tags: "a"', 'NOT year = 1', 'year < 3000 OR tag = "x"', 'fact = "I like green tea"', 'scope.user_id = "u"', 'metadata.year = 2020', 'topics: "USER_PREFERENCES"'),
    { minLength: 1, maxLength: 2 },
  )
  .map((parts) => parts.join(' AND '))

const text = (label: string, make: () => string): Bytes => new Bytes(label, () => Buffer.from(make(), 'utf8'))

export const garbageBody = fc.oneof(
  fc.uint8Array({ maxLength: 300 }).map((b) => new Bytes(`random ${Buffer.from(b).toString('hex').slice(0, 40)}`, () => Buffer.from(b))),
  fc.constantFrom(
    ...[
      '',
      ' ',
      'null',
      'true',
      '1',
      '"str"',
      '[]',
      '[{}]',
      '{',
      '{"a":',
      '{"a":1,}',
      "{'a':1}",
      '{"a":NaN}',
      '{"a":Infinity}',
      '{"a":1e999}',
      '{"a":-}',
      '\uFEFF{}',
      '{}garbage',
      '{} {}',
      '{"__proto__":{"polluted":"yes"}}',
      '{"constructor":{"prototype":{"polluted":"yes"}}}',
      '{"a":"\\ud800"}',
      '{"a":"\\u0000"}',
      '{"a\u0000":1}',
    ].map((s) => text(JSON.stringify(s), () => s)),
    text('[ x100000', () => '['.repeat(100_000)),
    text('[ x101 ]x101', () => `${'['.repeat(101)}${']'.repeat(101)}`),
    text('{"a": x5000 unclosed', () => '{"a":'.repeat(5_000)),
    text('{"a": x99 }', () => `${'{"a":'.repeat(99)}1${'}'.repeat(99)}`),
    text('5000 keys', () => `{${Array.from({ length: 5_000 }, (_, i) => `"k${i}":${i}`).join(',')}}`),
    text('20000 duplicate keys', () => `{${Array.from({ length: 20_000 }, () => '"name":"x"').join(',')}}`),
    text('200 kB string', () => JSON.stringify({ x: 'y'.repeat(200_000) })),
    new Bytes('invalid UTF-8 object', () => Buffer.concat([Buffer.from('{"displayName":"'), Buffer.from([0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80]), Buffer.from('"}')])),
    new Bytes('UTF-16 object', () => Buffer.from('{"displayName":"x"}', 'utf16le')),
    new Bytes('NUL bytes', () => Buffer.alloc(64)),
  ),
)

export const uploadContent = fc.constantFrom(
  text('sentence', () => 'Ferns grow in the shade of tall trees.'),
  text('empty', () => ''),
  new Bytes('BOM only', () => Buffer.from([0xef, 0xbb, 0xbf])),
  text('40,000-char word', () => 'q'.repeat(40_000)),
  text('ab x20000', () => 'ab'.repeat(20_000)),
  text('combining x20000', () => 'a\u0301'.repeat(20_000)),
  new Bytes('invalid UTF-8', () => Buffer.from([0x61, 0xff, 0xfe, 0xc0, 0xaf, 0x62])),
  new Bytes('NUL inside', () => Buffer.from('a\u0000b')),
  text('html comments x8000', () => '<!--'.repeat(8_000)),
  text('html < x30000', () => '<'.repeat(30_000)),
  text('html <script x4000', () => '<script>'.repeat(4_000)),
  text('json [ x20000', () => '['.repeat(20_000) + ']'.repeat(20_000)),
  text('json [ x101', () => '['.repeat(101) + ']'.repeat(101)),
  text('fake pdf', () => '%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >>\nendobj\ntrailer << /Root 1 0 R /Size 99999999 >>\n%%EOF\n'),
  text('pdf header only', () => '%PDF-'),
  new Bytes('random 2 kB', () => Buffer.from(Array.from({ length: 2_048 }, (_, i) => (i * 7919 + 13) % 256))),
  text('60 kB of words', () => 'stone river cloud '.repeat(3_400)),
  text('64 kB + 1 of b', () => 'b'.repeat(64 * 1024 + 1)),
)

export const BENIGN_CONTENT = [
  text('sentence', () => 'Ferns grow in the shade of tall trees.'),
  text('markdown', () => '# Moss\nMoss covers the north side of stones.'),
  text('json', () => JSON.stringify({ note: 'owls hunt at night' })),
  text('html', () => '<p>Bees <b>dance</b> to point at flowers.</p>'),
]

export const uploadName = fc.constantFrom<J>(
  'notes.txt',
  'notes.md',
  'page.html',
  'data.json',
  'doc.pdf',
  'sheet.csv',
  'noext',
  '.txt',
  'a.exe',
  '../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '/etc/passwd',
  '%2e%2e%2fsecret.txt',
  '__proto__',
  'constructor.txt',
  longString('x', 2_000),
  '',
  'a\u0000b.txt',
  '😀.md',
  'file:///etc/passwd',
  'gs://bucket/../../x.txt',
)
