import type { FilterInput } from '../filter/plan-input.js'
import { BM25_FLOOR, convexFusion, rrfFusion, type Candidate, type Fused } from '../hybrid/fusion.js'
import type { Label } from '../ids.js'
import type { QueryTerm, TermExplanation } from '../sparse/sparse-index.js'
import { prepareQuery, searchByVector, withinThreshold, withPreciseDistances, type PreparedQuery } from './dense-search.js'
import type { Hit, HybridExplanation, SearchResult } from './results.js'
import type { ValidatedSearch } from './search-request.js'
import { queryTerms, sparseSearch, type DenseSide } from './sparse-search.js'
import type { IndexState } from './state.js'
import type { VectorBuffers } from './vector-input.js'

/** A search with both a text and a query vector (or an example id). */
interface HybridQuery {
  readonly request: ValidatedSearch
  readonly text: string
  readonly filter: FilterInput | undefined
  readonly buffers: VectorBuffers
}

/**
 * The hybrid recipe. alpha 1 is the dense search alone and alpha 0 the text search alone, exactly
 * (no fusion: the same ranking and scores as single-mode search; at alpha 0 each hit also carries
 * its dense distance, and a dense threshold applies; with `explain`, a hit of either carries its
 * BM25 terms). Otherwise each side retrieves `depth` candidates with the same filter, every
 * candidate of either side is scored exactly on both sides (one dot product, one forward-index
 * BM25), and the candidates are fused.
 */
export function hybridSearch(state: IndexState, q: HybridQuery): SearchResult {
  const r = q.request
  if (r.alpha === 1) {
    const dense = searchByVector(prepareQuery(state, r, q.buffers), r, q.filter, r.topK)
    return r.explain ? withTermsExplained(state, dense, q.text) : dense
  }
  if (r.alpha === 0) return measuredTextSearch(prepareQuery(state, r, q.buffers), q)
  const query = prepareQuery(state, r, q.buffers)
  const dense = searchByVector(query, r, q.filter, r.depth, false)
  const terms = queryTerms(state.analyzer, q.text)
  // Query by example: the example may match the text too, so fetch one more text candidate.
  const sparse = sparseSearch(state, { text: q.text, terms, k: r.depth + (r.id === undefined ? 0 : 1), filter: q.filter, explain: r.explain })
  const pool = candidatePool(query, dense, sparse, terms, r)
  const floors = { dense: state.ops.minScore, sparse: BM25_FLOOR }
  const fused = r.fusion === 'rrf' ? rrfFusion(pool.candidates, r.alpha, floors) : convexFusion(pool.candidates, r.alpha, floors, r.topK)
  const top = fused.slice(0, r.topK).map((f) => toHybridHit(state, f, pool.known.get(f.id) as Known, r, terms))
  const hits = r.preciseDistances ? withPreciseDistances(query, top, false) : top
  return {
    hits,
    stats: {
      strategy: 'hybrid',
      reason: `${r.fusion === 'rrf' ? 'reciprocal rank fusion' : 'convex combination of theoretical-minimum min-max normalized scores (TM2C2)'}, alpha ${r.alpha}: dense ${dense.stats.strategy} (${dense.hits.length} candidates) + bm25 (${sparse.hits.length} candidates), ${pool.candidates.length} in their union, each scored exactly on both sides`,
      live: dense.stats.live,
      dense: dense.stats,
      sparse: sparse.stats,
    },
  }
}

/**
 * alpha 0 with a query vector: the text search alone ranks (the same hits and scores as without
 * the vector), and each hit also carries its dense distance, to which the request's threshold
 * applies as in fused search (a record the threshold excludes is never a hit).
 */
