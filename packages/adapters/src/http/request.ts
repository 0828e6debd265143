import { rpcStatus } from '../rpc/status.js'
import { parseJsonBounded } from '../transport/json.js'
import { boundaryOf, MAX_BOUNDARY, MAX_PARTS, parseMultipart } from './multipart.js'
import { HttpFailure } from './replies.js'
import type { Route } from './routes.js'
import { setPath } from './template.js'

/** Names that would reach an object's prototype instead of a field. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/** Query parameters that steer the transport, not the request. */
const TRANSPORT_PARAMS = new Set(['$alt', 'alt', 'key', 'prettyPrint', '$prettyPrint', 'fields', '$fields', 'access_token', 'uploadType', 'upload_protocol', '$callback', 'callback'])

/** Decodes UTF-8, refusing a malformed byte instead of reading it as U+FFFD (Google's JSON front end refuses such a body). */
const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** A body or a part as JSON: INVALID_ARGUMENT when it is not UTF-8, not JSON, or nested too deep. */
function parseJson(bytes: Uint8Array, what: string): unknown {
  let text: string
  try {
    text = UTF8.decode(bytes)
  } catch {
    throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `Invalid JSON payload received in the ${what}: it is not valid UTF-8 (send text as UTF-8).`))
  }
  const parsed = parseJsonBounded(text)
  if (!parsed.ok) throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `Invalid JSON payload received in the ${what}: ${parsed.message}`))
  // Only a \u escape can make a lone surrogate (UTF-8 bytes cannot): most bodies skip the walk.
  const lone = SURROGATE_ESCAPE.test(text) ? loneSurrogateAt(parsed.value) : undefined
  if (lone !== undefined) {
    const at = lone === '' ? '' : ` at '${lone.slice(0, 200)}'`
    throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `Invalid JSON payload received in the ${what}: a string${at} holds half of a UTF-16 surrogate pair (a \\uD800-\\uDFFF escape without its other half), which is not text (a proto3 string is UTF-8). Send both halves, or the character itself.`))
  }
  return parsed.value
}

const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/
/** In a `u` regular expression a pair is one code point: only a lone half is of category Cs. */
const LONE_SURROGATE = /\p{Cs}/u

/**
 * The path of the first string (or key) of a parsed body that is not well-formed UTF-16 (a lone
 * surrogate, which has no UTF-8 form: gRPC refuses its bytes, grpc/codec.ts), '' for the body
 * itself; undefined when every one is text. The body nests at most 100 levels (parseJsonBounded).
 */
function loneSurrogateAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogateAt(value[i], `${path}[${i}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      const at = path === '' ? key : `${path}.${key}`
      if (LONE_SURROGATE.test(key)) return at
      const found = loneSurrogateAt(item, at)
      if (found !== undefined) return found
    }
  }
  return undefined
}

/** The media type of a Content-Type header, lowercased, without parameters. */
function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase()
}

/**
 * 415 unless the request's body is of a type the route reads: JSON, or a multipart upload; and
 * unless it comes as it is (a compressed body read as JSON failed as "not valid UTF-8").
 */
export function checkContentType(route: Route, contentType: string | undefined, bodyLength: number, contentEncoding?: string): void {
  const encoding = contentEncoding?.trim().toLowerCase()
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity' && bodyLength > 0) {
    throw new HttpFailure(415, rpcStatus('INVALID_ARGUMENT', `The request body is sent with Content-Encoding "${encoding.slice(0, 40)}", which this server does not read: send it uncompressed (gRPC takes gzip and deflate messages).`))
  }
  // No body and no type (a read): nothing to check unless the route is an upload.
  if (contentType === undefined && bodyLength === 0 && !route.multipart) return
  const type = mediaType(contentType ?? '')
  if (route.multipart) {
    if (type === 'multipart/related' || type === 'multipart/form-data') return
    throw new HttpFailure(415, rpcStatus('INVALID_ARGUMENT', `${route.method} ${route.template} is a media upload: send Content-Type multipart/related or multipart/form-data (a "metadata" JSON part and a "file" part); received ${type === '' ? 'none' : `"${type.slice(0, 100)}"`}.`))
  }
  if (type === 'application/json') return
  // An empty body needs no type (nor does a route without one); any body must be declared JSON.
  if (bodyLength === 0 && (type === '' || route.body === undefined)) return
  throw new HttpFailure(415, rpcStatus('INVALID_ARGUMENT', `Send the request body as JSON with Content-Type application/json; received ${type === '' ? 'no Content-Type' : `"${type.slice(0, 100)}"`}.`))
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `Invalid JSON payload received: the ${what} must be a JSON object.`))
  return value as Record<string, unknown>
}

/**
 * No body: nothing, blanks, or the JSON string `""`, which google-gax's REST transport sends when
 * a request has nothing left for the body (a POST without a body binding such as
 * operations:cancel, or a body field whose only member went into the path).
 */
function emptyBody(body: Buffer): boolean {
  if (body.length === 0) return true
  // Most bodies are a JSON object: no need to decode them twice to see that.
  if (body[0] === 0x7b) return false
  const text = body.toString('utf8').trim()
  return text === '' || text === '""'
}

/** A request's query parameters: each name's values in order, the names in the order they came. */
export type QueryParams = ReadonlyMap<string, readonly string[]>

/** What routing reads of a request's target: the path routes match, and the query string (undefined: none). */
export interface RequestTarget {
  readonly path: string
  readonly query: QueryParams | undefined
}

/**
 * A plain target: a path of only characters a URL path keeps as they are (no `%`, `.`, `\\`, `?`),
 * then perhaps a query string of `name=value` pairs of unreserved characters only (no `%`, `+`,
 * `;`). Parsing it as a URL changes nothing: its path is its text up to `?`, its pairs the rest
 * split at `&` and `=`.
 */
const PLAIN_TARGET = /^\/[\w\-~!$&'()*+,;=:@/]*(?:\?[\w\-.~]+=[\w\-.~]*(?:&[\w\-.~]+=[\w\-.~]*)*)?$/

/** The path (`%3A` read as `:`) and query string of a request's target, as the URL parser reads them. */
export function requestTarget(raw: string | undefined): RequestTarget {
  // Most targets are plain (`?pageSize=5&pageToken=...` included): no URL object made per request.
  if (raw !== undefined && PLAIN_TARGET.test(raw)) {
    const mark = raw.indexOf('?')
    return mark < 0 ? { path: raw, query: undefined } : { path: raw.slice(0, mark), query: plainQuery(raw, mark + 1) }
  }
  // Appended, not resolved: a path starting with "//" would otherwise read as a host name.
  const url = new URL(`http://localhost${raw?.startsWith('/') === true ? raw : `/${raw ?? ''}`}`)
  // Routes match the raw path (an encoded "/" stays inside its segment); only the bound values are decoded.
  return { path: url.pathname.replace(/%3A/gi, ':'), query: paramsOf(url.searchParams) }
}

