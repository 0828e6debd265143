import type { QuarryIndex } from '@quarry/core'
import { groundTruth, row, type Dataset } from '../lib/datasets.js'
import { meanRecall, median, percentile } from '../lib/stats.js'
import { printTable } from '../lib/table.js'

export interface FilteredRow {
  selectivity: number
  passing: number
  quarryP50ms: number
  quarryP95ms: number
  quarryRecall: number
  quarryStrategies: Record<string, number>
  hnswlibP50ms: number
  hnswlibP95ms: number
  hnswlibRecall: number
  speedup: number
}

interface NativeFilterSearch {
  searchKnn(query: number[], k: number, filter?: (label: number) => boolean): { neighbors: number[] }
  setEf(ef: number): void
}

const K = 10
const EF = 64

/**
 * Filtered search at 50/10/1/0.1% selectivity: Quarry's planner against hnswlib-node's own filter
 * callback, both at ef = 64, recall against the exact filtered top-10.
 */
export function measureFiltered(ds: Dataset, index: QuarryIndex, native: NativeFilterSearch, queries: number[][], bucket: (i: number) => number, quick: boolean): FilteredRow[] {
  const buckets = Int32Array.from({ length: ds.n }, (_, i) => bucket(i))
  const nq = Math.min(ds.nq, quick ? 30 : 100)
  const rows: FilteredRow[] = []
  for (const selectivity of [0.5, 0.1, 0.01, 0.001]) {
    const below = Math.round(selectivity * 1000)
    const truth = groundTruth({ ...ds, nq }, K, `bucket-lt-${below}`, (i) => (buckets[i] as number) < below)
    const quarryResults: number[][] = []
    const quarryLat: number[] = []
    const strategies: Record<string, number> = {}
    const rawResults: number[][] = []
    const rawLat: number[] = []
    native.setEf(EF)
    for (let q = 0; q < nq; q++) {
      // Interleaved per query so both see the same machine state.
      let t = performance.now()
      const { hits, stats } = index.search({ vector: row(ds.queries, ds.dim, q), topK: K, ef: EF, filter: (m) => (m.bucket as number) < below })
      quarryLat.push(performance.now() - t)
      quarryResults.push(hits.map((h) => Number(h.id)))
      strategies[stats.strategy] = (strategies[stats.strategy] ?? 0) + 1
      t = performance.now()
      const r = native.searchKnn(queries[q] as number[], K, (label) => (buckets[label] as number) < below)
      rawLat.push(performance.now() - t)
      rawResults.push(r.neighbors)
    }
    rows.push({
      selectivity,
      passing: buckets.filter((b) => b < below).length,
      quarryP50ms: median(quarryLat),
      quarryP95ms: percentile(quarryLat, 0.95),
      quarryRecall: meanRecall(quarryResults, truth),
      quarryStrategies: strategies,
      hnswlibP50ms: median(rawLat),
      hnswlibP95ms: percentile(rawLat, 0.95),
      hnswlibRecall: meanRecall(rawResults, truth),
      speedup: median(rawLat) / median(quarryLat),
    })
  }
  printTable(`${ds.name}: filtered top-${K}, Quarry planner vs hnswlib-node filter callback (ef ${EF}, ${nq} queries)`, rows.map((r) => ({
    selectivity: `${r.selectivity * 100}%`,
    passing: r.passing,
    'quarry p50 ms': r.quarryP50ms,
    'quarry recall': r.quarryRecall,
    'hnswlib p50 ms': r.hnswlibP50ms,
    'hnswlib recall': r.hnswlibRecall,
    'speedup (p50)': r.speedup,
    strategy: Object.keys(r.quarryStrategies).join('+'),
  })))
  return rows
}
