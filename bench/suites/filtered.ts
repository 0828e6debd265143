import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createIndex, type FilterFn, type PlannerOptions, type QuarryIndex } from '@quarry/core'
import { clusteredDataset, gloveDataset, groundTruth, row, type Dataset } from '../lib/datasets.js'
import { GRAPH, buildHnswlib, buildQuarry } from '../lib/engines.js'
import { meanRecall, median, percentile } from '../lib/stats.js'
import { renderSvg, type Panel } from '@quarry/adapters'
import { shuffled } from '../lib/order.js'
import { printTable } from '../lib/table.js'
import { prng } from '../../test/support/random.js'
import { HNSWLIB_SKIP_NOTE, hnswlibNode } from '../../test/support/hnswlib-node.js'
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

/** filtered.json's parts a partial run keeps. */
interface FilteredFile {
  datasets: Record<string, FilteredRow[]>
  datasetDates: Record<string, string>
  crossover: Record<string, CrossoverRow[]>
}

interface NativeFilterSearch {
  searchKnn(query: number[], k: number, filter?: (label: number) => boolean): { neighbors: number[] }
  setEf(ef: number): void
}

const K = 10
const EF = 64
const SELECTIVITIES = [0.5, 0.2, 0.1, 0.05, 0.01, 0.001, 0.0001]
/** Where the planner's strategies cross: around postFilterAbove (2%) and the narrow end. */
const CROSSOVER_SELECTIVITIES = [0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0001]

/** Each record's bucket in 0..9,999, spread evenly and unrelated to the data order (7919 is prime to 10,000). */
const BUCKETS = 10_000
const bucket = (i: number): number => (i * 7919) % BUCKETS

export async function runFiltered(ctx: SuiteContext): Promise<void> {
  // Its baseline is hnswlib-node, which is not built on a machine without a C++ toolchain.
  if (hnswlibNode() === undefined) {
    console.log(`suite filtered skipped: ${HNSWLIB_SKIP_NOTE}`)
    return
  }
  const n = ctx.quick ? 20_000 : 100_000
  const nq = ctx.quick ? 30 : 100
  const all: [string, () => Dataset][] = [['glove', () => gloveDataset(n, nq)], ['clustered', () => clusteredDataset(n, nq)], ['clustered-64d', () => clusteredDataset(n, nq, 64)]]
  // FILTERED_SETS=clustered-64d runs just those; such a run replaces only its datasets in filtered.json.
  const only = process.env['FILTERED_SETS']?.split(',')
  const resultsFile = join(ctx.resultsDir, 'filtered.json')
  const previous = (only !== undefined && existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : {}) as Partial<FilteredFile>
  const out: Record<string, FilteredRow[]> = previous.datasets ?? {}
  const crossover: Record<string, CrossoverRow[]> = previous.crossover ?? {}
  const dates: Record<string, string> = previous.datasetDates ?? {}
  for (const [, make] of all.filter(([name]) => only === undefined || only.includes(name))) {
    const ds = make()
    console.log(`\n== ${ds.name}: building Quarry (bucket metadata) and hnswlib-node`)
    const quarryBuild = buildQuarry(ds, (i) => ({ bucket: bucket(i) }))
    const rawBuild = buildHnswlib(ds)
    quarryBuild.add(0, ds.n)
    rawBuild.add(0, ds.n)
    const { index } = quarryBuild.finish()
    const raw = rawBuild.finish()
    const rows = measureFiltered(ds, index, raw.native, raw.queries, bucket, ctx.quick)
    out[ds.name] = rows
    dates[ds.name] = new Date().toISOString()
    // The smallest vectors make the graph's fixed costs weigh most against a scan: crossovers there.
    if (ds.dim === 64) crossover[ds.name] = measureCrossover(ds, index, ctx.quick)
  }
  writeFileSync(join(ctx.resultsDir, 'filtered.json'), `${JSON.stringify({ suite: 'filtered', date: new Date().toISOString(), node: process.version, quick: ctx.quick, ef: EF, k: K, datasets: out, datasetDates: dates, crossover }, null, 1)}\n`)
  const panels: Panel[] = Object.entries(out).map(([name, rows]) => ({
    title: `${name}: filtered top-10 p50 latency`,
    xLabel: 'selectivity (log10)',
    yLabel: 'p50 ms',
    logY: true,
    series: [
      { name: 'quarry, filter function', points: rows.map((r) => ({ x: Math.log10(r.selectivity), y: r.quarryP50ms })) },
      { name: 'quarry, declarative filter', points: rows.map((r) => ({ x: Math.log10(r.selectivity), y: r.declarativeP50ms })) },
      { name: 'hnswlib-node filter callback', points: rows.map((r) => ({ x: Math.log10(r.selectivity), y: r.hnswlibP50ms })) },
    ],
  }))
  writeFileSync(join(ctx.resultsDir, 'filtered.svg'), renderSvg('Filtered search latency', panels))
}

