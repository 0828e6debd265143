import fc from 'fast-check'
import type { Route } from '../../../packages/adapters/src/http/routes.js'
import type { RawRequest } from './http.js'
import { Bytes, Known, Obj, mutate, toJson, toQueryPairs, type J, type Mutation } from './json.js'
import { GetOperationRequest, messageArb, requestSchemaOf, snake, type Fixtures } from './messages.js'
import type { NamePool } from './names.js'
import { BENIGN_CONTENT, garbageBody, protoEntry, uploadContent, uploadName, wrongValue } from './values.js'

/**
 * Requests for every route of the server, generated from the route table (`buildRoutes`) and the
 * request schemas (messages.ts): valid ones (benign messages, names of resources that exist),
 * hostile ones (hostile values in the fields), mutated ones (a valid message with one or two
 * fields of the wrong type, a huge number, deep nesting, a 40,000-character word, a `__proto__`
 * key...) and garbage (bodies that are not JSON, invalid UTF-8, nesting 100,000 deep) — all but
 * the valid ones sent now and then with wrong content types, foreign Host and Origin headers,
 * other methods, hostile path segments and query parameters. Names are picked when a request is
 * sent, from the names the server answered so far, so a run is a deterministic function of its seed.
 */

type Piece = { readonly literal: string } | { readonly field: string; readonly pattern: string; readonly regex: RegExp }

const PIECES = new Map<string, Piece[]>()

export function templatePieces(template: string): Piece[] {
  const cached = PIECES.get(template)
  if (cached) return cached
  const pieces: Piece[] = []
  PIECES.set(template, pieces)
  let at = 0
  for (const m of template.matchAll(/\{([^=}]+)(?:=([^}]+))?\}/g)) {
    pieces.push({ literal: template.slice(at, m.index) })
    const pattern = m[2] ?? '*'
    const source = pattern.split('/').map((s) => (s === '**' ? '.+' : s === '*' ? '[^/:]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')
    pieces.push({ field: m[1] as string, pattern, regex: new RegExp(`^${source}$`) })
    at = (m.index ?? 0) + m[0].length
  }
  pieces.push({ literal: template.slice(at) })
  return pieces
}

/** The collection a route's tail names (`/ragFiles:import` → ragFiles), for names in its body. */
function tailCollection(template: string): string | undefined {
  const tail = template.slice(template.lastIndexOf('}') + 1)
  return /^\/([A-Za-z]+)/.exec(tail)?.[1]
}

const FRAMINGS = ['form-data', 'form-data', 'form-data', 'related', 'file-first', 'no-closing', 'no-header-split', 'boundary-in-content', 'only-metadata', 'only-file', 'empty', 'lf-only', 'metadata-not-json', 'metadata-list', '500 parts'] as const
export type Framing = (typeof FRAMINGS)[number]

export interface UploadPlan {
  readonly metadata: Obj
  readonly hostileMetadata: Obj
  readonly name: J | undefined
  readonly benignName: string
  readonly content: Bytes
  readonly benignContent: Bytes
  readonly framing: Framing
  readonly boundary: string
}

function multipartBody(plan: UploadPlan, metadataJson: string): Buffer {
  const b = plan.boundary
  const nl = plan.framing === 'lf-only' ? '\n' : '\r\n'
  const content = plan.framing === 'boundary-in-content' ? Buffer.concat([Buffer.from(`before${nl}--${b}${nl}`), plan.content.make()]) : plan.content.make()
  const meta = Buffer.from(`--${b}${nl}Content-Disposition: form-data; name="metadata"${nl}Content-Type: application/json${nl}${nl}${plan.framing === 'metadata-not-json' ? '{not json' : plan.framing === 'metadata-list' ? '[1,2]' : metadataJson}${nl}`)
  const relatedMeta = Buffer.from(`--${b}${nl}Content-Type: application/json; charset=UTF-8${nl}${nl}${metadataJson}${nl}`)
  const file = Buffer.concat([Buffer.from(`--${b}${nl}Content-Disposition: form-data; name="file"; filename="f"${nl}Content-Type: application/octet-stream${nl}${nl}`), content, Buffer.from(nl)])
  const relatedFile = Buffer.concat([Buffer.from(`--${b}${nl}Content-Type: application/octet-stream${nl}${nl}`), content, Buffer.from(nl)])
  const end = Buffer.from(`--${b}--${nl}`)
  switch (plan.framing) {
    case 'related':
      return Buffer.concat([relatedMeta, relatedFile, end])
    case 'file-first':
      return Buffer.concat([file, meta, end])
    case 'no-closing':
      return Buffer.concat([meta, file])
    case 'no-header-split':
      return Buffer.concat([Buffer.from(`--${b}${nl}Content-Disposition: form-data; name="metadata"${metadataJson}${nl}`), end])
    case 'only-metadata':
      return Buffer.concat([meta, end])
    case 'only-file':
      return Buffer.concat([file, end])
    case 'empty':
      return Buffer.alloc(0)
    case '500 parts':
      return Buffer.concat([meta, ...Array.from({ length: 500 }, () => file), end])
    default:
      return Buffer.concat([meta, file, end])
  }
}

