import { Agent, request as httpRequest } from 'node:http'
import { readFileSync, readdirSync } from 'node:fs'
import { afterEach, describe, expect, it, vi } from 'vitest'
import fc from 'fast-check'
import * as grpc from '@grpc/grpc-js'
import { createHashingEmbedder, createIndex, type TermExplanation } from '@quarry/core'
import { createServer, type QuarryServer } from '@quarry/adapters'
import { runServe } from '../../packages/adapters/src/cli/serve.js'
import { Bytes, Obj, toJson, type J } from '../support/hostile/json.js'
import { filterArb, garbageBody, hostileName, hostileNumber, hostileText, sentence, wrongValue } from '../support/hostile/values.js'

/**
 * The console's server side over real HTTP: its files (types, CSP, no traversal, off with
 * `console: false`), the overview's counts after writes through the REST API, the generation and
 * its event stream, scopes, and explain — whose response must be the REST call's own, and whose
 * BM25 terms must be core's explanation computed independently.
 */
const DIMENSIONS = 32
const CONSOLE_DIR = new URL('../../packages/adapters/console/', import.meta.url)

let server: QuarryServer | undefined
let internalErrors: unknown[] = []
afterEach(async () => {
  await server?.close()
  server = undefined
  expect(internalErrors).toEqual([])
  internalErrors = []
})

async function start(options: Parameters<typeof createServer>[0] = {}): Promise<{ url: string; port: number }> {
  server = createServer({ embedder: createHashingEmbedder({ dimensions: DIMENSIONS }), onInternalError: (e) => internalErrors.push(e), ...options })
  const { url, port } = await server.listen()
  return { url, port }
}

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly json: Record<string, unknown>
}

async function call(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const init: RequestInit = { method, headers: { 'content-type': 'application/json', ...headers } }
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body)
  const res = await fetch(`${url}${path}`, init)
  const text = await res.text()
  return { status: res.status, headers: res.headers, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) }
}

async function ok(url: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const answer = await call(url, method, path, body)
  expect(answer.status, `${method} ${path}: ${JSON.stringify(answer.json)}`).toBe(200)
  return answer.json
}

/** A raw request: the path as written (no client normalizes `..`), any Host. */
function raw(port: number, method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', reject)
    req.end()
  })
}

const generationOf = async (url: string): Promise<number> => (await ok(url, 'GET', '/console/api/overview')).generation as number

const P = 'projects/p/locations/l'

