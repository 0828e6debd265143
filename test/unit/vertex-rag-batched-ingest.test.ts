import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder, type Embedder } from '@quarry/core'
import { VertexRagEngine, seededRandomId, steppingClock } from '@quarry/adapters'
import { RagContext } from '../../packages/adapters/src/vertex-rag/context.js'
import { createRagCorpus } from '../../packages/adapters/src/vertex-rag/corpora.js'
import { deleteRagFile, importRagFiles, uploadRagFile } from '../../packages/adapters/src/vertex-rag/files.js'
import { ingestFile, type FileInput } from '../../packages/adapters/src/vertex-rag/ingest.js'
import { FILE_BOUNDS_DEFAULT } from '../../packages/adapters/src/vertex-rag/file-bounds.js'
import { resolveVertexRagOptions } from '../../packages/adapters/src/vertex-rag/options.js'
import { importWorker } from '../../packages/adapters/src/vertex-rag/import-worker.js'
import { embeddedEarly } from '../../packages/adapters/src/vertex-rag/embed-queue.js'
import { IMPORT_BATCH_TEXTS } from '../../packages/adapters/src/vertex-rag/read-ahead.js'
import { retrieveContexts } from '../../packages/adapters/src/vertex-rag/retrieve.js'
import type { RagCorpusState, RagFileState } from '../../packages/adapters/src/vertex-rag/state.js'
import { recording, replaying } from '../../packages/adapters/src/rpc/replay.js'
import { prng } from '../support/random.js'

/**
 * Batched ingest against the file-by-file path it replaced (ingestFile with nothing shared: each
 * file embedded alone and added at once). An import of many files embeds across files and adds in
 * batches; concurrent uploads share one embedding call and one add. The state they leave must be
 * the one file-by-file ingest leaves: file ids and stamps, chunk ids and texts, every stored vector
 * and metadata, and retrieveContexts' answers with their scores. A counting embedder checks that
 * the batching really happened.
 */
const L = 'projects/p/locations/l'
const CHUNKING = { chunkSize: 6, chunkOverlap: 2 }
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const WORDS = 'river stone harbor spice desert planet ocean storm garden tulip rose engine vector index search query token chunk batch file corpus memory answer score'.split(' ')

/** Seeded texts of 20 to 200 words; file 7 has no words (it fails alone). */
function texts(seed: number, count: number): string[] {
  const random = prng(seed)
  return Array.from({ length: count }, (_, i) => {
    if (i === 7) return ' \n '
    const n = 20 + Math.floor(random() * 180)
    return Array.from({ length: n }, (_, k) => `${WORDS[Math.floor(random() * WORDS.length)]}${k % 9 === 8 ? '.' : ''}`).join(' ')
  })
}

function counting(): { embedder: Embedder; calls: () => number } {
  const inner = createHashingEmbedder({ dimensions: 32 })
  let calls = 0
  return {
    embedder: { name: inner.name, dimensions: inner.dimensions, embed: (t) => (calls++, inner.embed(t)) },
    calls: () => calls,
  }
}

/** `portable`: the hashing embedder itself (a recipe: the import worker embeds); else a counting wrapper of it (no recipe: embedded here, in batches). */
async function engine(root: string, db: 'knn' | 'ann', importWorker = true, portable = false): Promise<{ ctx: RagContext; corpus: RagCorpusState; calls: () => number }> {
  const { embedder, calls } = portable ? { embedder: createHashingEmbedder({ dimensions: 32 }), calls: () => 0 } : counting()
  const ctx = new RagContext(resolveVertexRagOptions({ embedder, gcsRoot: root, clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(11), importWorker }))
  const op = await createRagCorpus(ctx, 'v1beta1', { parent: L, ragCorpus: { displayName: db, vectorDbConfig: { ragManagedDb: { [db]: {} } } } })
  const name = (op.response as unknown as { name: string }).name
  return { ctx, corpus: ctx.state.corpora.get(name) as RagCorpusState, calls }
}

function writeFiles(root: string, contents: readonly string[]): string[] {
  mkdirSync(join(root, 'b', 'docs'), { recursive: true })
  return contents.map((text, i) => {
    const name = `f${String(i).padStart(3, '0')}.txt`
    writeFileSync(join(root, 'b', 'docs', name), text)
    return `gs://b/docs/${name}`
  })
}