/** Which fields of the path a request fills with names that exist, and which with hostile segments. */
export type PathPlan =
  | { readonly kind: 'known'; readonly pick: number }
  | { readonly kind: 'segment'; readonly pick: number; readonly at: number; readonly segment: string }
  | { readonly kind: 'literal'; readonly text: string }

const hostileSegment = fc.constantFrom(
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '..%2f..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f%2e%2e%2f',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  '%00',
  '%ff%fe',
  '%E0%A4%A',
  '%',
  'a%2Fb',
  '%C0%AE%C0%AE',
  '\u00e9',
  '\u00ff\u00fe',
  '*',
  '~',
  '-',
  '%20',
  'x'.repeat(3_000),
  'x'.repeat(20_000),
)

const pathPlan = fc.oneof(
  { weight: 8, arbitrary: fc.nat().map((pick): PathPlan => ({ kind: 'known', pick })) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.nat(), hostileSegment).map(([pick, at, segment]): PathPlan => ({ kind: 'segment', pick, at, segment })) },
  { weight: 1, arbitrary: fc.constantFrom('..%2F..%2Fetc', '%2e%2e/%2e%2e', 'corpora/..', '__proto__/constructor/prototype', '').map((t): PathPlan => ({ kind: 'literal', text: t })) },
)

/** Host headers with whether the server must refuse them (403). `@` stands for the port. */
const HOSTS: ReadonlyArray<readonly [string | undefined, 'local' | 'foreign' | 'either']> = [
  ['localhost', 'local'],
  ['localhost:@', 'local'],
  ['[::1]:@', 'local'],
  ['LOCALHOST', 'local'],
  ['evil.localhost', 'local'],
  ['0.0.0.0', 'local'],
  ['[::ffff:127.0.0.1]', 'local'],
  [undefined, 'local'],
  ['evil.example', 'foreign'],
  ['localhost.evil.example', 'foreign'],
  ['127.0.0.1.nip.io', 'foreign'],
  ['attacker.com:80', 'foreign'],
  ['', 'foreign'],
  ['127.1', 'foreign'],
  ['2130706433', 'foreign'],
  ['x'.repeat(5_000), 'foreign'],
  ['127.0.0.1:@ extra', 'either'],
]
/** Origin headers: `same` is the server's own origin (allowed with the default Host). */
const ORIGINS: ReadonlyArray<readonly [string, 'same' | 'foreign']> = [
  ['http://127.0.0.1:@', 'same'],
  ['https://evil.example', 'foreign'],
  ['null', 'foreign'],
  ['http://localhost:@', 'foreign'],
  ['file://', 'foreign'],
  ['http://127.0.0.1:@.evil.example', 'foreign'],
  ['', 'foreign'],
  ['javascript:alert(1)', 'foreign'],
]

