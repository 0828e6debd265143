import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Analyzer, chunkText, createGloveEmbedder, createIndex, type SearchRequest } from '@quarry/core'
import { VertexRagEngine } from '@quarry/adapters'
import { npmCorpus } from '../lib/npm-corpus.js'
import { makeQueries } from '../lib/queries.js'
import { median, percentile } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

/**
 * The RAG Engine adapter against core doing the same work: npm-doc passages joined 50 to a file,
 * uploaded (fixed-length chunks of 64 tokens, 16 overlap), embedded with the default GloVe SIF
 * embedder into a KNN (exact) and an ANN (HNSW) corpus; a core index is built from the same chunks.
 * retrieveContexts at alpha 1 / 0 / 0.5 against core's search with the same request, each call
 * including the query embedding, interleaved in blocks of 20 queries.
 */
export async function runVertexRag(ctx: SuiteContext): Promise<void> {
  const embedder = createGloveEmbedder()
  const passages = npmCorpus().slice(0, ctx.quick ? 3000 : 30_000)
  const files: string[] = []
  for (let i = 0; i < passages.length; i += 50) files.push(passages.slice(i, i + 50).map((p) => p.text).join('\n\n'))
  const engine = new VertexRagEngine({ embedder })
  const s = engine.v1beta1
  const parent = 'projects/bench/locations/local'
  const corpora: Record<string, string> = {}
  const uploadSeconds: Record<string, number> = {}
  const chunking = { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 64, chunkOverlap: 16 } } } }
  for (const db of ['knn', 'ann'] as const) {
    const created = await s.createRagCorpus({ parent, ragCorpus: { displayName: db, vectorDbConfig: { ragManagedDb: { [db]: {} } } } })
    if (!created.ok) throw new Error(created.status.message)
    const name = created.response.response?.name as string
    corpora[db] = name
    const t = performance.now()
    for (const [i, text] of files.entries()) await s.uploadRagFile({ parent: name, ragFile: { displayName: `f${i}.txt` }, uploadRagFileConfig: chunking }, text)
    uploadSeconds[db] = (performance.now() - t) / 1000
  }
  const analyzer = new Analyzer()
  const chunks = files.flatMap((text, f) => chunkText(analyzer, text, { size: 64, overlap: 16 }).map((c, j) => ({ id: `${f}-${j}`, text: c.text })))
  const core = createIndex({ embedder, metric: 'cosine', dense: 'exact' })
  let t = performance.now()
  for (let i = 0; i < chunks.length; i += 500) await core.ingest(chunks.slice(i, i + 500))
  const coreSeconds = (performance.now() - t) / 1000
  console.log(`\n== ${passages.length} passages in ${files.length} files → ${chunks.length} chunks; uploadRagFile ${uploadSeconds.knn?.toFixed(1)} s (KNN), ${uploadSeconds.ann?.toFixed(1)} s (ANN); core ingest ${coreSeconds.toFixed(1)} s`)

  const queries = makeQueries(passages, ctx.quick ? 15 : 100).map((q) => q.text)
  const retrieve = (db: 'knn' | 'ann', alpha: number) => (q: string) =>
    s.retrieveContexts({ parent, vertexRagStore: { ragResources: [{ ragCorpus: corpora[db] }] }, query: { text: q, ragRetrievalConfig: { topK: 10, hybridSearch: { alpha } } } })
  const coreSearch = (alpha: number) => async (q: string) => {
    const [v] = await embedder.embed([q])
    const request: SearchRequest = alpha === 1 ? { vector: v as Float32Array, topK: 10 } : alpha === 0 ? { text: q, topK: 10 } : { vector: v as Float32Array, text: q, alpha, topK: 10, explain: true }
    return core.search(request)
  }
  const modes: Record<string, (q: string) => Promise<unknown>> = {
    'core exact, dense': coreSearch(1),
    'retrieveContexts KNN, alpha 1': retrieve('knn', 1),
    'retrieveContexts ANN, alpha 1': retrieve('ann', 1),
    'core, BM25': coreSearch(0),
    'retrieveContexts KNN, alpha 0': retrieve('knn', 0),
    'core exact, hybrid': coreSearch(0.5),
    'retrieveContexts KNN, alpha 0.5': retrieve('knn', 0.5),
    'retrieveContexts ANN, alpha 0.5': retrieve('ann', 0.5),
  }
  const names = Object.keys(modes)
  for (const q of queries.slice(0, 10)) for (const n of names) await (modes[n] as (q: string) => Promise<unknown>)(q)
  const lat = new Map(names.map((n) => [n, [] as number[]]))
  for (let start = 0, c = 0; start < queries.length; start += 20, c++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(j + c) % names.length] as string
      for (const q of queries.slice(start, start + 20)) {
        t = performance.now()
        await (modes[name] as (q: string) => Promise<unknown>)(q)
        lat.get(name)?.push(performance.now() - t)
      }
    }
  }
  const rows = names.map((name) => {
    const xs = lat.get(name) ?? []
    return { call: name, 'p50 ms': median(xs), 'p99 ms': percentile(xs, 0.99) }
  })
  printTable(`retrieveContexts against core, top-10, with the query embedding (${queries.length} queries, interleaved)`, rows)
  writeFileSync(
    join(ctx.resultsDir, 'vertex-rag.json'),
    `${JSON.stringify({ suite: 'vertex-rag', date: new Date().toISOString(), node: process.version, quick: ctx.quick, passages: passages.length, files: files.length, chunks: chunks.length, uploadSeconds, coreIngestSeconds: coreSeconds, queries: queries.length, rows }, null, 1)}\n`,
  )
}