function measuredTextSearch(prepared: PreparedQuery, q: HybridQuery): SearchResult {
  const { state, query } = prepared
  const { store, ops } = state
  const r = q.request
  const thresholded = r.maxDistance !== undefined || r.minSimilarity !== undefined
  const dense: DenseSide = {
    ops,
    key: (label) => ops.key(query, store.data, label * store.dim, store.dim, store.invNorms[label] as number),
    passes: thresholded ? (key) => withinThreshold(r, ops.distance(key), ops.score(key)) : undefined,
  }
  // Query by example: the example is never a hit of its own search (it may match the text): one more, then left out.
  const found = sparseSearch(state, { text: q.text, k: r.topK + (r.id === undefined ? 0 : 1), filter: q.filter, explain: r.explain, dense })
  const result = r.id === undefined ? found : { hits: found.hits.filter((hit) => hit.id !== r.id).slice(0, r.topK), stats: found.stats }
  return r.preciseDistances ? { hits: withPreciseDistances(prepared, result.hits, false), stats: result.stats } : result
}

/** What the pool knows of a candidate besides its scores. */
interface Known {
  readonly label: Label
  readonly key: number
  readonly distance: number
  readonly metadata: Hit['metadata']
  /** The text side's per-term explanation, when it retrieved the candidate with `explain`. */
  readonly bm25: readonly TermExplanation[] | undefined
}

/**
 * The union of both sides' candidates, each with its exact dense score and exact BM25 score. The
 * example itself is left out, and a text candidate whose exact distance lies beyond the request's
 * threshold too (a text-only hit must not bring a record the dense threshold excludes).
 */
function candidatePool(prepared: PreparedQuery, dense: SearchResult, sparse: SearchResult, terms: readonly QueryTerm[], r: ValidatedSearch): { candidates: Candidate[]; known: Map<string, Known> } {
  const { state, query } = prepared
  const { store, ops } = state
  const candidates: Candidate[] = []
  const known = new Map<string, Known>()
  const bm25 = new Map<string, number>()
  for (const hit of sparse.hits) bm25.set(hit.id, hit.score)
  const bm25Of = state.sparse.scorer(terms)
  for (const hit of dense.hits) {
    const label = state.ids.labelOf(hit.id) as Label
    candidates.push({ id: hit.id, dense: hit.score, sparse: bm25.get(hit.id) ?? bm25Of(label) })
    known.set(hit.id, { label, key: hit.key as number, distance: hit.distance as number, metadata: hit.metadata, bm25: undefined })
  }
  for (const hit of sparse.hits) {
    const seen = known.get(hit.id)
    if (seen) {
      if (hit.explain?.bm25) known.set(hit.id, { ...seen, bm25: hit.explain.bm25 })
      continue
    }
    if (hit.id === r.id) continue
    const label = state.ids.labelOf(hit.id) as Label
    const key = ops.key(query, store.data, label * store.dim, store.dim, store.invNorms[label] as number)
    const distance = ops.distance(key)
    const score = ops.score(key)
    if (!withinThreshold(r, distance, score)) continue
    candidates.push({ id: hit.id, dense: score, sparse: hit.score })
    known.set(hit.id, { label, key, distance, metadata: hit.metadata, bm25: hit.explain?.bm25 })
  }
  return { candidates, known }
}

/**
 * alpha 1 with `explain`: the dense hits as they are, each with the text's per-term BM25 parts (all
 * 0 where no term matches), which take no part in its score; `explain` is not dropped for it.
 */
function withTermsExplained(state: IndexState, dense: SearchResult, text: string): SearchResult {
  const terms = queryTerms(state.analyzer, text)
  const hits = dense.hits.map((hit) => ({ ...hit, explain: { bm25: state.sparse.explain(state.ids.labelOf(hit.id) as Label, terms) } }))
  return { hits, stats: dense.stats }
}

/** A fused candidate as a hit: `score` is the fused score; with `explain`, `explain.hybrid` holds both sides' parts. */
function toHybridHit(state: IndexState, f: Fused, known: Known, r: ValidatedSearch, terms: readonly QueryTerm[]): Hit {
  const hit: Hit = { id: f.id, score: f.fused, distance: known.distance, key: known.key, metadata: known.metadata }
  if (!r.explain) return hit
  const hybrid: HybridExplanation = { fusion: r.fusion, alpha: r.alpha, dense: { distance: known.distance, ...f.dense }, sparse: f.sparse, fused: f.fused }
  return { ...hit, explain: { bm25: known.bm25 ?? state.sparse.explain(known.label, terms), hybrid } }
}