const JSON_TYPES = [null, 'text/plain', 'application/json; charset=utf-8', 'Application/JSON; charset=latin1', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/json-patch+json', '*/*', ';;;', 'x'.repeat(8_000)]
const UPLOAD_TYPES = ['multipart/form-data', 'multipart/form-data; boundary=', 'multipart/mixed; boundary=@b', 'multipart/form-data; boundary="@b"', 'application/json', 'text/plain', null]

const QUERY_EXTRAS: ReadonlyArray<readonly [string, string]> = [
  ['__proto__.polluted', 'yes'],
  ['constructor.prototype.polluted', 'yes'],
  ['__proto__%5Bpolluted%5D', 'yes'],
  ['a.__proto__.polluted', 'yes'],
  ['prototype', 'x'],
  ['%24alt', 'json%3Benum-encoding%3Dint'],
  ['alt', 'json%3Benum-encoding%3Dint'],
  ['alt', 'media'],
  ['key', 'abc'],
  ['fields', 'name'],
  ['unknownParam', '1'],
  ['pageSize', '-1'],
  ['pageSize', '99999999999999999999'],
  ['pageSize', '1'],
  ['force', 'true'],
  ['force', 'maybe'],
  ['a.b.c.d.e.f', '1'],
  ['.', 'x'],
  ['', 'x'],
  ['a..b', 'x'],
  ['%ff', '%fe'],
  ['filter', '((((('],
  ['name', 'corpora%2Fevil'],
  ['parent', '..%2F..'],
]

export interface RequestPlan {
  readonly route: number
  /** valid: a benign message; hostile: hostile values in fields; mutated: `mutations` applied; garbage: `garbage` as the body. */
  readonly mode: 'valid' | 'hostile' | 'mutated' | 'garbage'
  readonly path: readonly PathPlan[]
  readonly pathSuffix: string
  /** What a correct client sends (valid and mutated modes). */
  readonly message: Obj
  /** Hostile values in the fields (hostile mode). */
  readonly hostileMessage: Obj
  readonly mutations: readonly Mutation[]
  readonly garbage: Bytes | undefined
  readonly invalidUtf8: { readonly at: number; readonly bytes: readonly number[] } | undefined
  readonly upload: UploadPlan | undefined
  readonly query: ReadonlyArray<readonly [string, string]>
  /** `undefined`: the route's own type; `null`: no Content-Type header. */
  readonly contentType: string | null | undefined
  /** An index into HOSTS, or undefined for `127.0.0.1:<port>`. */
  readonly host: number | undefined
  readonly origin: number | undefined
  /** `undefined`: the route's method. */
  readonly method: string | undefined
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('replace', 'replace', 'replace', 'add-entry', 'add-entry', 'duplicate-key', 'snake-case', 'drop'),
  at: fc.nat(),
  value: wrongValue,
  entry: fc.oneof(protoEntry, fc.tuple(fc.constantFrom('unknownField', 'display_name', 'x'.repeat(300), ''), wrongValue)),
})

/** Plans for one route. */
export function planArb(routes: readonly Route[], index: number, fixtures: Fixtures): fc.Arbitrary<RequestPlan> {
  const route = routes[index] as Route
  const schema = requestSchemaOf(route.rpc) ?? GetOperationRequest
  const fields = templatePieces(route.template).flatMap((p) => ('field' in p ? [p.field] : []))
  const topPathFields = fields.filter((f) => !f.includes('.'))
  const hint = tailCollection(route.template)
  const body = (benign: boolean): fc.Arbitrary<Obj> => messageArb(schema, 0, hint, fixtures, benign, topPathFields)
  const upload: fc.Arbitrary<UploadPlan | undefined> = route.multipart
    ? fc.record({
        metadata: messageArb(schema, 0, hint, fixtures, true, ['parent']),
        hostileMetadata: messageArb(schema, 0, hint, fixtures, false, ['parent']),
        name: fc.option(uploadName, { freq: 5, nil: undefined }),
        benignName: fc.constantFrom('notes.txt', 'notes.md', 'page.html', 'data.json', 'sheet.csv', 'plain'),
        content: uploadContent,
        benignContent: fc.constantFrom(...BENIGN_CONTENT),
        framing: fc.constantFrom(...FRAMINGS),
        boundary: fc.constantFrom('quarry-boundary', 'b', 'x'.repeat(200), '----WebKitFormBoundary7MA4YWxkTrZu0gW'),
      })
    : fc.constant(undefined)
  return fc.record({
    route: fc.constant(index),
    mode: fc.constantFrom<RequestPlan['mode']>('valid', 'valid', 'valid', 'valid', 'hostile', 'hostile', 'mutated', 'mutated', 'mutated', 'garbage'),
    path: fc.tuple(...fields.map(() => pathPlan)),
    pathSuffix: fc.oneof({ weight: 20, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('/', '//', '/..', '/.', '%3A', '#frag', '?', ';x=1', '/%2e%2e') }),
    message: body(true),
    hostileMessage: body(false),
    mutations: fc.array(mutation, { minLength: 1, maxLength: 2 }),
    garbage: garbageBody,
    invalidUtf8: fc.option(fc.record({ at: fc.nat(), bytes: fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x80], [0xfe, 0xff], [0x00]) }), { freq: 12, nil: undefined }),
    upload,
    query: fc.oneof({ weight: 6, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.constantFrom(...QUERY_EXTRAS), { minLength: 1, maxLength: 2 }) }),
    contentType: fc.oneof({ weight: 20, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...(route.multipart ? UPLOAD_TYPES : JSON_TYPES)) }),
    host: fc.oneof({ weight: 25, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat({ max: HOSTS.length - 1 }) }),
    origin: fc.oneof({ weight: 25, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat({ max: ORIGINS.length - 1 }) }),
    method: fc.oneof({ weight: 30, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND') }),
  })
}

