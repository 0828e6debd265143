import { execFileSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServe } from '../support/quarry-process.js'

/**
 * Issue 13's end check, on the real command: `quarry serve --gcs-root G --import-root I` in its
 * own process, attacked over loopback, then used normally.
 */
const LOCATION = 'projects/p/locations/l'

let dir: string
let child: ChildProcess
let port: number
let G: string
let I: string
let S: string

interface Answer {
  readonly status: number
  readonly ms: number
  readonly json: Record<string, unknown> & { error?: { code: number; status: string; message: string } }
}

/** One request over raw HTTP (any Host, Origin or type), bounded: a hang fails the test instead of stalling it. */
function send(method: string, path: string, options: { body?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<Answer> {
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
  const headers = { ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }), ...options.headers }
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, timeout: options.timeoutMs ?? 10_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, json: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Answer['json'] }))
    })
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within ${options.timeoutMs ?? 10_000} ms`)))
    req.on('error', reject)
    req.end(body)
  })
}

async function createCorpus(): Promise<string> {
  const created = await send('POST', `/v1beta1/${LOCATION}/ragCorpora`, { body: { displayName: 'docs' } })
  expect(created.status).toBe(200)
  return (created.json.response as { name: string }).name
}

async function importUris(corpus: string, uris: string[]): Promise<Answer> {
  return send('POST', `/v1beta1/${corpus}/ragFiles:import`, { body: { importRagFilesConfig: { gcsSource: { uris } } } })
}

async function retrieve(corpus: string, text: string): Promise<{ text: string; score: number; sourceUri: string }[]> {
  const answer = await send('POST', `/v1beta1/${LOCATION}:retrieveContexts`, { body: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text, ragRetrievalConfig: { topK: 20 } } } })
  expect(answer.status).toBe(200)
  return ((answer.json.contexts as { contexts?: { text: string; score: number; sourceUri: string }[] } | undefined)?.contexts ?? [])
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-serve-hostile-'))
  G = join(dir, 'gcs')
  I = join(dir, 'imports')
  S = join(dir, 'secret')
  for (const d of [G, join(G, 'bucket'), I, S]) mkdirSync(d)
  writeFileSync(join(S, 'secret.txt'), 'zebrasecret lives here')
  writeFileSync(join(G, 'bucket', 'guide.txt'), 'The lighthouse keeper logs every passing ship.')
  symlinkSync(join(S, 'secret.txt'), join(G, 'bucket', 'escape.txt'))
  writeFileSync(join(I, 'notes.md'), '# Notes\nKestrels hover over the dunes at dawn.')
  execFileSync('mkfifo', [join(I, 'pipe.txt')])
  const served = await startServe(['--embedder', 'hashing', '--gcs-root', G, '--import-root', I])
  child = served.child
  port = served.port
})

afterAll(() => {
  child?.kill('SIGTERM')
  rmSync(dir, { recursive: true, force: true })
})

describe('quarry serve --gcs-root G --import-root I, attacked', () => {
  it('never reads a file outside the roots nor through a link escaping G; a FIFO under I does not block it', async () => {
    const corpus = await createCorpus()
    const outside = await importUris(corpus, [pathToFileURL(join(S, 'secret.txt')).href])
    expect(outside.status).toBe(403)
    expect(outside.json.error).toMatchObject({ status: 'PERMISSION_DENIED' })
    expect(outside.json.error?.message).toContain('outside the import roots')
    for (const uri of ['gs://bucket/../../secret/secret.txt', `${pathToFileURL(I).href}/../secret/secret.txt`]) {
      expect((await importUris(corpus, [uri])).status, uri).toBeGreaterThanOrEqual(400)
    }
    const bucket = await importUris(corpus, ['gs://bucket'])
    expect(bucket.json.response).toEqual({ '@type': 'type.googleapis.com/google.cloud.aiplatform.v1beta1.ImportRagFilesResponse', importedRagFilesCount: '1', failedRagFilesCount: '1' })
    const folder = await importUris(corpus, [pathToFileURL(I).href])
    expect(folder.json.response).toEqual({ '@type': 'type.googleapis.com/google.cloud.aiplatform.v1beta1.ImportRagFilesResponse', importedRagFilesCount: '1', failedRagFilesCount: '1' })
    const failures = (folder.json.metadata as { genericMetadata: { partialFailures: { message: string }[] } }).genericMetadata.partialFailures.map((f) => f.message)
    expect(failures).toEqual([`${pathToFileURL(I).href}/pipe.txt: not a regular file (a device, FIFO or socket); not read.`])
    expect((await retrieve(corpus, 'zebrasecret')).filter((c) => c.text.includes('zebrasecret'))).toEqual([])
    expect((await retrieve(corpus, 'kestrels dunes'))[0]?.sourceUri).toBe(`${pathToFileURL(I).href}/notes.md`)
  })

  it('refuses a foreign Host, a cross-site Origin and a text/plain body with a 4xx, writing nothing', async () => {
    const body = { displayName: 'planted' }
    expect((await send('POST', `/v1beta1/${LOCATION}/ragCorpora`, { body, headers: { host: 'rebound.attacker.example' } })).status).toBe(403)
    expect((await send('POST', `/v1beta1/${LOCATION}/ragCorpora`, { body, headers: { origin: 'https://attacker.example' } })).status).toBe(403)
    expect((await send('POST', `/v1beta1/${LOCATION}/ragCorpora`, { body, headers: { 'content-type': 'text/plain' } })).status).toBe(415)
    const listed = await send('GET', `/v1beta1/${LOCATION}/ragCorpora`)
    expect((listed.json.ragCorpora as { displayName: string }[]).map((c) => c.displayName)).not.toContain('planted')
  })

  it('answers (or refuses) a 40,000-character word within 3 s (more only as a 40-character one is slower) wherever text is analyzed', async () => {
    const corpus = await createCorpus()
    await send('POST', '/v1beta/corpora', { body: { name: 'corpora/words' } })
    const ask = async (word: string): Promise<Answer[]> => [
      await send('POST', `/v1beta1/${LOCATION}:retrieveContexts`, { body: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: word } } }),
      await send('POST', '/v1beta/corpora/words:query', { body: { query: word } }),
      await send('POST', `/v1beta1/${LOCATION}/reasoningEngines/1/memories`, { body: { fact: `I like ${word}`, scope: { user: 'words' } } }),
      await send('POST', `/v1beta1/${LOCATION}/reasoningEngines/1/memories:retrieve`, { body: { scope: { user: 'words' }, similaritySearchParams: { searchQuery: word } } }),
    ]
    // The limit guards against work growing faster than the word: 3 s on a machine at rest, and
    // a thousand times the same calls with a 40-character word where the machine is busier.
    const short = await ask('a'.repeat(40))
    const limit = Math.max(3_000, 1_000 * Math.max(...short.map((a) => a.ms)))
    for (const a of await ask('a'.repeat(40_000))) {
      expect(a.status).toBeLessThan(500)
      expect(a.ms).toBeLessThan(limit)
    }
  })

  it('refuses JSON nested 10,000 deep and AIP-160 filters nested 10,000 deep with a 4xx', async () => {
    const deepJson = `{"displayName":${'['.repeat(10_000)}${']'.repeat(10_000)}}`
    const json = await send('POST', `/v1beta1/${LOCATION}/ragCorpora`, { body: deepJson })
    expect(json.status).toBe(400)
    const corpus = await createCorpus()
    for (const filter of [`${'('.repeat(10_000)}a = 1${')'.repeat(10_000)}`, `${'NOT '.repeat(10_000)}a = 1`, `${'-'.repeat(10_000)}a = 1`]) {
      const rag = await send('POST', `/v1beta1/${LOCATION}:retrieveContexts`, { body: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'x', ragRetrievalConfig: { filter: { metadataFilter: filter } } } } })
      expect(rag.status).toBe(400)
      expect(rag.json.error?.status).toBe('INVALID_ARGUMENT')
      const memories = await send('POST', `/v1beta1/${LOCATION}/reasoningEngines/1/memories:retrieve`, { body: { scope: { user: 'u' }, filter } })
      expect(memories.status).toBe(400)
      expect(memories.json.error?.message).toMatch(/invalid filter at position \d+/)
      // In a URL the same filter is over Node's 16 KiB header limit: refused before any handler (431).
      const listed = await send('GET', `/v1beta1/${LOCATION}/reasoningEngines/1/memories?filter=${encodeURIComponent(filter)}`)
      expect([400, 431]).toContain(listed.status)
    }
  })

  it('answers normally afterwards', async () => {
    const corpus = await createCorpus()
    const imported = await importUris(corpus, ['gs://bucket/guide.txt'])
    expect(imported.json.response).toMatchObject({ importedRagFilesCount: '1' })
    const contexts = await retrieve(corpus, 'lighthouse keeper')
    expect(contexts.map((c) => [c.sourceUri, c.text])).toEqual([['gs://bucket/guide.txt', 'The lighthouse keeper logs every passing ship.']])
    expect((await send('POST', '/v1beta/corpora', { body: { name: 'corpora/afterwards' } })).status).toBe(200)
    expect((await send('GET', '/v1beta/corpora/afterwards')).json).toMatchObject({ name: 'corpora/afterwards' })
  })
})