async function upload(url: string, corpus: string, name: string, text: string, config?: unknown): Promise<void> {
  const boundary = 'console-boundary'
  const metadata = config === undefined ? { ragFile: { displayName: name } } : { ragFile: { displayName: name }, uploadRagFileConfig: config }
  const body = [
    `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(metadata)}\r\n`,
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${text}\r\n`,
    `--${boundary}--\r\n`,
  ].join('')
  const answer = await call(url, 'POST', `/upload/v1beta1/${corpus}/ragFiles:upload`, body, { 'content-type': `multipart/form-data; boundary=${boundary}` })
  expect(answer.status, JSON.stringify(answer.json)).toBe(200)
}

describe('console files', () => {
  it('serves index.html at / and the folder\'s files at /console/<file> with their types, no-cache and a strict CSP', async () => {
    const { url, port } = await start()
    const index = await fetch(`${url}/`)
    expect(index.status).toBe(200)
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(index.headers.get('cache-control')).toBe('no-cache')
    const csp = index.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("default-src 'self'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("style-src 'self'")
    expect(csp).not.toContain('unsafe-inline')
    expect(index.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await index.text()).toBe(readFileSync(new URL('index.html', CONSOLE_DIR), 'utf8'))
    // Every file of a served type comes back byte for byte, with its type (whatever the console holds now).
    const types: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.svg': 'image/svg+xml' }
    for (const name of readdirSync(CONSOLE_DIR)) {
      const type = types[name.slice(name.lastIndexOf('.'))]
      const res = await fetch(`${url}/console/${name}`)
      if (type === undefined) {
        expect(res.status, name).toBe(404)
        continue
      }
      expect(res.status, name).toBe(200)
      expect(res.headers.get('content-type'), name).toBe(type)
      expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(new URL(name, CONSOLE_DIR))), name).toBe(true)
    }
    // The folder's tsconfig.json is not a served type.
    expect((await raw(port, 'GET', '/console/tsconfig.json')).status).toBe(404)
    const head = await raw(port, 'HEAD', '/')
    expect(head.status).toBe(200)
    expect(head.body).toBe('')
    expect((await call(url, 'POST', '/', {})).status).toBe(404)
  })

  it('refuses traversal, encoded separators, hidden and unknown names', async () => {
    const { port } = await start()
    for (const path of ['/console/../package.json', '/console/..%2fpackage.json', '/console/%2e%2e/package.json', '/console/%2e%2e%2fpackage.json', '/console/..', '/console/.', '/console/', '/console', '/console/index.html%00', '/console/./index.html', '/console//index.html', '/console/%69ndex.html', '/console/..\\package.json', '/console/src', '/console/nope.js', '/console/.hidden.js', '/console/api/../index.html', '/console/api/nothing']) {
      const answer = await raw(port, 'GET', path)
      expect(answer.status, path).toBe(404)
      expect(JSON.parse(answer.body), path).toMatchObject({ error: { code: 404, status: 'NOT_FOUND' } })
      expect(answer.body, path).not.toContain('"name": "@quarry/adapters"')
    }
  })

  it('turns off with console: false (404 as any unknown path), and answers only for this machine\'s host names', async () => {
    const off = await start({ console: false })
    for (const path of ['/', '/console/index.html', '/console/api/overview']) {
      const answer = await raw(off.port, 'GET', path)
      expect(answer.status, path).toBe(404)
      expect(JSON.parse(answer.body), path).toMatchObject({ error: { code: 404, status: 'NOT_FOUND', message: `No API serves GET ${path}.` } })
    }
    await server?.close()
    const { port } = await start()
    for (const path of ['/', '/console/index.html', '/console/api/overview', '/console/api/events']) {
      const foreign = await raw(port, 'GET', path, { host: 'evil.example' })
      expect(foreign.status, path).toBe(403)
      expect(JSON.parse(foreign.body), path).toMatchObject({ error: { code: 403, status: 'PERMISSION_DENIED' } })
      const page = await raw(port, 'GET', path, { host: `localhost:${port}`, origin: 'https://evil.example' })
      expect(page.status, path).toBe(403)
    }
    expect((await raw(port, 'GET', '/', { host: `localhost:${port}` })).status).toBe(200)
  })
})

describe('quarry serve', () => {
  it('serves the console at / and says so; --no-console turns it off', async () => {
    for (const [flags, status] of [[[], 200], [['--no-console'], 404]] as const) {
      const lines: string[] = []
      const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void lines.push(parts.join(' ')))
      const stop = new AbortController()
      try {
        const serving = runServe(['--port', '0', '--embedder', 'hashing', ...flags], { signal: stop.signal })
        await vi.waitFor(() => expect(lines.some((l) => l.startsWith('Quarry is serving on '))).toBe(true))
        const url = /serving on (\S+)/.exec(lines.find((l) => l.startsWith('Quarry is serving on ')) ?? '')?.[1] as string
        expect((await fetch(`${url}/`)).status, flags.join()).toBe(status)
        expect((await fetch(`${url}/console/api/overview`)).status, flags.join()).toBe(status)
        expect(lines.some((l) => l.trim().startsWith(`Console             ${url}/`)), flags.join()).toBe(status === 200)
        stop.abort()
        expect(await serving).toBe(0)
      } finally {
        log.mockRestore()
      }
    }
  })
})

describe('overview, generation and events', () => {
  it('counts what the three APIs hold after writes through REST; the generation grows with each committed write only', async () => {
    const { url } = await start()
    expect(await ok(url, 'GET', '/console/api/overview')).toEqual({ generation: 0, semanticRetriever: { corpora: [] }, locations: [] })
    let generation = 0
    const write = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
      const json = await ok(url, method, path, body)
      generation++
      expect(await generationOf(url), `${method} ${path}`).toBe(generation)
      return json
    }
    await write('POST', '/v1beta/corpora', { name: 'corpora/books', displayName: 'Books' })
    await write('POST', '/v1beta/corpora', { name: 'corpora/empty' })
    for (const d of ['a', 'b']) await write('POST', '/v1beta/corpora/books/documents', { name: `corpora/books/documents/${d}` })
    await write('POST', '/v1beta/corpora/books/documents/a/chunks:batchCreate', {
      requests: ['desert wind', 'river stones', 'copper sand'].map((text, i) => ({ parent: 'corpora/books/documents/a', chunk: { name: `corpora/books/documents/a/chunks/c${i}`, data: { stringValue: text } } })),
    })
    await write('POST', '/v1beta/corpora/books/documents/b/chunks', { data: { stringValue: 'glacier forest' } })
    const rag = (await write('POST', `/v1beta1/${P}/ragCorpora`, { displayName: 'Manuals' })).response as { name: string }
    const ann = (await write('POST', '/v1beta1/projects/p/locations/m/ragCorpora', { displayName: 'Graph', vectorDbConfig: { ragManagedDb: { ann: {} } } })).response as { name: string }
    await upload(url, rag.name, 'a.txt', 'The desert wind erases tracks.')
    await upload(url, rag.name, 'b.txt', 'Copper rivers run north.')
    generation += 2
    const engine = `${P}/reasoningEngines/1`
    await write('POST', `/v1beta1/${engine}/memories`, { fact: 'likes tea', scope: { user_id: 'u1' } })
    await write('POST', `/v1beta1/${engine}/memories`, { fact: 'lives in Lyon', scope: { user_id: 'u1' } })
    await write('POST', `/v1beta1/${engine}/memories`, { fact: 'plays chess', scope: { user_id: 'u2' } })
    await write('POST', `/v1beta1/${engine}/sessions`, { userId: 'u1' })
    await write('POST', '/v1beta1/reasoningEngines/7/memories', { fact: 'short name', scope: { user_id: 'u' } })
    // An engine created as a resource has a display name; the implicit ones above have none.
    const planner = (await write('POST', `/v1beta1/${P}/reasoningEngines`, { displayName: 'Planner' })).response as { name: string }

    // Reads, queries and refused writes leave it alone.
    const before = await generationOf(url)
    expect(before).toBe(generation)
    await ok(url, 'GET', '/v1beta/corpora')
    await ok(url, 'POST', '/v1beta/corpora/books:query', { query: 'desert' })
    await ok(url, 'POST', `/v1beta1/${P}:retrieveContexts`, { vertexRagStore: { ragResources: [{ ragCorpus: rag.name }] }, query: { text: 'desert' } })
    await ok(url, 'GET', `/v1beta1/${engine}/memories`)
    expect((await call(url, 'POST', '/v1beta/corpora', { name: 'corpora/books' })).status).toBe(409)
    expect((await call(url, 'DELETE', '/v1beta/corpora/nothing')).status).toBe(404)
    expect(await generationOf(url)).toBe(before)

    expect(await ok(url, 'GET', '/console/api/overview')).toEqual({
      generation,
      semanticRetriever: {
        corpora: [
          { name: 'corpora/books', displayName: 'Books', documents: 2, chunks: 4 },
          { name: 'corpora/empty', documents: 0, chunks: 0 },
        ],
      },
      locations: [
        { project: '', location: '', ragCorpora: [], reasoningEngines: [{ name: 'reasoningEngines/7', memories: 1, sessions: 0, scopes: 1 }] },
        {
          project: 'p',
          location: 'l',
          ragCorpora: [{ name: rag.name, displayName: 'Manuals', files: 2, chunks: 2, kind: 'knn' }],
          reasoningEngines: [
            { name: engine, memories: 3, sessions: 1, scopes: 2 },
            { name: planner.name, displayName: 'Planner', memories: 0, sessions: 0, scopes: 0 },
          ],
        },
        { project: 'p', location: 'm', ragCorpora: [{ name: ann.name, displayName: 'Graph', files: 0, chunks: 0, kind: 'ann' }], reasoningEngines: [] },
      ],
    })
    expect(await ok(url, 'GET', `/console/api/scopes?parent=${engine}`)).toEqual({ scopes: [{ scope: { user_id: 'u1' }, memories: 2 }, { scope: { user_id: 'u2' }, memories: 1 }] })
    // An engine without memories has no scopes; a bad name is refused as listMemories refuses it.
    expect(await ok(url, 'GET', `/console/api/scopes?parent=${P}/reasoningEngines/9`)).toEqual({ scopes: [] })
    const listed = await call(url, 'GET', '/v1beta1/projects/p/locations/l/reasoningEngines/x!/memories')
    const bad = await call(url, 'GET', '/console/api/scopes?parent=projects/p/locations/l/reasoningEngines/x!')
    expect(bad.status).toBe(400)
    expect(bad.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } })
    expect(listed.status).toBe(400)
    expect((await call(url, 'GET', '/console/api/scopes')).json).toMatchObject({ error: { status: 'INVALID_ARGUMENT' } })
    expect((await call(url, 'POST', '/console/api/overview', {})).status).toBe(404)
  })

  it('counts the writes of gRPC and of a data folder\'s journaled writes as well, once each', async () => {
    const dir = (await import('node:fs')).mkdtempSync(`${(await import('node:os')).tmpdir()}/quarry-console-`)
    try {
      server = createServer({ embedder: createHashingEmbedder({ dimensions: DIMENSIONS }), onInternalError: (e) => internalErrors.push(e), dataDir: dir, grpcPort: 0 })
      const { url, grpcPort } = await server.listen()
      await ok(url, 'POST', '/v1beta/corpora', { name: 'corpora/x' })
      expect(await generationOf(url)).toBe(1)
      // CreateCorpus over gRPC: CreateCorpusRequest { corpus (1): Corpus { name (1): "corpora/y" } }, encoded by hand.
      const corpus = Buffer.concat([Buffer.from([0x0a, 9]), Buffer.from('corpora/y')])
      const client = new grpc.Client(`127.0.0.1:${grpcPort ?? 0}`, grpc.credentials.createInsecure())
      const call = (bytes: Buffer): Promise<Buffer> =>
        new Promise((done, fail) => client.makeUnaryRequest('/google.ai.generativelanguage.v1beta.RetrieverService/CreateCorpus', (b: Buffer) => b, (b: Buffer) => b, bytes, (error, value) => (error || !value ? fail(error ?? new Error('no answer')) : done(value))))
      expect((await call(Buffer.concat([Buffer.from([0x0a, corpus.length]), corpus]))).includes(Buffer.from('corpora/y'))).toBe(true)
      expect(await generationOf(url)).toBe(2)
      // A refused write (the corpus exists) is not counted.
      await expect(call(Buffer.concat([Buffer.from([0x0a, corpus.length]), corpus]))).rejects.toThrow(/exists/)
      client.close()
      expect(await generationOf(url)).toBe(2)
      await server?.close()
      // Writes replayed at start are not new writes.
      const again = await start({ dataDir: dir })
      expect(await ok(again.url, 'GET', '/console/api/overview')).toMatchObject({ generation: 0, semanticRetriever: { corpora: [{ name: 'corpora/x' }, { name: 'corpora/y' }] } })
    } finally {
      await server?.close()
      server = undefined
      ;(await import('node:fs')).rmSync(dir, { recursive: true, force: true })
    }
  })

  it('streams the generation at once and after writes, and ends when the server closes (close does not wait on it)', async () => {
    const { url, port } = await start()
    await ok(url, 'POST', '/v1beta/corpora', { name: 'corpora/a' })
    const events: number[] = []
    let buffered = ''
    let headers: Record<string, string | string[] | undefined> = {}
    let ended: () => void = () => undefined
    const closed = new Promise<void>((resolve) => (ended = resolve))
    const waiters: Array<{ at: number; done: () => void }> = []
    const req = httpRequest({ host: '127.0.0.1', port, path: '/console/api/events' }, (res) => {
      headers = res.headers
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        buffered += chunk
        let cut: number
        while ((cut = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, cut)
          buffered = buffered.slice(cut + 2)
          const data = /^event: generation\ndata: (.*)$/.exec(block)
          if (data) events.push((JSON.parse(data[1] as string) as { generation: number }).generation)
        }
        for (const w of waiters.splice(0)) (events.length >= w.at ? w.done : () => waiters.push(w))()
      })
      res.on('close', () => ended())
    })
    req.on('error', () => ended())
    req.end()
    const eventCount = (n: number): Promise<void> => new Promise((done) => (events.length >= n ? done() : waiters.push({ at: n, done })))
    await eventCount(1)
    expect(headers['content-type']).toBe('text/event-stream; charset=utf-8')
    expect(headers['cache-control']).toBe('no-cache')
    expect(events).toEqual([1])
    await ok(url, 'POST', '/v1beta/corpora', { name: 'corpora/b' })
    await eventCount(2)
    expect(events).toEqual([1, 2])
    // A burst of writes: generations arrive in order, the last one among them.
    await Promise.all(['c', 'd', 'e', 'f'].map((d) => ok(url, 'POST', '/v1beta/corpora/a/documents', { name: `corpora/a/documents/${d}` })))
    await new Promise<void>((done) => {
      const check = (): void => (events.at(-1) === 6 ? done() : void setTimeout(check, 20))
      check()
    })
    expect(events.every((g, i) => i === 0 || g > (events[i - 1] as number))).toBe(true)
    // Reads send nothing.
    const seen = events.length
    await ok(url, 'GET', '/v1beta/corpora')
    await ok(url, 'GET', '/console/api/overview')
    expect(events.length).toBe(seen)
    await server?.close()
    server = undefined
    await closed
  })
})

interface RelevantChunk {
  chunkRelevanceScore: number
  chunk: { name: string; data: { stringValue: string } }
}
interface Explanation {
  id: string
  score: number
  dense?: { distance: number; score: number; normalized?: number }
  sparse?: { score: number; normalized?: number; terms: Array<{ term: string; tf: number; df: number; idf: number; score: number }> }
  fused?: { alpha: number; score: number }
  highlights: Array<[number, number]>
}
interface Context {
  text: string
  score: number
  chunk: { chunkId: string; fileId: string }
}

const TEXTS = ['The desert wind erases tracks in the sand.', 'Desert winds carry sand across dunes; the wind never rests.', 'Copper rivers run north through the forest.', 'Glaciers carve valleys slowly.', 'Sand, sand and more sand: the desert.']

describe('explain', () => {
  it('answers queryCorpus exactly as REST does, with each result\'s dense score and highlighted query terms', async () => {
    const { url } = await start()
    await ok(url, 'POST', '/v1beta/corpora', { name: 'corpora/dunes' })
    await ok(url, 'POST', '/v1beta/corpora/dunes/documents', { name: 'corpora/dunes/documents/d' })
    for (const [i, text] of TEXTS.entries()) await ok(url, 'POST', '/v1beta/corpora/dunes/documents/d/chunks', { name: `corpora/dunes/documents/d/chunks/c${i}`, data: { stringValue: text } })
    const body = { query: 'Desert winds', resultsCount: 4 }
    const rest = await ok(url, 'POST', '/v1beta/corpora/dunes:query', body)
    const explained = await ok(url, 'POST', '/console/api/explain', { method: 'semanticRetriever.queryCorpus', version: 'v1beta', name: 'corpora/dunes', request: body })
    expect(explained.response).toEqual(rest)
    const relevant = rest.relevantChunks as RelevantChunk[]
    expect(relevant.length).toBe(4)
    const explanations = explained.explanations as Explanation[]
    expect(explanations.map((e) => e.id)).toEqual(relevant.map((r) => r.chunk.name))
    expect(explanations.map((e) => e.score)).toEqual(relevant.map((r) => r.chunkRelevanceScore))
    // Which way the scores go, for the console to say so: chunkRelevanceScore, best first, is higher-is-better.
    expect(explained.better).toBe('higher')
    expect(relevant.map((r) => r.chunkRelevanceScore)).toEqual(relevant.map((r) => r.chunkRelevanceScore).sort((a, b) => b - a))
    for (const e of explanations) {
      expect(e.dense?.score).toBe(e.score)
      expect(e.dense?.distance).toBeCloseTo(1 - e.score, 6)
      expect(e.sparse).toBeUndefined()
      expect(e.fused).toBeUndefined()
    }
    // "Desert winds" → desert, wind: every inflection marked, nothing else.
    const highlights = Object.fromEntries(explanations.map((e) => [e.id, e.highlights]))
    const text1 = TEXTS[1] as string
    expect(highlights['corpora/dunes/documents/d/chunks/c1']?.map(([s, e]) => text1.slice(s, e))).toEqual(['Desert', 'winds', 'wind'])
    expect(highlights['corpora/dunes/documents/d/chunks/c1']).toEqual([[0, 6], [7, 12], [42, 46]])
    const all = relevant.map((r) => r.chunk.data.stringValue)
    explanations.forEach((e, i) => {
      const words = e.highlights.map(([s, end]) => (all[i] as string).slice(s, end).toLowerCase())
      expect(words.every((w) => ['desert', 'wind', 'winds'].includes(w)), words.join()).toBe(true)
    })
  })

  it('answers retrieveContexts exactly as REST does; BM25 terms are core\'s own explanation, computed apart', async () => {
    const { url } = await start()
    const bm25 = { k1: 1.5, b: 0.6 }
    const created = await ok(url, 'POST', `/v1beta1/${P}/ragCorpora`, { displayName: 'Dunes', vectorDbConfig: { ragEmbeddingModelConfig: { hybridSearchConfig: { sparseEmbeddingConfig: { bm25 } } } } })
    const corpus = (created.response as { name: string }).name
    for (const [i, text] of TEXTS.entries()) await upload(url, corpus, `t${i}.txt`, text)
    // The oracle: a core index of the same texts with the same BM25 parameters and default analyzer.
    const oracle = createIndex({ dimensions: 2, text: { bm25 } })
    const contexts = (await ok(url, 'POST', `/v1beta1/${P}:retrieveContexts`, { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'sand', similarityTopK: 10, ranking: { alpha: 0 } } })).contexts as { contexts: Context[] }
    const chunkIds = new Map<string, string>()
    for (const c of contexts.contexts) chunkIds.set(c.text, c.chunk.chunkId)
    // Every text is one chunk: find the ids of all five by asking for each text's own words.
    for (const text of TEXTS) {
      if (chunkIds.has(text)) continue
      const found = (await ok(url, 'POST', `/v1beta1/${P}:retrieveContexts`, { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text, similarityTopK: 10, ranking: { alpha: 0 } } })).contexts as { contexts: Context[] }
      for (const c of found.contexts) chunkIds.set(c.text, c.chunk.chunkId)
    }
    expect([...chunkIds.keys()].sort()).toEqual([...TEXTS].sort())
    oracle.addMany(TEXTS.map((text) => ({ id: chunkIds.get(text) as string, vector: new Float32Array([1, 0]), text })))

    const query = 'desert sand winds'
    for (const alpha of [0, 0.4]) {
      const body = { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: query, ragRetrievalConfig: { topK: 4, hybridSearch: { alpha } } } }
      const rest = await ok(url, 'POST', `/v1beta1/${P}:retrieveContexts`, body)
      const explained = await ok(url, 'POST', '/console/api/explain', { method: 'vertexRag.retrieveContexts', version: 'v1beta1', parent: P, request: body })
      expect(explained.response).toEqual(rest)
      const answered = (rest.contexts as { contexts: Context[] }).contexts
      expect(answered.length).toBe(alpha === 0 ? 3 : 4)
      const explanations = explained.explanations as Explanation[]
      expect(explanations.map((e) => e.id)).toEqual(answered.map((c) => `${corpus}/ragFiles/${c.chunk.fileId}/chunks/${c.chunk.chunkId}`))
      expect(explanations.map((e) => e.score)).toEqual(answered.map((c) => c.score))
      // The corpus's COSINE_DISTANCE: scores are distances, best (lowest) first.
      expect(explained.better).toBe('lower')
      expect(answered.map((c) => c.score)).toEqual(answered.map((c) => c.score).sort((a, b) => a - b))
      const expected = new Map(oracle.search({ text: query, topK: 5, explain: true }).hits.map((h) => [h.id, h.explain?.bm25 as readonly TermExplanation[]]))
      explanations.forEach((e, i) => {
        const id = answered[i]?.chunk.chunkId as string
        const terms = (expected.get(id) ?? []).map((t) => ({ term: t.term, tf: t.tf, df: t.df, idf: t.idf, score: t.score }))
        // A chunk with none of the terms is not a BM25 hit of the oracle: its terms all read tf 0.
        if (terms.length > 0) expect(e.sparse?.terms, `${alpha} ${id}`).toEqual(terms)
        else expect(e.sparse?.terms.every((t) => t.tf === 0 && t.score === 0)).toBe(true)
        expect(e.sparse?.terms.map((t) => t.term)).toEqual(['desert', 'sand', 'wind'])
        const sum = (e.sparse?.terms ?? []).reduce((s, t) => s + t.score, 0)
        expect(e.sparse?.score).toBeCloseTo(sum, 9)
        // Cosine: the score is 1 − the relevance (BM25 over the best, or the fused score).
        if (alpha === 0) {
          expect(e.fused).toBeUndefined()
          expect(e.score).toBeCloseTo(1 - (e.sparse?.normalized as number), 12)
        } else {
          expect(e.fused?.alpha).toBe(alpha)
          expect(e.score).toBeCloseTo(1 - (e.fused?.score as number), 12)
          expect(e.fused?.score).toBeCloseTo(alpha * (e.dense?.normalized as number) + (1 - alpha) * (e.sparse?.normalized as number), 9)
        }
      })
      expect(explanations[0]?.sparse?.normalized).toBe(alpha === 0 ? 1 : explanations[0]?.sparse?.normalized)
    }

    // v1 (dense only): the dense measure, as the answer gives it.
    const v1Body = { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: query, ragRetrievalConfig: { topK: 3 } } }
    const v1Rest = await ok(url, 'POST', `/v1/${P}:retrieveContexts`, v1Body)
    const v1 = await ok(url, 'POST', '/console/api/explain', { method: 'vertexRag.retrieveContexts', version: 'v1', parent: P, request: v1Body })
    expect(v1.response).toEqual(v1Rest)
    for (const [i, e] of (v1.explanations as Explanation[]).entries()) {
      expect(e.dense?.score).toBe((v1Rest.contexts as { contexts: Context[] }).contexts[i]?.score)
      expect(e.sparse).toBeUndefined()
    }
  })

  it('lists a RAG file\'s chunks (which the API does not) page by page, exactly the chunks retrieval answers, and counts each file\'s chunks', async () => {
    const { url } = await start()
    const created = await ok(url, 'POST', `/v1beta1/${P}/ragCorpora`, { displayName: 'Chunks' })
    const corpus = (created.response as { name: string }).name
    const words = Array.from({ length: 40 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`)
    await upload(url, corpus, 'long.txt', words.join(' '), { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 8, chunkOverlap: 2 } } } })
    await upload(url, corpus, 'short.txt', 'one short passage')
    const files = ((await ok(url, 'GET', `/v1beta1/${corpus}/ragFiles`)).ragFiles as { name: string; displayName: string }[])
    const long = files.find((f) => f.displayName === 'long.txt')?.name as string
    const short = files.find((f) => f.displayName === 'short.txt')?.name as string

    // The oracle: BM25 retrieval of every word returns every chunk of the file, with its id and text.
    const body = { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: words.join(' '), ragRetrievalConfig: { topK: 100, hybridSearch: { alpha: 0 } } } }
    const contexts = ((await ok(url, 'POST', `/v1beta1/${P}:retrieveContexts`, body)).contexts as { contexts: Context[] }).contexts
    const expected = contexts.filter((c) => c.chunk.fileId === long.split('/').pop()).map((c) => ({ chunkId: c.chunk.chunkId, text: c.text })).sort((a, b) => (a.chunkId < b.chunkId ? -1 : 1))
    expect(expected.length).toBe(7) // 40 tokens in chunks of 8 advancing by 6
    expect(expected[0]?.text).toBe(words.slice(0, 8).join(' '))

    const listed: { chunkId: string; text: string }[] = []
    let token: string | undefined
    do {
      const page = await ok(url, 'GET', `/console/api/rag-chunks?name=${encodeURIComponent(long)}&pageSize=3${token === undefined ? '' : `&pageToken=${encodeURIComponent(token)}`}`)
      expect(page.chunkCount).toBe(7)
      expect((page.chunks as unknown[]).length).toBeLessThanOrEqual(3)
      listed.push(...(page.chunks as { chunkId: string; text: string }[]))
      token = page.nextPageToken as string | undefined
    } while (token !== undefined)
    expect(listed).toEqual(expected)
    expect((await ok(url, 'GET', `/console/api/rag-chunks?name=${encodeURIComponent(long)}`)).chunks).toEqual(expected)

    expect(await ok(url, 'GET', `/console/api/rag-chunk-counts?parent=${encodeURIComponent(corpus)}`)).toEqual({ files: [{ name: long, chunks: 7 }, { name: short, chunks: 1 }] })

    // Bad input: the REST call's own Status for names; a field violation for paging.
    for (const bad of [`${corpus}/ragFiles/404`, `${P}/ragCorpora/404/ragFiles/1`]) {
      const rest = await call(url, 'GET', `/v1beta1/${bad}`)
      const mine = await call(url, 'GET', `/console/api/rag-chunks?name=${encodeURIComponent(bad)}`)
      expect(rest.status).toBeGreaterThanOrEqual(400)
      expect([mine.status, (mine.json.error as { status: string }).status]).toEqual([rest.status, (rest.json.error as { status: string }).status])
    }
    const missing = await call(url, 'GET', `/console/api/rag-chunk-counts?parent=${encodeURIComponent(`${P}/ragCorpora/404`)}`)
    expect([missing.status, (missing.json.error as { status: string }).status]).toEqual([404, 'NOT_FOUND'])
    for (const [query, field] of [['name=not-a-file', 'name'], ['name=', 'name'], ['pageSize=-1', 'pageSize'], ['pageSize=ten', 'pageSize'], ['pageToken=nonsense', 'pageToken']] as const) {
      const answer = await call(url, 'GET', `/console/api/rag-chunks?${query.startsWith('name=') ? query : `name=${encodeURIComponent(long)}&${query}`}`)
      expect(answer.status).toBe(400)
      const error = answer.json.error as { status: string; details: { fieldViolations: { field: string }[] }[] }
      expect(error.status).toBe('INVALID_ARGUMENT')
      expect(error.details.flatMap((d) => d.fieldViolations.map((v) => v.field))).toEqual([field])
    }
  })

  it('answers bad bodies with field violations, and missing resources or bad requests with the REST call\'s own Status', async () => {
    const { url } = await start()
    await ok(url, 'POST', '/v1beta/corpora', { name: 'corpora/x' })
    const explain = (body: unknown, headers?: Record<string, string>): Promise<Answer> => call(url, 'POST', '/console/api/explain', body, headers)
    const unknown = await explain({ method: 'memoryBank.retrieveMemories', version: 'v1beta1', name: 'x', request: {} })
    expect(unknown.status).toBe(400)
    expect(unknown.json).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'method' }] }] } })
    expect((unknown.json.error as { message: string }).message).toContain('semanticRetriever.queryCorpus, vertexRag.retrieveContexts')
    const fields = async (body: unknown): Promise<string[]> => {
      const answer = await explain(body)
      expect(answer.status, JSON.stringify(body)).toBe(400)
      return ((answer.json.error as { details: Array<{ fieldViolations: Array<{ field?: string }> }> }).details[0]?.fieldViolations ?? []).map((v) => v.field ?? '')
    }
    expect(await fields({ method: 'semanticRetriever.queryCorpus', version: 'v1', name: 'corpora/x', request: {} })).toEqual(['version'])
    expect(await fields({ method: 'semanticRetriever.queryCorpus', version: 'v1beta', request: {} })).toEqual(['name'])
    expect(await fields({ method: 'semanticRetriever.queryCorpus', version: 'v1beta', name: 'corpora/x', parent: P, request: [] })).toEqual(['parent', 'request'])
    expect(await fields({ method: 'vertexRag.retrieveContexts', version: 'v1beta', parent: 7, extra: 1 })).toEqual(['extra', 'version', 'parent'])
    expect(await fields({})).toEqual(['method'])
    expect(await fields([])).toEqual([''])
    expect((await explain('{"method": ')).json).toMatchObject({ error: { status: 'INVALID_ARGUMENT' } })
    expect((await explain('{}', { 'content-type': 'text/plain' })).status).toBe(415)

    // The same Status as the REST call: missing corpus, bad field, bad filter, missing RAG corpus.
    const same = async (restPath: string, body: Record<string, unknown>, explainBody: Record<string, unknown>): Promise<void> => {
      const rest = await call(url, 'POST', restPath, body)
      const explained = await explain({ ...explainBody, request: body })
      expect(rest.status).toBeGreaterThanOrEqual(400)
      expect({ status: explained.status, json: explained.json }).toEqual({ status: rest.status, json: rest.json })
    }
    const sr = { method: 'semanticRetriever.queryCorpus', version: 'v1beta' }
    await same('/v1beta/corpora/missing:query', { query: 'x' }, { ...sr, name: 'corpora/missing' })
    await same('/v1beta/corpora/x:query', { query: '' }, { ...sr, name: 'corpora/x' })
    await same('/v1beta/corpora/x:query', { query: 'x', resultsCount: 1000 }, { ...sr, name: 'corpora/x' })
    await same('/v1beta/corpora/x:query', { query: 'x', nope: 1 }, { ...sr, name: 'corpora/x' })
    await same('/v1beta/corpora/x:query', { query: 'x', metadataFilters: [{ key: 'chunk.custom_metadata.y', conditions: [{ operation: 'NOPE' }] }] }, { ...sr, name: 'corpora/x' })
    const rag = { method: 'vertexRag.retrieveContexts', version: 'v1beta1', parent: P }
    await same(`/v1beta1/${P}:retrieveContexts`, { vertexRagStore: { ragResources: [{ ragCorpus: `${P}/ragCorpora/404` }] }, query: { text: 'x' } }, rag)
    await same(`/v1beta1/${P}:retrieveContexts`, { vertexRagStore: { ragResources: [{ ragCorpus: `${P}/ragCorpora/404` }] }, query: { text: 'x', ranking: { alpha: 2 } } }, rag)
    await same(`/v1beta1/${P}:retrieveContexts`, {}, rag)
  })

  it('takes the body the server received: over 1 MiB (joined in shared memory) it answers as the same body small; a body sent to a console 404 leaves the kept-alive connection in step', async () => {
    const { url, port } = await start()
    await ok(url, 'POST', '/v1beta/corpora', { name: 'corpora/x' })
    const explainBody = { method: 'semanticRetriever.queryCorpus', version: 'v1beta', name: 'corpora/x', request: { query: 'dunes ünïcode', resultsCount: 3 } }
    const small = await call(url, 'POST', '/console/api/explain', explainBody)
    expect(small.status).toBe(200)
    // The same JSON padded with whitespace past the 1 MiB at which the edge joins bodies into shared memory.
    const padded = `{${' '.repeat(1_500_000)}${JSON.stringify(explainBody).slice(1)}`
    const large = await call(url, 'POST', '/console/api/explain', padded)
    expect({ status: large.status, json: large.json }).toEqual({ status: small.status, json: small.json })

    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const send = (method: string, path: string, body?: string): Promise<{ status: number; reused: boolean; text: string }> =>
      new Promise((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, method, path, agent, headers: body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket, text: Buffer.concat(chunks).toString('utf8') }))
        })
        req.on('error', reject)
        req.end(body)
      })
    try {
      const first = await send('POST', '/console/api/nope', `"${'x'.repeat(2 * 1024 * 1024)}"`)
      expect(first.status).toBe(404)
      expect(JSON.parse(first.text)).toMatchObject({ error: { status: 'NOT_FOUND' } })
      // The next request on the same connection is read as a request, not as the rest of that body.
      const next = await send('GET', '/console/api/overview')
      expect({ status: next.status, reused: next.reused }).toEqual({ status: 200, reused: true })
      expect(JSON.parse(next.text)).toHaveProperty('semanticRetriever')
    } finally {
      agent.destroy()
    }
  })

  it('survives hostile explain bodies and scopes / chunk-list parameters: every answer a 4xx or 200 in Google\'s shape, no internal error, the server still answering', async () => {
    const { url, port } = await start({ maxBodyBytes: 512 * 1024 })
    await ok(url, 'POST', '/v1beta/corpora', { name: 'corpora/x' })
    await ok(url, 'POST', '/v1beta/corpora/x/documents', { name: 'corpora/x/documents/d' })
    await ok(url, 'POST', '/v1beta/corpora/x/documents/d/chunks', { data: { stringValue: 'desert wind' } })
    const rag = ((await ok(url, 'POST', `/v1beta1/${P}/ragCorpora`, { displayName: 'R' })).response as { name: string }).name
    await upload(url, rag, 'a.txt', 'The desert wind erases tracks.')
    const value: fc.Arbitrary<J> = fc.oneof(hostileText, hostileNumber, wrongValue, sentence, hostileName)
    const srRequest = fc.record({ query: fc.oneof(sentence, hostileText, wrongValue), resultsCount: fc.oneof(hostileNumber, wrongValue), metadataFilters: wrongValue }, { requiredKeys: [] })
    const ragRequest = fc.record(
      {
        vertexRagStore: fc.oneof(fc.constant<J>(new Obj([['ragResources', [new Obj([['ragCorpus', rag]])]]])), wrongValue),
        query: fc.record({ text: fc.oneof(sentence, hostileText, wrongValue), similarityTopK: fc.oneof(hostileNumber, wrongValue), ranking: fc.oneof(fc.constant<J>(new Obj([['alpha', 0.5]])), wrongValue), ragRetrievalConfig: fc.oneof(fc.constant<J>(new Obj([['filter', new Obj([['metadataFilter', 'year > 1']])]])), filterArb().map((f) => new Obj([['filter', new Obj([['metadataFilter', f]])]])), wrongValue) }, { requiredKeys: [] }).map((r) => new Obj(Object.entries(r) as Array<[string, J]>)),
      },
      { requiredKeys: [] },
    )
    const entries = (r: Record<string, J>): Obj => new Obj(Object.entries(r))
    const body = fc.oneof(
      fc.record({ method: fc.oneof(fc.constant<J>('semanticRetriever.queryCorpus'), value), version: fc.oneof(fc.constant<J>('v1beta'), value), name: fc.oneof(fc.constant<J>('corpora/x'), hostileName, value), request: fc.oneof(srRequest.map(entries), wrongValue) }, { requiredKeys: [] }).map(entries),
      fc.record({ method: fc.oneof(fc.constant<J>('vertexRag.retrieveContexts'), value), version: fc.constantFrom<J>('v1', 'v1beta1', 'v1beta', '__proto__'), parent: fc.oneof(fc.constant<J>(P), hostileName), request: fc.oneof(ragRequest.map(entries), wrongValue), __proto__: fc.constant<J>(new Obj([['polluted', 'yes']])) }, { requiredKeys: [] }).map(entries),
      // Well-formed envelopes around hostile requests: these reach the engines.
      srRequest.map((r) => entries({ method: 'semanticRetriever.queryCorpus', version: 'v1beta', name: 'corpora/x', request: entries(r) })),
      ragRequest.map((r) => entries({ method: 'vertexRag.retrieveContexts', version: 'v1beta1', parent: P, request: entries(r) })),
      garbageBody,
      value,
    )
    const statuses = new Set<number>()
    const check = async (b: J | Bytes, parent: J): Promise<void> => {
      const payload = b instanceof Bytes ? b.make() : toJson(b, () => 'x')
      const res = await fetch(`${url}/console/api/explain`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload })
      const text = await res.text()
      statuses.add(res.status)
      expect([200, 400, 404, 413, 501].includes(res.status), `${res.status} ${text.slice(0, 300)}`).toBe(true)
      const json = JSON.parse(text) as { error?: { code: number; status: string; message: string }; response?: unknown; explanations?: unknown[] }
      if (res.status === 200) expect(Array.isArray(json.explanations)).toBe(true)
      else expect(json.error?.code).toBe(res.status)
      expect(text).not.toMatch(/\/work\/|node_modules|at .*\.ts:\d+/)
      const scopes = await raw(port, 'GET', `/console/api/scopes?parent=${encodeURIComponent(toJson(parent, () => 'x').replace(/^"|"$/g, ''))}`)
      // (431: Node's own answer to a request line past its header limit.)
      expect([200, 400, 404, 431].includes(scopes.status), scopes.body.slice(0, 300)).toBe(true)
      const hostile = encodeURIComponent(toJson(parent, () => 'x').replace(/^"|"$/g, ''))
      for (const path of [`/console/api/rag-chunks?name=${hostile}&pageSize=${hostile.slice(0, 12)}`, `/console/api/rag-chunks?name=${hostile}&pageToken=${hostile}`, `/console/api/rag-chunk-counts?parent=${hostile}`]) {
        const listed = await raw(port, 'GET', path)
        expect([200, 400, 404, 431].includes(listed.status), `${path.slice(0, 200)}: ${listed.body.slice(0, 300)}`).toBe(true)
        expect(listed.body).not.toMatch(/\/work\/|node_modules|at .*\.ts:\d+/)
      }
    }
    // Two that reach the engines and succeed, then the generated ones.
    await check(entries({ method: 'semanticRetriever.queryCorpus', version: 'v1beta', name: 'corpora/x', request: entries({ query: 'desert' }) }), `${P}/reasoningEngines/1`)
    await check(entries({ method: 'vertexRag.retrieveContexts', version: 'v1beta1', parent: P, request: entries({ vertexRagStore: new Obj([['ragResources', [new Obj([['ragCorpus', rag]])]]]), query: new Obj([['text', 'wind']]) }) }), 'x')
    expect(statuses).toEqual(new Set([200]))
    await fc.assert(fc.asyncProperty(body, fc.oneof(hostileName, sentence), check))
    expect(statuses.has(400)).toBe(true)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect((await ok(url, 'GET', '/console/api/overview')).semanticRetriever).toEqual({ corpora: [{ name: 'corpora/x', documents: 1, chunks: 1 }] })
    expect(internalErrors).toEqual([])
  })
})
