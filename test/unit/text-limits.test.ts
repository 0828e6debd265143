import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Analyzer, chunkText, type AnalyzedToken } from '@quarry/core'
import type { RawToken } from '../../packages/core/src/text/token.js'
import { unicodeTokens } from '../../packages/core/src/text/unicode-tokens.js'
import { SEGMENT_CHARS, winkPieces } from '../../packages/core/src/text/wink-pieces.js'
import { WINK_MAX_RUN, WINK_RENEW_AFTER, winkRenewals, winkTokens } from '../../packages/core/src/text/wink.js'
import { runs } from '../support/runs.js'
import { full } from '../support/tier.js'

// Issue 13: analysis must be linear in the text length whatever the text holds, with exact offsets.
// Timing lives in the text-limits benchmark; these tests pin the tokens, offsets and caps.

const CAP = 255
const TOKENIZERS = ['wink', 'unicode'] as const
type Tokenizer = (typeof TOKENIZERS)[number]

function raw(tokenizer: Tokenizer, text: string, cap = CAP): RawToken[] {
  return tokenizer === 'wink' ? winkTokens(text, cap) : unicodeTokens(text, cap)
}

/** Runs: what lies between the characters wink-nlp splits on first. */
const RUN = /[^ \u00a0\u2002-\u2005\u2009\u200a\u202f\u205f\n\r\t]+/g

/** Offsets are exact, increasing and non-overlapping, and no token is longer than the cap. */
function expectExact(text: string, tokens: readonly RawToken[], cap = CAP): void {
  let previousEnd = 0
  for (const t of tokens) {
    expect(text.slice(t.start, t.end)).toBe(t.value)
    expect(t.start).toBeGreaterThanOrEqual(previousEnd)
    expect(t.end).toBeGreaterThan(t.start)
    expect(t.value.length).toBeLessThanOrEqual(cap)
    previousEnd = t.end
  }
}

/** The most wink spaces in a row that a run follows. */
function longestGapBeforeRun(text: string): number {
  let longest = 0
  for (const m of text.matchAll(/[ \u00a0\u2002-\u2005\u2009\u200a\u202f\u205f\n\r\t]+/g)) {
    if (m.index + m[0].length < text.length) longest = Math.max(longest, m[0].length)
  }
  return longest
}

/** `unit` repeated until the text is at least `chars` long, and how many times. */
function repeated(unit: string, chars: number): { text: string; times: number } {
  const times = Math.ceil(chars / unit.length)
  return { text: unit.repeat(times), times }
}

describe('maxTokenLength', () => {
  it('defaults to 255 and accepts integers from 1 to 1024', () => {
    expect(new Analyzer().options.maxTokenLength).toBe(255)
    expect(new Analyzer({ maxTokenLength: 1 }).options.maxTokenLength).toBe(1)
    expect(new Analyzer({ maxTokenLength: 1024 }).options.maxTokenLength).toBe(1024)
    for (const bad of [0, 1025, 2.5, '64', -1]) {
      expect(() => new Analyzer({ maxTokenLength: bad })).toThrowError(expect.objectContaining({ code: 'INVALID_OPTION', path: 'text.analyzer.maxTokenLength' }) as Error)
    }
  })

  it('truncates longer tokens to their first maxTokenLength characters, in both tokenizers', () => {
    for (const tokenizer of TOKENIZERS) {
      const a = new Analyzer({ tokenizer, maxTokenLength: 5, stem: false })
      expect(a.tokens('Extraordinary tiny words')).toEqual([
        { term: 'extra', start: 0, end: 5 },
        { term: 'tiny', start: 14, end: 18 },
        { term: 'words', start: 19, end: 24 },
      ])
    }
    // A truncated URL is still a URL (and is not stemmed); the same URL in a query gives the same term.
    const url = `https://example.com/${'segment/'.repeat(29)}ends`
    expect(url.length).toBe(256)
    const tokens = winkTokens(`see ${url} now`, CAP)
    expect(tokens.map((t) => [t.value, t.type, t.start])).toEqual([
      ['see', 'word', 0],
      [url.slice(0, 255), 'url', 4],
      ['now', 'word', 5 + url.length],
    ])
    expect(new Analyzer().terms(url)).toEqual([url.slice(0, 255)])
    // Longer than 256 characters, wink reads it in pieces cut after a '/' unless the cap allows more.
    const longer = `${url}/${'more/'.repeat(20)}`
    expect(winkTokens(longer, 1024)).toEqual([{ value: longer, start: 0, end: longer.length, type: 'url' }])
    const cut = longer.lastIndexOf('/', WINK_MAX_RUN - 1) + 1
    expect(cut).toBe(252)
    expect(winkTokens(longer, CAP)[0]).toEqual({ value: longer.slice(0, cut), start: 0, end: cut, type: 'url' })
  })

  it('raising it keeps longer tokens whole', () => {
    const word = 'x'.repeat(1000)
    for (const tokenizer of TOKENIZERS) {
      expect(new Analyzer({ tokenizer, maxTokenLength: 1024, stem: false }).terms(`a ${word} b`)).toEqual(['x'.repeat(1000), 'b'])
      expect(new Analyzer({ tokenizer, stem: false }).terms(`a ${word} b`)).toEqual(['x'.repeat(255), 'b'])
    }
  })

  it('never cuts a surrogate pair', () => {
    // 𝐀 (U+1D400) is a letter of two UTF-16 code units: 255 would cut the 128th in half.
    expect(unicodeTokens('𝐀'.repeat(200), CAP)).toEqual([{ value: '𝐀'.repeat(127), start: 0, end: 254, type: 'word' }])
    expect(unicodeTokens('𝐀𝐀', 1)).toEqual([{ value: '𝐀', start: 0, end: 2, type: 'word' }])
  })
})

