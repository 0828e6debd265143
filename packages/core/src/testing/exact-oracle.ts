import type { Hit } from '../engine/results.js'
import { createIndex, type QuarryIndex } from '../engine/quarry-index.js'
import type { Metadata } from '../engine/record.js'
import type { Filter } from '../filter/ast.js'
import type { FilterFn } from '../filter/predicate.js'
import type { Metric } from '../metric/metric.js'

/** Options of {@link exactOracle}. */
export interface ExactOracleOptions {
  /** Length of every vector, 1 to 65,536. */
  readonly dimensions: number
  /** Distance metric. @defaultValue 'cosine' */
  readonly metric?: Metric
}

/** A record of the oracle: an id, its vector and optional metadata for filters. */
export interface OracleRecord {
  readonly id: string
  readonly vector: readonly number[] | Float32Array
  readonly metadata?: Readonly<Metadata>
}

/** A search of the oracle. */
export interface ExactOracleSearch {
  /** The query vector (finite; non-zero for cosine). */
  readonly vector: readonly number[] | Float32Array
  /** Hits wanted, 1 to 10,000. @defaultValue 10 */
  readonly topK?: number
  /** Only records passing this: a declarative filter or a function of (metadata, id). */
  readonly filter?: Filter | FilterFn
}

/**
 * Exact nearest neighbours, to check another vector store or ANN index against. Every search
 * scans every record (no graph, no native module): the true top k by the metric's distance,
 * ties by id ascending (UTF-16 code units). Vectors are stored as float32 and compared in
 * float64, so scores agree with a float64 brute force over the same float32 values to ~1e-7.
 */
export interface ExactOracle {
  readonly dimensions: number
  readonly metric: Metric
  /** Live records. */
  readonly size: number
  /** Adds a record; its id must be new (see `upsert`). */
  add(record: OracleRecord): void
  /** Adds or replaces a record. */
  upsert(record: OracleRecord): void
  /** Removes a record; false when the id is unknown. */
  remove(id: string): boolean
  /**
   * The exact top k, best first: `score` (higher is better: cos, q·v or 1 / (1 + euclidean)),
   * `distance` (1 − cos, −q·v or euclidean), `metadata`.
   */
  search(request: ExactOracleSearch): readonly Hit[]
}

/**
 * An exact oracle: Quarry's brute-force index (`createIndex({ dense: 'exact' })`), searched
 * exactly every time, behind a small add / remove / search surface.
 */
export function exactOracle(options: ExactOracleOptions): ExactOracle {
  const metric = options.metric ?? 'cosine'
  // createIndex validates the options (INVALID_OPTION with the path of the problem).
  const index: QuarryIndex = createIndex({ dimensions: options.dimensions, metric, dense: 'exact' })
  // Only id, vector and metadata reach the index, whatever else the caller's record carries.
  const input = (r: OracleRecord) => ({ id: r.id, vector: r.vector, ...(r.metadata ? { metadata: r.metadata } : {}) })
  return {
    dimensions: options.dimensions,
    metric,
    get size() {
      return index.size
    },
    add: (record) => index.add(input(record)),
    upsert: (record) => index.upsert(input(record)),
    remove: (id) => index.remove(id),
    search: (request) => index.search({ vector: request.vector, topK: request.topK ?? 10, exact: true, ...(request.filter ? { filter: request.filter } : {}) }).hits,
  }
}
