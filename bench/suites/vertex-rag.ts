import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { Analyzer, chunkText, createGloveEmbedder, createIndex, type SearchRequest } from '@quarry/core'
import { VertexRagEngine } from '@quarry/adapters'
import { chunkingAnalyzer } from '../../packages/adapters/src/vertex-rag/analysis.js'
import { importWorker } from '../../packages/adapters/src/vertex-rag/import-worker.js'
import { npmCorpus } from '../lib/npm-corpus.js'
import { makeQueries } from '../lib/queries.js'
import { median, percentile } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

/** In-process clients uploading at once in the concurrent-upload run. */
const CLIENTS = 8

type Db = 'knn' | 'ann'
const CHUNKING = { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 64, chunkOverlap: 16 } } } }

/**
 * The RAG Engine adapter against core doing the same work: npm-doc passages joined 50 to a file
 * (fixed-length chunks of 64 tokens, 16 overlap), embedded with the default GloVe SIF embedder into
 * a KNN (exact) and an ANN (HNSW) corpus. Needs no evaluation data (the npm corpus is built from
 * node_modules). Ingest, in interleaved rounds on fresh corpora: core's batched `ingest` of the same
 * chunks (500 per call, chunks given) against importRagFiles of the files (one request),
 * uploadRagFile one file at a time, and uploadRagFile from CLIENTS clients at once; chunks/s, and
 * the ratio to core's on the same vector DB: the median of the rounds' own ratios (and, beside
 * it, the ratio of the medians). A warm-up round goes first, not counted. Then retrieveContexts
 * at alpha 1 / 0 / 0.5 against core's search with the same request, each call including the query
 * embedding, interleaved in blocks of 20 queries.
 */
