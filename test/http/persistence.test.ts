import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { crc32, createHashingEmbedder } from '@quarry/core'
import { createServer, type QuarryServer } from '@quarry/adapters'
import { importWorker } from '../../packages/adapters/src/vertex-rag/import-worker.js'

/** `dataDir`: state survives a restart whole, across the three APIs; interrupted snapshots are ignored. */
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const embedder = createHashingEmbedder({ dimensions: 32 })

async function post(url: string, path: string, body: unknown, method = 'POST'): Promise<Record<string, unknown>> {
  const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return (await res.json()) as Record<string, unknown>
}
async function get(url: string, path: string): Promise<Record<string, unknown>> {
  return (await (await fetch(`${url}${path}`)).json()) as Record<string, unknown>
}

async function fill(server: QuarryServer): Promise<string> {
  const { url } = await server.listen()
  await post(url, '/v1beta/corpora', { name: 'corpora/c' })
  await post(url, '/v1beta/corpora/c/documents', { name: 'corpora/c/documents/d', customMetadata: [{ key: 'year', numericValue: 2001 }] })
  await post(url, '/v1beta/corpora/c/documents/d/chunks:batchCreate', { requests: ['desert spice', 'ocean storm', 'garden rose'].map((t, i) => ({ chunk: { name: `corpora/c/documents/d/chunks/k${i}`, data: { stringValue: t } } })) })
  const op = await post(url, '/v1beta1/projects/p/locations/l/ragCorpora', { displayName: 'R' })
  const corpus = (op.response as { name: string }).name
  const boundary = 'b'
  const body = `--${boundary}\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"ragFile":{"displayName":"a.txt"}}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\nThe desert wind erases tracks.\r\n--${boundary}--\r\n`
  await fetch(`${url}/upload/v1beta1/${corpus}/ragFiles:upload`, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body })
  await post(url, '/v1beta1/projects/p/locations/l/reasoningEngines/1/memories?memoryId=tea', { fact: 'I like tea', scope: { user_id: 'u' } })
  return corpus
}

async function observe(url: string, corpus: string): Promise<unknown[]> {
  return [
    await post(url, '/v1beta/corpora/c:query', { query: 'desert storm', metadataFilters: [{ key: 'document.custom_metadata.year', conditions: [{ operation: 'GREATER', numericValue: 2000 }] }] }),
    await get(url, '/v1beta/corpora/c/documents/d/chunks'),
    await post(url, '/v1beta1/projects/p/locations/l:retrieveContexts', { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'desert wind' } }),
    await get(url, `/v1beta1/${corpus}/ragFiles`),
    await post(url, '/v1beta1/projects/p/locations/l/reasoningEngines/1/memories:retrieve', { scope: { user_id: 'u' }, similaritySearchParams: { searchQuery: 'tea' } }),
  ]
}