describe.each([10_000, 40_000, 100_000])('a %i-character word', (n) => {
  it.each(TOKENIZERS)('%s: becomes its first 255 characters; its neighbours keep their offsets', (tokenizer) => {
    const analyzer = new Analyzer({ tokenizer, stopWords: false, stem: false })
    expect(analyzer.tokens(`Before ${'a'.repeat(n)} after.`)).toEqual([
      { term: 'before', start: 0, end: 6 },
      { term: 'a'.repeat(255), start: 7, end: 262 },
      { term: 'after', start: 8 + n, end: 13 + n },
    ])
    // With the default analyzer the term is exactly that of the truncated word (stemmed alike).
    expect(new Analyzer({ tokenizer }).terms(`${'a'.repeat(n)} flows`)).toEqual(new Analyzer({ tokenizer }).terms(`${'a'.repeat(255)} flows`))
    expect(raw(tokenizer, `x ${'7'.repeat(n)}`)).toEqual([
      { value: 'x', start: 0, end: 1, type: 'word' },
      { value: '7'.repeat(255), start: 2, end: 257, type: 'number' },
    ])
    // e + combining acute: the cap falls after a base letter; accents fold away as usual.
    expect(analyzer.tokens(`${'e\u0301'.repeat(n / 2)} x`)).toEqual([
      { term: 'e'.repeat(128), start: 0, end: 255 },
      { term: 'x', start: n + 1, end: n + 2 },
    ])
  })

  it.each(TOKENIZERS)('%s: punctuation, emoji and lone surrogates stay linear and exact', (tokenizer) => {
    const analyzer = new Analyzer({ tokenizer, stopWords: false })
    expect(analyzer.tokens(`go ${'!'.repeat(n)} now`)).toEqual([
      { term: 'go', start: 0, end: 2 },
      { term: 'now', start: n + 4, end: n + 7 },
    ])
    const emoji = `go ${'😀'.repeat(n / 2)} now`
    expect(analyzer.tokens(emoji)).toEqual([
      { term: 'go', start: 0, end: 2 },
      { term: 'now', start: n + 4, end: n + 7 },
    ])
    if (tokenizer === 'wink') {
      const tokens = raw('wink', emoji)
      expect(tokens.length).toBe(n / 2 + 2)
      tokens.slice(1, -1).forEach((t, k) => expect(t).toEqual({ value: '😀', start: 3 + 2 * k, end: 5 + 2 * k, type: 'emoji' }))
    }
    // Every lone high surrogate separates one 'a' from the next.
    const surrogates = '\ud800a'.repeat(n / 2)
    expect(analyzer.tokens(surrogates)).toEqual(Array.from({ length: n / 2 }, (_, k) => ({ term: 'a', start: 2 * k + 1, end: 2 * k + 2 })))
  })

  it('wink: a long run joined by punctuation is cut after its last punctuation within 256 characters', () => {
    // One word piece per 256 characters, as wink reads each piece: "a-b-…-b" then "-".
    for (const [unit, type] of [['a-b-', 'word'], ['a.b.', 'word'], ["a'", 'word']] as const) {
      const text = unit.repeat(n / unit.length)
      const words = raw('wink', text).filter((t) => t.type !== 'punctuation')
      const expected: RawToken[] = []
      for (let s = 0; s < n; s += WINK_MAX_RUN) {
        const end = Math.min(s + WINK_MAX_RUN, n)
        // The piece's trailing separator is punctuation of its own for '-' and "'", part of the word for '.'.
        const wordEnd = unit === 'a.b.' ? Math.min(s + CAP, end) : Math.min(s + CAP, end - 1)
        expected.push({ value: text.slice(s, wordEnd), start: s, end: wordEnd, type })
      }
      expect(words).toEqual(expected)
    }
    const url = `http://example.com/${'ab/'.repeat((n - 19) / 3)}`
    const kept = raw('wink', url).filter((t) => t.type !== 'punctuation')
    expect(kept[0]).toEqual({ value: url.slice(0, 255), start: 0, end: 255, type: 'url' })
    // The rest: pieces of 85 × "ab/", read as word, '/', word, ...
    expect(kept.slice(1)).toEqual(Array.from({ length: (url.length - 256) / 3 }, (_, k) => ({ value: 'ab', start: 256 + 3 * k, end: 258 + 3 * k, type: 'word' })))
    // A long local part: its head as a word, then what follows the word.
    expect(raw('wink', `${'x'.repeat(n)}@example.com`)).toEqual([
      { value: 'x'.repeat(255), start: 0, end: 255, type: 'word' },
      { value: '@example', start: n, end: n + 8, type: 'mention' },
      { value: '.', start: n + 8, end: n + 9, type: 'punctuation' },
      { value: 'com', start: n + 9, end: n + 12, type: 'word' },
    ])
  })
})

