import { Agent, request } from 'node:http'

/**
 * One HTTP request exactly as written — any method, any Host (or none), any bytes in the path and
 * body — with a deadline: fetch would normalize the path, refuse a foreign Host and wait forever.
 */
export interface RawRequest {
  readonly method: string
  /** Sent as is: each character must be in U+0021..U+00FF (Node writes it as latin1). */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  /** `undefined`: leave the Host header out altogether. */
  readonly host?: string | undefined
  readonly body?: Buffer | undefined
}

export type RawAnswer =
  | { readonly kind: 'answer'; readonly status: number; readonly headers: Readonly<Record<string, string | string[] | undefined>>; readonly body: Buffer; readonly ms: number }
  | { readonly kind: 'timeout'; readonly ms: number }
  | { readonly kind: 'error'; readonly message: string; readonly ms: number }

/** Keeps connections open between requests, one at a time, as a client library would. */
export function rawAgent(): Agent {
  return new Agent({ keepAlive: true, maxSockets: 1 })
}

export function sendRaw(port: number, r: RawRequest, options: { readonly timeoutMs: number; readonly agent?: Agent }): Promise<RawAnswer> {
  const started = performance.now()
  const elapsed = (): number => Math.round(performance.now() - started)
  return new Promise((resolve) => {
    let settled = false
    const settle = (answer: RawAnswer): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(answer)
    }
    const headers: Record<string, string> = { ...r.headers }
    if (r.host !== undefined) headers.host = r.host
    if (r.body !== undefined) headers['content-length'] = String(r.body.length)
    const controller = new AbortController()
    const req = request(
      { host: '127.0.0.1', port, method: r.method, path: r.path, headers, setHost: false, signal: controller.signal, ...(options.agent ? { agent: options.agent } : {}) },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => settle({ kind: 'answer', status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: elapsed() }))
        res.on('error', (e) => settle({ kind: 'error', message: e.message, ms: elapsed() }))
      },
    )
    const timer = setTimeout(() => {
      settle({ kind: 'timeout', ms: elapsed() })
      controller.abort()
    }, options.timeoutMs)
    req.on('error', (e) => settle({ kind: 'error', message: e.message, ms: elapsed() }))
    req.end(r.body)
  })
}
