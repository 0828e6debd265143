import { measureOfKey, type Metric } from '@quarry/core'

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

/** A chunk's dense measure on the corpus metric's scale, from its core hit. */
export interface DenseMeasure {
  /** cosine: 1 − cos ∈ [0, 2]; dot: −q·v; euclidean: ‖q − v‖² — core's key for each metric. */
  readonly distance: number
  /** What a Context's `score` says for dense retrieval: the distance, or for DOT_PRODUCT the similarity q·v (core's score). */
  readonly score: number
}

/** A hit's dense measure from its core key: RAG's distance is the key itself, for all three metrics. */
export function denseMeasure(metric: DistanceMetric, key: number): DenseMeasure {
  return { distance: key, score: betterScore(metric) === 'higher' ? measureOfKey(coreMetric(metric), key).score : key }
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

/**
 * A Vertex threshold as core's `maxDistance` (core units: 1 − cos, −q·v, euclidean) or
 * `minSimilarity`. Vertex's thresholds are strict ("smaller than", "larger than") and core's
 * inclusive, so each bound moves to the next double inward; a squared-euclidean bound becomes the
 * euclidean distance of that key.
 */
export function coreThreshold(
  metric: DistanceMetric,
  threshold: { readonly distance?: number; readonly similarity?: number },
): { maxDistance?: number; minSimilarity?: number; none?: true } {
  const { distance, similarity } = threshold
  if (metric === 'EUCLIDEAN_SQUARED_DISTANCE') {
    const bound = distance ?? (similarity === undefined ? undefined : -similarity)
    if (bound === undefined) return {}
    return bound <= 0 ? { none: true } : { maxDistance: nextDown(measureOfKey('l2', bound).distance) }
  }
  // Below the lowest double nothing is "smaller than" the bound (and above the highest, nothing larger).
  if (distance !== undefined) return distance === -Number.MAX_VALUE ? { none: true } : { maxDistance: nextDown(distance) }
  if (similarity !== undefined) return similarity === Number.MAX_VALUE ? { none: true } : { minSimilarity: -nextDown(-similarity) }
  return {}
}

/** The largest double below `x`; a value that is not finite stays as it is (core refuses it, naming the field). */
function nextDown(x: number): number {
  if (!Number.isFinite(x)) return x
  if (x === 0) return -Number.MIN_VALUE
  const bits = new Float64Array([x])
  const int = new BigInt64Array(bits.buffer)
  int[0] = (int[0] as bigint) + (x > 0 ? -1n : 1n)
  return bits[0] as number
}
