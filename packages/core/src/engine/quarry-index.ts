import { HnswGraph } from '../dense/hnsw.js'
import { VectorStore } from '../dense/vector-store.js'
import { QuarryError } from '../errors.js'
import { IdMap, validateId, type Label } from '../ids.js'
import { metricOps } from '../metric/metric.js'
import { denseSearch, type SearchResult } from './dense-search.js'
import { resolveIndexOptions, type IndexOptions, type ResolvedIndexOptions } from './options.js'
import { validateRecord, type Metadata, type RecordInput, type StoredRecord } from './record.js'
import { validateSearch, type SearchRequest } from './search-request.js'
import { idTieBreak, type IndexState } from './state.js'
import { normalized, toVector } from './vector-input.js'
import { saveIndex } from '../persist/snapshot.js'

/**
 * A collection of records searchable by vector. Create one with {@link createIndex}, or read a
 * saved one with `loadIndex`. All methods are synchronous: the work is CPU-bound and in-process.
 */
export class QuarryIndex {
  readonly #state: IndexState
  /** Reused buffers for the vector being added or searched (all work is synchronous). */
  readonly #input: Float32Array
  readonly #unit: Float32Array

  /** @internal Use {@link createIndex} or `loadIndex`. */
  constructor(state: IndexState) {
    this.#state = state
    this.#input = new Float32Array(state.options.dimensions)
    this.#unit = new Float32Array(state.options.dimensions)
  }

  /** The validated options, defaults filled in. */
  get options(): ResolvedIndexOptions {
    return this.#state.options
  }

  /** Number of records. */
  get size(): number {
    return this.#state.ids.size
  }

  /** Adds a new record; throws DUPLICATE_ID if the id exists (use {@link upsert} to replace). */
  add(record: RecordInput): void {
    const { id, vector, metadata } = this.#validate(record, this.#input)
    if (this.#state.ids.has(id)) {
      throw new QuarryError('DUPLICATE_ID', `a record with id "${id}" already exists; use upsert() to replace it or remove() it first.`, { path: 'id' })
    }
    this.#write(this.#state.ids.assign(id), vector, metadata)
  }

  /**
   * Adds many records, all or none: every record is validated (including duplicate ids within
   * the batch) before the first one is written.
   */
  addMany(records: readonly RecordInput[]): void {
    const checked = records.map((record, i) => {
      try {
        return this.#validate(record)
      } catch (error) {
        throw prefixPath(error, `records[${i}]`)
      }
    })
    const seen = new Set<string>()
    checked.forEach(({ id }, i) => {
      if (this.#state.ids.has(id) || seen.has(id)) {
        throw new QuarryError('DUPLICATE_ID', `records[${i}] has id "${id}", which ${seen.has(id) ? 'appears earlier in the batch' : 'already exists'}; ids must be unique (use upsert() to replace).`, {
          path: `records[${i}].id`,
        })
      }
      seen.add(id)
    })
    for (const { id, vector, metadata } of checked) this.#write(this.#state.ids.assign(id), vector, metadata)
  }

  /** Adds the record, or replaces the vector and metadata of an existing one with this id. */
  upsert(record: RecordInput): void {
    const { id, vector, metadata } = this.#validate(record, this.#input)
    this.#write(this.#state.ids.labelOf(id) ?? this.#state.ids.assign(id), vector, metadata)
  }

  /** Removes a record; returns false when there was none with this id. */
  remove(id: string): boolean {
    const label = this.#state.ids.release(validateId(id))
    if (label === undefined) return false
    this.#state.graph?.delete(label)
    this.#state.metadata[label] = undefined
    return true
  }

  /** The stored record (vector as Float32Array, a copy), or undefined. */
  get(id: string): StoredRecord | undefined {
    const label = this.#state.ids.labelOf(validateId(id))
    if (label === undefined) return undefined
    return { id, vector: this.#state.store.get(label), metadata: this.#state.metadata[label] ?? {} }
  }

  has(id: string): boolean {
    return this.#state.ids.has(validateId(id))
  }

  /** Ids in insertion-slot order. */
  *ids(): IterableIterator<string> {
    for (const label of this.#state.ids.labels()) yield this.#state.ids.idOf(label) as string
  }

  /**
   * The topK records nearest to `vector` (or to the stored record `id`), best first, with ties
   * broken by id ascending. `stats` says how the planner ran the search and why.
   */
  search(request: SearchRequest): SearchResult {
    const state = this.#state
    const r = validateSearch(request, state.options.hnsw.efSearch)
    let vector: Float32Array
    if (r.id !== undefined) {
      const label = state.ids.labelOf(r.id)
      if (label === undefined) throw new QuarryError('UNKNOWN_ID', `no record has id "${r.id}"; search by vector or add the record first.`, { path: 'id' })
      vector = this.#input
      vector.set(state.store.view(label))
    } else {
      vector = toVector(r.vector, state.options.dimensions, state.options.metric, 'vector', this.#input)
    }
    const query = state.options.metric === 'cosine' ? normalized(vector, this.#unit) : vector
    const self = r.id
    if (self === undefined) return denseSearch(state, { query, k: r.topK, ef: r.ef, exact: r.exact, filter: r.filter })
    // Query by example: fetch one more and leave the example itself out.
    const result = denseSearch(state, { query, k: r.topK + 1, ef: r.ef, exact: r.exact, filter: r.filter })
    return { hits: result.hits.filter((hit) => hit.id !== self).slice(0, r.topK), stats: result.stats }
  }

  /**
   * Writes the index to `dir` (created if needed, replaced atomically if it exists).
   * Read it back with `loadIndex(dir)`.
   */
  save(dir: string): void {
    saveIndex(this, dir)
  }

  /** @internal The index's data, for persistence. */
  get state(): IndexState {
    return this.#state
  }

  #validate(record: unknown, into?: Float32Array): { id: string; vector: Float32Array; metadata: Readonly<Metadata> } {
    const { id, vector, metadata } = validateRecord(record)
    const { dimensions, metric } = this.#state.options
    return { id, vector: toVector(vector, dimensions, metric, 'vector', into), metadata }
  }

  #write(label: Label, vector: Float32Array, metadata: Readonly<Metadata>): void {
    const state = this.#state
    state.store.set(label, vector)
    state.metadata[label] = metadata
    state.graph?.set(label, state.options.metric === 'cosine' ? normalized(vector, this.#unit) : vector)
  }
}

function prefixPath(error: unknown, prefix: string): unknown {
  if (!(error instanceof QuarryError)) return error
  const path = error.path ? `${prefix}.${error.path}` : prefix
  return new QuarryError(error.code, `${prefix}: ${error.message}`, { path, cause: error.cause })
}

/** Creates an empty index. Options are validated up front (INVALID_OPTION says how to fix them). */
export function createIndex(options: IndexOptions): QuarryIndex {
  const resolved = resolveIndexOptions(options)
  const ids = new IdMap()
  const ops = metricOps(resolved.metric)
  return new QuarryIndex({
    options: resolved,
    ops,
    ids,
    store: new VectorStore(resolved.dimensions),
    metadata: [],
    graph: resolved.dense === 'hnsw' ? HnswGraph.create(ops.hnswSpace, resolved.dimensions, resolved.hnsw) : undefined,
    tie: idTieBreak(ids),
  })
}
