import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { buildHnswlib, buildInterleaved, buildOrama, buildQuarry, buildUsearch, callFloor, quarryExact, SAME_GRAPH, SECOND_BUILD, type AnnEngine } from '../lib/engines.js'
import { clusteredDataset, gloveDataset, groundTruth, type Dataset } from '../lib/datasets.js'
import { collectGarbage, meanRecall, median, qpsAtRecall, rssMB } from '../lib/stats.js'
import { renderSvg, type Panel } from '@quarry/adapters'
import { GcPauses } from '../lib/gc.js'
import { shuffled } from '../lib/order.js'
import { printTable } from '../lib/table.js'
import { wasmVsNative, type WasmVsNative } from './dense-wasm.js'
import { grownVsLoaded, type GrownVsLoaded } from './dense-grown.js'
import { prng } from '../../test/support/random.js'
import { HNSWLIB_SKIP_NOTE, hnswlibNode } from '../../test/support/hnswlib-node.js'
import type { SuiteContext } from '../run.js'

const K = 10
const EFS = [10, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536]
const TARGETS = [0.9, 0.95, 0.99]
const CHUNK = 50

interface SweepPoint {
  ef: number
  recall: number
  qps: number
  p50ms: number
  /** Collection pauses inside this engine's timed chunks, µs per query (see GcPauses): all, and full collections'. */
  gcUsPerQuery?: number
  majorGcUsPerQuery?: number
}

interface EngineReport {
  engine: string
  buildSeconds?: number
  memoryMB?: number
  sweep: SweepPoint[]
  qpsAt: Record<string, number | undefined>
}

/**
 * Runs queries [start, end) once at the current ef; returns the hits (as dataset rows, read from
 * the engines' answers after the timed loop), per-query latencies, the wall time and the process's
 * CPU time (which other processes' load on the machine inflates less).
 */
function runQueries(engine: AnnEngine, start: number, end: number): { results: number[][]; latencies: number[]; seconds: number; cpuSeconds: number; window: { start: number; end: number } } {
  const answers: unknown[] = []
  const latencies: number[] = []
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let q = start; q < end; q++) {
    const t = performance.now()
    answers.push(engine.search(q, K))
    latencies.push(performance.now() - t)
  }
  const t1 = performance.now()
  const cpu = process.cpuUsage(cpu0)
  return { results: answers.map((a) => engine.ids(a)), latencies, seconds: (t1 - t0) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6, window: { start: t0, end: t1 } }
}

/** Quarry / raw hnswlib-node at one ef: medians of per-chunk ratios of raw time over Quarry time (paired chunks). */
interface PairedRatio {
  ef: number
  /** From wall time (what QPS is computed from). */
  quarryOverRaw: number
  /** From CPU time. */
  quarryOverRawCpu: number
  /**
   * Against raw hnswlib-node searching a copy of Quarry's own graph (Quarry's saved file, read by
   * hnswlib-node: the same links, in memory laid out afresh): the same graph walked through the two
   * bindings. Wall and CPU time.
   */
  quarryOverSameGraph: number
  quarryOverSameGraphCpu: number
  /**
   * A second hnswlib-node graph, built the same way from the same vectors, against the first (its
   * QPS over theirs): how far two identical builds differ by where their memory lies, the noise
   * floor of `quarryOverRaw`. Only on datasets of at most {@link CONTROL_MAX} vectors.
   */
  secondBuildOverRaw?: number
  secondBuildOverRawCpu?: number
}

/** Largest dataset given a second raw build as a control (a second build of glove-full takes ~10 min here). */
const CONTROL_MAX = 200_000

/** What each paired ratio divides: per chunk, the time of the second engine over the first's (the first's QPS over the second's). */
const PAIRS = [
  ['quarryOverRaw', 'quarry-hnsw', 'hnswlib-node'],
  ['quarryOverSameGraph', 'quarry-hnsw', SAME_GRAPH],
  ['secondBuildOverRaw', SECOND_BUILD, 'hnswlib-node'],
] as const

