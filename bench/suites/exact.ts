import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createIndex } from '@quarry/core'
import { clusteredDataset, gloveDataset, row, type Dataset } from '../lib/datasets.js'
import { median } from '../lib/stats.js'
import { renderSvg } from '@quarry/adapters'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

const K = 10

/** The code a user would write first: arrays of numbers, score everything, sort, slice. */
function naiveArrays(vectors: number[][], metric: Dataset['metric']): (q: number[]) => number[] {
  return (q) =>
    vectors
      .map((v, i) => {
        let dot = 0
        let qq = 0
        let vv = 0
        let l2 = 0
        for (let j = 0; j < v.length; j++) {
          const a = q[j] as number
          const b = v[j] as number
          dot += a * b
          qq += a * a
          vv += b * b
          l2 += (a - b) * (a - b)
        }
        return { i, d: metric === 'cosine' ? 1 - dot / Math.sqrt(qq * vv) : metric === 'dot' ? -dot : l2 }
      })
      .sort((x, y) => x.d - y.d || x.i - y.i)
      .slice(0, K)
      .map((x) => x.i)
}

/** A straightforward loop over the same contiguous Float32Array, norms precomputed, full sort. */
function plainLoop(ds: Dataset): (q: Float32Array) => number[] {
  const { dim, n, base } = ds
  const norms = Float64Array.from({ length: n }, (_, i) => {
    let s = 0
    for (let j = 0; j < dim; j++) s += (base[i * dim + j] as number) ** 2
    return Math.sqrt(s)
  })
  const order = Array.from({ length: n }, (_, i) => i)
  const d = new Float64Array(n)
  return (q) => {
    let qn = 0
    for (let j = 0; j < dim; j++) qn += (q[j] as number) ** 2
    qn = Math.sqrt(qn)
    for (let i = 0; i < n; i++) {
      let s = 0
      if (ds.metric === 'l2') {
        for (let j = 0; j < dim; j++) s += ((q[j] as number) - (base[i * dim + j] as number)) ** 2
        d[i] = s
      } else {
        for (let j = 0; j < dim; j++) s += (q[j] as number) * (base[i * dim + j] as number)
        d[i] = ds.metric === 'cosine' ? 1 - s / (qn * (norms[i] as number)) : -s
      }
    }
    return order.slice().sort((a, b) => (d[a] as number) - (d[b] as number) || a - b).slice(0, K)
  }
}

export async function runExact(ctx: SuiteContext): Promise<void> {
  const datasets = ctx.quick ? [gloveDataset(20_000, 20), clusteredDataset(20_000, 20)] : [gloveDataset(100_000, 100), clusteredDataset(100_000, 100)]
  const rows: Record<string, string | number>[] = []
  for (const ds of datasets) {
    const index = createIndex({ dimensions: ds.dim, metric: ds.metric, dense: 'exact' })
    for (let i = 0; i < ds.n; i++) index.add({ id: String(i), vector: row(ds.base, ds.dim, i) })
    const arrays = Array.from({ length: ds.n }, (_, i) => Array.from(row(ds.base, ds.dim, i)))
    const naive = naiveArrays(arrays, ds.metric)
    const loop = plainLoop(ds)
    const times = { quarry: [] as number[], loop: [] as number[], naive: [] as number[] }
    let agree = 0
    for (let q = 0; q < ds.nq; q++) {
      const query = row(ds.queries, ds.dim, q)
      const queryArray = Array.from(query)
      let t = performance.now()
      const a = index.search({ vector: query, topK: K }).hits.map((h) => Number(h.id))
      times.quarry.push(performance.now() - t)
      t = performance.now()
      const b = loop(query)
      times.loop.push(performance.now() - t)
      t = performance.now()
      const c = naive(queryArray)
      times.naive.push(performance.now() - t)
      // Same top-10 sets (float order of summation may swap exact near-ties).
      if (new Set([...a, ...b, ...c]).size === K) agree++
    }
    rows.push({
      dataset: ds.name,
      queries: ds.nq,
      'quarry exact p50 ms': median(times.quarry),
      'plain loop p50 ms': median(times.loop),
      'naive arrays p50 ms': median(times.naive),
      'speedup vs loop': median(times.loop) / median(times.quarry),
      'speedup vs naive': median(times.naive) / median(times.quarry),
      'same top-10': `${agree}/${ds.nq}`,
    })
  }
  printTable('Exact top-10: Quarry exact path vs straightforward JavaScript', rows)
  writeFileSync(join(ctx.resultsDir, 'exact.json'), `${JSON.stringify({ suite: 'exact', date: new Date().toISOString(), node: process.version, quick: ctx.quick, rows }, null, 1)}\n`)
  writeFileSync(
    join(ctx.resultsDir, 'exact.svg'),
    renderSvg('Exact top-10 latency (p50 ms, lower is better)', [
      {
        title: 'p50 latency by dataset',
        xLabel: 'dataset (index)',
        yLabel: 'ms',
        logY: true,
        series: ['quarry exact p50 ms', 'plain loop p50 ms', 'naive arrays p50 ms'].map((name) => ({ name, points: rows.map((r, x) => ({ x, y: r[name] as number })) })),
      },
    ]),
  )
}
