import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { SHARED_ABOVE_BYTES, sharedCopy } from '../rpc/shared-bytes.js'
import { codeName, httpStatusOf, rpcStatus, type RpcStatus } from '../rpc/status.js'
import { clientOf } from '../transport/in-flight.js'
import type { Receiving } from '../transport/receiving.js'

/**
 * How the REST edge reads bodies and answers: JSON, Google's error JSON for a Status, a body read
 * within the server's limit. The console answers the same way (the composition root hands it these).
 */

/** A request refused before it reached a method: its HTTP status and Google's Status. */
export class HttpFailure extends Error {
  constructor(readonly httpStatus: number, readonly status: RpcStatus) {
    super(status.message)
  }
}

/** Requests whose body was left partly unread (over the limit): their answer closes the connection. */
const cutShort = new WeakSet<IncomingMessage>()

/**
 * The most JSON one answer holds, in bytes. A page of a thousand large memories or events, or
 * thousands of large contexts, would otherwise be written into one string until V8 refuses it
 * (about 512 Mi characters, seconds later): the caller is told to ask for less instead (OUT_OF_RANGE).
 * A write's answer echoes its request, which the body limit keeps far below this.
 */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024

/** A response is written this many characters at a time (each write's completion is its progress). */
const SEND_PIECE = 64 * 1024

/** Thrown by {@link JsonPieces} once the answer passes its bound. */
class TooLarge extends Error {}

/**
 * JSON text in pieces of about {@link SEND_PIECE} characters, with its length in UTF-8 bytes,
 * refused ({@link TooLarge}) as soon as it passes `maxBytes`: for the answers {@link fitsSurely}
 * cannot vouch for, and Server-Sent Events. Lists in the value's top levels (a list method's page,
 * the contexts of retrieveContexts, the messages of a stream) are written an element at a time, so
 * an answer too large is found once the elements written pass the bound, not after all of it is
 * one string; what holds no list is one `JSON.stringify`.
 */
class JsonPieces {
  readonly pieces: string[] = []
  bytes = 0
  #parts: string[] = []
  #length = 0

  constructor(readonly maxBytes: number) {}

  /** Text as it is (ASCII punctuation, event framing). */
  text(text: string): void {
    this.#parts.push(text)
    this.#length += text.length
    if (this.#length >= SEND_PIECE) this.#flush()
  }

  /** `value` as JSON.stringify writes it (a list element that has no JSON form is `null`; the top level too). */
  value(value: unknown, depth = 0): void {
    if (!this.#member(value, depth)) this.text('null')
  }

  /** The pieces, the last one flushed. */
  finish(): { readonly pieces: string[]; readonly bytes: number } {
    this.#flush()
    return { pieces: this.pieces, bytes: this.bytes }
  }

  /** Writes `value`; false (nothing written) when JSON leaves it out (undefined, a function, a symbol). */
  #member(value: unknown, depth: number): boolean {
    if (typeof value !== 'object' || value === null || depth > 2) return this.#leaf(value)
    // A value with a toJSON (a list's too) is what that writes: JSON.stringify's own.
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return this.#leaf(value)
    if (Array.isArray(value)) {
      this.text('[')
      for (let i = 0; i < value.length; i++) {
        if (i > 0) this.text(',')
        // The elements of the outermost list (a stream's messages) are walked too; those of inner lists are leaves.
        if (depth === 0) this.value(value[i] as unknown, depth + 1)
        else if (!this.#leaf(value[i])) this.text('null')
      }
      this.text(']')
      return true
    }
    if (!holdsObjects(value)) return this.#leaf(value)
    this.text('{')
    let first = true
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue
      const member: unknown = (value as Record<string, unknown>)[key]
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue
      this.text(`${first ? '' : ','}${JSON.stringify(key)}:`)
      first = false
      this.#member(member, depth + 1)
    }
    this.text('}')
    return true
  }

  #leaf(value: unknown): boolean {
    let text: string | undefined
    try {
      text = JSON.stringify(value)
    } catch (error) {
      // One element past what V8 writes into a string.
      if (error instanceof RangeError) throw new TooLarge()
      throw error
    }
    if (text === undefined) return false
    if (text.length < SEND_PIECE) this.text(text)
    else {
      this.#flush()
      this.#add(text)
    }
    return true
  }

  #flush(): void {
    if (this.#length === 0) return
    const parts = this.#parts
    this.#add(parts.length === 1 ? (parts[0] as string) : parts.join(''))
    this.#parts = []
    this.#length = 0
  }

  #add(piece: string): void {
    this.pieces.push(piece)
    this.bytes += Buffer.byteLength(piece)
    if (this.bytes > this.maxBytes) throw new TooLarge()
  }
}

