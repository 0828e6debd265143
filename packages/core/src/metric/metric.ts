import { cosineKeyAt, dotKeyAt, l2KeyAt } from './kernels.js'

/**
 * The distance metrics of an index.
 * - `cosine`: distance = 1 - cos(q, v), in [0, 2]; score = cos(q, v), in [-1, 1].
 * - `dot`: distance = -(q · v) (smaller is closer, like every distance here); score = q · v.
 * - `l2`: distance = euclidean ‖q - v‖; score = 1 / (1 + distance), in (0, 1].
 */
export type Metric = 'cosine' | 'dot' | 'l2'

export const METRICS: readonly Metric[] = ['cosine', 'dot', 'l2']

/**
 * Everything metric-specific in one place. Search works on a *key*: a number where smaller is
 * closer and that is cheap to compute (1 - dot for cosine on unit vectors, -dot, squared L2).
 * `distance` and `score` are derived from the key only when a hit is reported.
 */
export interface MetricOps {
  readonly metric: Metric
  /** Key of query `q` (already prepared) against stored vector at `offset`; `invNorm` is the stored vector's 1/‖v‖. */
  key(q: Float32Array, data: Float32Array, offset: number, dim: number, invNorm: number): number
  /** The public distance of a key. */
  distance(key: number): number
  /** The public, higher-is-better score of a key. */
  score(key: number): number
  /** The key for a public distance (thresholds are given as distances). */
  keyOfDistance(distance: number): number
  /** hnswlib space whose native distance orders like the key. */
  readonly hnswSpace: 'ip' | 'l2'
  /** Converts an hnswlib distance into a key (for reporting before exact re-scoring). */
  keyOfHnsw(hnswDistance: number): number
  /**
   * The smallest score any vector can get (cosine −1, l2 0), the floor of hybrid normalization;
   * undefined when unbounded (dot), where hybrid search uses the candidates' own minimum.
   */
  readonly minScore: number | undefined
}

const cosine: MetricOps = {
  metric: 'cosine',
  minScore: -1,
  key: cosineKeyAt,
  distance: (key) => key,
  score: (key) => 1 - key,
  keyOfDistance: (distance) => distance,
  hnswSpace: 'ip',
  keyOfHnsw: (d) => d,
}

const dot: MetricOps = {
  metric: 'dot',
  minScore: undefined,
  key: dotKeyAt,
  distance: (key) => key,
  // 0 − key, not −key: a dot product of 0 scores +0 (−0 would differ from the product under Object.is).
  score: (key) => 0 - key,
  keyOfDistance: (distance) => distance,
  hnswSpace: 'ip',
  keyOfHnsw: (d) => d - 1,
}

const l2: MetricOps = {
  metric: 'l2',
  minScore: 0,
  key: l2KeyAt,
  distance: (key) => Math.sqrt(key),
  score: (key) => 1 / (1 + Math.sqrt(key)),
  keyOfDistance: (distance) => distance * distance,
  hnswSpace: 'l2',
  keyOfHnsw: (d) => d,
}

const OPS: Readonly<Record<Metric, MetricOps>> = { cosine, dot, l2 }

export function metricOps(metric: Metric): MetricOps {
  return OPS[metric]
}
