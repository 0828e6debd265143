import { cpSync, rmSync } from 'node:fs'
import { once } from 'node:events'
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer } from '@quarry/adapters'
import { runServe } from '../../packages/adapters/src/cli/serve.js'
import { scratchDir } from '../support/engine-state.js'

/**
 * GET /readyz: 503 while `listen` replays the data folder's write-ahead log, 200 once it is
 * replayed. No sleeps: the replay gives the event loop a turn after each write (transport/durable.ts),
 * so a log of 200 writes spans 200 turns, while each request here is answered within a few.
 */
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const hashing = createHashingEmbedder({ dimensions: 32 })
const WRITES = 200

/** One raw HTTP request (Host and Origin as given): status, body and headers. */
function raw(port: number, path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; body: unknown; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text), retryAfter: res.headers['retry-after'] as string | undefined }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('GET /readyz', () => {
  it('answers 503 while the data folder is restored and 200 once it is; the APIs wait behind it; Host and Origin checks still apply', async () => {
    // A data folder whose log holds writes: copied while its server runs (no checkpoint since the first, empty one).
    const live = scratchDir('quarry-ready-live-')
    const copy = scratchDir('quarry-ready-copy-')
    dirs.push(live, copy)
    const first = createServer({ embedder: hashing, dataDir: live, durability: 'log', snapshotDelayMs: 3_600_000, console: false })
    const { url } = await first.listen()
    expect(await raw(Number(new URL(url).port), '/readyz')).toEqual({ status: 200, body: { ready: true }, retryAfter: undefined })
    const writes: [string, unknown][] = [
      ['/v1beta/corpora', { name: 'corpora/c' }],
      ['/v1beta/corpora/c/documents', { name: 'corpora/c/documents/d' }],
      ...Array.from({ length: WRITES - 2 }, (_, i): [string, unknown] => ['/v1beta/corpora/c/documents/d/chunks', { name: `corpora/c/documents/d/chunks/k${String(i).padStart(3, '0')}`, data: { stringValue: `desert spice ${i}` } }]),
    ]
    for (const [path, body] of writes) {
      expect((await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).status).toBe(200)
    }
    cpSync(live, copy, { recursive: true })
    // The copy's LOCK names this (live) process.
    rmSync(join(copy, 'LOCK'))
    await first.close()

    const second = createServer({ embedder: hashing, dataDir: copy, durability: 'log', console: false })
    const listening = second.listen()
    await once(second.server, 'listening')
    const port = (second.server.address() as AddressInfo).port
    expect(second.ready).toBe(false)
    expect(await raw(port, '/readyz')).toEqual({ status: 503, body: { ready: false, reason: 'restoring the data folder' }, retryAfter: '1' })
    expect(await raw(port, '/readyz', {}, 'HEAD')).toEqual({ status: 503, body: undefined, retryAfter: '1' })
    expect(await raw(port, '/v1beta/corpora')).toEqual({
      status: 503,
      body: { error: { code: 503, message: 'The server is restoring its data folder; retry in a moment (GET /readyz answers 200 once it is done).', status: 'UNAVAILABLE' } },
      retryAfter: '1',
    })
    // Who may call is checked first, restoring or not: a foreign Host (DNS rebinding) or page Origin gets 403.
    expect((await raw(port, '/readyz', { host: 'evil.example' })).status).toBe(403)
    expect((await raw(port, '/readyz', { origin: 'https://evil.example' })).status).toBe(403)

    expect(second.ready).toBe(false)
    await listening
    expect(second.ready).toBe(true)
    expect(second.replayed).toBe(WRITES)
    expect(await raw(port, '/readyz')).toEqual({ status: 200, body: { ready: true }, retryAfter: undefined })
    expect((await raw(port, '/readyz', { host: 'evil.example' })).status).toBe(403)
    const chunks = await raw(port, '/v1beta/corpora/c/documents/d/chunks')
    expect(chunks.status).toBe(200)
    expect((chunks.body as { chunks: { name: string; data: unknown }[] }).chunks.slice(0, 2).map((c) => [c.name, c.data])).toEqual([
      ['corpora/c/documents/d/chunks/k000', { stringValue: 'desert spice 0' }],
      ['corpora/c/documents/d/chunks/k001', { stringValue: 'desert spice 1' }],
    ])
    await second.close()
  })

  it('answers 200 from the first request without a data folder', async () => {
    const server = createServer({ embedder: hashing, console: false })
    const { port } = await server.listen()
    expect(await raw(port, '/readyz')).toEqual({ status: 200, body: { ready: true }, retryAfter: undefined })
    // Only GET and HEAD: other methods are not a route.
    expect((await raw(port, '/readyz', {}, 'POST')).status).toBe(404)
    await server.close()
  })

  it('quarry serve --data names the route when it starts, and answers 200 there', async () => {
    const data = scratchDir('quarry-ready-serve-')
    dirs.push(data)
    const lines: string[] = []
    const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void lines.push(parts.join(' ')))
    const stop = new AbortController()
    try {
      const serving = runServe(['--port', '0', '--embedder', 'hashing', '--data', data, '--no-console'], { signal: stop.signal })
      await vi.waitFor(() => expect(lines.some((l) => l.startsWith('Quarry is serving on '))).toBe(true))
      const url = /serving on (\S+)/.exec(lines.find((l) => l.startsWith('Quarry is serving on ')) ?? '')?.[1] as string
      expect(lines).toContain(`  Readiness           ${url}/readyz  (200 now; 503 while a restart replays --data's log)`)
      expect(await raw(Number(new URL(url).port), '/readyz')).toEqual({ status: 200, body: { ready: true }, retryAfter: undefined })
      stop.abort()
      expect(await serving).toBe(0)
    } finally {
      log.mockRestore()
    }
  })
})
