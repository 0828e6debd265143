import type { Label } from '../ids.js'
import { keyAt, metricKind, scanKeys } from '../metric/kernels.js'
import type { Metric, MetricOps } from '../metric/metric.js'
import { simdScanKeys } from '../metric/simd.js'
import { TopK, type TieBreak } from '../util/top-k.js'
import { scanPool, scanWorkers, type ResolvedScanOptions } from './scan-pool.js'
import type { VectorStore } from './vector-store.js'

/** Which labels are live: those with an id (the index's IdMap). */
export interface LiveLabels {
  idOf(label: Label): string | undefined
}

/**
 * What an exact scan visits: every live label below `extent`, or an explicit list of labels.
 * Liveness is the index's own object, not a function made per search: the scan's loop then calls
 * the same method every time, which optimized code keeps (a new closure per search threw it away).
 */
export type ScanDomain =
  | { readonly kind: 'all'; readonly extent: number; readonly live: LiveLabels }
  | { readonly kind: 'labels'; readonly labels: ArrayLike<number> }

/**
 * Brute-force top-k: computes the key of every label in the domain and keeps the k best in a
 * bounded heap. This is the oracle the HNSW path is tested against and the fast path for small
 * collections and narrow filters. Scans bigger than `threads.parallelAbove` (the index's `scan`
 * options; without them, one thread) compute their keys
 * with the scan pool (dense/scan-pool.ts) and select from them here: the same keys offered to the
 * same heap in the same order, so the answer is the single-thread one.
 */
export function exactTopK(
  store: VectorStore,
  ops: MetricOps,
  query: Float32Array,
  k: number,
  domain: ScanDomain,
  tie: TieBreak,
  threads?: ResolvedScanOptions,
): TopK {
  const count = domain.kind === 'all' ? domain.extent : domain.labels.length
  const workers = threads === undefined ? 0 : scanWorkers(threads, count * store.dim)
  const keys = workers > 0 ? pooledKeys(store, ops, query, domain, count, workers) : undefined
  return keys ? selectTop(keys, k, domain, tie) : scanTop(store, ops, query, k, domain, tie)
}

/**
 * Keys of a whole-index scan on the calling thread, reused scan after scan (grown as needed; like
 * the scan pool's own keys, 8 bytes per row of the largest index scanned, kept for the process).
 */
let ownKeys = new Float64Array(0)

/**
 * The scan on the calling thread: the keys first (`keysHere`), then the heap pass of `selectTop` —
 * the same keys pushed in the same order as key and heap in one pass would. A short list of labels
 * (below `SIMD_MIN_COMPONENTS`) takes key and heap in one pass.
 */
function scanTop(store: VectorStore, ops: MetricOps, query: Float32Array, k: number, domain: ScanDomain, tie: TieBreak): TopK {
  const dim = store.dim
  const count = domain.kind === 'all' ? domain.extent : domain.labels.length
  if (domain.kind === 'all' || count * dim >= SIMD_MIN_COMPONENTS) {
    if (ownKeys.length < count) ownKeys = new Float64Array(Math.max(count, 2 * ownKeys.length))
    keysHere(store, ops.metric, query, domain.kind === 'all' ? null : domain.labels, count, ownKeys)
    return selectTop(ownKeys, k, domain, tie)
  }
  const data = store.data
  const invNorms = store.invNorms
  const top = new TopK(k, tie)
  // keyAt over the metric's number, not ops.key: direct calls stay inlined in a process using several metrics.
  const kind = metricKind(ops.metric)
  const labels = domain.labels
  let bound = top.bound
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i] as number
    const d = keyAt(kind, query, data, label * dim, dim, invNorms[label] as number)
    if (d <= bound) {
      top.push(d, label as Label)
      bound = top.bound
    }
  }
  return top
}

/**
 * Scans at least this many components (rows × dimensions) with the SIMD kernels when the store's
 * rows are in their memory: below it, setting up the call costs more than it saves.
 */
const SIMD_MIN_COMPONENTS = 2048

/**
 * The keys of rows `0..count-1` (or of `labels`) into `out`, on the calling thread: with the SIMD
 * kernels (scratch slot 0, the calling thread's) when the store has them, else with `scanKeys`.
 * The same keys either way (metric/simd.ts).
 */
function keysHere(store: VectorStore, metric: Metric, query: Float32Array, labels: ArrayLike<number> | null, count: number, out: Float64Array): void {
  const simd = count * store.dim >= SIMD_MIN_COMPONENTS ? store.simd() : undefined
  if (simd) {
    const { kernels, memory, layout } = simd
    simdScanKeys(kernels, memory, layout.slotBytes, layout.dataOffset, 0, metricKind(metric), query, store.invNorms, store.dim, labels, 0, count, out)
  } else {
    scanKeys(metric, query, store.data, store.invNorms, store.dim, labels, 0, count, out)
  }
}

/** Keys of the whole domain from the scan pool; undefined when the pool cannot help. */
function pooledKeys(store: VectorStore, ops: MetricOps, query: Float32Array, domain: ScanDomain, count: number, workers: number): Float64Array | undefined {
  const { data, invNorms } = store.shared()
  const labels = domain.kind === 'labels' ? domain.labels : undefined
  return scanPool().keys({ metric: ops.metric, query, data, invNorms, dim: store.dim, labels, count, simd: store.simd() }, workers)
}

/** The heap pass of `scanTop` over keys computed beforehand (`keys[i]` for row i or `labels[i]`). */
function selectTop(keys: Float64Array, k: number, domain: ScanDomain, tie: TieBreak): TopK {
  const top = new TopK(k, tie)
  if (domain.kind === 'all') pushLive(keys, domain.extent, domain.live, top)
  else pushLabelled(keys, domain.labels, top)
  return top
}

/*
 * The two loops are functions of their own, apart from the heap's `new`: a process's first scan
 * runs its loop long enough to be optimized in the middle (on-stack replacement), and code so made
 * with the `new` inside was, in some runs, thrown away at the next scan's start, which then ran
 * unoptimized too (V8's --trace-deopt: "Insufficient type feedback for construct"). Each keeps the
 * heap's bound in a local, read again only after a push: a process's first scan runs much of its
 * loop before it is optimized, where a getter call per row was most of the loop's cost.
 */
function pushLive(keys: Float64Array, extent: number, live: LiveLabels, top: TopK): void {
  let bound = top.bound
  for (let label = 0; label < extent; label++) {
    const d = keys[label] as number
    if (d <= bound && live.idOf(label as Label) !== undefined) {
      top.push(d, label as Label)
      bound = top.bound
    }
  }
}

function pushLabelled(keys: Float64Array, labels: ArrayLike<number>, top: TopK): void {
  let bound = top.bound
  for (let i = 0; i < labels.length; i++) {
    const d = keys[i] as number
    if (d <= bound) {
      top.push(d, labels[i] as Label)
      bound = top.bound
    }
  }
}