/** Everything a corpus holds, for toEqual: files (JSON-able state), chunk records (vectors as arrays). */
function snapshot(corpus: RagCorpusState): unknown {
  return {
    updateMs: corpus.updateMs,
    files: [...corpus.files.values()].map((f) => ({ ...f, metadata: [...f.metadata.values()] })),
    records: [...corpus.files.values()].flatMap((f) =>
      f.chunks.map((c) => {
        const r = corpus.index.get(c.id)
        return { id: c.id, text: r?.text, metadata: r?.metadata, vector: r?.vector ? [...r.vector] : undefined }
      }),
    ),
  }
}

async function answers(ctx: RagContext, corpus: RagCorpusState): Promise<unknown[]> {
  const out: unknown[] = []
  for (const q of ['river stone', 'vector index search', 'garden rose tulip', 'memory answer score']) {
    for (const alpha of [1, 0, 0.5]) {
      out.push(await retrieveContexts(ctx, 'v1beta1', { parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus.name }] }, query: { text: q, ragRetrievalConfig: { topK: 8, hybridSearch: { alpha } } } }))
    }
  }
  return out
}

/** Starts the import worker, ready to answer, if earlier tests have not: an import of 20 files starts it. */
async function startWorker(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'quarry-batch-'))
  dirs.push(root)
  writeFiles(root, texts(9, 20))
  const starter = await engine(root, 'knn', true, true)
  await importRagFiles(starter.ctx, 'v1beta1', { parent: starter.corpus.name, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] }, ragFileChunkingConfig: { fixedLengthChunking: CHUNKING } } })
  expect(importWorker.ready).toBe(true)
}

/** The file-by-file oracle: each file ingested alone, in the import's order. */
async function oneByOne(ctx: RagContext, corpus: RagCorpusState, uris: readonly string[], contents: readonly string[]): Promise<void> {
  for (const [i, uri] of uris.entries()) {
    const name = uri.slice(uri.lastIndexOf('/') + 1)
    const input: FileInput = { displayName: name, description: undefined, userMetadata: undefined, source: { kind: 'gcs', uri }, readAs: name, label: uri, bytes: new TextEncoder().encode(contents[i]), chunking: { size: CHUNKING.chunkSize, overlap: CHUNKING.chunkOverlap }, bounds: FILE_BOUNDS_DEFAULT }
    await ingestFile(ctx, corpus, input)
  }
}

