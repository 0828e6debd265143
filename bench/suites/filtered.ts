import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { QuarryIndex } from '@quarry/core'
import { clusteredDataset, gloveDataset, groundTruth, row, type Dataset } from '../lib/datasets.js'
import { buildHnswlib, buildQuarry } from '../lib/engines.js'
import { meanRecall, median, percentile } from '../lib/stats.js'
import { renderSvg, type Panel } from '@quarry/adapters'
import { shuffled } from '../lib/order.js'
import { printTable } from '../lib/table.js'
import { prng } from '../../test/support/random.js'
import type { SuiteContext } from '../run.js'

export interface FilteredRow {
  selectivity: number
  passing: number
  declarativeP50ms: number
  declarativeRecall: number
  declarativeStrategies: Record<string, number>
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
const SELECTIVITIES = [0.5, 0.2, 0.1, 0.05, 0.01, 0.001]

/** Each record's bucket in 0..999, spread evenly and unrelated to the data order. */
const bucket = (i: number): number => (i * 7919) % 1000

export async function runFiltered(ctx: SuiteContext): Promise<void> {
  const datasets = ctx.quick ? [gloveDataset(20_000, 30), clusteredDataset(20_000, 30)] : [gloveDataset(100_000, 100), clusteredDataset(100_000, 100)]
  const out: Record<string, FilteredRow[]> = {}
  const panels: Panel[] = []
  for (const ds of datasets) {
    console.log(`\n== ${ds.name}: building Quarry (bucket metadata) and hnswlib-node`)
    const quarryBuild = buildQuarry(ds, (i) => ({ bucket: bucket(i) }))
    const rawBuild = buildHnswlib(ds)
    quarryBuild.add(0, ds.n)
    rawBuild.add(0, ds.n)
    const { index } = quarryBuild.finish()
    const raw = rawBuild.finish()
    const rows = measureFiltered(ds, index, raw.native, raw.queries, bucket, ctx.quick)
    out[ds.name] = rows
    panels.push({
      title: `${ds.name}: filtered top-10 p50 latency`,
      xLabel: 'selectivity (log10)',
      yLabel: 'p50 ms',
      logY: true,
      series: [
        { name: 'quarry, filter function', points: rows.map((r) => ({ x: Math.log10(r.selectivity), y: r.quarryP50ms })) },
        { name: 'quarry, declarative filter', points: rows.map((r) => ({ x: Math.log10(r.selectivity), y: r.declarativeP50ms })) },
        { name: 'hnswlib-node filter callback', points: rows.map((r) => ({ x: Math.log10(r.selectivity), y: r.hnswlibP50ms })) },
      ],
    })
  }
  writeFileSync(join(ctx.resultsDir, 'filtered.json'), `${JSON.stringify({ suite: 'filtered', date: new Date().toISOString(), node: process.version, quick: ctx.quick, ef: EF, k: K, datasets: out }, null, 1)}\n`)
  writeFileSync(join(ctx.resultsDir, 'filtered.svg'), renderSvg('Filtered search latency', panels))
}

/**
 * Filtered search from 50% down to 0.1% selectivity: Quarry's planner with a filter function and
 * with a declarative filter (value indexes), against hnswlib-node's own filter
 * callback, both at ef = 64, recall against the exact filtered top-10.
 */
function measureFiltered(ds: Dataset, index: QuarryIndex, native: NativeFilterSearch, queries: number[][], bucket: (i: number) => number, quick: boolean): FilteredRow[] {
  const buckets = Int32Array.from({ length: ds.n }, (_, i) => bucket(i))
  const nq = Math.min(ds.nq, quick ? 30 : 100)
  const rows: FilteredRow[] = []
  for (const selectivity of SELECTIVITIES) {
    const below = Math.round(selectivity * 1000)
    const truth = groundTruth({ ...ds, nq }, K, `bucket-lt-${below}`, (i) => (buckets[i] as number) < below)
    const quarryResults: number[][] = []
    const quarryLat: number[] = []
    const strategies: Record<string, number> = {}
    const rawResults: number[][] = []
    const rawLat: number[] = []
    native.setEf(EF)
    // Interleaved in chunks of 10 queries, rotating who goes first: both see the same machine
    // state, without one engine's garbage and cache traffic landing inside every query of the other.
    const declResults: number[][] = []
    const declLat: number[] = []
    const declStrategies: Record<string, number> = {}
    const declarativeRun = (q: number): void => {
      const t = performance.now()
      const { hits, stats } = index.search({ vector: row(ds.queries, ds.dim, q), topK: K, ef: EF, filter: { op: 'lt', field: 'bucket', value: below } })
      declLat.push(performance.now() - t)
      declResults[q] = hits.map((h) => Number(h.id))
      declStrategies[stats.strategy] = (declStrategies[stats.strategy] ?? 0) + 1
    }
    const quarryRun = (q: number): void => {
      const t = performance.now()
      const { hits, stats } = index.search({ vector: row(ds.queries, ds.dim, q), topK: K, ef: EF, filter: (m) => (m.bucket as number) < below })
      quarryLat.push(performance.now() - t)
      quarryResults[q] = hits.map((h) => Number(h.id))
      strategies[stats.strategy] = (strategies[stats.strategy] ?? 0) + 1
    }
    const rawRun = (q: number): void => {
      const t = performance.now()
      const r = native.searchKnn(queries[q] as number[], K, (label) => (buckets[label] as number) < below)
      rawLat.push(performance.now() - t)
      rawResults[q] = r.neighbors
    }
    // Chunk by chunk, in a new seeded order every chunk (see shuffled).
    const order = prng(Math.round(selectivity * 1e6))
    for (let start = 0; start < nq; start += 10) {
      const end = Math.min(nq, start + 10)
      for (const run of shuffled([quarryRun, declarativeRun, rawRun], order)) for (let q = start; q < end; q++) run(q)
    }
    rows.push({
      selectivity,
      passing: buckets.filter((b) => b < below).length,
      declarativeP50ms: median(declLat),
      declarativeRecall: meanRecall(declResults, truth),
      declarativeStrategies: declStrategies,
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
    'quarry fn p50 ms': r.quarryP50ms,
    'quarry fn recall': r.quarryRecall,
    'quarry declarative p50 ms': r.declarativeP50ms,
    'declarative recall': r.declarativeRecall,
    'hnswlib p50 ms': r.hnswlibP50ms,
    'hnswlib recall': r.hnswlibRecall,
    'speedup fn': r.speedup,
    'speedup declarative': r.hnswlibP50ms / r.declarativeP50ms,
    strategy: Object.keys(r.quarryStrategies).join('+'),
  })))
  return rows
}