/** Repetitions of every query at every ef: DENSE_REPS, else 1 quick and 3 full. */
function repetitions(quick: boolean): number {
  const reps = Number(process.env['DENSE_REPS'] ?? (quick ? 1 : 3))
  return Number.isInteger(reps) && reps >= 1 ? reps : 1
}

/** The ef sweep: DENSE_EFS (comma-separated), else every ef of EFS. */
function efSweep(): number[] {
  const given = process.env['DENSE_EFS']?.split(',').map(Number).filter((ef) => Number.isInteger(ef) && ef >= 1)
  return given && given.length > 0 ? given : EFS
}

interface DatasetResult {
  reports: EngineReport[]
  ratios: PairedRatio[]
  atRecall: Record<string, number | undefined>
  pairedAtRecall: Record<string, PairedRatio | undefined>
  /** One call over a 16-vector graph, µs (see callFloor). */
  callFloor: { rawUs: number; quarryUs: number }
  /** @quarry/hnsw's WebAssembly build against its native one on Quarry's saved graph (see dense-wasm.ts). */
  wasmVsNative: WasmVsNative | undefined
  /** Quarry's graph as inserts grew it against the same graph saved and loaded (see dense-grown.ts). */
  grownVsLoaded: GrownVsLoaded
}

async function benchDataset(ds: Dataset, quick: boolean): Promise<DatasetResult> {
  console.log(`\n== ${ds.name}: ${ds.n} × ${ds.dim}-d, ${ds.metric}, ${ds.nq} queries, k=${K}`)
  const truth = groundTruth(ds, K)
  // Builds are interleaved chunk by chunk so that machine noise hits every engine alike.
  const builds = { quarry: buildQuarry(ds), raw: buildHnswlib(ds), usearch: buildUsearch(ds) }
  const control = ds.n <= CONTROL_MAX ? buildHnswlib(ds, SECOND_BUILD) : undefined
  const costs = buildInterleaved(ds.n, [
    { name: 'quarry-hnsw', build: builds.quarry },
    { name: 'hnswlib-node', build: builds.raw },
    { name: 'usearch', build: builds.usearch },
    ...(control ? [{ name: SECOND_BUILD, build: control }] : []),
  ])
  const quarry = builds.quarry.finish()
  const engines: [AnnEngine, { seconds?: number; memoryMB?: number }][] = [
    [builds.raw.finish().engine, costs.get('hnswlib-node') as { seconds: number; memoryMB: number }],
    [quarry.engine, costs.get('quarry-hnsw') as { seconds: number; memoryMB: number }],
    [builds.usearch.finish(), costs.get('usearch') as { seconds: number; memoryMB: number }],
    [quarry.sameGraph, {}],
    ...(control ? [[control.finish().engine, {}] as [AnnEngine, object]] : []),
  ]
  const sweeps = new Map<string, SweepPoint[]>(engines.map(([e]) => [e.name, []]))
  const ratios: PairedRatio[] = []
  const reps = repetitions(quick)
  const efs = efSweep()
  const gc = new GcPauses()
  for (const ef of efs) {
    for (const [engine] of engines) engine.setEf(ef)
    // Every ef starts from a collected heap (untimed), so that a full collection the previous ef's
    // bookkeeping made due does not land in whichever chunk runs first.
    collectGarbage()
    const seconds = new Map<string, number>(engines.map(([e]) => [e.name, 0]))
    const windows = new Map<string, { start: number; end: number }[]>(engines.map(([e]) => [e.name, []]))
    const latencies = new Map<string, number[]>(engines.map(([e]) => [e.name, []]))
    const results = new Map<string, number[][]>(engines.map(([e]) => [e.name, []]))
    const paired = PAIRS.filter(([, a, b]) => seconds.has(a) && seconds.has(b)).map(([key, a, b]) => ({ key, a, b, wall: [] as number[], cpu: [] as number[] }))
    // Interleave the engines chunk by chunk, in a new seeded order every chunk, so that machine
    // noise hits them alike and each engine follows every other about equally often (a chunk run
    // right after one on the same graph, or after a smaller one, finds more of its graph in cache:
    // a fixed rotation gave every engine the same predecessor). The Quarry/hnswlib ratio is the
    // median of per-chunk time ratios.
    const shuffle = prng(ef)
    for (let rep = 0; rep < reps; rep++) {
      for (let start = 0; start < ds.nq; start += CHUNK) {
        const end = Math.min(ds.nq, start + CHUNK)
        const chunkTime = new Map<string, number>()
        const chunkCpu = new Map<string, number>()
        for (const [engine] of shuffled(engines, shuffle)) {
          const run = runQueries(engine, start, end)
          chunkTime.set(engine.name, run.seconds)
          chunkCpu.set(engine.name, run.cpuSeconds)
          seconds.set(engine.name, (seconds.get(engine.name) ?? 0) + run.seconds)
          latencies.get(engine.name)?.push(...run.latencies)
          windows.get(engine.name)?.push(run.window)
          if (rep === 0) results.get(engine.name)?.push(...run.results)
        }
        for (const p of paired) {
          p.wall.push((chunkTime.get(p.b) ?? 0) / (chunkTime.get(p.a) || 1))
          p.cpu.push((chunkCpu.get(p.b) ?? 0) / (chunkCpu.get(p.a) || 1))
        }
      }
    }
    await gc.settle()
    const ratio = (key: (typeof PAIRS)[number][0]): { wall: number; cpu: number } => {
      const p = paired.find((q) => q.key === key)
      return p ? { wall: median(p.wall), cpu: median(p.cpu) } : { wall: Number.NaN, cpu: Number.NaN }
    }
    const raw = ratio('quarryOverRaw')
    const same = ratio('quarryOverSameGraph')
    const second = control ? ratio('secondBuildOverRaw') : undefined
    ratios.push({
      ef,
      quarryOverRaw: raw.wall,
      quarryOverRawCpu: raw.cpu,
      quarryOverSameGraph: same.wall,
      quarryOverSameGraphCpu: same.cpu,
      ...(second ? { secondBuildOverRaw: second.wall, secondBuildOverRawCpu: second.cpu } : {}),
    })
    for (const [engine] of engines) {
      const paused = gc.within(windows.get(engine.name) ?? [])
      sweeps.get(engine.name)?.push({
        ef,
        recall: meanRecall(results.get(engine.name) ?? [], truth),
        qps: (ds.nq * reps) / (seconds.get(engine.name) ?? 1),
        p50ms: median(latencies.get(engine.name) ?? []),
        gcUsPerQuery: (paused.all * 1000) / (ds.nq * reps),
        majorGcUsPerQuery: (paused.major * 1000) / (ds.nq * reps),
      })
    }
    gc.clear()
  }
  gc.stop()
  const reports: EngineReport[] = engines.map(([engine, b]) => {
    const sweep = sweeps.get(engine.name) ?? []
    return { engine: engine.name, ...(b.seconds === undefined ? {} : { buildSeconds: b.seconds }), ...(b.memoryMB === undefined ? {} : { memoryMB: b.memoryMB }), sweep, qpsAt: Object.fromEntries(TARGETS.map((t) => [String(t), qpsAtRecall(sweep, t)])) }
  })

  // Exact baselines: Quarry's brute force and Orama's vector search (exact cosine) on fewer queries.
  const exactQueries = Math.min(ds.nq, quick ? 20 : 100)
  const exact = runQueries(quarryExact(ds, quarry.index), 0, exactQueries)
  reports.push({ engine: 'quarry-exact', sweep: [{ ef: 0, recall: meanRecall(exact.results, truth.slice(0, exactQueries)), qps: exactQueries / exact.seconds, p50ms: median(exact.latencies) }], qpsAt: {} })
  if (ds.metric === 'cosine' && ds.n <= 100_000) {
    const before = rssMB()
    const t = performance.now()
    const orama = await buildOrama(ds)
    const buildSeconds = (performance.now() - t) / 1000
    const memoryMB = rssMB() - before
    const nq = Math.min(ds.nq, 30)
    const results: number[][] = []
    const latencies: number[] = []
    for (let q = 0; q < nq; q++) {
      const s = performance.now()
      results.push(await orama.search(q, K))
      latencies.push(performance.now() - s)
    }
    const seconds = latencies.reduce((a, b) => a + b, 0) / 1000
    reports.push({ engine: 'orama', buildSeconds, memoryMB, sweep: [{ ef: 0, recall: meanRecall(results, truth.slice(0, nq)), qps: nq / seconds, p50ms: median(latencies) }], qpsAt: {} })
  }

  printTable(`${ds.name}: build and QPS at recall@10 (single-threaded queries)`, reports.map((r) => ({
    engine: r.engine,
    'build s': r.buildSeconds,
    'memory MB': r.memoryMB,
    ...Object.fromEntries(TARGETS.map((t) => [`QPS@${t}`, r.qpsAt[String(t)]])),
    'exact QPS': r.sweep.length === 1 ? r.sweep[0]?.qps : undefined,
    'max recall': Math.max(...r.sweep.map((p) => p.recall)),
  })))
  const q = reports.find((r) => r.engine === 'quarry-hnsw')
  const h = reports.find((r) => r.engine === 'hnswlib-node')
  printTable(`${ds.name}: Quarry HNSW vs raw hnswlib-node per ef (same graph parameters)`, efs.map((ef, i) => {
    const qp = q?.sweep[i]
    const hp = h?.sweep[i]
    return {
      ef,
      'hnswlib recall': hp?.recall,
      'quarry recall': qp?.recall,
      'hnswlib QPS': hp?.qps,
      'quarry QPS': qp?.qps,
      'ratio (median of chunks)': ratios[i]?.quarryOverRaw,
      'CPU-time ratio (median of chunks)': ratios[i]?.quarryOverRawCpu,
      'same graph: ratio': ratios[i]?.quarryOverSameGraph,
      'same graph: CPU ratio': ratios[i]?.quarryOverSameGraphCpu,
      'raw, second build / first': ratios[i]?.secondBuildOverRaw,
      'hnswlib p50 ms': hp?.p50ms,
      'quarry p50 ms': qp?.p50ms,
      'hnswlib GC µs/q (full)': gcCell(hp),
      'quarry GC µs/q (full)': gcCell(qp),
    }
  }))

  const atRecall = Object.fromEntries(TARGETS.map((t) => [String(t), ratioOf(q?.qpsAt[String(t)], h?.qpsAt[String(t)])]))
  // The paired ratio at a recall: at the first ef where both engines reach it (they search the same
  // kind of graph, so it is the same ef but for rounding), the medians of per-chunk ratios.
  const pairedAtRecall = Object.fromEntries(
    TARGETS.map((t) => [String(t), ratios.find((_, i) => (h?.sweep[i]?.recall ?? 0) >= t && (q?.sweep[i]?.recall ?? 0) >= t)]),
  )
  const floor = TARGETS[0] as number
  const inRange = ratios.filter((_, i) => (h?.sweep[i]?.recall ?? 0) >= floor)
  const span = (values: number[]): string => (values.length > 0 ? `${Math.min(...values).toFixed(3)}–${Math.max(...values).toFixed(3)}` : '—')
  const paired = (pick: (r: PairedRatio) => number): string => Object.values(pairedAtRecall).map((r) => (r ? `${pick(r).toFixed(3)} (ef ${r.ef})` : '—')).join(' / ')
  console.log(
    `\nQuarry HNSW / raw hnswlib-node QPS at recall ${TARGETS.join(' / ')}: ${Object.values(atRecall).map((r) => r?.toFixed(3) ?? '—').join(' / ')}; ` +
      `paired median-of-chunks ratio there: wall ${paired((r) => r.quarryOverRaw)}, CPU ${paired((r) => r.quarryOverRawCpu)}; ` +
      `at every ef with recall >= ${floor}: wall ${span(inRange.map((r) => r.quarryOverRaw))}, CPU ${span(inRange.map((r) => r.quarryOverRawCpu))}`,
  )
  console.log(
    `Quarry HNSW / raw hnswlib-node on Quarry's own graph (paired median of chunks) at recall ${TARGETS.join(' / ')}: ` +
      `wall ${paired((r) => r.quarryOverSameGraph)}, CPU ${paired((r) => r.quarryOverSameGraphCpu)}; ` +
      `at every ef with recall >= ${floor}: wall ${span(inRange.map((r) => r.quarryOverSameGraph))}, CPU ${span(inRange.map((r) => r.quarryOverSameGraphCpu))}`,
  )

  if (control) {
    const second = (r: PairedRatio): number => r.secondBuildOverRaw ?? Number.NaN
    console.log(
      `Control: a second raw hnswlib-node build / the first (paired median of chunks) at recall ${TARGETS.join(' / ')}: wall ${paired(second)}; ` +
        `at every ef with recall >= ${floor}: wall ${span(inRange.map(second))}, CPU ${span(inRange.map((r) => r.secondBuildOverRawCpu ?? Number.NaN))}`,
    )
  }
  const floor16 = callFloor(ds)
  console.log(
    `One call over a 16-vector graph (ef 16, k = 10, medians of 9 rounds): raw hnswlib-node ${floor16.rawUs.toFixed(2)} µs, ` +
      `Quarry ${floor16.quarryUs.toFixed(2)} µs (+${(floor16.quarryUs - floor16.rawUs).toFixed(2)})`,
  )
  const wasm = wasmVsNative(ds, quarry.graph, truth, efs, TARGETS, reps, K)
  const grown = grownVsLoaded(ds, quarry.graph, truth, efs, TARGETS, quick, K)
  for (const [engine] of engines) engine.close?.()
  return { reports, ratios, atRecall, pairedAtRecall, callFloor: floor16, wasmVsNative: wasm, grownVsLoaded: grown }
}

