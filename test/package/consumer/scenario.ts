// What an application does with the published packages: the pack-install test compiles these
// files in a fresh project outside the repository (strict TypeScript, NodeNext, against the shipped
// .d.ts) and runs them under plain node; it runs the same functions from the workspace sources to
// compare. Only the public entry points are imported.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHashingEmbedder, createIndex, loadIndex, QuarryError, type Hit, type QuarryIndex } from '@quarry/core'
import { ApiError, RetrieverServiceClient, seededRandomId, steppingClock } from '@quarry/adapters'

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
  }
}
