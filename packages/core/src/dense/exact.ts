import type { Label } from '../ids.js'
import type { MetricOps } from '../metric/metric.js'
import { TopK, type TieBreak } from '../util/top-k.js'
import type { VectorStore } from './vector-store.js'

/** What an exact scan visits: every live label below `extent`, or an explicit list of labels. */
export type ScanDomain =
  | { readonly kind: 'all'; readonly extent: number; readonly isLive: (label: Label) => boolean }
  | { readonly kind: 'labels'; readonly labels: ArrayLike<number> }

/**
 * Brute-force top-k: computes the key of every label in the domain and keeps the k best in a
 * bounded heap. This is the oracle the HNSW path is tested against and the fast path for small
 * collections and narrow filters. `maxKey` drops candidates beyond a distance threshold.
 */
export function exactTopK(
  store: VectorStore,
  ops: MetricOps,
  query: Float32Array,
  k: number,
  domain: ScanDomain,
  tie: TieBreak,
  maxKey = Infinity,
): TopK {
  const top = new TopK(k, tie)
  const data = store.data
  const invNorms = store.invNorms
  const dim = store.dim
  const key = ops.key
  if (domain.kind === 'all') {
    for (let label = 0; label < domain.extent; label++) {
      if (!domain.isLive(label as Label)) continue
      const d = key(query, data, label * dim, dim, invNorms[label] as number)
      if (d <= top.bound && d <= maxKey) top.push(d, label as Label)
    }
  } else {
    const labels = domain.labels
    for (let i = 0; i < labels.length; i++) {
      const label = labels[i] as number
      const d = key(query, data, label * dim, dim, invNorms[label] as number)
      if (d <= top.bound && d <= maxKey) top.push(d, label as Label)
    }
  }
  return top
}