/**
 * Filtered search from 50% down to 0.01% selectivity: Quarry's planner with a filter function and
 * with a declarative filter (value indexes), against hnswlib-node's own filter
 * callback, both at ef = 64, recall against the exact filtered top-10.
 */
function measureFiltered(ds: Dataset, index: QuarryIndex, native: NativeFilterSearch, queries: number[][], bucket: (i: number) => number, quick: boolean): FilteredRow[] {
  const buckets = Int32Array.from({ length: ds.n }, (_, i) => bucket(i))
  const nq = Math.min(ds.nq, quick ? 30 : 100)
  const rows: FilteredRow[] = []
  for (const selectivity of SELECTIVITIES) {
    const { below, passing, truth } = filterCase(ds, buckets, nq, selectivity)
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
      const { hits, stats } = index.search({ vector: row(ds.queries, ds.dim, q), topK: K, ef: EF, filter: bucketBelow(below) })
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
    interleave([quarryRun, declarativeRun, rawRun], nq, Math.round(selectivity * 1e6))
    rows.push({
      selectivity,
      passing,
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

/** One selectivity's p50 and recall under each strategy, forced: the declarative filter's, then the function's ("function …"). */
export interface CrossoverRow {
  selectivity: number
  passing: number
  /** By strategy: p50 ms, recall, and the strategy the stats reported (a fallback shows). */
  strategies: Record<string, { p50ms: number; recall: number; ran: Record<string, number> }>
  /** What the default planner chose for the declarative filter. */
  planned: string
  /** What it chose for the function. */
  plannedFunction: string
}

/**
 * The planner's thresholds measured on the bitset path: the same declarative filter answered by
 * each strategy, forced: an exact scan of the passing rows (`exact: true`), the graph restricted to
 * the bitset (an index whose planner never scans nor post-filters) and the post-filtered graph
 * search (an index whose planner always post-filters). Then the same filter as a function, which
 * must be evaluated on every record before its rows are scanned: evaluated and scanned
 * (`exact: true`) against post-filtered. Same records, same graph parameters and seed;
 * interleaved in chunks of 10 queries.
 */
function measureCrossover(ds: Dataset, index: QuarryIndex, quick: boolean): CrossoverRow[] {
  const build = (planner: PlannerOptions): QuarryIndex => {
    const built = createIndex({ dimensions: ds.dim, metric: ds.metric, hnsw: GRAPH, planner })
    for (let i = 0; i < ds.n; i++) built.add({ id: String(i), vector: row(ds.base, ds.dim, i), metadata: { bucket: bucket(i) } })
    return built
  }
  console.log(`\n== ${ds.name}: crossover, building the forced-graph and forced-post-filter indexes`)
  const postFiltering = build({ exactBelow: 0, exactFilterMax: 0, postFilterAbove: 0 })
  const engines: Record<string, { index: QuarryIndex; exact: boolean; fn?: true }> = {
    'exact-filtered': { index, exact: true },
    'hnsw-filtered': { index: build({ exactBelow: 0, exactFilterMax: 0, postFilterAbove: 1 }), exact: false },
    'hnsw-postfilter': { index: postFiltering, exact: false },
    'function exact-filtered': { index, exact: true, fn: true },
    'function hnsw-postfilter': { index: postFiltering, exact: false, fn: true },
  }
  const buckets = Int32Array.from({ length: ds.n }, (_, i) => bucket(i))
  const nq = Math.min(ds.nq, quick ? 30 : 100)
  const rows: CrossoverRow[] = []
  for (const selectivity of CROSSOVER_SELECTIVITIES) {
    const { below, passing, truth } = filterCase(ds, buckets, nq, selectivity)
    const filter = { op: 'lt', field: 'bucket', value: below } as const
    const fn = bucketBelow(below)
    const lat: Record<string, number[]> = {}
    const results: Record<string, number[][]> = {}
    const ran: Record<string, Record<string, number>> = {}
    const runs = Object.entries(engines).map(([name, e]) => (q: number): void => {
      const t = performance.now()
      const { hits, stats } = e.index.search({ vector: row(ds.queries, ds.dim, q), topK: K, ef: EF, filter: e.fn ? fn : filter, exact: e.exact })
      ;(lat[name] ??= []).push(performance.now() - t)
      ;(results[name] ??= [])[q] = hits.map((h) => Number(h.id))
      const counts = (ran[name] ??= {})
      counts[stats.strategy] = (counts[stats.strategy] ?? 0) + 1
    })
    interleave(runs, nq, Math.round(selectivity * 1e6) + 1)
    const planned = index.search({ vector: row(ds.queries, ds.dim, 0), topK: K, ef: EF, filter }).stats.strategy
    const plannedFunction = index.search({ vector: row(ds.queries, ds.dim, 0), topK: K, ef: EF, filter: fn }).stats.strategy
    rows.push({
      selectivity,
      passing,
      strategies: Object.fromEntries(Object.keys(engines).map((name) => [name, { p50ms: median(lat[name] ?? []), recall: meanRecall(results[name] ?? [], truth), ran: ran[name] ?? {} }])),
      planned,
      plannedFunction,
    })
  }
  printTable(`${ds.name}: declarative filter (then as a function) p50 ms by forced strategy (ef ${EF}, ${nq} queries)`, rows.map((r) => ({
    selectivity: `${r.selectivity * 100}%`,
    passing: r.passing,
    ...Object.fromEntries(Object.entries(r.strategies).flatMap(([name, m]) => [[`${name} ms`, m.p50ms], [`${name} recall`, m.recall]])),
    planner: r.planned,
    'planner, function': r.plannedFunction,
  })))
  return rows
}

/**
 * "bucket < below" as a filter function. One function for every search of the suite: Quarry
 * compiles a filter's loop per source text (filter/predicate.ts), and two functions of the same
 * text written in two places would share one loop, whose call then is not inlined.
 */
function bucketBelow(below: number): FilterFn {
  return (m) => (m.bucket as number) < below
}

/** "bucket < below" at a selectivity: the bound, the records passing, the exact filtered top-K of the first nq queries. */
function filterCase(ds: Dataset, buckets: Int32Array, nq: number, selectivity: number): { below: number; passing: number; truth: number[][] } {
  const below = Math.round(selectivity * BUCKETS)
  const truth = groundTruth({ ...ds, nq }, K, `bucket${BUCKETS}-lt-${below}`, (i) => (buckets[i] as number) < below)
  return { below, passing: buckets.filter((b) => b < below).length, truth }
}

/** Runs every query through each engine, chunk by chunk of 10, in a new seeded order every chunk (see shuffled). */
function interleave(runs: readonly ((q: number) => void)[], nq: number, seed: number): void {
  const order = prng(seed)
  for (let start = 0; start < nq; start += 10) {
    const end = Math.min(nq, start + 10)
    for (const run of shuffled(runs, order)) for (let q = start; q < end; q++) run(q)
  }
}
