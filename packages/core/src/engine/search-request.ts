import { QuarryError, describe } from '../errors.js'
import { validateFilter, type Filter } from '../filter/ast.js'
import type { FilterFn } from '../filter/predicate.js'
import { validateId } from '../ids.js'

/** Largest `topK` accepted. */
export const MAX_TOP_K = 10_000

/**
 * A search request: `vector` or `id` for dense search, `text` for BM25, or `text` with `vector`
 * (or `id`) for hybrid search fused by `alpha`.
 */
export interface SearchRequest {
  /** Hybrid weight: 0 = sparse (text) only, 1 = dense (vector) only. @defaultValue 0.5 */
  alpha?: number
  /**
   * Hybrid fusion over the union of both sides' candidates, each scored exactly on both sides:
   * a convex combination of theoretical-minimum min-max (TM2C2) normalized scores, or weighted
   * reciprocal rank fusion. @defaultValue 'convex'
   */
  fusion?: 'convex' | 'rrf'
  /** Hybrid: how many candidates each side retrieves before fusion (at least topK). @defaultValue max(50, 3 × topK) */
  depth?: number
  /**
   * Keep hits with distance ≤ this (the metric's distance: 1 - cos, -dot or euclidean): dense
   * hits, hybrid hits, and text hits when a query vector is given (alpha 0).
   */
  maxDistance?: number
  /** Keep hits with dense similarity (score) ≥ this, where maxDistance applies. Give at most one of maxDistance / minSimilarity. */
  minSimilarity?: number
  /**
   * Report each hit's `key`, `distance` (and a dense hit's `score`) computed in float64 from the
   * query as given and the record's stored vector, as a brute-force oracle would, instead of the
   * search's own arithmetic (a unit-length float32 query for cosine, the graph's float32
   * distances). Ranking, thresholds and fusion use the search's values, which differ from these
   * by float rounding only; this costs one pass over each hit's vector. @defaultValue false
   */
  preciseDistances?: boolean
  /** A text query, ranked by BM25. */
  text?: string
  /**
   * With a text query: attach each hit's per-term BM25 explanation (`explain.bm25`) and, to a fused
   * hybrid hit, how it was fused (`explain.hybrid`). At alpha 1, where the vector alone ranks, each
   * hit still gets its text's BM25 terms, which take no part in its score. @defaultValue false
   */
  explain?: boolean
  /** The query embedding. */
  vector?: readonly number[] | Float32Array
  /** Query by example: the stored vector of this id (the id itself is left out of the hits). */
  id?: string
  /** Number of hits, 1 to 10,000. @defaultValue 10 */
  topK?: number
  /**
   * Keeps only matching records: a declarative filter (answered by value indexes, JSON-serializable)
   * or a function of (metadata, id) (tested record by record).
   */
  filter?: Filter | FilterFn
  /** HNSW candidate list size for this search (raised to topK). @defaultValue the index's hnsw.efSearch */
  ef?: number
  /** Scan every (passing) record exactly instead of using the graph. @defaultValue false */
  exact?: boolean
}

export interface ValidatedSearch {
  readonly alpha: number
  readonly fusion: 'convex' | 'rrf'
  readonly depth: number
  readonly maxDistance: number | undefined
  readonly minSimilarity: number | undefined
  readonly text: string | undefined
  readonly explain: boolean
  readonly vector: unknown
  readonly id: string | undefined
  readonly topK: number
  readonly filter: FilterFn | Filter | undefined
  readonly ef: number
  readonly exact: boolean
  readonly preciseDistances: boolean
}

const KNOWN = ['text', 'explain', 'vector', 'id', 'topK', 'filter', 'ef', 'exact', 'alpha', 'fusion', 'depth', 'maxDistance', 'minSimilarity', 'preciseDistances']
/** Options that fuse text with a vector: a search without text has nothing to fuse. */
const HYBRID_ONLY = ['alpha', 'fusion', 'depth'] as const
/** Options of the vector side: a text-only search has none. */
export const DENSE_ONLY = ['maxDistance', 'minSimilarity', 'exact', 'ef', 'preciseDistances'] as const
const IS_KNOWN = new Set(KNOWN)
/** What a filter function of each of these kinds answers instead of a boolean. */
const DEFERRED_ANSWERS: ReadonlyMap<unknown, string> = new Map([
  ['AsyncFunction', 'an async function answers a Promise'],
  ['GeneratorFunction', 'a generator function answers an iterator'],
  ['AsyncGeneratorFunction', 'an async generator function answers an async iterator'],
])

