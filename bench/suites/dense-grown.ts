import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Graph as QuarryGraph } from '@quarry/hnsw'
import { GRAPH } from '../lib/engines.js'
import { row, type Dataset } from '../lib/datasets.js'
import { shuffled } from '../lib/order.js'
import { collectGarbage, meanRecall, median, qpsRatioAtRecall } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import { prng } from '../../test/support/random.js'

// The dense suite's grown-against-loaded section: Quarry's graph as its inserts grew it, and the
// same graph saved and read back (what an index loaded from a snapshot searches), in one process,
// searched with the same queries across the ef sweep. The two hold the same links, so they answer
// the same labels (every answer is compared); what may differ is only where their memory lies.

interface GrownPoint {
  ef: number
  recall: number
  /** Medians over rounds. */
  grownQps: number
  loadedQps: number
  /** Median over rounds of loaded time / grown time: the grown graph's QPS over the loaded one's. */
  grownOverLoaded: number
  /** The same from the process's CPU time, which other processes' load inflates less. */
  grownOverLoadedCpu: number
  /** Each round's grown / loaded QPS (wall time), in the order the rounds ran. */
  rounds: number[]
  /** Queries whose labels differed between the two (expected 0). */
  differing: number
  /** DENSE_GROWN_BASELINE's graph, grown and loaded likewise (see {@link GrownVsLoaded.baseline}). */
  baseline?: { recall: number; grownOverLoaded: number; grownOverLoadedCpu: number; rounds: number[] }
}

export interface GrownVsLoaded {
  date: string
  graphMB: number
  /** Rounds per ef: every query once on each graph, in chunks that alternate which graph goes first. */
  rounds: number
  sweep: GrownPoint[]
  /** The paired ratio at the first ef whose recall reaches each target. */
  pairedAtRecall: Record<string, { ef: number; grownOverLoaded: number; grownOverLoadedCpu: number } | undefined>
  /** Grown QPS / loaded QPS at each target recall (each interpolated on its own sweep). */
  grownOverLoadedAtRecall: Record<string, number | undefined>
  /**
   * With DENSE_GROWN_BASELINE=<a quarry_hnsw.node>: that build of @quarry/hnsw grew the same rows
   * (as core does: from 1,024 elements, doubling) and loaded its own save, and its two graphs ran in
   * the same rounds; a change to the graph's memory is measured before and after in one process.
   * The binary's sha256 (build-inputs.json records each committed binary's).
   */
  baselineSha256?: string
}

/** A graph's saved bytes (hnswlib's file format, which `Graph.load` reads). */
export function savedGraphBytes(graph: QuarryGraph): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-graph-'))
  try {
    graph.saveSync(join(dir, 'hnsw.bin'))
    return readFileSync(join(dir, 'hnsw.bin'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Scales `v` to length 1 in place. */
function unit(v: Float32Array): void {
  const length = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0))
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) / length
}

/** The queries as Quarry's graph takes them: unit vectors for cosine (it holds unit vectors in inner-product space). */
export function graphQueries(ds: Dataset): Float32Array[] {
  return Array.from({ length: ds.nq }, (_, q) => {
    const v = row(ds.queries, ds.dim, q).slice()
    if (ds.metric === 'cosine') unit(v)
    return v
  })
}

const CHUNK = 50

/** Rounds per ef: DENSE_GROWN_ROUNDS, else 3 quick and 7 full. */
function roundCount(quick: boolean): number {
  const rounds = Number(process.env['DENSE_GROWN_ROUNDS'] ?? (quick ? 3 : 7))
  return Number.isInteger(rounds) && rounds >= 1 ? rounds : 1
}

