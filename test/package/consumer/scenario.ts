// What an application does with the published packages: the pack-install test compiles these
// files in a fresh project outside the repository (strict TypeScript, NodeNext, against the shipped
// .d.ts) and runs them under plain node; it runs the same functions from the workspace sources to
// compare. Only the public entry points are imported.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHashingEmbedder, createIndex, loadIndex, QuarryError, type Hit, type QuarryIndex } from '@quarry/core'
import { ApiError, RetrieverServiceClient, seededRandomId, steppingClock, VertexRagEngine } from '@quarry/adapters'

export type Ranked = [id: string, score: number][]

export const RECORDS = [
  { id: 'a', vector: [1, 0, 0], text: 'red fox', metadata: { kind: 'animal' } },
  { id: 'b', vector: [0.6, 0.8, 0], text: 'red red dog', metadata: { kind: 'animal' } },
  { id: 'c', vector: [0, 1, 0], text: 'dog sun', metadata: { kind: 'thing' } },
  { id: 'd', vector: [0, 0, 1], text: 'sun sun sun', metadata: { kind: 'thing' } },
]

function ranked(hits: readonly Hit[]): Ranked {
  return hits.map((h) => [h.id, h.score])
}

// Not IndexOptions: createIndex takes IndexOptions & { embedder?: Embedder }, which IndexOptions' embedder identity is not.
function filled(options: Parameters<typeof createIndex>[0]): QuarryIndex {
  const index = createIndex(options)
  index.addMany(RECORDS)
  return index
}

function errorCode(run: () => unknown): string {
  try {
    run()
    return 'none'
  } catch (error) {
    return error instanceof QuarryError ? error.code : 'not a QuarryError'
  }
}