describe('dataDir persistence', () => {
  it('restores every API\'s state after a restart, with identical answers', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-data-'))
    dirs.push(dataDir)
    const first = createServer({ embedder, dataDir })
    expect(first.restored).toBe(false)
    const corpus = await fill(first)
    const { url } = { url: `http://127.0.0.1:${(first.server.address() as { port: number }).port}` }
    const before = await observe(url, corpus)
    await first.close()
    const snapshots = (): string[] => readdirSync(dataDir).filter((e) => e !== 'CURRENT')
    expect(snapshots()).toHaveLength(1)

    // An interrupted later snapshot leaves debris that the next start ignores and the next save removes.
    mkdirSync(join(dataDir, '.tmp-snapshot-99-999'))
    writeFileSync(join(dataDir, '.tmp-snapshot-99-999', 'half-written'), 'x')
    const second = createServer({ embedder, dataDir })
    expect(second.restored).toBe(true)
    const { url: url2 } = await second.listen()
    expect(await observe(url2, corpus)).toEqual(before)
    await post(url2, '/v1beta/corpora/c/documents/d/chunks', { name: 'corpora/c/documents/d/chunks/k9', data: { stringValue: 'desert dune' } })
    await second.close()
    expect(snapshots()).toHaveLength(1)
    expect(snapshots()[0]).toMatch(/^snapshot-\d+$/)
    const third = createServer({ embedder, dataDir })
    const { url: url3 } = await third.listen()
    const chunks = (await get(url3, '/v1beta/corpora/c/documents/d/chunks')) as { chunks: { name: string }[] }
    expect(chunks.chunks.map((c) => c.name)).toEqual(['k0', 'k1', 'k2', 'k9'].map((k) => `corpora/c/documents/d/chunks/${k}`))
    await third.close()
  })

  it('refuses a CURRENT that names no snapshot, with a way out', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-data-'))
    dirs.push(dataDir)
    writeFileSync(join(dataDir, 'CURRENT'), 'garbage\n')
    expect(() => createServer({ embedder, dataDir })).toThrow(/does not name a snapshot .* remove the folder to start empty/)
    expect(existsSync(join(dataDir, 'CURRENT'))).toBe(true)
  })

  it('refuses a log whose write reads other values on replay, naming the record and its method', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-data-'))
    const crashed = mkdtempSync(join(tmpdir(), 'quarry-crashed-'))
    dirs.push(dataDir, crashed)
    const first = createServer({ embedder, dataDir })
    const { url } = await first.listen()
    await post(url, '/v1beta/corpora', { name: 'corpora/c' })
    // The folder as a crash would leave it: the write acknowledged, in the log, not yet in a checkpoint.
    cpSync(dataDir, crashed, { recursive: true })
    await first.close()
    const log = readdirSync(crashed).find((e) => /^wal-\d+\.log$/.test(e)) as string
    const bytes = readFileSync(join(crashed, log))
    // The log's first record (after the 64-byte header and seals, its 12-byte frame header) is the
    // createCorpus; its clock reading becomes a value of another kind, the same length, with the
    // frame's payload checksum made to match, so only the replay can tell.
    const length = bytes.readUInt32LE(64)
    const payload = bytes.subarray(76, 76 + length)
    const at = payload.indexOf('["clock",')
    expect(at).toBeGreaterThan(0)
    payload.write('["clocx",', at, 'latin1')
    bytes.writeUInt32LE(crc32(payload), 72)
    writeFileSync(join(crashed, log), bytes)

    const second = createServer({ embedder, dataDir: crashed, onInternalError: () => undefined })
    const started = second.listen()
    await expect(started).rejects.toMatchObject({ code: 'INVALID_SNAPSHOT' })
    await expect(started).rejects.toThrow(`record 0 of the write-ahead log in ${crashed} (google.ai.generativelanguage.v1beta.RetrieverService.CreateCorpus@v1beta) does not replay here: value 0 is clocx, the write asked for clock. A log replays on the Quarry version and options (embedder, extractor) that wrote it`)
    await second.close()
    // Nothing was changed: the tampered log is still there, as it was.
    expect(readFileSync(join(crashed, log)).equals(bytes)).toBe(true)
  })

  it('replays uploads that were chunked and embedded ahead on the import worker while they waited for the log', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-data-'))
    const crashed = mkdtempSync(join(tmpdir(), 'quarry-crashed-'))
    dirs.push(dataDir, crashed)
    const first = createServer({ embedder, dataDir })
    const { url } = await first.listen()
    const op = await post(url, '/v1beta1/projects/p/locations/l/ragCorpora', { displayName: 'R' })
    const corpus = (op.response as { name: string }).name
    const upload = async (name: string, text: string): Promise<void> => {
      const body = `--b\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n{"ragFile":{"displayName":"${name}"}}\r\n--b\r\nContent-Disposition: form-data; name="file"\r\n\r\n${text}\r\n--b--\r\n`
      const res = await fetch(`${url}/upload/v1beta1/${corpus}/ragFiles:upload`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b' }, body })
      expect(res.status).toBe(200)
    }
    // The 16th upload of the process starts the import worker; it is ready a moment later.
    for (let i = 0; i < 16; i++) await upload(`warm${i}.txt`, `warm up ${i}`)
    for (let t = 0; !importWorker.ready && t < 200; t++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(importWorker.ready).toBe(true)
    const ahead = importWorker.uploadsAnalyzed
    const words = ['desert', 'spice', 'ocean', 'storm', 'garden', 'rose', 'river', 'stone']
    await Promise.all(Array.from({ length: 12 }, (_, i) => upload(`f${i}.txt`, `marker${i} ${words.map((w, k) => words[(k * (i + 3)) % words.length] ?? w).join(' ')} end${i}.`)))
    // Uploads that waited for the log's lock were read on the worker meanwhile.
    expect(importWorker.uploadsAnalyzed - ahead).toBeGreaterThan(0)
    const observed = async (at: string): Promise<unknown> => {
      const files = (await get(at, `/v1beta1/${corpus}/ragFiles?pageSize=100`)) as { ragFiles: { displayName: string }[] }
      const found = []
      for (let i = 0; i < 12; i++) found.push(await post(at, '/v1beta1/projects/p/locations/l:retrieveContexts', { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: `marker${i} end${i}`, ragRetrievalConfig: { topK: 3 } } }))
      return { files, found }
    }
    const before = await observed(url)
    // Each file's chunk is its own text (read ahead or not): the best context for its markers.
    for (let i = 0; i < 12; i++) {
      const contexts = ((before as { found: { contexts: { contexts: { text: string; sourceDisplayName: string }[] } }[] }).found[i]?.contexts.contexts ?? [])
      expect(contexts[0]?.sourceDisplayName).toBe(`f${i}.txt`)
      expect(contexts[0]?.text).toMatch(new RegExp(`^marker${i} .* end${i}\\.$`))
    }
    // The folder as a crash would leave it: the uploads in the log, not in a checkpoint; a replay rebuilds them.
    cpSync(dataDir, crashed, { recursive: true })
    await first.close()
    const second = createServer({ embedder, dataDir: crashed })
    const { url: url2 } = await second.listen()
    expect(second.replayed).toBeGreaterThanOrEqual(12)
    expect(await observed(url2)).toEqual(before)
    await second.close()
  })
})
