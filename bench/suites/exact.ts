import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createIndex, type QuarryIndex, type ScanOptions, type SearchResult } from '@quarry/core'
import { defaultScanWorkers, scanPool } from '../../packages/core/src/dense/scan-pool.js'
import { VectorStore } from '../../packages/core/src/dense/vector-store.js'
import type { Label } from '../../packages/core/src/ids.js'
import { metricKind, scanKeys } from '../../packages/core/src/metric/kernels.js'
import { simdScanKeys } from '../../packages/core/src/metric/simd.js'
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

/** Quarry indexes over the dataset: one scanning on the calling thread, one with the scan pool. */
function quarryPair(ds: Dataset, pooled: ScanOptions): { single: QuarryIndex; pool: QuarryIndex } {
  const single = createIndex({ dimensions: ds.dim, metric: ds.metric, dense: 'exact', scan: { workers: 0 } })
  const pool = createIndex({ dimensions: ds.dim, metric: ds.metric, dense: 'exact', scan: pooled })
  for (let i = 0; i < ds.n; i++) {
    const vector = row(ds.base, ds.dim, i)
    single.add({ id: String(i), vector })
    pool.add({ id: String(i), vector })
  }
  return { single, pool }
}

/**
 * The keys of every row, side by side: the JavaScript kernels (metric/kernels.ts, what scans ran
 * before the SIMD kernels and what a store outside a WebAssembly memory still runs) and the SIMD
 * kernels on the same store, each returning its keys (the suite checks they have the same bits).
 */
function kernelPair(ds: Dataset): { js: (q: Float32Array) => Float64Array; simd: (q: Float32Array) => Float64Array } {
  const store = new VectorStore(ds.dim, ds.n)
  for (let i = 0; i < ds.n; i++) store.set(i as Label, row(ds.base, ds.dim, i))
  const rows = store.simd()
  if (!rows) throw new Error('this Node cannot run the SIMD kernels')
  const kind = metricKind(ds.metric)
  const jsKeys = new Float64Array(ds.n)
  const simdKeys = new Float64Array(ds.n)
  return {
    js: (q) => {
      scanKeys(ds.metric, q, store.data, store.invNorms, ds.dim, null, 0, ds.n, jsKeys)
      return jsKeys
    },
    simd: (q) => {
      simdScanKeys(rows.kernels, rows.memory, rows.layout.slotBytes, rows.layout.dataOffset, 0, kind, q, store.invNorms, ds.dim, null, 0, ds.n, simdKeys)
      return simdKeys
    },
  }
}

/** Ids and scores of a search, to check that both paths answer identically. */
function answer(result: SearchResult): string {
  return JSON.stringify(result.hits.map((h) => [h.id, h.score]))
}

function timed<T>(times: number[], run: () => T): T {
  const t = performance.now()
  const result = run()
  times.push(performance.now() - t)
  return result
}

/** The first pooled scans start the workers: warm them up before timing. */
function warmUp(index: QuarryIndex, ds: Dataset): void {
  const until = performance.now() + 500
  for (let q = 0; performance.now() < until || q < 10; q++) index.search({ vector: row(ds.queries, ds.dim, q % ds.nq), topK: K })
}

