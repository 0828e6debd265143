import { existsSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { evaluateRun, rankIds, readCollection, renderSvg, type Metrics } from '@quarry/adapters'
import { createGloveEmbedder, createIndex, embedAll, type SearchRequest } from '@quarry/core'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

const DATA = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'data')

/**
 * Dense-only (default GloVe SIF embedder), sparse-only (BM25) and hybrid at alpha 0.25 / 0.5 /
 * 0.75 on Cranfield (and CISI), exact dense search so the embedder alone is measured.
 */
export async function runEmbedQuality(ctx: SuiteContext): Promise<void> {
  const embedder = createGloveEmbedder()
  const out: Record<string, Record<string, Metrics>> = {}
  for (const name of ['cranfield', 'cisi']) {
    const files = { corpus: join(DATA, name, 'corpus.jsonl'), queries: join(DATA, name, 'queries.jsonl'), qrels: join(DATA, name, 'qrels.tsv') }
    if (!Object.values(files).every((f) => existsSync(f))) {
      console.log(`skipping ${name}: ${join(DATA, name)} not found (the collections live in ../shared/data, not in this repository)`)
      continue
    }
    const collection = readCollection(files, name)
    const index = createIndex({ embedder, dense: 'exact' })
    const texts = collection.docs.map((d) => `${d.title}\n${d.text}`)
    const vectors = await embedAll(embedder, texts)
    index.addMany(collection.docs.map((d, i) => ({ id: d.id, vector: vectors[i] as Float32Array, text: { title: d.title, text: d.text } })))
    const queryVectors = await embedAll(embedder, collection.queries.map((q) => q.text))
    const modes: Record<string, (q: number) => SearchRequest> = {
      'dense only (GloVe SIF)': (q) => ({ vector: queryVectors[q] as Float32Array, topK: 100 }),
      'sparse only (BM25)': (q) => ({ text: collection.queries[q]?.text ?? '', topK: 100 }),
      'hybrid alpha 0.25': (q) => ({ vector: queryVectors[q] as Float32Array, text: collection.queries[q]?.text ?? '', alpha: 0.25, topK: 100, depth: 200 }),
      'hybrid alpha 0.5': (q) => ({ vector: queryVectors[q] as Float32Array, text: collection.queries[q]?.text ?? '', alpha: 0.5, topK: 100, depth: 200 }),
      'hybrid alpha 0.75': (q) => ({ vector: queryVectors[q] as Float32Array, text: collection.queries[q]?.text ?? '', alpha: 0.75, topK: 100, depth: 200 }),
      'hybrid rrf 0.5': (q) => ({ vector: queryVectors[q] as Float32Array, text: collection.queries[q]?.text ?? '', alpha: 0.5, fusion: 'rrf', topK: 100, depth: 200 }),
    }
    const rows: Record<string, Metrics> = {}
    for (const [mode, request] of Object.entries(modes)) {
      const run = new Map(collection.queries.map((q, i) => [q.id, rankIds(index.search(request(i)).hits, 100)]))
      rows[mode] = evaluateRun(collection, run)
    }
    out[name] = rows
    const single = Math.max(rows['dense only (GloVe SIF)']?.ndcg10 ?? 0, rows['sparse only (BM25)']?.ndcg10 ?? 0)
    const bestHybrid = Math.max(...Object.entries(rows).filter(([m]) => m.startsWith('hybrid')).map(([, m]) => m.ndcg10))
    printTable(`${name}: embedder ${embedder.name}`, Object.entries(rows).map(([mode, m]) => ({ mode, 'nDCG@10': m.ndcg10, 'MAP@100': m.map100, 'R@100': m.recall100 })))
    console.log(`${name}: best hybrid nDCG@10 ${bestHybrid.toFixed(4)} vs best single mode ${single.toFixed(4)}: hybrid ${bestHybrid > single ? 'beats' : 'does NOT beat'} the best single mode`)
  }
  if (Object.keys(out).length === 0) return
  writeFileSync(join(ctx.resultsDir, 'embed-quality.json'), `${JSON.stringify({ suite: 'embed-quality', date: new Date().toISOString(), node: process.version, embedder: embedder.name, collections: out }, null, 1)}\n`)
  const modes = Object.keys(Object.values(out)[0] ?? {})
  writeFileSync(
    join(ctx.resultsDir, 'embed-quality.svg'),
    renderSvg('nDCG@10 by retrieval mode', Object.entries(out).map(([collection, rows]) => ({ title: `${collection} (x = mode index)`, xLabel: modes.map((m, i) => `${i}=${m}`).join('; '), yLabel: 'nDCG@10', series: modes.map((m, i) => ({ name: m, points: [{ x: i, y: rows[m]?.ndcg10 ?? 0 }, { x: i + 0.6, y: rows[m]?.ndcg10 ?? 0 }] })) }))),
  )
}
