import { cosineKeyAt, dotKeyAt, l2KeyAt } from './kernels.js'

/**
 * The distance metrics of an index.
 * - `cosine`: distance = 1 - cos(q, v), in [0, 2]; score = cos(q, v), in [-1, 1].
 * - `dot`: distance = -(q · v) (smaller is closer, like every distance here); score = q · v.
 * - `l2`: distance = euclidean ‖q - v‖; score = 1 / (1 + distance), in (0, 1].
 *
 * Each is a function of the metric's *key* (smaller is closer): 1 - cos, -(q · v), ‖q - v‖².
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
  /**
   * The key of the query as given (not normalized) against the stored vector at `offset`, summed
   * in order in float64 as a brute-force oracle writes it: 1 - q·v / √(‖q‖²‖v‖²), -(q·v),
   * Σ(qᵢ - vᵢ)². It differs from `key` by float rounding only (`key` uses a unit-length float32
   * query and the stored float32 1/‖v‖, or the graph's float32 distances).
   */
  preciseKey(q: Float32Array, data: Float32Array, offset: number, dim: number): number
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

/**
 * The three metrics' ops are instances of one class, with the metric-specific arithmetic behind a
 * test of `metric` rather than in a function per metric: a search calls these for every hit, and a
 * call site that has seen one function per metric (a process with indexes of two metrics) is one
 * V8 no longer inlines. With one method per operation every call site sees one function, whatever
 * metrics the process uses (`pnpm bench dense` measures the per-query cost).
 */
class Ops implements MetricOps {
  constructor(
    readonly metric: Metric,
    readonly key: MetricOps['key'],
    readonly hnswSpace: 'ip' | 'l2',
    readonly minScore: number | undefined,
  ) {}

  distance(key: number): number {
    return this.metric === 'l2' ? Math.sqrt(key) : key
  }

  score(key: number): number {
    if (this.metric === 'l2') return 1 / (1 + Math.sqrt(key))
    // 0 − key, not −key: a dot product of 0 scores +0 (−0 would differ from the product under Object.is).
    return this.metric === 'dot' ? 0 - key : 1 - key
  }

  preciseKey(q: Float32Array, data: Float32Array, offset: number, dim: number): number {
    let dot = 0
    let qq = 0
    let vv = 0
    let l2 = 0
    for (let i = 0; i < dim; i++) {
      const a = q[i] as number
      const b = data[offset + i] as number
      dot += a * b
      qq += a * a
      vv += b * b
      l2 += (a - b) * (a - b)
    }
    if (this.metric === 'cosine') return 1 - dot / Math.sqrt(qq * vv)
    return this.metric === 'dot' ? -dot : l2
  }

  keyOfDistance(distance: number): number {
    return this.metric === 'l2' ? distance * distance : distance
  }

  keyOfHnsw(hnswDistance: number): number {
    // hnswlib's inner-product distance is 1 − q·v; the key of dot is −q·v.
    return this.metric === 'dot' ? hnswDistance - 1 : hnswDistance
  }
}

const cosine = new Ops('cosine', cosineKeyAt, 'ip', -1)
const dot = new Ops('dot', dotKeyAt, 'ip', undefined)
const l2 = new Ops('l2', l2KeyAt, 'l2', 0)

const OPS: Readonly<Record<Metric, MetricOps>> = { cosine, dot, l2 }

export function metricOps(metric: Metric): MetricOps {
  return OPS[metric]
}

/**
 * The distance and score a hit of `key` reports (see {@link Metric}): for callers that hold a
 * hit's key, such as an API whose distance is the key itself (squared euclidean).
 */
export function measureOfKey(metric: Metric, key: number): { readonly distance: number; readonly score: number } {
  const ops = OPS[metric]
  return { distance: ops.distance(key), score: ops.score(key) }
}