export async function runExact(ctx: SuiteContext): Promise<void> {
  const datasets = ctx.quick ? [gloveDataset(20_000, 20), clusteredDataset(20_000, 20)] : [gloveDataset(100_000, 100), clusteredDataset(100_000, 100)]
  const workers = defaultScanWorkers()
  const rows: Record<string, string | number>[] = []
  for (const ds of datasets) {
    const { single, pool } = quarryPair(ds, { workers: 'auto', parallelAbove: 0 })
    const arrays = Array.from({ length: ds.n }, (_, i) => Array.from(row(ds.base, ds.dim, i)))
    const naive = naiveArrays(arrays, ds.metric)
    const loop = plainLoop(ds)
    const kernels = kernelPair(ds)
    warmUp(pool, ds)
    const times = { single: [] as number[], pool: [] as number[], loop: [] as number[], naive: [] as number[], js: [] as number[], simd: [] as number[] }
    let sameKeys = 0
    const takenOver = scanPool().takenOver
    let agree = 0
    let identical = 0
    for (let q = 0; q < ds.nq; q++) {
      const query = row(ds.queries, ds.dim, q)
      const queryArray = Array.from(query)
      const a = answer(timed(times.single, () => single.search({ vector: query, topK: K })))
      const p = answer(timed(times.pool, () => pool.search({ vector: query, topK: K })))
      const b = timed(times.loop, () => loop(query))
      const c = timed(times.naive, () => naive(queryArray))
      const jsKeys = timed(times.js, () => kernels.js(query))
      const simdKeys = timed(times.simd, () => kernels.simd(query))
      if (jsKeys.every((key, i) => Object.is(key, simdKeys[i]))) sameKeys++
      if (a === p) identical++
      // Same top-10 sets (float order of summation may swap exact near-ties).
      const ids = (JSON.parse(a) as [string, number][]).map(([id]) => Number(id))
      if (new Set([...ids, ...b, ...c]).size === K) agree++
    }
    const [single50, pool50, loop50, naive50, js50, simd50] = [times.single, times.pool, times.loop, times.naive, times.js, times.simd].map(median) as [number, number, number, number, number, number]
    rows.push({
      dataset: ds.name,
      queries: ds.nq,
      threads: workers + 1,
      'single-thread p50 ms': single50,
      'pool p50 ms': pool50,
      'plain loop p50 ms': loop50,
      'naive arrays p50 ms': naive50,
      'pool vs single': single50 / pool50,
      'pool vs loop': loop50 / pool50,
      'single vs loop': loop50 / single50,
      'pool vs naive': naive50 / pool50,
      // On a machine shared with other work the p50 mixes in time the threads waited for a core; the fastest query shows the scaling.
      'single-thread min ms': Math.min(...times.single),
      'pool min ms': Math.min(...times.pool),
      'plain loop min ms': Math.min(...times.loop),
      // Pooled scans in which the calling thread computed chunks a worker (waiting for a core) held.
      'pool scans taken over': scanPool().takenOver - takenOver,
      'pool = single (ids, scores)': `${identical}/${ds.nq}`,
      'same top-10 as loop, naive': `${agree}/${ds.nq}`,
      // The kernels alone, one thread, every row's key: the JavaScript kernels against the SIMD ones.
      'keys: JS kernels p50 ms': js50,
      'keys: SIMD p50 ms': simd50,
      'SIMD vs JS kernels': js50 / simd50,
      'same keys (bits)': `${sameKeys}/${ds.nq}`,
    })
  }
  printTable(`Exact top-10: Quarry on one thread and with the scan pool (${workers + 1} threads) vs straightforward JavaScript`, rows)
  const crossover = crossoverRows(ctx)
  printTable('Exact top-10, clustered 100-d: where the scan pool starts to pay (p50 ms)', crossover)
  writeFileSync(join(ctx.resultsDir, 'exact.json'), `${JSON.stringify({ suite: 'exact', date: new Date().toISOString(), node: process.version, quick: ctx.quick, cpus: ctx.cpus, threads: workers + 1, rows, crossover }, null, 1)}\n`)
  writeFileSync(
    join(ctx.resultsDir, 'exact.svg'),
    renderSvg('Exact top-10 latency (p50 ms, lower is better)', [
      {
        title: 'p50 latency by dataset',
        xLabel: 'dataset (index)',
        yLabel: 'ms',
        logY: true,
        series: ['pool p50 ms', 'single-thread p50 ms', 'plain loop p50 ms', 'naive arrays p50 ms'].map((name) => ({ name, points: rows.map((r, x) => ({ x, y: r[name] as number })) })),
      },
    ]),
  )
}

/** Pool against one thread at growing sizes (100-d), to place `scan.parallelAbove`. */
function crossoverRows(ctx: SuiteContext): Record<string, string | number>[] {
  const sizes = ctx.quick ? [1000, 5000, 20_000] : [1000, 2500, 5000, 10_000, 20_000, 50_000]
  const out: Record<string, string | number>[] = []
  for (const n of sizes) {
    const ds = clusteredDataset(n, 200, 100)
    const { single, pool } = quarryPair(ds, { workers: 'auto', parallelAbove: 0 })
    warmUp(pool, ds)
    const times = { single: [] as number[], pool: [] as number[] }
    const takenOver = scanPool().takenOver
    for (let q = 0; q < ds.nq; q++) {
      const query = row(ds.queries, ds.dim, q)
      timed(times.single, () => single.search({ vector: query, topK: K }))
      timed(times.pool, () => pool.search({ vector: query, topK: K }))
    }
    const [single50, pool50] = [median(times.single), median(times.pool)]
    out.push({ rows: n, 'components (rows × 100)': n * 100, 'single-thread p50 ms': single50, 'pool p50 ms': pool50, 'pool vs single': single50 / pool50, 'pool scans taken over': scanPool().takenOver - takenOver })
  }
  return out
}
