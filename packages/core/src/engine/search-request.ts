import { QuarryError, describe } from '../errors.js'
import { validateFilter, type Filter } from '../filter/ast.js'
import type { FilterFn } from '../filter/predicate.js'
import { validateId } from '../ids.js'

/** Largest `topK` accepted. */
export const MAX_TOP_K = 10_000

/** A search request. Give exactly one of `vector`, `id` and `text`. */
export interface SearchRequest {
  /** A text query, ranked by BM25. */
  text?: string
  /** With a text query: attach each hit's per-term BM25 explanation. @defaultValue false */
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
  readonly text: string | undefined
  readonly explain: boolean
  readonly vector: unknown
  readonly id: string | undefined
  readonly topK: number
  readonly filter: FilterFn | Filter | undefined
  readonly ef: number
  readonly exact: boolean
}

export function validateSearch(request: unknown, defaultEf: number): ValidatedSearch {
  if (typeof request !== 'object' || request === null || Array.isArray(request)) {
    throw new QuarryError('INVALID_QUERY', `search takes an object like { vector, topK: 10 }; received ${describe(request)}.`)
  }
  const r = request as Record<string, unknown>
  for (const key of Object.keys(r)) {
    if (!['text', 'explain', 'vector', 'id', 'topK', 'filter', 'ef', 'exact'].includes(key)) {
      throw new QuarryError('INVALID_QUERY', `unknown search option ${key}; known options are text, explain, vector, id, topK, filter, ef, exact.`, { path: key })
    }
  }
  const given = [r.vector, r.id, r.text].filter((x) => x !== undefined).length
  if (given !== 1) {
    throw new QuarryError('INVALID_QUERY', 'give exactly one of `vector` (a query embedding), `id` (search by a stored record) and `text` (a BM25 query).', { path: 'vector' })
  }
  if (r.text !== undefined && typeof r.text !== 'string') {
    throw new QuarryError('INVALID_QUERY', `text must be a string; received ${describe(r.text)}.`, { path: 'text' })
  }
  if (r.explain !== undefined && typeof r.explain !== 'boolean') {
    throw new QuarryError('INVALID_QUERY', `explain must be a boolean; received ${describe(r.explain)}.`, { path: 'explain' })
  }
  const filter = r.filter === undefined || typeof r.filter === 'function' ? (r.filter as FilterFn | undefined) : validateFilter(r.filter)
  if (r.exact !== undefined && typeof r.exact !== 'boolean') {
    throw new QuarryError('INVALID_QUERY', `exact must be a boolean; received ${describe(r.exact)}.`, { path: 'exact' })
  }
  return {
    text: r.text as string | undefined,
    explain: r.explain ?? false,
    vector: r.vector,
    id: r.id === undefined ? undefined : validateId(r.id),
    topK: queryInt(r.topK, 'topK', MAX_TOP_K, 10),
    filter,
    ef: queryInt(r.ef, 'ef', 65536, defaultEf),
    exact: r.exact ?? false,
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