full.describe('10 MB texts', () => {
  const TEN_MB = 10_000_000
  // Each unit tokenizes on its own (wink reads runs between spaces independently), so the tokens
  // of the whole are the unit's tokens shifted by k · unit length: an exact expectation.
  const units = {
    'lines of prose': "The boundary-layer flow over a swept wing, at Mach 2.5, isn't laminar; see https://example.com/a?b=1 or mail me@example.org.\n",
    'one line of prose': 'Supersonic nozzles (U.S. designs, e.g. 1,000 kg) café naïve #cfd 10:30pm — shock-wave interaction. ',
  }
  for (const [name, unit] of Object.entries(units)) {
    it.each(TOKENIZERS)(`%s: ${name}`, (tokenizer) => {
      const analyzer = new Analyzer({ tokenizer })
      const { text, times } = repeated(unit, TEN_MB)
      const one = analyzer.tokens(unit)
      expect(one.length).toBeGreaterThan(10)
      const all = analyzer.tokens(text)
      expect(all.length).toBe(one.length * times)
      const wrong: { at: number; got: AnalyzedToken; want: AnalyzedToken }[] = []
      for (let i = 0; i < all.length && wrong.length < 5; i++) {
        const k = Math.floor(i / one.length)
        const u = one[i % one.length] as AnalyzedToken
        const got = all[i] as AnalyzedToken
        if (got.term !== u.term || got.start !== u.start + k * unit.length || got.end !== u.end + k * unit.length) wrong.push({ at: i, got, want: u })
      }
      expect(wrong).toEqual([])
    })
  }

  it.each(TOKENIZERS)('%s: one 10 MB word is one capped token', (tokenizer) => {
    expect(new Analyzer({ tokenizer, stem: false }).tokens(`${'a'.repeat(TEN_MB)}.`)).toEqual([{ term: 'a'.repeat(255), start: 0, end: 255 }])
    expect(new Analyzer({ tokenizer, stem: false }).tokens(`${'7'.repeat(TEN_MB)}`)).toEqual([{ term: '7'.repeat(255), start: 0, end: 255 }])
  })

  it('unicode: millions of marks or apostrophes (a RangeError in the old regex) scan fine', () => {
    expect(unicodeTokens('\u0301'.repeat(TEN_MB), CAP)).toEqual([{ value: '\u0301'.repeat(255), start: 0, end: 255, type: 'word' }])
    const apostrophes = `${"a'".repeat(TEN_MB / 2)}a`
    expect(unicodeTokens(apostrophes, CAP)).toEqual([{ value: apostrophes.slice(0, 255), start: 0, end: 255, type: 'word' }])
  })
})

