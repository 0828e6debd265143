import type { IncomingMessage, ServerResponse } from 'node:http'
import { SHARED_ABOVE_BYTES, sharedCopy } from '../rpc/shared-bytes.js'
import { codeName, httpStatusOf, rpcStatus, type RpcStatus } from '../rpc/status.js'

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

/**
 * How the edge receives bodies before a request takes a slot (http/server.ts): a body that sends
 * nothing for `idleMs` ends with 408, and the bodies being received at once hold at most
 * `budgetBytes` (then 429), so slow or stalled senders hold neither slots nor unbounded memory.
 */
export class Receiving {
  /** Bytes of bodies received so far and not yet complete. */
  pending = 0
  constructor(readonly idleMs: number, readonly budgetBytes: number) {}
}

/** Bodies already read, so that a later reader (the console's explain) gets the same bytes. */
const bodies = new WeakMap<IncomingMessage, Buffer>()

const NO_BODY = Buffer.alloc(0)

function gone(): Error {
  return Object.assign(new Error('the client went away'), { code: 'ECONNRESET' })
}

/**
 * The body of a request its framing says has none (no Transfer-Encoding, no Content-Length above
 * 0: RFC 9112 section 6.3), such as most reads: known at once, with nothing to wait for, no timer
 * and no listener. Undefined when a body may follow (then {@link readBody}).
 */
export function framedEmpty(req: IncomingMessage): Buffer | undefined {
  const headers = req.headers
  if (headers['transfer-encoding'] !== undefined) return undefined
  const length = headers['content-length']
  return length === undefined || Number(length) === 0 ? NO_BODY : undefined
}

export async function readBody(req: IncomingMessage, limit: number, receiving?: Receiving): Promise<Buffer> {
  const empty = framedEmpty(req)
  if (empty !== undefined) {
    if (req.destroyed) throw gone()
    return empty
  }
  const known = bodies.get(req)
  if (known !== undefined) return known
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > limit) throw new HttpFailure(413, rpcStatus('INVALID_ARGUMENT', `The request body is ${declared} bytes; this server takes at most ${limit} (maxBodyBytes).`))
  if (req.destroyed) throw gone()
  if (req.readableEnded) return NO_BODY
  // Events rather than an async iterator: a small body is one 'data' and one 'end', with no promise per chunk.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    // Left unread from here (no bound, or no end): the answer closes the connection (see `send`).
    const cut = (httpStatus: number, status: RpcStatus): void => {
      done()
      req.pause()
      cutShort.add(req)
      reject(new HttpFailure(httpStatus, status))
    }
    const idle = receiving !== undefined
      ? setTimeout(() => cut(408, rpcStatus('DEADLINE_EXCEEDED', `The request body made no progress for ${receiving.idleMs / 1000} s (${size} bytes received); send it without pauses.`)), receiving.idleMs)
      : undefined
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      idle?.refresh()
      if (receiving !== undefined) {
        receiving.pending += chunk.length
        if (receiving.pending > receiving.budgetBytes) {
          return cut(429, rpcStatus('RESOURCE_EXHAUSTED', `The server is receiving ${receiving.budgetBytes} bytes of request bodies already; retry shortly, or send fewer large bodies at once.`))
        }
      }
      if (size <= limit) chunks.push(chunk)
      else cut(413, rpcStatus('INVALID_ARGUMENT', `The request body is larger than ${limit} bytes (maxBodyBytes).`))
    }
    const onEnd = (): void => {
      done()
      // A large body is joined a slice at a time, into shared memory (rpc/shared-bytes.ts): the
      // threads that read an upload get it without a copy.
      const joined = size > SHARED_ABOVE_BYTES ? sharedCopy(chunks) : Promise.resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks))
      joined.then((body) => {
        bodies.set(req, body)
        resolve(body)
      }, reject)
    }
    const onError = (error: Error): void => {
      done()
      reject(error)
    }
    // Closed before its end: the client went away.
    const onClose = (): void => onError(gone())
    const done = (): void => {
      clearTimeout(idle)
      if (receiving !== undefined) receiving.pending -= size
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('close', onClose)
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('close', onClose)
  })
}

/** Reads and drops a body the server will not use (so the connection can be reused). */
export async function drain(req: IncomingMessage, limit: number, receiving?: Receiving): Promise<void> {
  await readBody(req, limit, receiving).catch(() => undefined)
}
