import { request } from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { VertexRagEngine, createServer, type QuarryServer } from '@quarry/adapters'

/**
 * Who may call the local server: only this machine's host names (DNS rebinding), only its own
 * origin unless told (cross-site pages), only JSON bodies on JSON routes ("simple" cross-site
 * posts), only bounded nesting. Raw node:http requests, since fetch will not send a foreign Host.
 */
let server: QuarryServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

async function start(options: Parameters<typeof createServer>[0] = {}): Promise<{ port: number }> {
  server = createServer({ embedder: createHashingEmbedder({ dimensions: 16 }), ...options })
  return server.listen()
}

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly json: { error?: { code: number; status: string; message: string } } & Record<string, unknown>
}

function send(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }), ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({ status: res.statusCode ?? 0, headers: res.headers, json: text === '' ? {} : (JSON.parse(text) as Answer['json']) })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

const JSON_TYPE = { 'content-type': 'application/json' }

describe('who may call the server', () => {
  it('answers only for this machine\'s host names unless told (DNS rebinding)', async () => {
    const { port } = await start()
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'LOCALHOST', `app.localhost:${port}`, `[::1]:${port}`, '192.168.1.20:8080', 'localhost.']) {
      expect((await send(port, 'GET', '/v1beta/corpora', { host })).status, host).toBe(200)
    }
    for (const host of [`evil.example:${port}`, 'attacker.com', 'localhost.attacker.com', '127.0.0.1.nip.io', `evil.example`, 'localhost:80@evil.example', 'localhost:evil.example', '127.0.0.1:x@evil.example']) {
      const answer = await send(port, 'GET', '/v1beta/corpora', { host })
      expect(answer.status, host).toBe(403)
      expect(answer.json.error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' })
      expect(answer.json.error?.message).toContain('--allowed-host')
    }
    // A malformed Host cannot turn into another origin: `localhost:80@evil` with Origin http://evil is refused.
    expect((await send(port, 'POST', '/v1beta/corpora', { host: 'localhost:80@evil.example', origin: 'http://evil.example', ...JSON_TYPE }, '{"name":"corpora/y"}')).status).toBe(403)
    // A refused write writes nothing.
    expect((await send(port, 'POST', '/v1beta/corpora', { host: 'evil.example', ...JSON_TYPE }, '{"name":"corpora/x"}')).status).toBe(403)
    expect((await send(port, 'GET', '/v1beta/corpora', {})).json).toEqual({})
  })

  it('answers the names given with allowedHosts, a leading dot meaning subdomains too', async () => {
    const { port } = await start({ allowedHosts: ['quarry.internal', '.dev.example'] })
    for (const host of ['quarry.internal', 'dev.example:80', 'a.b.dev.example']) expect((await send(port, 'GET', '/v1beta/corpora', { host })).status, host).toBe(200)
    for (const host of ['other.internal', 'xdev.example', 'quarry.internal.evil']) expect((await send(port, 'GET', '/v1beta/corpora', { host })).status, host).toBe(403)
  })

  it('refuses pages of other origins, and serves its own', async () => {
    const { port } = await start()
    const own = { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, ...JSON_TYPE }
    expect((await send(port, 'POST', '/v1beta/corpora', own, '{"name":"corpora/own"}')).status).toBe(200)
    for (const origin of ['https://evil.example', 'null', `http://localhost:${port + 1}`, `http://127.0.0.1:${port}.evil.example`]) {
      const answer = await send(port, 'POST', '/v1beta/corpora', { host: `127.0.0.1:${port}`, origin, ...JSON_TYPE }, '{"name":"corpora/x"}')
      expect(answer.status, origin).toBe(403)
      expect(answer.json.error?.message).toContain('--cors-origin')
      expect(answer.headers['access-control-allow-origin']).toBeUndefined()
    }
    // A preflight from another origin gets no CORS grant either.
    const preflight = await send(port, 'OPTIONS', '/v1beta/corpora', { host: `127.0.0.1:${port}`, origin: 'https://evil.example', 'access-control-request-method': 'POST' })
    expect(preflight.status).toBe(403)
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined()
    const listed = await send(port, 'GET', '/v1beta/corpora', {})
    expect((listed.json.corpora as { name: string }[]).map((c) => c.name)).toEqual(['corpora/own'])
  })

  it('answers CORS, preflights included, for the origins given with corsOrigins', async () => {
    const { port } = await start({ corsOrigins: ['http://localhost:5173'] })
    const origin = 'http://localhost:5173'
    const preflight = await send(port, 'OPTIONS', '/v1beta/corpora', { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-goog-api-client' })
    expect(preflight.status).toBe(204)
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': origin,
      'access-control-allow-methods': 'GET, POST, PATCH, DELETE',
      'access-control-allow-headers': 'content-type, x-goog-api-client',
      'access-control-max-age': '600',
      vary: 'Origin',
    })
    const created = await send(port, 'POST', '/v1beta/corpora', { origin, ...JSON_TYPE }, '{"name":"corpora/c"}')
    expect(created.status).toBe(200)
    expect(created.headers['access-control-allow-origin']).toBe(origin)
    // Errors carry the grant too, so the page can read them.
    const missing = await send(port, 'GET', '/v1beta/corpora/none', { origin })
    expect(missing.status).toBe(404)
    expect(missing.headers['access-control-allow-origin']).toBe(origin)
    expect((await send(port, 'GET', '/v1beta/corpora', { origin: 'http://localhost:5174' })).status).toBe(403)
  })

  it('routes the path as sent: a leading "//" is not a host name', async () => {
    const { port } = await start()
    expect((await send(port, 'GET', '//evil.example/v1beta/corpora', {})).json).toMatchObject({ error: { code: 404, message: 'No API serves GET //evil.example/v1beta/corpora.' } })
    expect((await send(port, 'GET', '/v1beta/corpora', {})).status).toBe(200)
  })

  it('takes JSON routes as application/json only (415), uploads as multipart only', async () => {
    const { port } = await start()
    // The "simple" requests a page can send cross-site without a preflight.
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain; charset=utf-8']) {
      const answer = await send(port, 'POST', '/v1beta/corpora', { 'content-type': type }, '{"name":"corpora/x"}')
      expect(answer.status, type).toBe(415)
      expect(answer.json.error).toMatchObject({ code: 415, status: 'INVALID_ARGUMENT' })
    }
    expect((await send(port, 'POST', '/v1beta/corpora', {}, '{"name":"corpora/x"}')).status).toBe(415)
    expect((await send(port, 'GET', '/v1beta/corpora', {})).json).toEqual({})
    expect((await send(port, 'POST', '/v1beta/corpora', { 'content-type': 'Application/JSON; charset=UTF-8' }, '{"name":"corpora/y"}')).status).toBe(200)
    // A body-less call needs no type.
    expect((await send(port, 'GET', '/v1beta/corpora/y', { 'content-type': 'text/plain' })).status).toBe(200)
    const upload = await send(port, 'POST', '/upload/v1beta1/projects/p/locations/l/ragCorpora/1/ragFiles:upload', JSON_TYPE, '{}')
    expect(upload.status).toBe(415)
    expect(upload.json.error?.message).toContain('multipart/related or multipart/form-data')
    // A compressed body is refused as such (it failed as "not valid UTF-8"), and nothing is created.
    const gzipped = await send(port, 'POST', '/v1beta/corpora', { ...JSON_TYPE, 'content-encoding': 'gzip' }, '{"name":"corpora/gz"}')
    expect(gzipped.status).toBe(415)
    expect(gzipped.json.error?.message).toBe('The request body is sent with Content-Encoding "gzip", which this server does not read: send it uncompressed (gRPC takes gzip and deflate messages).')
    expect((await send(port, 'GET', '/v1beta/corpora/gz', {})).status).toBe(404)
    expect((await send(port, 'POST', '/v1beta/corpora', { ...JSON_TYPE, 'content-encoding': 'identity' }, '{"name":"corpora/plain"}')).status).toBe(200)
  })

  it('refuses JSON nested deeper than 100 levels with a 400, and takes 100', async () => {
    const { port } = await start()
    const deep = `{"corpus":{"displayName":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`
    const answer = await send(port, 'POST', '/v1beta/corpora', JSON_TYPE, deep)
    expect(answer.status).toBe(400)
    expect(answer.json.error?.message).toBe('Invalid JSON payload received in the request body: objects and lists nest deeper than 100 levels (at character 124).')
    // Brackets inside strings do not count.
    const inString = await send(port, 'POST', '/v1beta/corpora', JSON_TYPE, JSON.stringify({ name: 'corpora/s', displayName: '['.repeat(500) }))
    expect(inString.json).toMatchObject({ name: 'corpora/s', displayName: '['.repeat(500) })
    // 100 levels parse; the request reader then names the wrongly typed field.
    const hundred = await send(port, 'POST', '/v1beta/corpora', JSON_TYPE, `{"displayName":${'['.repeat(99)}${']'.repeat(99)}}`)
    expect(hundred.status).toBe(400)
    expect(hundred.json.error?.message).toMatch(/^Invalid value at 'corpus.displayName' \(TYPE_STRING\)/)
    expect((await send(port, 'GET', '/v1beta/corpora/s', {})).status).toBe(200)
    // At most 200,000 objects, lists and commas in a body (ten million empty objects would hold the event loop
    // for seconds in JSON.parse); commas and brackets in strings do not count. A list of n empty objects counts 2n + 3 here.
    const many = (n: number): string => `{"corpus":{"displayName":"a,b[c{","x":[${'{},'.repeat(n - 1)}{}]}}`
    const over = await send(port, 'POST', '/v1beta/corpora', JSON_TYPE, many(99_999))
    expect([over.status, over.json.error?.message]).toEqual([400, expect.stringMatching(/^Invalid JSON payload received in the request body: it holds more than 200000 objects, lists and commas \(at character \d+\): send fewer items per request\.$/)])
    const under = await send(port, 'POST', '/v1beta/corpora', JSON_TYPE, many(99_998))
    expect([under.status, under.json.error?.message]).toEqual([400, "Invalid JSON payload received. Unknown name \"corpus\" at 'corpus': Cannot find field."])
  })

  it('limits file:// imports over HTTP to the server\'s roots even for an engine that trusts its in-process callers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-served-'))
    try {
      writeFileSync(join(dir, 'note.txt'), 'kestrel notes')
      const embedder = createHashingEmbedder({ dimensions: 16 })
      const engine = new VertexRagEngine({ embedder }) // no importRoots: in process, any path
      const { port } = await start({ embedder, engines: { vertexRag: engine } })
      const created = await send(port, 'POST', '/v1beta1/projects/p/locations/l/ragCorpora', JSON_TYPE, '{"displayName":"c"}')
      const corpus = (created.json.response as { name: string }).name
      const body = JSON.stringify({ importRagFilesConfig: { gcsSource: { uris: [pathToFileURL(join(dir, 'note.txt')).href] } } })
      const overHttp = await send(port, 'POST', `/v1beta1/${corpus}/ragFiles:import`, JSON_TYPE, body)
      expect(overHttp.status).toBe(403)
      expect(overHttp.json.error?.message).toContain('file:// imports are off')
      // The same engine in process still trusts its caller.
      const inProcess = await engine.v1beta1.importRagFiles({ parent: corpus, ...(JSON.parse(body) as object) })
      expect(inProcess.ok && inProcess.response.response).toMatchObject({ importedRagFilesCount: '1' })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