export interface Materialized {
  readonly request: RawRequest
  /** The server must answer 403: the Host or the Origin is foreign. */
  readonly forbidden: boolean
  /** Everything the request said (path decoded, body as text): what the answer may repeat. */
  readonly sent: string
}

/** Decodes %XX escapes where they are valid UTF-8, leaves the rest (never throws). */
function decodeLoosely(s: string): string {
  return s.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run)
    } catch {
      return run
    }
  })
}

/** encodeURIComponent that also takes lone surrogates (as U+FFFD, what a client's UTF-8 encoder writes). */
function encode(s: string): string {
  let out = ''
  for (const c of s) out += /^[A-Za-z0-9\-_.!~*'()]$/.test(c) ? c : [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('')
  return out
}

/** Characters Node writes into a request line as they are; others are percent-encoded. */
function pathSafe(s: string): string {
  let out = ''
  for (const c of s) out += /^[\u0021-\u00ff]$/.test(c) ? c : encode(c)
  return out
}

function pathValue(piece: { readonly regex: RegExp; readonly pattern: string }, plan: PathPlan, pool: NamePool): string {
  if (plan.kind === 'literal') return plan.text
  const names = pool.matching(piece.regex)
  const fallback = piece.pattern.replace(/\*\*/g, 'projects/p/locations/l/ragCorpora/1').replace(/\*/g, '1')
  const name = names.length === 0 ? fallback : (names[plan.pick % names.length] as string)
  const segments = name.split('/').map(encode)
  if (plan.kind === 'segment') segments[plan.at % segments.length] = pathSafe(plan.segment)
  return segments.join('/')
}

/** A valid request keeps to the route: names that exist in the path, the route's method and types, this machine's Host. */
function clean(plan: RequestPlan): RequestPlan {
  if (plan.mode !== 'valid') return plan
  return { ...plan, path: plan.path.map((p) => (p.kind === 'known' ? p : { kind: 'known', pick: 'pick' in p ? p.pick : 0 })), pathSuffix: '', invalidUtf8: undefined, query: [], contentType: undefined, host: undefined, origin: undefined, method: undefined }
}

export function materialize(routes: readonly Route[], generated: RequestPlan, pool: NamePool, port: number): Materialized {
  const plan = clean(generated)
  const route = routes[plan.route] as Route
  const pieces = templatePieces(route.template)
  let fieldIndex = 0
  let path = ''
  let scope: string | undefined
  for (const piece of pieces) {
    if ('literal' in piece) path += piece.literal
    else {
      const value = pathValue(piece, plan.path[fieldIndex++] as PathPlan, pool)
      scope ??= decodeLoosely(value)
      path += value
    }
  }
  const resolve = (k: Known): string => pool.resolve(k, scope)
  path += plan.pathSuffix

  let message: J = plan.mode === 'hostile' ? plan.hostileMessage : plan.message
  if (plan.mode === 'mutated') for (const m of plan.mutations) message = mutate(message, m)
  const obj = message instanceof Obj ? message : new Obj([['value', message]])

  let body: Buffer | undefined
  let queryMessage: Obj = new Obj([])
  let contentType: string | null = plan.contentType === undefined ? 'application/json' : plan.contentType
  if (route.multipart && plan.upload) {
    const u = plan.upload
    let metadata: J = plan.mode === 'hostile' ? u.hostileMetadata : u.metadata
    if (plan.mode === 'mutated') for (const m of plan.mutations) metadata = mutate(metadata, m)
    const name = plan.mode === 'valid' ? u.benignName : u.name
    if (name !== undefined && metadata instanceof Obj) {
      const ragFile = metadata.entries.find(([k]) => k === 'ragFile')?.[1]
      const rest = ragFile instanceof Obj ? ragFile.entries.filter(([k]) => k !== 'displayName' && k !== 'display_name') : []
      metadata = new Obj([...metadata.entries.filter(([k]) => k !== 'ragFile'), ['ragFile', new Obj([...rest, ['displayName', name]])]])
    }
    const upload = plan.mode === 'valid' ? { ...u, content: u.benignContent, framing: u.framing === 'related' ? u.framing : ('form-data' as const) } : u
    body = plan.mode === 'garbage' && plan.garbage ? plan.garbage.make() : multipartBody(upload, toJson(metadata, resolve))
    const type = u.framing === 'related' ? 'multipart/related' : 'multipart/form-data'
    contentType = plan.contentType === undefined ? `${type}; boundary=${u.boundary}` : plan.contentType?.replace('@b', u.boundary) ?? null
  } else if (route.body === '*') {
    body = Buffer.from(toJson(obj, resolve))
  } else if (route.body !== undefined) {
    const isBody = (k: string): boolean => k === route.body || k === snake(route.body as string)
    const inner = obj.entries.find(([k]) => isBody(k))?.[1]
    body = Buffer.from(toJson(inner ?? new Obj([]), resolve))
    queryMessage = new Obj(obj.entries.filter(([k]) => !isBody(k)))
  } else {
    queryMessage = obj
    if (plan.mode === 'garbage' && plan.garbage) body = plan.garbage.make()
  }
  if (!route.multipart && route.body !== undefined && plan.mode === 'garbage' && plan.garbage) body = plan.garbage.make()
  if (body !== undefined && plan.invalidUtf8 && !route.multipart) {
    const quotes: number[] = []
    for (let i = 0; i < body.length && quotes.length < 1_000; i++) if (body[i] === 0x22) quotes.push(i)
    const at = quotes.length === 0 ? 0 : (quotes[plan.invalidUtf8.at % quotes.length] as number) + 1
    body = Buffer.concat([body.subarray(0, at), Buffer.from(plan.invalidUtf8.bytes), body.subarray(at)])
  }

  const pairs = [...toQueryPairs(queryMessage, resolve).map(([k, v]) => [encode(k), encode(v)] as const), ...plan.query]
  if (pairs.length > 0 && !path.includes('?')) path += `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`

  const headers: Record<string, string> = {}
  if (contentType !== null && (body !== undefined || plan.contentType !== undefined)) headers['content-type'] = contentType
  const hostEntry = plan.host === undefined ? undefined : HOSTS[plan.host]
  const host = hostEntry ? hostEntry[0]?.replace('@', String(port)) : `127.0.0.1:${port}`
  const originEntry = plan.origin === undefined ? undefined : ORIGINS[plan.origin]
  if (originEntry) headers.origin = originEntry[0].replace('@', String(port))
  const forbidden = hostEntry?.[1] === 'foreign' || (hostEntry === undefined && originEntry?.[1] === 'foreign') || (hostEntry?.[1] === 'local' && originEntry !== undefined && originEntry[1] === 'foreign')

  const request: RawRequest = { method: plan.method ?? route.method, path, headers, host, body }
  const sent = [request.method, path, decodeLoosely(path), decodeLoosely(decodeLoosely(path)), ...Object.values(headers), host ?? '', body?.toString('utf8') ?? '', body?.toString('latin1') ?? ''].join('\n')
  return { request, forbidden, sent }
}