/**
 * DENSE_GROWN_ONLY=1: only Quarry's graph is built, and only the grown-against-loaded section runs;
 * its result joins the dataset's entry of the last full run (or a new entry with no engines).
 */
function grownOnly(ds: Dataset, quick: boolean, previous: DatasetEntry | undefined): DatasetEntry {
  console.log(`\n== ${ds.name}: ${ds.n} × ${ds.dim}-d, ${ds.metric}, ${ds.nq} queries, k=${K} (grown against loaded only)`)
  const truth = groundTruth(ds, K)
  const build = buildQuarry(ds)
  build.add(0, ds.n)
  const { graph } = build.finish()
  const grown = grownVsLoaded(ds, graph, truth, efSweep(), TARGETS, quick, K)
  return { ...(previous ?? { date: grown.date, n: ds.n, dim: ds.dim, metric: ds.metric, queries: ds.nq, k: K, engines: [] }), grownVsLoaded: grown }
}

/** One dataset's entry in dense.json. */
interface DatasetEntry {
  readonly date: string
  readonly metric: string
  readonly engines: readonly EngineReport[]
  readonly [field: string]: unknown
}

/** The datasets of an earlier dense.json, each dated (entries from before per-dataset dates get the file's). */
function previousDatasets(file: string): Record<string, DatasetEntry> {
  const previous = JSON.parse(readFileSync(file, 'utf8')) as { date: string; datasets: Record<string, DatasetEntry> }
  return Object.fromEntries(Object.entries(previous.datasets).map(([name, entry]) => [name, { ...entry, date: entry.date ?? previous.date }]))
}

