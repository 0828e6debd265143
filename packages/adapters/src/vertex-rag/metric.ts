import type { Metric } from '@quarry/core'

/**
 * RAG Engine's distance metrics and how each reads: `distance` (smaller is closer), `similarity`
 * (larger is closer) and `score` — what a Context reports, on the metric's own scale (a distance
 * for COSINE_DISTANCE and EUCLIDEAN_SQUARED_DISTANCE, a similarity for DOT_PRODUCT).
 */
export type DistanceMetric = 'COSINE_DISTANCE' | 'DOT_PRODUCT' | 'EUCLIDEAN_SQUARED_DISTANCE'

export const DISTANCE_METRICS: readonly DistanceMetric[] = ['COSINE_DISTANCE', 'DOT_PRODUCT', 'EUCLIDEAN_SQUARED_DISTANCE']

/** The core index metric serving a RAG metric. */
export function coreMetric(metric: DistanceMetric): Metric {
  return metric === 'COSINE_DISTANCE' ? 'cosine' : metric === 'DOT_PRODUCT' ? 'dot' : 'l2'
}

export interface DenseMeasure {
  /** cosine: 1 − cos ∈ [0, 2]; dot: −q·v; euclidean: ‖q − v‖². */
  readonly distance: number
  /** cosine: cos; dot: q·v; euclidean: −‖q − v‖². */
  readonly similarity: number
  /** What a Context's `score` says for dense retrieval: the distance, or for DOT_PRODUCT the similarity. */
  readonly score: number
}

/** Measures a stored vector against the query in float64, as the oracle would. */
export function measure(metric: DistanceMetric, q: Float32Array, v: Float32Array): DenseMeasure {
  let dot = 0
  let qq = 0
  let vv = 0
  let l2 = 0
  for (let i = 0; i < q.length; i++) {
    const a = q[i] as number
    const b = v[i] as number
    dot += a * b
    qq += a * a
    vv += b * b
    l2 += (a - b) * (a - b)
  }
  if (metric === 'COSINE_DISTANCE') {
    const cos = dot / Math.sqrt(qq * vv)
    return { distance: 1 - cos, similarity: cos, score: 1 - cos }
  }
  if (metric === 'DOT_PRODUCT') return { distance: -dot, similarity: dot, score: dot }
  return { distance: l2, similarity: -l2, score: l2 }
}

/**
 * Which way a Context's `score` goes on a metric's scale: lower is better for the distances
 * (COSINE_DISTANCE, EUCLIDEAN_SQUARED_DISTANCE), higher for DOT_PRODUCT; hybrid and BM25-only
 * scores follow the same direction ({@link scoreOfRelevance}). Shown next to every RAG score.
 */
export function betterScore(metric: DistanceMetric): 'lower' | 'higher' {
  return metric === 'DOT_PRODUCT' ? 'higher' : 'lower'
}

/**
 * The score of a hybrid or sparse-only hit, from its relevance r ∈ [0, 1] (the fused score, or
 * BM25 over the best BM25 score): on the metric's direction, 1 − r for the distances (0 best) and
 * r for DOT_PRODUCT (higher best).
 */
export function scoreOfRelevance(metric: DistanceMetric, r: number): number {
  return betterScore(metric) === 'higher' ? r : 1 - r
}

/**
 * A Context's `sparseDistance` from the chunk's BM25 score s ≥ 0: d = 1 / (1 + s). Google
 * documents it as "the distance between the query sparse embedding vector and the context text
 * vector", and a distance is smaller for closer texts, while BM25 is larger; 1 / (1 + s) turns
 * one into the other: d ∈ (0, 1], 1 when no query term is in the chunk (s = 0), falling toward
 * 0 as s grows, strictly decreasing, so ascending sparseDistance is descending BM25. It depends
 * on the chunk and query alone (not on the other results), and s = 1/d − 1 recovers the score.
 */
export function sparseDistanceOf(bm25: number): number {
  return 1 / (1 + Math.max(0, bm25))
}

/** A Vertex threshold as core's `maxDistance` (core units: 1 − cos, −q·v, euclidean) or `minSimilarity`. */
export function coreThreshold(
  metric: DistanceMetric,
  threshold: { readonly distance?: number; readonly similarity?: number },
): { maxDistance?: number; minSimilarity?: number; none?: true } {
  const { distance, similarity } = threshold
  if (metric === 'EUCLIDEAN_SQUARED_DISTANCE') {
    const bound = distance ?? (similarity === undefined ? undefined : -similarity)
    if (bound === undefined) return {}
    return bound <= 0 ? { none: true } : { maxDistance: Math.sqrt(bound) }
  }
  if (distance !== undefined) return { maxDistance: distance }
  if (similarity !== undefined) return { minSimilarity: similarity }
  return {}
}