export function validateSearch(request: unknown, defaultEf: number): ValidatedSearch {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new QuarryError('INVALID_QUERY', `search takes an object like { vector, topK: 10 }; received ${describe(request)}.`)
  }
  const r = request as Record<string, unknown>
  // for…in with an own-property test rather than Object.keys: no array made per search.
  for (const key in r) {
    if (!IS_KNOWN.has(key) && Object.hasOwn(r, key)) {
      throw new QuarryError('INVALID_QUERY', `unknown search option ${key}; known options are ${KNOWN.join(', ')}.`, { path: key })
    }
  }
  if (r.vector !== undefined && r.id !== undefined) {
    throw new QuarryError('INVALID_QUERY', 'give at most one of `vector` (a query embedding) and `id` (search by a stored record).', { path: 'vector' })
  }
  if (r.vector === undefined && r.id === undefined && r.text === undefined) {
    throw new QuarryError('INVALID_QUERY', 'give a query: `vector` or `id` (dense), `text` (BM25), or `text` with `vector` (hybrid).', { path: 'vector' })
  }
  // An option of one side given without that side would be ignored: refused, naming what to add.
  if (r.text === undefined) {
    for (const key of HYBRID_ONLY) {
      if (r[key] !== undefined) throw new QuarryError('INVALID_QUERY', `${key} weighs text against the vector, and this search has no text: give text too, or leave ${key} out.`, { path: key })
    }
    // A vector search has no explanation to give: explain: true would come back without one.
    if (r.explain !== undefined) throw new QuarryError('INVALID_QUERY', 'explain shows how the text scored (BM25 terms, and how a hybrid hit was fused), and this search has no text: give text too, or leave explain out.', { path: 'explain' })
  }
  if (r.vector === undefined && r.id === undefined) {
    for (const key of DENSE_ONLY) {
      if (r[key] !== undefined) throw new QuarryError('INVALID_QUERY', `${key} applies to the vector search, and this search has only text: give a vector (or an id) too, or leave ${key} out.`, { path: key })
    }
  }
  const alpha = r.alpha ?? 0.5
  if (typeof alpha !== 'number' || !(alpha >= 0 && alpha <= 1)) {
    throw new QuarryError('INVALID_QUERY', `alpha must be a number from 0 (text only) to 1 (vector only); received ${describe(alpha)}.`, { path: 'alpha' })
  }
  const fusion = r.fusion ?? 'convex'
  if (fusion !== 'convex' && fusion !== 'rrf') throw new QuarryError('INVALID_QUERY', `fusion must be "convex" or "rrf"; received ${describe(fusion)}.`, { path: 'fusion' })
  for (const key of ['maxDistance', 'minSimilarity'] as const) {
    const v = r[key]
    if (v !== undefined && (typeof v !== 'number' || !Number.isFinite(v))) throw new QuarryError('INVALID_QUERY', `${key} must be a finite number; received ${describe(v)}.`, { path: key })
  }
  if (r.maxDistance !== undefined && r.minSimilarity !== undefined) {
    throw new QuarryError('INVALID_QUERY', 'give at most one of maxDistance and minSimilarity (they are two views of one threshold).', { path: 'minSimilarity' })
  }
  if (r.text !== undefined && typeof r.text !== 'string') {
    throw new QuarryError('INVALID_QUERY', `text must be a string; received ${describe(r.text)}.`, { path: 'text' })
  }
  if (r.explain !== undefined && typeof r.explain !== 'boolean') {
    throw new QuarryError('INVALID_QUERY', `explain must be a boolean; received ${describe(r.explain)}.`, { path: 'explain' })
  }
  // An async function answers a Promise and a generator function an iterator, both truthy: every record would pass.
  const answers = typeof r.filter === 'function' ? DEFERRED_ANSWERS.get((r.filter as { constructor?: { name?: unknown } }).constructor?.name) : undefined
  if (answers !== undefined) {
    throw new QuarryError('INVALID_QUERY', `filter must answer true or false at once: ${answers} (which every record would pass). Read what it needs first, then filter with a plain function.`, { path: 'filter' })
  }
  const filter = r.filter === undefined || typeof r.filter === 'function' ? (r.filter as FilterFn | undefined) : validateFilter(r.filter)
  for (const key of ['exact', 'preciseDistances'] as const) {
    const v = r[key]
    if (v !== undefined && typeof v !== 'boolean') throw new QuarryError('INVALID_QUERY', `${key} must be a boolean; received ${describe(v)}.`, { path: key })
  }
  const topK = queryInt(r.topK, 'topK', MAX_TOP_K, 10)
  const depth = queryInt(r.depth, 'depth', MAX_TOP_K, Math.max(50, 3 * topK))
  if (depth < topK) throw new QuarryError('INVALID_QUERY', `depth (${depth}) must be at least topK (${topK}).`, { path: 'depth' })
  return {
    alpha,
    fusion,
    depth,
    maxDistance: r.maxDistance as number | undefined,
    minSimilarity: r.minSimilarity as number | undefined,
    text: r.text as string | undefined,
    explain: r.explain ?? false,
    vector: r.vector,
    id: r.id === undefined ? undefined : validateId(r.id),
    topK,
    filter,
    ef: queryInt(r.ef, 'ef', 65536, defaultEf),
    exact: (r.exact as boolean | undefined) ?? false,
    preciseDistances: (r.preciseDistances as boolean | undefined) ?? false,
  }
}

/** An integer search option, 1..max, failing as INVALID_QUERY. */
function queryInt(value: unknown, path: string, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new QuarryError('INVALID_QUERY', `${path} must be an integer from 1 to ${max}; received ${describe(value)}.`, { path })
  }
  return value
}
