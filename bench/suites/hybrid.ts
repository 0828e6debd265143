import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createIndex, loadGloveVectors, type SearchRequest } from '@quarry/core'
import { npmCorpus } from '../lib/npm-corpus.js'
import { makeQueries } from '../lib/queries.js'
import { median, percentile } from '../lib/stats.js'
import { renderSvg } from '@quarry/adapters'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

/**
 * Hybrid search latency against dense-only and text-only search on the same index: the npm
 * text corpus, each passage embedded as the mean of its words' GloVe vectors (a stand-in until
 * the embedder issue lands; latency does not depend on the embedding's quality).
 */
export async function runHybrid(ctx: SuiteContext): Promise<void> {
  const glove = loadGloveVectors()
  const dim = glove.dimensions
  const rowOf = new Map(glove.words.map((w, i) => [w, i]))
  const embed = (text: string): Float32Array | undefined => {
    const out = new Float32Array(dim)
    let n = 0
    for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
      const r = rowOf.get(word)
      if (r === undefined) continue
      for (let j = 0; j < dim; j++) out[j] = (out[j] as number) + (glove.vectors[r * dim + j] as number)
      n++
    }
    return n > 0 ? out : undefined
  }
  const docs = npmCorpus().slice(0, ctx.quick ? 5000 : undefined)
  const index = createIndex({ dimensions: dim, metric: 'cosine' })
  let skipped = 0
  const t0 = performance.now()
  for (const d of docs) {
    const vector = embed(d.text)
    if (vector) index.add({ id: d.id, vector, text: d.text })
    else skipped++
  }
  const buildSeconds = (performance.now() - t0) / 1000
  const queries = makeQueries(docs, ctx.quick ? 25 : 200)
    .map((q) => ({ ...q, vector: embed(q.text) }))
    .filter((q): q is { terms: number; text: string; vector: Float32Array } => q.vector !== undefined)
  console.log(`\n== ${index.size} passages (${skipped} without a GloVe word skipped), built in ${buildSeconds.toFixed(1)} s; ${queries.length} queries`)
  const modes: Record<string, (q: (typeof queries)[number]) => SearchRequest> = {
    'dense only': (q) => ({ vector: q.vector, topK: 10 }),
    'text only': (q) => ({ text: q.text, topK: 10 }),
    'hybrid convex (alpha 0.5)': (q) => ({ vector: q.vector, text: q.text, topK: 10 }),
    'hybrid rrf (alpha 0.5)': (q) => ({ vector: q.vector, text: q.text, topK: 10, fusion: 'rrf' }),
    'hybrid convex, explain': (q) => ({ vector: q.vector, text: q.text, topK: 10, explain: true }),
  }
  const names = Object.keys(modes)
  for (const q of queries.slice(0, 20)) for (const name of names) index.search((modes[name] as (x: typeof q) => SearchRequest)(q))
  const lat = new Map(names.map((n) => [n, [] as number[]]))
  for (let start = 0, c = 0; start < queries.length; start += 20, c++) {
    for (let j = 0; j < names.length; j++) {
      const name = names[(j + c) % names.length] as string
      const make = modes[name] as (x: (typeof queries)[number]) => SearchRequest
      for (const q of queries.slice(start, start + 20)) {
        const t = performance.now()
        index.search(make(q))
        lat.get(name)?.push(performance.now() - t)
      }
    }
  }
  const rows = names.map((name) => {
    const xs = lat.get(name) ?? []
    return { mode: name, 'p50 ms': median(xs), 'p99 ms': percentile(xs, 0.99), 'mean ms': xs.reduce((a, b) => a + b, 0) / xs.length }
  })
  printTable(`hybrid vs single-mode search, top-10, depth 50 per side (${queries.length} queries, interleaved)`, rows)
  writeFileSync(join(ctx.resultsDir, 'hybrid.json'), `${JSON.stringify({ suite: 'hybrid', date: new Date().toISOString(), node: process.version, quick: ctx.quick, passages: index.size, queries: queries.length, buildSeconds, rows }, null, 1)}\n`)
  writeFileSync(join(ctx.resultsDir, 'hybrid.svg'), renderSvg('Hybrid latency', [{ title: 'p50 ms by mode (x = mode index)', xLabel: names.map((n, i) => `${i}=${n}`).join('; '), yLabel: 'p50 ms', series: rows.map((r, i) => ({ name: r.mode, points: [{ x: i, y: r['p50 ms'] }, { x: i + 0.6, y: r['p50 ms'] }] })) }]))
}