export async function runVertexRag(ctx: SuiteContext): Promise<void> {
  const embedder = createGloveEmbedder()
  const passages = npmCorpus().slice(0, ctx.quick ? 3000 : 30_000)
  const files: string[] = []
  for (let i = 0; i < passages.length; i += 50) files.push(passages.slice(i, i + 50).map((p) => p.text).join('\n\n'))
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-rag-'))
  files.forEach((text, i) => writeFileSync(join(dir, `f${String(i).padStart(4, '0')}.txt`), text))
  const engine = new VertexRagEngine({ embedder, importRoots: [dir] })
  const s = engine.v1beta1
  const parent = 'projects/bench/locations/local'
  const analyzer = new Analyzer()
  const chunks = files.flatMap((text, f) => chunkText(analyzer, text, { size: 64, overlap: 16 }).map((c, j) => ({ id: `${f}-${j}`, text: c.text })))

  const newCorpus = async (db: Db): Promise<string> => {
    const created = await s.createRagCorpus({ parent, ragCorpus: { displayName: db, vectorDbConfig: { ragManagedDb: { [db]: {} } } } })
    if (!created.ok) throw new Error(created.status.message)
    return created.response.response?.name as string
  }
  const upload = async (corpus: string, i: number): Promise<void> => {
    const up = await s.uploadRagFile({ parent: corpus, ragFile: { displayName: `f${i}.txt` }, uploadRagFileConfig: CHUNKING }, files[i] as string)
    if (!up.ok || up.response.error) throw new Error(`upload ${i} failed`)
  }
  /** Each way of ingesting: builds a fresh corpus (or index) of every chunk; returns the corpus for the retrieval runs. */
  const ways: Record<string, (db: Db) => Promise<string | undefined>> = {
    'core ingest': async (db) => {
      const core = createIndex({ embedder, metric: 'cosine', dense: db === 'knn' ? 'exact' : 'hnsw' })
      for (let i = 0; i < chunks.length; i += 500) await core.ingest(chunks.slice(i, i + 500))
      return undefined
    },
    importRagFiles: async (db) => {
      const corpus = await newCorpus(db)
      const op = await s.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: [`file://${dir}`] }, ...CHUNKING } })
      if (!op.ok || (op.response.response as { importedRagFilesCount?: string }).importedRagFilesCount !== String(files.length)) throw new Error('import failed')
      return corpus
    },
    'uploadRagFile, one at a time': async (db) => {
      const corpus = await newCorpus(db)
      for (let i = 0; i < files.length; i++) await upload(corpus, i)
      return corpus
    },
    [`uploadRagFile, ${CLIENTS} clients`]: async (db) => {
      const corpus = await newCorpus(db)
      let next = 0
      const client = async (): Promise<void> => {
        while (next < files.length) await upload(corpus, next++)
      }
      await Promise.all(Array.from({ length: CLIENTS }, client))
      return corpus
    },
  }
  const wayNames = Object.keys(ways)
  // The host's load averages (1, 5, 15 min) before and after the ingest rounds: the ratios hold on a quiet machine.
  const loadBefore = loadavg()
  // Round -1 (in round 0's order) warms the process (JIT, the import worker, the memos' tables) and
  // is not counted; the counted rounds rotate the order so that each way runs in each position
  // equally often.
  const rounds = ctx.quick ? 2 : 2 * wayNames.length
  const seconds = new Map<string, number[]>()
  const corpora: Record<string, string> = {}
  for (let round = -1; round < rounds; round++) {
    for (const db of ['knn', 'ann'] as const) {
      for (let j = 0; j < wayNames.length; j++) {
        const way = wayNames[(j + Math.max(round, 0)) % wayNames.length] as string
        // Every round ingests the same files: the chunker's memo of analyzed words (process-wide,
        // which the corpus index reads its terms from), and the import worker's, are emptied
        // first, so each way reads the text as it would read new text, as core's fresh index does.
        chunkingAnalyzer.forgetMemos()
        importWorker.forgetMemos()
        global.gc?.()
        const t = performance.now()
        const corpus = await (ways[way] as (db: Db) => Promise<string | undefined>)(db)
        const key = `${db}|${way}`
        if (round >= 0) seconds.set(key, [...(seconds.get(key) ?? []), (performance.now() - t) / 1000])
        if (!corpus) continue
        // The uploaded corpora of the last round answer the retrieval runs; the others go.
        if (round === rounds - 1 && way === 'uploadRagFile, one at a time') corpora[db] = corpus
        else {
          // force: the corpus holds files, which a plain delete refuses (FAILED_PRECONDITION), and
          // corpora left behind would grow the heap that every later round runs in.
          const deleted = await s.deleteRagCorpus({ name: corpus, force: true })
          if (!deleted.ok) throw new Error(`deleteRagCorpus: ${deleted.status.message}`)
        }
      }
    }
  }
  rmSync(dir, { recursive: true, force: true })
  const ingestLoad = { before: loadBefore, after: loadavg() }
  const ingestRows = (['knn', 'ann'] as const).flatMap((db) => {
    const core = median(seconds.get(`${db}|core ingest`) ?? [])
    return wayNames.map((way) => {
      const sec = median(seconds.get(`${db}|${way}`) ?? [])
      // Paired: each round's own ratio (its ways ran back to back), whose median a slow spell on the host moves less.
      const each = (seconds.get(`${db}|${way}`) ?? []).map((x, k) => ((seconds.get(`${db}|core ingest`) ?? [])[k] ?? NaN) / x)
      return { 'vector DB': db === 'knn' ? 'KNN (core exact)' : 'ANN (core HNSW)', ingest: way, 'median s': sec, 'chunks/s': Math.round(chunks.length / sec), 'vs core': median(each), 'vs core, ratio of medians': core / sec, 'vs core, each round': each.map((r) => r.toFixed(2)).join(' ') }
    })
  })
  printTable(`ingest of ${files.length} files, ${chunks.length} chunks (${rounds} interleaved rounds after a warm-up one; vs core: median of the rounds' ratios; core is given the chunks, the adapter chunks the files)`, ingestRows)
  let t = 0
  const core = createIndex({ embedder, metric: 'cosine', dense: 'exact' })
  for (let i = 0; i < chunks.length; i += 500) await core.ingest(chunks.slice(i, i + 500))

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
    `${JSON.stringify({ suite: 'vertex-rag', date: new Date().toISOString(), node: process.version, cpus: ctx.cpus, quick: ctx.quick, passages: passages.length, files: files.length, chunks: chunks.length, clients: CLIENTS, rounds, loadavg: ingestLoad, ingest: ingestRows, queries: queries.length, rows }, null, 1)}\n`,
  )
}
