import type { Graph as QuarryGraph } from '@quarry/hnsw'
import type { Dataset } from '../lib/datasets.js'
import { shuffled } from '../lib/order.js'
import { collectGarbage, meanRecall, median, qpsRatioAtRecall } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import { NativeGraph, WasmGraph, type GraphBuild } from '../../test/support/graph-builds.js'
import { prng } from '../../test/support/random.js'
import { graphQueries, savedGraphBytes } from './dense-grown.js'

// The dense suite's WebAssembly section: @quarry/hnsw's two builds of the Graph class on the same
// saved graph (Quarry's, from the main sweep), loaded from the same bytes, searched with the same
// Float32Array queries across the ef sweep, interleaved chunk by chunk in a seeded random order.
// Both answer the same labels (the tests check it bit for bit; here every answer is compared too).

const CHUNK = 50

interface BuildPoint {
  ef: number
  recall: number
  nativeQps: number
  wasmQps: number
  /** Median over chunks of native time / WebAssembly time: WebAssembly's QPS over native's. */
  wasmOverNative: number
  /** Queries whose labels differed between the builds (expected 0). */
  differing: number
}

export interface WasmVsNative {
  /** Seconds to load the saved graph from bytes in memory, median of `loads` loads each. */
  loadSeconds: { native: number; wasm: number }
  loads: number
  graphMB: number
  sweep: BuildPoint[]
  /** WebAssembly QPS / native QPS at each target recall (each interpolated on its own sweep). */
  wasmOverNativeAtRecall: Record<string, number | undefined>
  /** The paired median-of-chunks ratio at the first ef whose recall reaches each target. */
  pairedAtRecall: Record<string, { ef: number; wasmOverNative: number } | undefined>
  reps: number
}

/**
 * Runs the comparison on `graph` (Quarry's graph of `ds`; labels are dataset rows). Undefined where
 * no native build loads (only linux-x64 has the one whose distances the WebAssembly kernels copy).
 */
export function wasmVsNative(ds: Dataset, graph: QuarryGraph, truth: readonly (readonly number[])[], efs: readonly number[], targets: readonly number[], suiteReps: number, k: number): WasmVsNative | undefined {
  if (NativeGraph === undefined) return undefined
  // Two engines only: at least 3 repetitions, so a quick run's few chunks are not one noisy sample.
  const reps = Math.max(3, suiteReps)
  const space = ds.metric === 'l2' ? 'l2' : 'ip'
  const bytes = savedGraphBytes(graph)
  // Loads alternate between the builds; the graph of the last load of each is the one searched.
  const builds: [string, GraphBuild][] = [['native', NativeGraph], ['wasm', WasmGraph]]
  const loaded = new Map<string, QuarryGraph>()
  const loadTimes = new Map<string, number[]>(builds.map(([name]) => [name, []]))
  const loads = 5
  for (let i = 0; i < loads; i++) {
    for (const [name, Build] of i % 2 === 0 ? builds : [...builds].reverse()) {
      loaded.delete(name)
      collectGarbage()
      const g = new Build(space, ds.dim)
      const t = performance.now()
      g.load(bytes)
      loadTimes.get(name)?.push((performance.now() - t) / 1000)
      loaded.set(name, g)
    }
  }
  const native = loaded.get('native') as QuarryGraph
  const wasm = loaded.get('wasm') as QuarryGraph

  const queries = graphQueries(ds)
  const engines: [string, QuarryGraph][] = [['native', native], ['wasm', wasm]]
  const labels = new Map(engines.map(([name]) => [name, new Uint32Array(k)]))
  const distances = new Map(engines.map(([name]) => [name, new Float32Array(k)]))
  // Untimed warm-up: V8 first runs WebAssembly from its baseline compiler and moves hot functions
  // to its optimizing one as they run; the sweep measures both builds in their steady state.
  for (const [name, g] of engines) {
    g.setEf(64)
    for (let i = 0; i < Math.max(2000, ds.nq); i++) g.search(queries[i % ds.nq] as Float32Array, k, labels.get(name) as Uint32Array, distances.get(name) as Float32Array)
  }
  const sweep: BuildPoint[] = []
  for (const ef of efs) {
    native.setEf(ef)
    wasm.setEf(ef)
    collectGarbage()
    const seconds = new Map<string, number>(engines.map(([name]) => [name, 0]))
    const answers = new Map<string, number[][]>(engines.map(([name]) => [name, []]))
    const ratios: number[] = []
    const shuffle = prng(ef ^ 0x9e3779b9)
    for (let rep = 0; rep < reps; rep++) {
      for (let start = 0; start < ds.nq; start += CHUNK) {
        const end = Math.min(ds.nq, start + CHUNK)
        const chunk = new Map<string, number>()
        for (const [name, g] of shuffled(engines, shuffle)) {
          const out = labels.get(name) as Uint32Array
          const dist = distances.get(name) as Float32Array
          const found: number[][] = []
          const t = performance.now()
          for (let q = start; q < end; q++) {
            const n = g.search(queries[q] as Float32Array, k, out, dist)
            if (rep === 0) found.push(Array.from(out.subarray(0, n)))
          }
          const s = (performance.now() - t) / 1000
          chunk.set(name, s)
          seconds.set(name, (seconds.get(name) ?? 0) + s)
          if (rep === 0) answers.get(name)?.push(...found)
        }
        ratios.push((chunk.get('native') ?? 0) / (chunk.get('wasm') || 1))
      }
    }
    const a = answers.get('native') ?? []
    const b = answers.get('wasm') ?? []
    sweep.push({
      ef,
      recall: meanRecall(a, truth),
      nativeQps: (ds.nq * reps) / (seconds.get('native') ?? 1),
      wasmQps: (ds.nq * reps) / (seconds.get('wasm') ?? 1),
      wasmOverNative: median(ratios),
      differing: a.filter((ids, q) => ids.join() !== (b[q] ?? []).join()).length,
    })
  }
  const wasmOverNativeAtRecall = qpsRatioAtRecall(sweep, targets, (p) => p.wasmQps, (p) => p.nativeQps)
  const pairedAtRecall = Object.fromEntries(
    targets.map((t) => {
      const p = sweep.find((point) => point.recall >= t)
      return [String(t), p ? { ef: p.ef, wasmOverNative: p.wasmOverNative } : undefined]
    }),
  )
  const loadSeconds = { native: median(loadTimes.get('native') ?? []), wasm: median(loadTimes.get('wasm') ?? []) }
  printTable(`${ds.name}: @quarry/hnsw WebAssembly vs native on the same saved graph (${(bytes.length / 1048576).toFixed(1)} MB)`, sweep.map((p) => ({
    ef: p.ef,
    recall: p.recall,
    'native QPS': p.nativeQps,
    'wasm QPS': p.wasmQps,
    'wasm / native (median of chunks)': p.wasmOverNative,
    'answers differing': p.differing,
  })))
  console.log(
    `WebAssembly / native QPS at recall ${targets.join(' / ')}: ${Object.values(wasmOverNativeAtRecall).map((r) => r?.toFixed(3) ?? '—').join(' / ')}; ` +
      `paired median of chunks there: ${Object.values(pairedAtRecall).map((r) => (r ? `${r.wasmOverNative.toFixed(3)} (ef ${r.ef})` : '—')).join(' / ')}; ` +
      `load from bytes (median of ${loads}): native ${loadSeconds.native.toFixed(3)} s, WebAssembly ${loadSeconds.wasm.toFixed(3)} s`,
  )
  return { loadSeconds, loads, graphMB: bytes.length / 1048576, reps, sweep, wasmOverNativeAtRecall, pairedAtRecall }
}