/** Whether an object has a member that is an object or a list (else it is written whole). */
function holdsObjects(value: object): boolean {
  for (const key in value) {
    const member: unknown = (value as Record<string, unknown>)[key]
    if (typeof member === 'object' && member !== null) return true
  }
  return false
}

/**
 * The values {@link fitsSurely} looks at before it leaves the answer to {@link JsonPieces}: a
 * page holds a few hundred; one holding more is large, or not plain JSON (a cycle).
 */
const SURE_VALUES = 4096

/**
 * Whether `value`'s JSON is surely at most `maxBytes` of UTF-8, judged without writing it: each
 * string counted at 6 bytes a UTF-16 unit (a `\u0000` escape; no character takes more), each
 * number at 25, keys likewise, plus punctuation. Most answers are a few kilobytes, and one
 * `JSON.stringify` of them costs less than {@link JsonPieces}'s walk (`bench http`, REST's reads
 * against a bare server); false for anything else: too large to be sure of, more than
 * {@link SURE_VALUES} values, or a value that is not plain JSON data (a `toJSON`, a class).
 */
function fitsSurely(value: unknown, maxBytes: number): boolean {
  let bytes = 0
  let values = 0
  const pending: unknown[] = [value]
  while (pending.length > 0) {
    const v = pending.pop()
    if (++values > SURE_VALUES) return false
    switch (typeof v) {
      case 'string':
        bytes += 6 * v.length + 2
        break
      case 'number':
      case 'boolean':
      case 'undefined':
        // The longest number JSON writes: -0.0000012345678901234567 (25 characters).
        bytes += 25
        break
      case 'object': {
        if (v === null) {
          bytes += 4
          break
        }
        // What JSON.stringify would ask to write itself (a toJSON, own or inherited, enumerable or
        // not), or a class's instance: left to JsonPieces.
        const proto: unknown = Object.getPrototypeOf(v)
        if ('toJSON' in v) return false
        if (Array.isArray(v)) {
          // Judged before its elements are listed: a sparse array of 2^28 holes is not walked.
          if (proto !== Array.prototype || v.length > SURE_VALUES - values - pending.length) return false
          bytes += 2 + v.length
          for (let i = 0; i < v.length; i++) pending.push(v[i])
        } else {
          if (proto !== Object.prototype && proto !== null) return false
          bytes += 2
          for (const key in v) {
            if (values + pending.length >= SURE_VALUES) return false
            bytes += 6 * key.length + 4
            pending.push((v as Record<string, unknown>)[key])
          }
        }
        break
      }
      default:
        // A function, symbol or bigint: left to JsonPieces, which writes what JSON.stringify would.
        return false
    }
    if (bytes > maxBytes) return false
  }
  return true
}

/** `value` as JSON.stringify writes it, in pieces, with its length in bytes; undefined when over `maxBytes`. */
export function jsonPieces(value: unknown, maxBytes = MAX_RESPONSE_BYTES): { readonly pieces: string[]; readonly bytes: number } | undefined {
  if (fitsSurely(value, maxBytes)) {
    const whole = JSON.stringify(value)
    if (whole !== undefined) return { pieces: [whole], bytes: Buffer.byteLength(whole) }
  }
  const json = new JsonPieces(maxBytes)
  try {
    json.value(value)
    return json.finish()
  } catch (error) {
    if (error instanceof TooLarge) return undefined
    throw error
  }
}

/** What an answer over {@link MAX_RESPONSE_BYTES} gets instead. */
function tooLarge(): RpcStatus {
  return rpcStatus('OUT_OF_RANGE', `The response would be more than ${MAX_RESPONSE_BYTES / (1024 * 1024)} MiB of JSON, the most this server sends in one answer; ask for less at once: a smaller page (pageSize), or fewer results (topK, resultsCount).`)
}

/**
 * How long an answer being sent may make no progress (no piece taken by the connection) before its
 * connection is closed, by the server each connection came to (see {@link boundSends}).
 */
const sendIdleMs = new WeakMap<Socket, number>()
/** Without {@link boundSends} (a server this module does not know of): the server's default. */
export const SEND_IDLE_MS = 10_000

/**
 * Bounds how long an answer being sent on `server` may make no progress: `idleMs`, then its
 * connection is closed. A client that asks and never reads would otherwise hold its request slot,
 * and the answer in memory, for as long as it keeps the connection open. The time counts from the
 * answer's first byte: a call may compute for minutes before it answers.
 */
export function boundSends(server: Server, idleMs: number): void {
  server.on('connection', (socket: Socket) => sendIdleMs.set(socket, idleMs))
}

/**
 * Closes `res`'s connection if it has not finished within the send idle time of no progress:
 * `progress` is told of each piece the connection took. Counted from the moment the answer is
 * on the connection: one queued behind an earlier answer on it (pipelined) waits for its turn.
 */