/** The parameters of a {@link PLAIN_TARGET}'s query string, from `at` on: what URLSearchParams reads of it. */
function plainQuery(target: string, at: number): QueryParams {
  const params = new Map<string, string[]>()
  while (at < target.length) {
    const amp = target.indexOf('&', at)
    const end = amp < 0 ? target.length : amp
    const eq = target.indexOf('=', at)
    addParam(params, target.slice(at, eq), target.slice(eq + 1, end))
    at = end + 1
  }
  return params
}

function paramsOf(search: URLSearchParams): QueryParams {
  const params = new Map<string, string[]>()
  for (const [name, value] of search) addParam(params, name, value)
  return params
}

function addParam(params: Map<string, string[]>, name: string, value: string): void {
  const values = params.get(name)
  if (values === undefined) params.set(name, [value])
  else values.push(value)
}

/** The request message of a call: path-bound fields, then the body where the route puts it, then query parameters. */
export function buildRequest(route: Route, match: RegExpExecArray, query: QueryParams | undefined, body: Buffer, contentType: string): { request: Record<string, unknown>; upload: Uint8Array | undefined } {
  let request: Record<string, unknown> = {}
  let upload: Uint8Array | undefined
  if (route.multipart) {
    const boundary = boundaryOf(contentType)
    if (boundary !== undefined && boundary.length > MAX_BOUNDARY) throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `The multipart boundary is ${boundary.length} characters; RFC 2046 allows at most ${MAX_BOUNDARY}.`))
    const parts = parseMultipart(body, contentType)
    const shape = `A media upload is a multipart body of at most ${MAX_PARTS} parts: a "metadata" JSON part ({ ragFile, uploadRagFileConfig }) and a "file" part`
    if (!parts || parts.length === 0) throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `${shape}.`))
    // Two parts at least (unnamed ones are taken in that order, as multipart/related sends them), one file.
    if (parts.length === 1) throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `${shape}; this one has a single part.`))
    if (parts.filter((p) => p.name === 'file').length > 1) throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `${shape}; this one has several "file" parts (upload one file per request).`))
    const metadata = parts.find((p) => p.name === 'metadata') ?? parts.find((p) => (p.headers['content-type'] ?? '').includes('json')) ?? parts[0]
    const file = parts.find((p) => p.name === 'file') ?? parts.find((p) => p !== metadata)
    request = asObject(parseJson(metadata?.body ?? Buffer.from('{}'), 'metadata part'), 'metadata part')
    upload = file?.body
  } else if (route.body !== undefined && !emptyBody(body)) {
    const parsed = asObject(parseJson(body, 'request body'), 'request body')
    if (route.body === '*') request = parsed
    else request[route.body] = parsed
  } else if (route.body === undefined && !emptyBody(body) && body.toString('utf8').trim() !== '{}') {
    // (An empty JSON object carries no field: Google's front end takes it, and the Gen AI SDK's DELETEs send one.)
    throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `${route.method} ${route.template} takes no body; send its fields as query parameters.`))
  }
  for (const [key, values] of query ?? []) {
    if (TRANSPORT_PARAMS.has(key)) continue
    if (key.includes('.') ? key.split('.').some((part) => FORBIDDEN_KEYS.has(part)) : FORBIDDEN_KEYS.has(key)) {
      throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${key}": Cannot bind query parameter.`, [{ field: key, description: 'not a field of this request' }]))
    }
    setPath(request, key, values.length === 1 ? values[0] : values)
  }
  route.compiled.fields.forEach((field, i) => {
    const raw = match[i + 1] as string
    let value = raw
    try {
      if (raw.includes('%')) value = decodeURIComponent(raw)
    } catch {
      throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `The request path is not valid percent-encoding: ${raw.slice(0, 200)}`))
    }
    setPath(request, field, value)
  })
  return { request, upload }
}