describe('batched RAG ingest', () => {
  for (const [db, worker, portable] of [['knn', true, false], ['ann', true, false], ['knn', false, false], ['knn', true, true], ['ann', true, true]] as const) {
    const how = `${worker ? 'on the import worker' : 'importWorker: false'}${portable ? ', embedded there' : ''}`
    it(`an import of many files leaves what file-by-file ingest leaves (${db}, ${how}), re-imports with changed files too`, async () => {
      const root = mkdtempSync(join(tmpdir(), 'quarry-batch-'))
      dirs.push(root)
      const first = texts(3, 60)
      const uris = writeFiles(root, first)
      const batched = await engine(root, db, worker, portable)
      const oracle = await engine(root, db)
      const answered = importWorker.answered
      const embedded = importWorker.embedded
      const request = { parent: batched.corpus.name, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] }, ragFileChunkingConfig: { fixedLengthChunking: CHUNKING } } }

      const op = await importRagFiles(batched.ctx, 'v1beta1', request)
      expect(op.response).toMatchObject({ importedRagFilesCount: '59', failedRagFilesCount: '1' })
      // Every file was read and chunked on the worker thread (the file without words too), or none was.
      expect(importWorker.answered - answered).toBe(worker ? 60 : 0)
      // With an embedder that has a recipe, the worker embedded the chunks of files with words, but
      // for those this thread took while the worker was behind (read-ahead.ts); without, none.
      const onWorker = importWorker.embedded - embedded
      if (portable) expect(onWorker).toBeGreaterThan(0)
      expect(onWorker).toBeLessThanOrEqual(portable ? 59 : 0)
      await oneByOne(oracle.ctx, oracle.corpus, uris, first)
      // The import's operation draws its id and time after its files': the oracle draws them too.
      oracle.ctx.numericId()
      oracle.ctx.now()
      const chunks = [...batched.corpus.files.values()].reduce((n, f) => n + f.chunks.length, 0)
      expect(chunks).toBeGreaterThan(2 * IMPORT_BATCH_TEXTS)
      // Batches across files: embedAll's calls of 64 texts, one partial call per batch at most; file by file, one or more per file.
      expect(batched.calls()).toBeLessThanOrEqual(Math.ceil(chunks / 64) + Math.ceil(chunks / IMPORT_BATCH_TEXTS))
      expect(oracle.calls()).toBeGreaterThanOrEqual(59)
      expect(snapshot(batched.corpus)).toEqual(snapshot(oracle.corpus))
      expect(await answers(batched.ctx, batched.corpus)).toEqual(await answers(oracle.ctx, oracle.corpus))

      // Half the files change: their chunks are replaced (old ones out before the batch goes in), the rest skipped.
      const second = texts(4, 60).map((t, i) => (i % 2 === 0 ? t : (first[i] as string)))
      writeFiles(root, second)
      const again = await importRagFiles(batched.ctx, 'v1beta1', request)
      expect(again.response).toMatchObject({ importedRagFilesCount: '30', skippedRagFilesCount: '29', failedRagFilesCount: '1' })
      await oneByOne(oracle.ctx, oracle.corpus, uris, second)
      expect(snapshot(batched.corpus)).toEqual(snapshot(oracle.corpus))
      expect(await answers(batched.ctx, batched.corpus)).toEqual(await answers(oracle.ctx, oracle.corpus))

      // A deleted file is imported anew by the next import of its URI (the others are skipped): the
      // lookup of the file a URI imported before follows deletions.
      const gone = [...batched.corpus.files.values()].find((f) => f.source.kind === 'gcs' && f.source.uri === uris[2]) as RagFileState
      await deleteRagFile(batched.ctx, 'v1beta1', { name: gone.name })
      const third = await importRagFiles(batched.ctx, 'v1beta1', request)
      expect(third.response).toMatchObject({ importedRagFilesCount: '1', skippedRagFilesCount: '58', failedRagFilesCount: '1' })
      const back = [...batched.corpus.files.values()].filter((f) => f.source.kind === 'gcs' && f.source.uri === uris[2])
      expect(back).toHaveLength(1)
      expect(back[0]?.name).not.toBe(gone.name)
      expect(back[0]?.chunks.map((c) => c.text)).toEqual(gone.chunks.map((c) => c.text))
    })
  }

  for (const portable of [false, true]) {
  it(`an import records each file's read and vectors in file order, and its replay rebuilds the state without the files (${portable ? 'vectors from the import worker' : 'embedded here'})`, async () => {
    const root = mkdtempSync(join(tmpdir(), 'quarry-batch-'))
    dirs.push(root)
    writeFiles(root, texts(6, 40))
    const embedded = importWorker.embedded
    const recorded = await engine(root, 'knn', true, portable)
    const replayed = await engine(root, 'knn', true, portable)
    const request = { parent: recorded.corpus.name, importRagFilesConfig: { gcsSource: { uris: ['gs://b/docs'] }, ragFileChunkingConfig: { fixedLengthChunking: CHUNKING } } }
    const { result, trace } = await recording(() => importRagFiles(recorded.ctx, 'v1beta1', request))
    // Per file: its read, then (if it has words) its vectors, then its id and stamps; as file-by-file import recorded them.
    const kinds = trace.map((e) => (e as [string])[0]).filter((k) => k === 'read' || k === 'embed')
    expect(kinds).toEqual(Array.from({ length: 40 }, (_, i) => (i === 7 ? ['read'] : ['read', 'embed'])).flat())
    rmSync(join(root, 'b'), { recursive: true })
    const calls = replayed.calls()
    expect(await replaying(trace, () => importRagFiles(replayed.ctx, 'v1beta1', request))).toEqual(result)
    expect(replayed.calls()).toBe(calls)
    expect(snapshot(replayed.corpus)).toEqual(snapshot(recorded.corpus))
    // The recorded import embedded on the worker (some of the 39 files with words; this thread the
    // others); the replay embedded nothing anywhere.
    const onWorker = importWorker.embedded - embedded
    if (portable) expect(onWorker).toBeGreaterThan(0)
    expect(onWorker).toBeLessThanOrEqual(portable ? 39 : 0)
  })
  }

  it('concurrent uploads share one embedding call and one add, with the files of sequential uploads', async () => {
    const contents = texts(5, 12).filter((t) => t.trim() !== '')
    const concurrent = await engine(tmpdir(), 'knn')
    const sequential = await engine(tmpdir(), 'knn')
    const upload = (e: { ctx: RagContext; corpus: RagCorpusState }, text: string, i: number) =>
      uploadRagFile(e.ctx, 'v1beta1', { parent: e.corpus.name, ragFile: { displayName: `u${i}.txt` }, uploadRagFileConfig: { ragFileChunkingConfig: { fixedLengthChunking: CHUNKING } } }, text)
    const together = await Promise.all(contents.map((t, i) => upload(concurrent, t, i)))
    const oneAtATime = []
    for (const [i, t] of contents.entries()) oneAtATime.push(await upload(sequential, t, i))
    const chunks = [...concurrent.corpus.files.values()].reduce((n, f) => n + f.chunks.length, 0)
    expect(concurrent.calls()).toBe(Math.ceil(chunks / 64))
    expect(sequential.calls()).toBeGreaterThanOrEqual(contents.length)
    expect(together).toEqual(oneAtATime)
    expect(snapshot(concurrent.corpus)).toEqual(snapshot(sequential.corpus))
    expect(await answers(concurrent.ctx, concurrent.corpus)).toEqual(await answers(sequential.ctx, sequential.corpus))
  })

  it('a big upload that came first keeps its place: ids and stamps follow the order uploads came, however many slices each took', async () => {
    // The first file takes many 5 ms slices to analyze and embed; the small ones after it take none.
    const big = Array.from({ length: 80_000 }, (_, k) => `${WORDS[k % WORDS.length]}${k % 9 === 8 ? '.' : ''}`).join(' ')
    const contents = [big, ...texts(12, 6).filter((t) => t.trim() !== '')]
    const concurrent = await engine(tmpdir(), 'knn')
    const sequential = await engine(tmpdir(), 'knn')
    const upload = (e: { ctx: RagContext; corpus: RagCorpusState }, text: string, i: number) =>
      uploadRagFile(e.ctx, 'v1beta1', { parent: e.corpus.name, ragFile: { displayName: `u${i}.txt` }, uploadRagFileConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 64, chunkOverlap: 8 } } } }, text)
    const together = await Promise.all(contents.map((t, i) => upload(concurrent, t, i)))
    const oneAtATime = []
    for (const [i, t] of contents.entries()) oneAtATime.push(await upload(sequential, t, i))
    expect(together).toEqual(oneAtATime)
    expect(snapshot(concurrent.corpus)).toEqual(snapshot(sequential.corpus))
  })

  it('uploads embed on the import worker while their texts are chunked and analyzed for the index: the state of uploads embedded here', async () => {
    await startWorker()
    const contents = texts(8, 24).filter((t) => t.trim() !== '')
    const onWorker = await engine(tmpdir(), 'ann', true, true)
    const here = await engine(tmpdir(), 'ann', false, true)
    const early = embeddedEarly()
    const helped = importWorker.helpedSent
    const upload = (e: { ctx: RagContext; corpus: RagCorpusState }, text: string, i: number) =>
      uploadRagFile(e.ctx, 'v1beta1', { parent: e.corpus.name, ragFile: { displayName: `u${i}.txt` }, uploadRagFileConfig: { ragFileChunkingConfig: { fixedLengthChunking: CHUNKING } } }, text)
    for (const [i, t] of contents.entries()) expect(await upload(onWorker, t, i)).toEqual(await upload(here, t, i))
    // Each upload's first chunks went to the worker while the rest of its text was chunked (a part
    // of the text at a time), the others once it was. How many of them the worker embedded, and
    // how many this thread did rather than wait, depends on timing: shared-vectors.test.ts checks that split.
    expect(embeddedEarly() - early).toBeGreaterThan(2 * contents.length)
    // Every upload's last chunks went as one message at least, which this thread helps with rather than wait.
    expect(importWorker.helpedSent - helped).toBeGreaterThanOrEqual(contents.length)
    expect(snapshot(onWorker.corpus)).toEqual(snapshot(here.corpus))
    expect(await answers(onWorker.ctx, onWorker.corpus)).toEqual(await answers(here.ctx, here.corpus))
  })

  it('uploads that wait for their turn in the service are chunked and embedded ahead on the worker: the state and answers of uploads one at a time', async () => {
    await startWorker()
    // Files 3 and 7 fail (no words, an unsupported type): a refusal done ahead is the same refusal.
    const contents = texts(12, 12).map((t, i) => (i === 3 ? '   ' : t))
    const names = contents.map((_, i) => (i === 7 ? `u${i}.bin` : `u${i}.txt`))
    const service = (): VertexRagEngine => new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 32 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(5) })
    const together = service()
    const inTurn = service()
    const corpusOf = async (e: VertexRagEngine): Promise<string> => {
      const op = await e.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c', vectorDbConfig: { ragManagedDb: { ann: {} } } } })
      return (op.ok ? op.response.response?.name : '') as string
    }
    const [a, b] = [await corpusOf(together), await corpusOf(inTurn)]
    const request = (parent: string, i: number) => ({ parent, ragFile: { displayName: names[i] }, uploadRagFileConfig: { ragFileChunkingConfig: { fixedLengthChunking: CHUNKING } } })
    const ahead = importWorker.uploadsAnalyzed
    const atOnce = await Promise.all(contents.map((t, i) => together.v1beta1.uploadRagFile(request(a, i), t)))
    // The first had its turn at once; the 11 others waited, and were read on the worker meanwhile.
    expect(importWorker.uploadsAnalyzed - ahead).toBe(11)
    const oneByOne = []
    for (const [i, t] of contents.entries()) oneByOne.push(await inTurn.v1beta1.uploadRagFile(request(b, i), t))
    expect(importWorker.uploadsAnalyzed - ahead).toBe(11)
    const withoutParent = (x: unknown): string => JSON.stringify(x).replaceAll(a, 'C').replaceAll(b, 'C')
    expect(withoutParent(atOnce)).toBe(withoutParent(oneByOne))
    expect(atOnce.filter((o) => o.ok && o.response.error !== undefined)).toHaveLength(2)
    const state = async (e: VertexRagEngine, parent: string): Promise<string> => {
      const listed = await e.v1beta1.listRagFiles({ parent, pageSize: 100 })
      const found = []
      for (const q of ['river stone', 'vector index search', 'garden rose tulip']) {
        for (const alpha of [1, 0, 0.5]) found.push(await e.v1beta1.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: parent }] }, query: { text: q, ragRetrievalConfig: { topK: 8, hybridSearch: { alpha } } } }))
      }
      return withoutParent({ listed, found })
    }
    expect(await state(together, a)).toBe(await state(inTurn, b))
  })

  it("an upload whose request changed before its turn is read as it reads then, not as it was read ahead (a transport's call: its request is not copied)", async () => {
    await startWorker()
    const service = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 32 }), randomId: seededRandomId(6) })
    const op = await service.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })
    const parent = (op.ok ? op.response.response?.name : '') as string
    const text = '# Title\n\nriver stone harbor spice desert planet ocean storm garden tulip rose'
    const requests = ['a.txt', 'b.txt'].map((name) => ({ parent, ragFile: { displayName: name }, uploadRagFileConfig: { ragFileChunkingConfig: { fixedLengthChunking: CHUNKING } } }))
    const ahead = importWorker.uploadsAnalyzed
    // A caller in this process passes a copy taken at the call (aliasing.test.ts); a transport's
    // request is the engine's to read, so the ahead read is checked against the one in its turn.
    const calls = requests.map((r) => service.v1beta1.uploadRagFile(r, text, { transport: true }))
    // The second waited, and was read ahead as a text file; its name changes before its turn.
    expect(importWorker.uploadsAnalyzed).toBe(ahead)
    ;(requests[1] as { ragFile: { displayName: string } }).ragFile.displayName = 'b.md'
    const [, second] = await Promise.all(calls)
    // The worker read it ahead (its answer may come after both uploads: the first does not wait for the worker).
    await expect.poll(() => importWorker.uploadsAnalyzed - ahead).toBe(1)
    expect(second?.ok && second.response.ragFile).toMatchObject({ displayName: 'b.md' })
    const listed = await service.v1beta1.listRagFiles({ parent })
    expect(listed.ok && listed.response.ragFiles?.map((f) => f.displayName)).toEqual(['a.txt', 'b.md'])
  })

  it('a concurrent upload the embedder refuses fails alone', async () => {
    const inner = createHashingEmbedder({ dimensions: 32 })
    const embedder: Embedder = { name: inner.name, dimensions: 32, embed: async (t) => (t.some((x) => x.includes('poison')) ? Promise.reject(new Error('refused')) : inner.embed(t)) }
    const ctx = new RagContext(resolveVertexRagOptions({ embedder, onInternalError: () => undefined, randomId: seededRandomId(2) }))
    const op = await createRagCorpus(ctx, 'v1beta1', { parent: L, ragCorpus: { displayName: 'c' } })
    const parent = (op.response as unknown as { name: string }).name
    const outcomes = await Promise.allSettled(['one two', 'poison three', 'four five'].map((text, i) => uploadRagFile(ctx, 'v1beta1', { parent, ragFile: { displayName: `u${i}.txt` } }, text)))
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    const corpus = ctx.state.corpora.get(parent) as RagCorpusState
    expect([...corpus.files.values()].map((f) => f.displayName)).toEqual(['u0.txt', 'u2.txt'])
    expect([...corpus.files.values()].map((f) => corpus.index.get(`${f.id}-000000`)?.text)).toEqual(['one two', 'four five'])
    // Its text was analyzed while it was embedded (prepareText): nothing of it is in the index's vocabulary.
    expect([...corpus.index.state.sparse.terms].sort()).toEqual(['five', 'four', 'one', 'two'])
  })
})