/** `Graph` (a build of @quarry/hnsw) grown by the rows of `ds` as core grows its graph (from 1,024 elements, doubling), labels = rows. */
function growRows(Graph: typeof QuarryGraph, ds: Dataset): QuarryGraph {
  const g = new Graph(ds.metric === 'l2' ? 'l2' : 'ip', ds.dim)
  g.init(1024, GRAPH.m, GRAPH.efConstruction, GRAPH.seed)
  for (let i = 0; i < ds.n; i++) {
    if (g.size() >= g.maxElements()) g.resize(g.maxElements() * 2)
    const v = row(ds.base, ds.dim, i).slice()
    if (ds.metric === 'cosine') unit(v)
    g.add(v, i)
  }
  return g
}

/** The same graph read back from its saved bytes, by the same build. */
function reloaded(ds: Dataset, g: QuarryGraph, bytes = savedGraphBytes(g)): QuarryGraph {
  const copy = new (g.constructor as typeof QuarryGraph)(ds.metric === 'l2' ? 'l2' : 'ip', ds.dim)
  copy.load(bytes)
  return copy
}

/** Runs the comparison on `grown` (Quarry's graph of `ds` as built by inserts; labels are dataset rows). */
export function grownVsLoaded(ds: Dataset, grown: QuarryGraph, truth: readonly (readonly number[])[], efs: readonly number[], targets: readonly number[], quick: boolean, k: number): GrownVsLoaded {
  const bytes = savedGraphBytes(grown)
  const graphs: [string, QuarryGraph][] = [['grown', grown], ['loaded', reloaded(ds, grown, bytes)]]
  const baselineFile = process.env['DENSE_GROWN_BASELINE']
  if (baselineFile !== undefined) {
    const { Graph } = createRequire(import.meta.url)(baselineFile) as { Graph: typeof QuarryGraph }
    const t = performance.now()
    const g = growRows(Graph, ds)
    console.log(`baseline ${baselineFile} grew ${ds.name} in ${((performance.now() - t) / 1000).toFixed(0)} s`)
    graphs.push(['baseline grown', g], ['baseline loaded', reloaded(ds, g)])
  }
  const queries = graphQueries(ds)
  const labels = new Uint32Array(k)
  const distances = new Float32Array(k)
  /** Queries [start, end) on `g`: wall and CPU seconds; the answers too when asked for. */
  const run = (g: QuarryGraph, start: number, end: number, found?: number[][]): [number, number] => {
    const cpu0 = process.cpuUsage()
    const t = performance.now()
    for (let q = start; q < end; q++) {
      const n = g.search(queries[q] as Float32Array, k, labels, distances)
      found?.push(Array.from(labels.subarray(0, n)))
    }
    const wall = (performance.now() - t) / 1000
    const cpu = process.cpuUsage(cpu0)
    return [wall, (cpu.user + cpu.system) / 1e6]
  }
  // Untimed warm-up, so neither graph's first round pays for faulting its memory into the cache.
  for (const [, g] of graphs) {
    g.setEf(64)
    run(g, 0, ds.nq)
  }
  const rounds = roundCount(quick)
  const sweep: GrownPoint[] = []
  for (const ef of efs) {
    for (const [, g] of graphs) g.setEf(ef)
    collectGarbage()
    const wall = new Map<string, number[]>(graphs.map(([name]) => [name, []]))
    const cpu = new Map<string, number[]>(graphs.map(([name]) => [name, []]))
    const answers = new Map<string, number[][]>(graphs.map(([name]) => [name, []]))
    const shuffle = prng(ef ^ 0x51ed270b)
    for (let r = 0; r < rounds; r++) {
      const round = new Map<string, [number, number]>(graphs.map(([name]) => [name, [0, 0]]))
      // Chunk by chunk in a new seeded order, so that the machine's other load hits every graph alike.
      for (let start = 0; start < ds.nq; start += CHUNK) {
        for (const [name, g] of shuffled(graphs, shuffle)) {
          const [w, c] = run(g, start, Math.min(ds.nq, start + CHUNK), r === 0 ? answers.get(name) : undefined)
          const sum = round.get(name) as [number, number]
          round.set(name, [sum[0] + w, sum[1] + c])
        }
      }
      for (const [name, [w, c]] of round) {
        wall.get(name)?.push(w)
        cpu.get(name)?.push(c)
      }
    }
    const answered = (name: string): number[][] => answers.get(name) ?? []
    const ratios = (times: Map<string, number[]>, prefix: string): number[] => (times.get(`${prefix}loaded`) ?? []).map((l, r) => l / (times.get(`${prefix}grown`)?.[r] || 1))
    const differing = (a: number[][], b: number[][]): number => a.filter((ids, q) => ids.join() !== (b[q] ?? []).join()).length
    const qps = (name: string): number => median((wall.get(name) ?? []).map((s) => ds.nq / s))
    sweep.push({
      ef,
      recall: meanRecall(answered('grown'), truth),
      grownQps: qps('grown'),
      loadedQps: qps('loaded'),
      grownOverLoaded: median(ratios(wall, '')),
      grownOverLoadedCpu: median(ratios(cpu, '')),
      rounds: ratios(wall, ''),
      differing: differing(answered('grown'), answered('loaded')) + (baselineFile === undefined ? 0 : differing(answered('baseline grown'), answered('baseline loaded'))),
      ...(baselineFile === undefined
        ? {}
        : { baseline: { recall: meanRecall(answered('baseline grown'), truth), grownOverLoaded: median(ratios(wall, 'baseline ')), grownOverLoadedCpu: median(ratios(cpu, 'baseline ')), rounds: ratios(wall, 'baseline ') } }),
    })
  }
  const grownOverLoadedAtRecall = qpsRatioAtRecall(sweep, targets, (p) => p.grownQps, (p) => p.loadedQps)
  const pairedAtRecall = Object.fromEntries(
    targets.map((t) => {
      const p = sweep.find((point) => point.recall >= t)
      return [String(t), p ? { ef: p.ef, grownOverLoaded: p.grownOverLoaded, grownOverLoadedCpu: p.grownOverLoadedCpu } : undefined]
    }),
  )
  const rounded = (xs: number[]): string => xs.map((x) => x.toFixed(3)).join(' ')
  printTable(`${ds.name}: Quarry's graph grown by inserts vs the same graph saved and loaded (${(bytes.length / 1048576).toFixed(1)} MB, ${rounds} rounds)`, sweep.map((p) => ({
    ef: p.ef,
    recall: p.recall,
    'grown QPS': p.grownQps,
    'loaded QPS': p.loadedQps,
    'grown / loaded (median of rounds)': p.grownOverLoaded,
    'CPU-time ratio': p.grownOverLoadedCpu,
    'each round': rounded(p.rounds),
    'answers differing': p.differing,
    ...(p.baseline ? { 'baseline grown / loaded': p.baseline.grownOverLoaded, 'baseline CPU ratio': p.baseline.grownOverLoadedCpu, 'baseline rounds': rounded(p.baseline.rounds) } : {}),
  })))
  const span = (xs: number[]): string => `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}, median ${median(xs).toFixed(3)}`
  console.log(
    `Grown / loaded QPS, paired median of rounds at recall ${targets.join(' / ')}: ${Object.values(pairedAtRecall).map((r) => (r ? `${r.grownOverLoaded.toFixed(3)} (CPU ${r.grownOverLoadedCpu.toFixed(3)}, ef ${r.ef})` : '—')).join(' / ')}; ` +
      `over every ef: wall ${span(sweep.map((p) => p.grownOverLoaded))}; CPU ${span(sweep.map((p) => p.grownOverLoadedCpu))}` +
      (baselineFile === undefined ? '' : `; baseline over every ef: wall ${span(sweep.map((p) => p.baseline?.grownOverLoaded ?? Number.NaN))}; CPU ${span(sweep.map((p) => p.baseline?.grownOverLoadedCpu ?? Number.NaN))}`),
  )
  return { date: new Date().toISOString(), graphMB: bytes.length / 1048576, rounds, sweep, pairedAtRecall, grownOverLoadedAtRecall, ...(baselineFile === undefined ? {} : { baselineSha256: createHash('sha256').update(readFileSync(baselineFile)).digest('hex') }) }
}