/** Searches every index kind answers (dense, text, hybrid), then the same after save and load. */
function searches(index: QuarryIndex): { strategy: string; dense: Ranked; text: Ranked; hybrid: Ranked; reloaded: { strategy: string; dense: Ranked; text: Ranked } } {
  const dense = index.search({ vector: [1, 0, 0], topK: 4 })
  const text = index.search({ text: 'red', topK: 4 })
  const hybrid = index.search({ text: 'sun', vector: [0, 1, 0], topK: 3, alpha: 0.5 })
  const dir = mkdtempSync(join(tmpdir(), 'quarry-consumer-'))
  try {
    index.save(dir)
    const again = loadIndex(dir)
    const reloaded = again.search({ vector: [1, 0, 0], topK: 4 })
    return {
      strategy: dense.stats.strategy,
      dense: ranked(dense.hits),
      text: ranked(text.hits),
      hybrid: ranked(hybrid.hits),
      reloaded: { strategy: reloaded.stats.strategy, dense: ranked(reloaded.hits), text: ranked(again.search({ text: 'red', topK: 4 }).hits) },
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The Semantic Retriever client: a corpus, a document, three chunks, one query. */
async function semanticRetriever(dense: 'hnsw' | 'exact'): Promise<{ texts: string[]; scores: number[]; invalid: number }> {
  // The hashing embedder: instant and the same on every machine (the default, GloVe, loads word vectors).
  const client = new RetrieverServiceClient({ embedder: createHashingEmbedder(), dense, planner: { exactBelow: 0 }, randomId: seededRandomId(7), clock: steppingClock('2026-01-01T00:00:00Z') })
  const [corpus] = await client.createCorpus({ corpus: { displayName: 'Books' } })
  const [doc] = await client.createDocument({ parent: corpus.name, document: { displayName: 'Dune' } })
  await client.batchCreateChunks({
    parent: doc.name,
    requests: ['The spice must flow.', 'Fear is the mind-killer.', 'A desert planet called Arrakis.'].map((text) => ({ chunk: { data: { stringValue: text } } })),
  })
  const [{ relevantChunks = [] }] = await client.queryCorpus({ name: corpus.name, query: 'what must flow?', resultsCount: 3 })
  let invalid = 0
  try {
    await client.queryCorpus({ name: corpus.name, query: 'x', resultsCount: 500 })
  } catch (error) {
    if (error instanceof ApiError) invalid = error.code
  }
  return { texts: relevantChunks.map((c) => c.chunk.data.stringValue), scores: relevantChunks.map((c) => c.chunkRelevanceScore ?? 0), invalid }
}

/** Everything, with the native HNSW graph (the default dense mode). */
export async function fullScenario() {
  const index = filled({ dimensions: 3, planner: { exactBelow: 0 } })
  return {
    graph: searches(index),
    duplicate: errorCode(() => index.add(RECORDS[0] as (typeof RECORDS)[number])),
    google: await semanticRetriever('hnsw'),
  }
}

/**
 * A 20,000-row exact search split across the scan pool's worker thread (built from the installed
 * dist/ files) against the same search on the calling thread: the same hits, and no warning that
 * a scan worker failed.
 */
async function pooledScan(): Promise<{ same: boolean; ids: string[]; warnings: string[] }> {
  const warnings: string[] = []
  const onWarning = (warning: Error & { code?: string }): void => void warnings.push(warning.code ?? warning.name)
  process.on('warning', onWarning)
  const dim = 32
  const build = (workers: number): QuarryIndex => {
    const index = createIndex({ dimensions: dim, dense: 'exact', metric: 'l2', scan: { workers, parallelAbove: 0 } })
    for (let i = 0; i < 20_000; i++) index.add({ id: `r${i}`, vector: Array.from({ length: dim }, (_, j) => ((i * 7 + j * 13) % 17) - 8) })
    return index
  }
  const pooled = build(1)
  const single = build(0)
  const query = Array.from({ length: dim }, (_, j) => (j % 5) - 2)
  let same = true
  for (let q = 0; q < 20; q++) {
    if (q % 5 === 0) await new Promise((resolve) => setTimeout(resolve, 20))
    same &&= JSON.stringify(pooled.search({ vector: query, topK: 10 })) === JSON.stringify(single.search({ vector: query, topK: 10 }))
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
  process.off('warning', onWarning)
  return { same, ids: single.search({ vector: query, topK: 10 }).hits.map((h) => h.id), warnings }
}

/**
 * A RAG import of a folder read and chunked on the import worker (built from the installed dist/
 * files) against the same import on the calling thread (`importWorker: false`): the same files,
 * chunks and contexts, and no warning that the worker failed. The process must still end on its
 * own (the worker never keeps it alive).
 */
async function ragImport(): Promise<{ same: boolean; files: string[]; contexts: string[]; warnings: string[] }> {
  const warnings: string[] = []
  const onWarning = (warning: Error & { code?: string }): void => void warnings.push(warning.code ?? warning.name)
  process.on('warning', onWarning)
  const root = mkdtempSync(join(tmpdir(), 'quarry-consumer-rag-'))
  try {
    writeFileSync(join(root, 'dune.txt'), 'The spice must flow. Arrakis is a desert planet where the spice is harvested.')
    writeFileSync(join(root, 'notes.md'), '# Fear\n\nFear is the mind-killer. Fear is the little death that brings total obliteration.')
    writeFileSync(join(root, 'page.html'), '<html><body><p>Water is precious on a desert world.</p><script>ignored()</script></body></html>')
    // Enough files for an import to start the worker (IMPORT_WORKER_MIN_FILES).
    for (let i = 0; i < 20; i++) writeFileSync(join(root, `w${String(i).padStart(2, '0')}.txt`), `Wind ${i} over the dunes carries sand and spice.`)
    const run = async (importWorker: boolean): Promise<{ files: string[]; contexts: string[] }> => {
      const rag = new VertexRagEngine({ embedder: createHashingEmbedder(), importRoots: [root], importWorker, randomId: seededRandomId(5), clock: steppingClock('2026-01-01T00:00:00Z') }).v1
      const parent = 'projects/p/locations/l'
      const created = await rag.createRagCorpus({ parent, ragCorpus: { displayName: 'books', vectorDbConfig: { ragManagedDb: { knn: {} } } } })
      if (!created.ok) throw new Error(created.status.message)
      const corpus = created.response.response?.name as string
      const chunking = { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 8, chunkOverlap: 2 } } } }
      const imported = await rag.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: [`file://${root}`] }, ...chunking } })
      if (!imported.ok) throw new Error(imported.status.message)
      const listed = await rag.listRagFiles({ parent: corpus, pageSize: 100 })
      const answer = await rag.retrieveContexts({ parent, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'desert spice', ragRetrievalConfig: { topK: 4 } } })
      if (!listed.ok || !answer.ok) throw new Error('list or retrieve failed')
      const files = (listed.response.ragFiles ?? []).map((f) => `${f.displayName}`)
      const contexts = (answer.response.contexts?.contexts ?? []).map((c) => `${c.sourceDisplayName}: ${c.text} (${c.score})`)
      return { files, contexts }
    }
    const onWorker = await run(true)
    const here = await run(false)
    return { same: JSON.stringify(onWorker) === JSON.stringify(here), ...onWorker, warnings }
  } finally {
    process.off('warning', onWarning)
    rmSync(root, { recursive: true, force: true })
  }
}

/** What works without the native module: exact dense search, BM25, hybrid, snapshots, the client with dense: 'exact'. */
export async function exactScenario() {
  let native = 'loaded'
  try {
    createIndex({ dimensions: 3 })
  } catch (error) {
    native = error instanceof QuarryError ? `${error.code}: ${error.message}` : String(error)
  }
  const textOnly = createIndex({})
  textOnly.addMany(RECORDS.map(({ id, text }) => ({ id, text })))
  return {
    native,
    exact: searches(filled({ dimensions: 3, dense: 'exact' })),
    textOnly: ranked(textOnly.search({ text: 'red', topK: 4 }).hits),
    google: await semanticRetriever('exact'),
    pooled: await pooledScan(),
    ragImport: await ragImport(),
  }
}
