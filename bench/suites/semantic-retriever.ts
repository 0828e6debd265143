import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createGloveEmbedder, createIndex } from '@quarry/core'
import { RetrieverServiceClient } from '@quarry/adapters'
import { npmCorpus } from '../lib/npm-corpus.js'
import { makeQueries } from '../lib/queries.js'
import { median, percentile } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

/**
 * The Semantic Retriever adapter against core doing the same work: npm-doc passages (50 to a
 * document) embedded with the default GloVe SIF embedder; ingest through chunks:batchCreate
 * (100 per batch) vs index.ingest, then corpora.query vs index.query (embed + top-10) side by
 * side, interleaved in blocks of 20 queries, plus documents.query and a document-level filter.
 * The ratio is the adapter's cost: request checking, resource bookkeeping, response JSON.
 */
export async function runSemanticRetriever(ctx: SuiteContext): Promise<void> {
  const embedder = createGloveEmbedder()
  const passages = npmCorpus().slice(0, ctx.quick ? 5000 : 50_000)
  const perDocument = 50
  const client = new RetrieverServiceClient({ embedder })
  const [corpus] = await client.createCorpus({ corpus: { name: 'corpora/bench' } })
  const documents: string[] = []
  let t = performance.now()
  for (let d = 0; d * perDocument < passages.length; d++) {
    const [document] = await client.createDocument({
      parent: corpus.name,
      document: { name: `${corpus.name}/documents/d${d}`, customMetadata: [{ key: 'group', numericValue: d % 10 }] },
    })
    documents.push(document.name)
    const slice = passages.slice(d * perDocument, (d + 1) * perDocument)
    for (let i = 0; i < slice.length; i += 100) {
      await client.batchCreateChunks({ parent: document.name, requests: slice.slice(i, i + 100).map((p) => ({ chunk: { data: { stringValue: p.text } } })) })
    }
  }
  const adapterIngest = (performance.now() - t) / 1000
  const index = createIndex({ embedder, metric: 'cosine' })
  t = performance.now()
  for (let i = 0; i < passages.length; i += 500) await index.ingest(passages.slice(i, i + 500).map((p) => ({ id: p.id, text: p.text, metadata: { group: 0 } })))
  const coreIngest = (performance.now() - t) / 1000
  console.log(`\n== ${passages.length} passages in ${documents.length} documents: chunks:batchCreate ${adapterIngest.toFixed(1)} s (${(passages.length / adapterIngest).toFixed(0)}/s), core ingest (embed + BM25 + HNSW) ${coreIngest.toFixed(1)} s`)

  const queries = makeQueries(passages, ctx.quick ? 25 : 150).map((q) => q.text)
  const modes: Record<string, (q: string, i: number) => Promise<unknown>> = {
    'core: embed + index.search': async (q) => {
      const [v] = await embedder.embed([q])
      return index.search({ vector: v as Float32Array, topK: 10 })
    },
    'corpora.query': (q) => client.queryCorpus({ name: corpus.name, query: q, resultsCount: 10 }),
    'corpora.query, document filter (10%)': (q) =>
      client.queryCorpus({ name: corpus.name, query: q, resultsCount: 10, metadataFilters: [{ key: 'document.custom_metadata.group', conditions: [{ operation: 'EQUAL', numericValue: 3 }] }] }),
    'documents.query': (q, i) => client.queryDocument({ name: documents[i % documents.length], query: q, resultsCount: 10 }),
  }
  const names = Object.keys(modes)
  for (const q of queries.slice(0, 20)) for (const n of names) await (modes[n] as (q: string, i: number) => Promise<unknown>)(q, 0)
  const lat = new Map(names.map((n) => [n, [] as number[]]))
  for (let start = 0, c = 0; start < queries.length; start += 20, c++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(j + c) % names.length] as string
      for (const [i, q] of queries.slice(start, start + 20).entries()) {
        const t0 = performance.now()
        await (modes[name] as (q: string, i: number) => Promise<unknown>)(q, start + i)
        lat.get(name)?.push(performance.now() - t0)
      }
    }
  }
  const base = median(lat.get(names[0] as string) ?? [])
  const rows = names.map((name) => {
    const xs = lat.get(name) ?? []
    return { call: name, 'p50 ms': median(xs), 'p99 ms': percentile(xs, 0.99), 'p50 / core': median(xs) / base }
  })
  printTable(`Semantic Retriever queries, top-10, each including the query embedding (${queries.length} queries, interleaved)`, rows)
  writeFileSync(
    join(ctx.resultsDir, 'semantic-retriever.json'),
    `${JSON.stringify({ suite: 'semantic-retriever', date: new Date().toISOString(), node: process.version, quick: ctx.quick, passages: passages.length, documents: documents.length, ingestSeconds: { adapter: adapterIngest, core: coreIngest }, queries: queries.length, rows }, null, 1)}\n`,
  )
}