function watchSend(res: ServerResponse): { progress(): void } {
  const idleMs = sendIdleMs.get(res.req.socket) ?? SEND_IDLE_MS
  let timer: NodeJS.Timeout | undefined
  let done = false
  const start = (): void => {
    if (done) return
    // Destroying the response closes its connection: 'close' frees the request's slot and the pieces.
    timer = setTimeout(() => res.destroy(), idleMs)
    timer.unref()
  }
  const stop = (): void => {
    done = true
    clearTimeout(timer)
  }
  res.once('finish', stop)
  res.once('close', stop)
  if (res.socket !== null) start()
  else res.once('socket', start)
  return { progress: () => timer?.refresh() }
}

function write(res: ServerResponse, httpStatus: number, type: string, pieces: string[], bytes: number): void {
  const headers: Record<string, string | number> = { 'content-type': type, 'content-length': bytes }
  // The rest of the body is still on the connection: it must not be read as the next request.
  if (cutShort.has(res.req)) headers['connection'] = 'close'
  res.writeHead(httpStatus, headers)
  const first = pieces[0] ?? ''
  if (pieces.length <= 1 && first.length <= SEND_PIECE) {
    res.end(first)
    // Taken by the connection at once (most answers): nothing left to watch.
    if (res.socket !== null && res.socket.writableLength === 0) return
    watchSend(res)
    return
  }
  if (res.destroyed) return
  // Larger answers go a piece at a time as the connection takes them (each piece is progress), and
  // the pieces sent are let go.
  const watch = watchSend(res)
  let index = 0
  let offset = 0
  const next = (): string | undefined => {
    const piece = pieces[index]
    if (piece === undefined) return undefined
    if (piece.length - offset <= SEND_PIECE) {
      pieces[index++] = ''
      const rest = offset === 0 ? piece : piece.slice(offset)
      offset = 0
      return rest
    }
    let end = offset + SEND_PIECE
    // Not between the halves of a surrogate pair: each half alone would be written as U+FFFD.
    const last = piece.charCodeAt(end - 1)
    if (last >= 0xd800 && last <= 0xdbff) end--
    const slice = piece.slice(offset, end)
    offset = end
    return slice
  }
  const pump = (): void => {
    watch.progress()
    for (let piece = next(); piece !== undefined; piece = next()) if (!res.write(piece)) return
    res.off('drain', pump)
    res.end()
  }
  const stop = (): void => {
    res.off('drain', pump)
    pieces.length = 0
  }
  res.once('close', stop)
  res.on('drain', pump)
  pump()
}

/** Sends `body` as JSON; one over {@link MAX_RESPONSE_BYTES} is answered OUT_OF_RANGE instead. */
export function send(res: ServerResponse, httpStatus: number, body: unknown): void {
  const json = jsonPieces(body)
  if (json === undefined) return sendStatus(res, tooLarge())
  write(res, httpStatus, 'application/json; charset=utf-8', json.pieces, json.bytes)
}

/**
 * The messages of a server-streaming RPC as Google's REST sends them: Server-Sent Events (`data:`
 * lines, one event a message) when the client asks `alt=sse`, else one JSON array.
 */
export function sendStream(res: ServerResponse, messages: readonly unknown[], sse: boolean): void {
  if (!sse) return send(res, 200, messages)
  const json = new JsonPieces(MAX_RESPONSE_BYTES)
  try {
    for (const message of messages) {
      json.text('data: ')
      json.value(message, 1)
      json.text('\r\n\r\n')
    }
    json.finish()
  } catch (error) {
    if (error instanceof TooLarge) return sendStatus(res, tooLarge())
    throw error
  }
  write(res, 200, 'text/event-stream; charset=utf-8', json.pieces, json.bytes)
}

export function sendStatus(res: ServerResponse, status: RpcStatus, httpStatus = httpStatusOf(status.code)): void {
  send(res, httpStatus, { error: { code: httpStatus, message: status.message, status: codeName(status.code), ...(status.details ? { details: status.details } : {}) } })
}

const NO_BODY = Buffer.alloc(0)

function gone(): Error {
  return Object.assign(new Error('the client went away'), { code: 'ECONNRESET' })
}

/**
 * The body of a request its framing says has none (no Transfer-Encoding, no Content-Length above
 * 0: RFC 9112 section 6.3), such as most reads: known at once, with nothing to wait for, no timer
 * and no listener. Undefined when a body may follow (then {@link receiveBody}).
 */
function framedEmpty(req: IncomingMessage): Buffer | undefined {
  const headers = req.headers
  if (headers['transfer-encoding'] !== undefined) return undefined
  const length = headers['content-length']
  return length === undefined || Number(length) === 0 ? NO_BODY : undefined
}

