import type { IncomingMessage, ServerResponse } from 'node:http'
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

export function send(res: ServerResponse, httpStatus: number, body: unknown): void {
  const text = JSON.stringify(body)
  const headers: Record<string, string | number> = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }
  // The rest of the body is still on the connection: it must not be read as the next request.
  if (cutShort.has(res.req)) headers['connection'] = 'close'
  res.writeHead(httpStatus, headers)
  res.end(text)
}

export function sendStatus(res: ServerResponse, status: RpcStatus, httpStatus = httpStatusOf(status.code)): void {
  send(res, httpStatus, { error: { code: httpStatus, message: status.message, status: codeName(status.code), ...(status.details ? { details: status.details } : {}) } })
}

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > limit) throw new HttpFailure(413, rpcStatus('INVALID_ARGUMENT', `The request body is ${declared} bytes; this server takes at most ${limit} (maxBodyBytes).`))
  const gone = (): Error => Object.assign(new Error('the client went away'), { code: 'ECONNRESET' })
  if (req.destroyed) return Promise.reject(gone())
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0))
  // Events rather than an async iterator: a small body is one 'data' and one 'end', with no promise per chunk.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size <= limit) chunks.push(chunk)
      else {
        done()
        // Not read any further (a body without a declared length has no bound): the 413 is sent
        // and then the connection closes (see `send`).
        req.pause()
        cutShort.add(req)
        reject(new HttpFailure(413, rpcStatus('INVALID_ARGUMENT', `The request body is larger than ${limit} bytes (maxBodyBytes).`)))
      }
    }
    const onEnd = (): void => {
      done()
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks))
    }
    const onError = (error: Error): void => {
      done()
      reject(error)
    }
    // Closed before its end: the client went away.
    const onClose = (): void => onError(gone())
    const done = (): void => {
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
export async function drain(req: IncomingMessage, limit: number): Promise<void> {
  await readBody(req, limit).catch(() => undefined)
}
