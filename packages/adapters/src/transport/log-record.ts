import type { UploadContent } from '../rpc/methods.js'
import type { Trace } from '../rpc/replay.js'

/** One acknowledged write as logged: the method, its request, its upload and what it read from outside. */
export interface LogRecord {
  /** `<service>.<rpc>@<version>`: the bound method. */
  readonly k: string
  readonly r: Record<string, unknown>
  /** Upload content inside the JSON, as records written before {@link encodeLogRecord} kept it: base64 bytes (`b`) or text (`s`). Read, never written. */
  readonly c?: { readonly b: string } | { readonly s: string }
  readonly t: Trace
}

/** A logged write read back: its record and its upload content. */
export interface LoggedWrite {
  readonly record: LogRecord
  readonly content: UploadContent | undefined
}

/** First byte of a record with bytes after its JSON (a JSON record starts with `{`). */
const WITH_BYTES = 0

/** Characters of a text upload encoded as UTF-8 between two turns of the event loop (a few milliseconds). */
const ENCODE_SLICE_CHARS = 1 << 20

/** Where a byte string goes back into the record: a path of keys and indexes from its top (`u`: the upload). */
type Path = readonly (string | number)[]

/**
 * A write as the log keeps it, in parts to be written one after the other. Without bytes, its
 * JSON alone. With an upload, or byte strings in its trace (Uint8Array values: files an import
 * read, vectors), a 0 byte, the JSON's length (u32, little-endian), the JSON, the number of byte
 * strings and each one's length (u32), then their bytes as they are (a text upload as UTF-8,
 * encoded a slice at a time). The JSON has null where a byte string was, and under `b` the path of
 * each: megabytes of bytes are neither turned into base64 nor scanned as JSON, either way.
 */
export async function encodeLogRecord(record: Omit<LogRecord, 'c'>, content: UploadContent | undefined): Promise<Uint8Array[]> {
  const blobs: Uint8Array[][] = []
  const paths: Path[] = []
  const t = withoutBytes(record.t, ['t'], blobs, paths) as Trace
  let x: 's' | 'b' | undefined
  if (content !== undefined) {
    x = typeof content === 'string' ? 's' : 'b'
    blobs.push(typeof content === 'string' ? await utf8InSlices(content) : [content])
    paths.push(['u'])
  }
  if (blobs.length === 0) return [Buffer.from(JSON.stringify(record))]
  const json = Buffer.from(JSON.stringify({ k: record.k, r: record.r, t, b: paths, ...(x ? { x } : {}) }))
  const head = Buffer.alloc(9 + 4 * blobs.length)
  head[0] = WITH_BYTES
  head.writeUInt32LE(json.length, 1)
  head.writeUInt32LE(blobs.length, 5)
  blobs.forEach((parts, i) => head.writeUInt32LE(parts.reduce((n, p) => n + p.byteLength, 0), 9 + 4 * i))
  return [head.subarray(0, 5), json, head.subarray(5), ...blobs.flat()]
}

/** `value` as JSON-able, with null for each Uint8Array in it (pushed to `blobs`, its path to `paths`). */
function withoutBytes(value: unknown, path: Path, blobs: Uint8Array[][], paths: Path[]): unknown {
  if (value instanceof Uint8Array) {
    blobs.push([value])
    paths.push(path)
    return null
  }
  if (Array.isArray(value)) return value.map((v: unknown, i) => withoutBytes(v, [...path, i], blobs, paths))
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: withoutBytes(v, [...path, k], blobs, paths), enumerable: true, writable: true, configurable: true })
    return out
  }
  return value
}

/** `text` as UTF-8, in pieces encoded with a turn of the event loop between them (never splitting a surrogate pair). */
async function utf8InSlices(text: string): Promise<Buffer[]> {
  const out: Buffer[] = []
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + ENCODE_SLICE_CHARS)
    const last = text.charCodeAt(end - 1)
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--
    if (at > 0) await new Promise((resolve) => setImmediate(resolve))
    out.push(Buffer.from(text.slice(at, end), 'utf8'))
    at = end
  }
  return out
}

/** A logged write read back. Throws SyntaxError, RangeError or TypeError when the bytes are not a record. */
export function decodeLogRecord(bytes: Buffer): LoggedWrite {
  if (bytes[0] !== WITH_BYTES) {
    const record = JSON.parse(bytes.toString('utf8')) as LogRecord
    const c = record.c
    return { record, content: c === undefined ? undefined : 's' in c ? c.s : new Uint8Array(Buffer.from(c.b, 'base64')) }
  }
  const length = bytes.readUInt32LE(1)
  const parsed = JSON.parse(bytes.toString('utf8', 5, 5 + length)) as LogRecord & { readonly b: Path[]; readonly x?: 's' | 'b' }
  const at = 5 + length
  const count = bytes.readUInt32LE(at)
  if (count !== parsed.b.length) throw new RangeError('the record names another number of byte strings than it holds')
  let data = at + 4 + 4 * count
  const top: Record<string, unknown> = { t: parsed.t, u: undefined }
  for (let i = 0; i < count; i++) {
    const size = bytes.readUInt32LE(at + 4 + 4 * i)
    if (data + size > bytes.length) throw new RangeError('the record is shorter than its byte strings')
    place(top, parsed.b[i] as Path, new Uint8Array(bytes.buffer, bytes.byteOffset + data, size))
    data += size
  }
  const u = top.u as Uint8Array | undefined
  const content = u === undefined ? undefined : parsed.x === 's' ? Buffer.from(u.buffer, u.byteOffset, u.byteLength).toString('utf8') : new Uint8Array(u)
  return { record: { k: parsed.k, r: parsed.r, t: top.t as Trace }, content }
}

/** Puts `bytes` at `path` under `top` (a TypeError if the path does not lead to a place). */
function place(top: Record<string, unknown>, path: Path, bytes: Uint8Array): void {
  let holder: unknown = top
  for (const key of path.slice(0, -1)) holder = (holder as Record<string | number, unknown>)[key]
  const last = path[path.length - 1]
  if (holder === null || typeof holder !== 'object' || last === undefined) throw new TypeError('a byte string\'s path leads nowhere')
  ;(holder as Record<string | number, unknown>)[last] = bytes
}
