import type { IncomingMessage, ServerResponse } from 'node:http'
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

function write(res: ServerResponse, httpStatus: number, type: string, text: string): void {
  const headers: Record<string, string | number> = { 'content-type': type, 'content-length': Buffer.byteLength(text) }
  // The rest of the body is still on the connection: it must not be read as the next request.
  if (cutShort.has(res.req)) headers['connection'] = 'close'
  res.writeHead(httpStatus, headers)
  res.end(text)
}

export function send(res: ServerResponse, httpStatus: number, body: unknown): void {
  write(res, httpStatus, 'application/json; charset=utf-8', JSON.stringify(body))
}

/**
 * The messages of a server-streaming RPC as Google's REST sends them: Server-Sent Events (`data:`
 * lines, one event a message) when the client asks `alt=sse`, else one JSON array.
 */
export function sendStream(res: ServerResponse, messages: readonly unknown[], sse: boolean): void {
  if (!sse) return send(res, 200, messages)
  write(res, 200, 'text/event-stream; charset=utf-8', messages.map((m) => `data: ${JSON.stringify(m)}\r\n\r\n`).join(''))
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
  const counted = receiving?.start(clientOf(req.socket.remoteAddress), (message) => cut(408, rpcStatus('DEADLINE_EXCEEDED', message)))
  const idle = receiving !== undefined
    ? setTimeout(() => cut(408, rpcStatus('DEADLINE_EXCEEDED', `The request body made no progress for ${receiving.idleMs / 1000} s (${size} bytes received); send it without pauses.`)), receiving.idleMs)
    : undefined
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
    idle?.refresh()
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
    clearTimeout(idle)
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