/** What {@link receiveBody} hands over, once: the body, or why there is none (an HttpFailure, or the client gone). */
export type Received = { readonly body: Buffer } | { readonly failure: unknown }

/**
 * Pieces of a body smaller than this are copied together as they come (into buffers growing from
 * {@link GATHER_FIRST} to {@link GATHER_MOST} bytes) rather than kept as they arrive. Each piece is
 * a Buffer of its own viewing the socket's read: a body sent as millions of one-byte chunks
 * (Transfer-Encoding: chunked) kept that way held hundreds of bytes of memory per byte of body.
 * Larger pieces (a body with Content-Length comes as whole reads) are kept without a copy.
 */
const SMALL_PIECE = 16 * 1024
const GATHER_FIRST = 4 * 1024
const GATHER_MOST = 64 * 1024

/**
 * Receives a request's body within the limits and calls `done` once, with the body or with why it
 * failed: over `limit` (413), the bodies being received over `receiving`'s budget or this client's
 * share of it (429), no progress for its idle time (408), ended to make room for others after
 * `receiving.holdMs` (408), the client gone. The edge reads each body once, here, and hands it on
 * (the console's endpoints get it too).
 * Events rather than a promise: a small body is one 'data' and one 'end', and the REST edge calls
 * this for every request, so the promise and its hops per request showed in its cost against a
 * bare `node:http` server (bench/suites/http.ts).
 */
export function receiveBody(req: IncomingMessage, limit: number, receiving: Receiving | undefined, done: (received: Received) => void): void {
  const empty = framedEmpty(req)
  if (empty !== undefined) return done(req.destroyed ? { failure: gone() } : { body: empty })
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > limit) return done({ failure: new HttpFailure(413, rpcStatus('INVALID_ARGUMENT', `The request body is ${declared} bytes; this server takes at most ${limit} (--max-body-mb, or maxBodyBytes).`)) })
  if (req.destroyed) return done({ failure: gone() })
  if (req.readableEnded) return done({ body: NO_BODY })
  const chunks: Buffer[] = []
  let size = 0
  // Small pieces copied together: `gather` holds the last `gathered` bytes of the body so far.
  let gather: Buffer | undefined
  let gathered = 0
  const fail = (failure: unknown): void => {
    settle()
    done({ failure })
  }
  // Left unread from here (no bound, or no end): the answer closes the connection (see `send`).
  const cut = (httpStatus: number, status: RpcStatus): void => {
    req.pause()
    cutShort.add(req)
    fail(new HttpFailure(httpStatus, status))
  }
  // Counted in the bodies being received, which also ends it after their idle time without bytes.
  const counted = receiving?.start(clientOf(req.socket.remoteAddress), (message) => cut(408, rpcStatus('DEADLINE_EXCEEDED', message)))
  const gathering = (): void => {
    if (gather === undefined || gathered === 0) return
    chunks.push(gather.subarray(0, gathered))
    gather = undefined
    gathered = 0
  }
  const keep = (chunk: Buffer): void => {
    // The first piece is kept as it is: most bodies come in one.
    if (chunk.length >= SMALL_PIECE || size === chunk.length) {
      gathering()
      chunks.push(chunk)
      return
    }
    if (gather === undefined || gathered + chunk.length > gather.length) {
      gathering()
      gather = Buffer.allocUnsafe(Math.min(GATHER_MOST, Math.max(GATHER_FIRST, size)))
    }
    gathered += chunk.copy(gather, gathered)
  }
  const onData = (chunk: Buffer): void => {
    size += chunk.length
    const refused = counted?.add(chunk.length)
    if (refused !== undefined) return cut(429, rpcStatus('RESOURCE_EXHAUSTED', refused))
    if (size <= limit) keep(chunk)
    else cut(413, rpcStatus('INVALID_ARGUMENT', `The request body is larger than ${limit} bytes (--max-body-mb, or maxBodyBytes).`))
  }
  const onEnd = (): void => {
    settle()
    gathering()
    // A large body is joined a slice at a time, into shared memory (rpc/shared-bytes.ts): the
    // threads that read an upload get it without a copy.
    if (size > SHARED_ABOVE_BYTES) sharedCopy(chunks).then((body) => done({ body }), (failure: unknown) => done({ failure }))
    else done({ body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) })
  }
  // Closed before its end: the client went away.
  const onClose = (): void => fail(gone())
  const settle = (): void => {
    counted?.end()
    req.off('data', onData)
    req.off('end', onEnd)
    req.off('error', fail)
    req.off('close', onClose)
  }
  req.on('data', onData)
  req.on('end', onEnd)
  req.on('error', fail)
  req.on('close', onClose)
}