describe('offsets across segment boundaries', () => {
  // Fragments joined into texts longer than one wink segment, so cuts land among them.
  const fragment = fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom('flow', 'Wing', "isn't", 'U.S.', 'e.g.', '3.5kg', '1,000', 'me@example.org', 'https://x.org/a?b=c', '#cfd', '@who', 'café', 'e\u0301t\u0301e\u0301', '—', '(see', 'Fig.', '2)', '...', ':)', '😀', '\ud800', 'a\u3000b', 'x\u2028y', '½', 'İstanbul') },
    { weight: 1, arbitrary: fc.constantFrom('a'.repeat(300), '!'.repeat(300), 'a-b-'.repeat(80), 'x'.repeat(600) + '@example.com', '😀'.repeat(200), 'é'.repeat(300), `http://example.com/${'ab/'.repeat(100)}`, '𝐀'.repeat(200), 'a'.repeat(256), 'b'.repeat(257)) },
  )
  const separator = fc.constantFrom(' ', ' ', ' ', '', '\n', '\t', '\u00a0', '  ', '\r\n', ' \u2003 ')
  const text = fc
    .tuple(fc.integer({ min: SEGMENT_CHARS - 400, max: SEGMENT_CHARS + 50 }), fc.array(fc.tuple(fragment, separator), { minLength: 1, maxLength: 60 }), fc.boolean())
    .map(([pad, parts, hugeGap]) => {
      const filler = 'lorem ipsum '.repeat(Math.ceil(pad / 12)).slice(0, pad)
      // Sometimes 70,000 spaces: more than wink counts as one token's preceding spaces (65,535).
      return filler + parts.map(([f, s]) => f + s).join('') + (hugeGap ? `${' '.repeat(70_000)}end` : '')
    })

  it('wink: exact offsets, and the tokens of every run of at most 256 characters are wink’s own for that run', () => {
    const cases = runs(25)
    let segmented = 0
    fc.assert(
      fc.property(text, (t) => {
        if (winkPieces(t, WINK_MAX_RUN).length > 1) segmented++
        const tokens = winkTokens(t, CAP)
        expectExact(t, tokens)
        // Oracle: wink on each run alone (runs between spaces are independent in wink).
        const expected: RawToken[] = []
        const runs: { start: number; end: number }[] = []
        for (const m of t.matchAll(RUN)) {
          const start = m.index
          runs.push({ start, end: start + m[0].length })
          if (m[0].length > WINK_MAX_RUN) continue
          for (const x of winkTokens(m[0], CAP)) expected.push({ ...x, start: x.start + start, end: x.end + start })
        }
        // Tokens and runs are both in text order: one sweep finds each token's run.
        let k = 0
        const inRun = (x: RawToken): { start: number; end: number } | undefined => {
          while (k < runs.length && (runs[k] as { end: number }).end <= x.start) k++
          const r = runs[k]
          return r !== undefined && x.start >= r.start && x.end <= r.end ? r : undefined
        }
        const inShortRuns = tokens.filter((x) => {
          const r = inRun(x)
          if (r === undefined) {
            // Outside runs only wink's tab/line-break tokens.
            expect(x.type).toBe('tabCRLF')
            return false
          }
          return r.end - r.start <= WINK_MAX_RUN
        })
        expect(inShortRuns).toEqual(expected)
      }),
      { numRuns: cases },
    )
    // The texts did reach wink in several pieces (the boundaries under test), whatever the seed:
    // about 4 in 5 are long enough, so fewer than a third would be a broken generator.
    expect(segmented).toBeGreaterThanOrEqual(Math.ceil(cases / 3))
  })

  it('unicode: exactly the old regex, matches truncated to the cap', () => {
    fc.assert(
      fc.property(text, fc.constantFrom(CAP, 7, 1), (t, cap) => {
        const expected = [...t.matchAll(/[\p{L}\p{N}\p{M}]+(?:['’][\p{L}]+)*/gu)].map((m) => {
          let end = m.index + Math.min(m[0].length, cap)
          if (/[\ud800-\udbff]/.test(t.charAt(end - 1)) && /[\udc00-\udfff]/.test(t.charAt(end))) end = end - 1 > m.index ? end - 1 : end + 1
          return { value: t.slice(m.index, end), start: m.index, end, type: /^\p{N}+$/u.test(m[0]) ? 'number' : 'word' }
        })
        expect(unicodeTokens(t, cap)).toEqual(expected)
      }),
      { numRuns: runs(25) },
    )
  })

  it('structure behind the linear cost: wink sees disjoint pieces in order, no run in them longer than 256', () => {
    fc.assert(
      fc.property(text, (t) => {
        const pieces = winkPieces(t, WINK_MAX_RUN)
        let previousEnd = 0
        for (const p of pieces) {
          expect(p.start).toBeGreaterThanOrEqual(previousEnd)
          expect(p.end).toBeGreaterThan(p.start)
          const body = t.slice(p.start, p.end)
          for (const m of body.matchAll(RUN)) expect(m[0].length).toBeLessThanOrEqual(WINK_MAX_RUN)
          // No token follows 65,535 spaces or more inside a piece (wink stops counting there).
          expect(longestGapBeforeRun(body)).toBeLessThan(65_535)
          previousEnd = p.end
        }
        // Nothing but the tails of words longer than 256 letters/digits is left out.
        let covered = 0
        for (const p of pieces) covered += p.end - p.start
        const skippable = [...t.matchAll(/[\p{L}\p{N}\p{M}]+/gu)].reduce((s, m) => s + Math.max(0, m[0].length - (WINK_MAX_RUN - 1)), 0)
        expect(covered).toBeGreaterThanOrEqual(t.length - skippable)
      }),
      { numRuns: runs(25) },
    )
  })
})

