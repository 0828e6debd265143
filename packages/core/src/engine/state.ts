import type { HnswGraph } from '../dense/hnsw.js'
import type { VectorStore } from '../dense/vector-store.js'
import type { IdMap, Label } from '../ids.js'
import type { MetricOps } from '../metric/metric.js'
import type { TieBreak } from '../util/top-k.js'
import type { Metadata } from './record.js'
import type { ResolvedIndexOptions } from './options.js'

/** The data of one index, shared by the operations in `engine/` (they own no state themselves). */
export interface IndexState {
  readonly options: ResolvedIndexOptions
  readonly ops: MetricOps
  readonly ids: IdMap
  readonly store: VectorStore
  /** Metadata by label; undefined for free labels. */
  readonly metadata: (Readonly<Metadata> | undefined)[]
  /** Present when `dense` is 'hnsw'. */
  readonly graph: HnswGraph | undefined
  /** Orders equal distances by id ascending (UTF-16 code unit order, as `Array.prototype.sort`). */
  readonly tie: TieBreak
}

/** Builds the id tie-breaker for an id map. */
export function idTieBreak(ids: IdMap): TieBreak {
  return (a: Label, b: Label) => {
    const x = ids.idOf(a) ?? ''
    const y = ids.idOf(b) ?? ''
    return x < y ? -1 : x > y ? 1 : 0
  }
}
