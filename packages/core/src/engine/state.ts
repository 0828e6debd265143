import { HnswGraph } from '../dense/hnsw.js'
import { VectorStore } from '../dense/vector-store.js'
import type { FilterSubject } from '../filter/predicate.js'
import { ValueIndex } from '../filter/value-index.js'
import { IdMap, type Label } from '../ids.js'
import { metricOps, type MetricOps } from '../metric/metric.js'
import type { TieBreak } from '../util/top-k.js'
import { SparseIndex } from '../sparse/sparse-index.js'
import { Analyzer } from '../text/analyzer.js'
import { TextColumn, type Metadata } from './record.js'
import type { ResolvedIndexOptions } from './options.js'

/** The data of one index, shared by the operations in `engine/` (they own no state themselves). */
export interface IndexState {
  readonly options: ResolvedIndexOptions
  readonly ops: MetricOps
  readonly ids: IdMap
  /** Present when the index has `dimensions`. */
  readonly store: VectorStore | undefined
  /** Metadata by label; undefined for free labels. */
  readonly metadata: (Readonly<Metadata> | undefined)[]
  /** Value indexes of the metadata, for declarative filters. */
  readonly values: ValueIndex
  /** Present when `dense` is 'hnsw'. */
  readonly graph: HnswGraph | undefined
  /** Text by label (undefined for free labels and records without text). */
  readonly texts: TextColumn
  readonly analyzer: Analyzer
  readonly sparse: SparseIndex
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

/** The state of an index with vectors (what dense search needs). */
export type DenseState = IndexState & { readonly store: VectorStore }

/** Builds the state of an empty index from resolved options (with a graph read from a snapshot, if given). */
export function emptyState(options: ResolvedIndexOptions, graph?: HnswGraph): IndexState {
  const ids = new IdMap()
  const ops = metricOps(options.metric)
  const dims = options.dimensions
  return {
    options,
    ops,
    ids,
    store: dims === undefined ? undefined : new VectorStore(dims),
    metadata: [],
    values: new ValueIndex(),
    texts: new TextColumn(),
    analyzer: new Analyzer(options.text.analyzer),
    sparse: new SparseIndex(options.text.bm25),
    graph: graph ?? (dims !== undefined && options.dense === 'hnsw' ? HnswGraph.create(ops.hnswSpace, dims, options.hnsw) : undefined),
    tie: idTieBreak(ids),
  }
}

/** What a filter function sees of the index: ids and metadata by label. */
export function filterSubject(state: IndexState): FilterSubject {
  return { ids: state.ids.byLabel, metadata: state.metadata }
}