/** A sweep point's collection pauses per query, "all (full)", µs. */
function gcCell(p: SweepPoint | undefined): string | undefined {
  return p?.gcUsPerQuery === undefined ? undefined : `${p.gcUsPerQuery.toFixed(1)} (${(p.majorGcUsPerQuery ?? 0).toFixed(1)})`
}

function ratioOf(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined || b === undefined ? undefined : a / b
}

export async function runDense(ctx: SuiteContext): Promise<void> {
  // Its baseline is hnswlib-node, which is not built on a machine without a C++ toolchain.
  if (hnswlibNode() === undefined) {
    console.log(`suite dense skipped: ${HNSWLIB_SKIP_NOTE}`)
    return
  }
  const all: [string, () => Dataset][] = ctx.quick
    ? [['glove', () => gloveDataset(20_000, 200)], ['clustered', () => clusteredDataset(20_000, 200)]]
    : [['glove', () => gloveDataset(100_000, 1000)], ['clustered', () => clusteredDataset(100_000, 1000)], ['glove-full', () => gloveDataset('full', 500)]]
  // DENSE_SETS=clustered,glove-full runs just those (glove, clustered, glove-full).
  const only = process.env['DENSE_SETS']?.split(',')
  const datasets = all.filter(([name]) => only === undefined || only.includes(name)).map(([, make]) => make)
  const resultsFile = join(ctx.resultsDir, 'dense.json')
  if (process.env['DENSE_GROWN_ONLY'] === '1') {
    const previous = existsSync(resultsFile) ? (JSON.parse(readFileSync(resultsFile, 'utf8')) as Record<string, unknown>) : {}
    const out = existsSync(resultsFile) ? previousDatasets(resultsFile) : {}
    for (const make of datasets) {
      const ds = make()
      out[ds.name] = grownOnly(ds, ctx.quick, out[ds.name])
    }
    writeFileSync(resultsFile, `${JSON.stringify({ ...previous, datasets: out }, null, 1)}\n`)
    return
  }
  // A DENSE_SETS run replaces only its datasets in dense.json: the others keep their last full run.
  const out: Record<string, DatasetEntry> = only !== undefined && existsSync(resultsFile) ? previousDatasets(resultsFile) : {}
  for (const make of datasets) {
    const ds = make()
    const { reports, ratios, atRecall, pairedAtRecall, callFloor: floor16, wasmVsNative: wasm, grownVsLoaded: grown } = await benchDataset(ds, ctx.quick)
    out[ds.name] = {
      date: new Date().toISOString(),
      n: ds.n,
      dim: ds.dim,
      metric: ds.metric,
      queries: ds.nq,
      k: K,
      engines: reports,
      quarryOverHnswlibQps: ratios,
      quarryOverHnswlibQpsAtRecall: atRecall,
      quarryOverHnswlibPairedAtRecall: pairedAtRecall,
      callFloorUs: floor16,
      ...(wasm ? { wasmVsNative: wasm } : {}),
      grownVsLoaded: grown,
    }
  }
  const panels: Panel[] = Object.entries(out).map(([name, { metric, engines }]) => ({
    title: `${name} (${metric})`,
    xLabel: 'recall@10',
    yLabel: 'queries per second',
    logY: true,
    series: engines.filter((r) => (r.sweep.length > 1 || r.engine === 'quarry-exact') && r.engine !== SAME_GRAPH && r.engine !== SECOND_BUILD).map((r) => ({ name: r.engine, points: r.sweep.map((p) => ({ x: p.recall, y: p.qps })) })),
  }))
  const meta = {
    suite: 'dense',
    date: new Date().toISOString(),
    node: process.version,
    cpus: ctx.cpus,
    quick: ctx.quick,
    reps: repetitions(ctx.quick),
    graph: 'M=16, efConstruction=200 for every HNSW engine',
  }
  writeFileSync(resultsFile, `${JSON.stringify({ ...meta, datasets: out }, null, 1)}\n`)
  writeFileSync(join(ctx.resultsDir, 'dense.svg'), renderSvg('Recall vs QPS', panels))
}