describe('chunkText over long words', () => {
  it('keeps chunk offsets exact; the untokenized tail of a long word stays inside its chunk', () => {
    const word = 'x'.repeat(10_000)
    const source = `one two ${word} three four`
    const chunks = chunkText(new Analyzer(), source, { size: 2, overlap: 0 })
    expect(chunks.map((c) => [c.start, c.end, c.firstToken, c.tokens])).toEqual([
      [0, 7, 0, 2],
      [8, 8 + word.length + 6, 2, 2],
      [source.length - 4, source.length, 4, 1],
    ])
    for (const c of chunks) expect(source.slice(c.start, c.end)).toBe(c.text)
  })
})

describe('wink lexicon growth', () => {
  full.it('renews the wink instance after WINK_RENEW_AFTER distinct tokens, tokenizing the same before and after', () => {
    const before = winkRenewals()
    // Letters only (wink splits mixed letters and digits): the number i in base 26, a-z.
    const word = (i: number): string => `q${i.toString(26).replace(/[0-9a-p]/g, (c) => String.fromCharCode(97 + Number.parseInt(c, 26)))}z`
    const words = (from: number, to: number): string => Array.from({ length: to - from }, (_, i) => word(from + i)).join(' ')
    const probe = 'The Quick-brown fox, e-mail a@b.co at 10:30; naïve café 3rd #tag'
    const expected = winkTokens(probe, 255)
    const batch = 50_000
    for (let from = 0; from < WINK_RENEW_AFTER + batch; from += batch) {
      const text = words(from, from + batch)
      const tokens = winkTokens(text, 255)
      expect(tokens.length).toBe(batch)
      expect(tokens[batch - 1]).toMatchObject({ value: word(from + batch - 1), type: 'word', end: text.length })
    }
    expect(winkRenewals()).toBe(before + 1)
    expect(winkTokens(probe, 255)).toEqual(expected)
  })
})
