import type { FilterInput } from '../filter/plan-input.js'
import { convexFusion, rrfFusion, type Fused } from '../hybrid/fusion.js'
import { prepareQuery, searchByVector, withinThreshold, type PreparedQuery } from './dense-search.js'
import type { Hit, HybridExplanation, SearchResult } from './results.js'
import type { ValidatedSearch } from './search-request.js'
import { sparseSearch } from './sparse-search.js'
import type { IndexState } from './state.js'
import type { VectorBuffers } from './vector-input.js'

/** A search with both a text and a query vector (or an example id). */
export interface HybridQuery {
  readonly request: ValidatedSearch
  readonly text: string
  readonly filter: FilterInput | undefined
  readonly buffers: VectorBuffers
}

/**
 * The hybrid recipe. alpha 1 is the dense search alone and alpha 0 the text search alone, exactly
 * (no fusion: the same ranking and scores as single-mode search). Otherwise each side retrieves
 * `depth` candidates with the same filter, and the two lists are fused.
 */
export function hybridSearch(state: IndexState, q: HybridQuery): SearchResult {
  const r = q.request
  const byText = (k: number): SearchResult => sparseSearch(state, { text: q.text, k, filter: q.filter, explain: r.explain })
  if (r.alpha === 1) return searchByVector(prepareQuery(state, r, q.buffers), r, q.filter, r.topK)
  if (r.alpha === 0) return byText(r.topK)
  const query = prepareQuery(state, r, q.buffers)
  const dense = searchByVector(query, r, q.filter, r.depth)
  // Query by example: the example may match the text too, so fetch one more text candidate.
  const sparse = textCandidates(byText(r.depth + (r.id === undefined ? 0 : 1)), query, r)
  return fuse({ dense, sparse, alpha: r.alpha, fusion: r.fusion, topK: r.topK })
}

/**
 * The text side's candidates as the dense side sees them: the example itself is left out, and
 * with a threshold, so is every candidate whose exact distance to the query lies beyond it (a
 * text-only hit must not bring a record the dense threshold excludes).
 */
function textCandidates(result: SearchResult, query: PreparedQuery, r: ValidatedSearch): SearchResult {
  if (r.id === undefined && r.maxDistance === undefined && r.minSimilarity === undefined) return result
  return { ...result, hits: result.hits.filter((hit) => hit.id !== r.id && exactlyWithinThreshold(query, hit.id, r)) }
}

/** Whether a record's exact distance to the prepared query passes the request's threshold. */
function exactlyWithinThreshold(prepared: PreparedQuery, id: string, r: ValidatedSearch): boolean {
  if (r.maxDistance === undefined && r.minSimilarity === undefined) return true
  const { state, query } = prepared
  const label = state.ids.labelOf(id)
  if (label === undefined) return false
  const { store, ops } = state
  const key = ops.key(query, store.data, label * store.dim, store.dim, store.invNorms[label] as number)
  return withinThreshold(r, ops.distance(key), ops.score(key))
}

interface FusionInput {
  readonly dense: SearchResult
  readonly sparse: SearchResult
  readonly alpha: number
  readonly fusion: 'convex' | 'rrf'
  readonly topK: number
}

/**
 * Fuses a dense and a sparse result list (each retrieved to `depth` candidates). Every hit
 * carries its parts in `explain.hybrid`; `score` is the fused score.
 */
function fuse(input: FusionInput): SearchResult {
  const { dense, sparse, alpha, fusion, topK } = input
  const denseHits = new Map(dense.hits.map((h) => [h.id, h]))
  const sparseHits = new Map(sparse.hits.map((h) => [h.id, h]))
  const lists = { dense: dense.hits.map((h) => ({ id: h.id, score: h.score })), sparse: sparse.hits.map((h) => ({ id: h.id, score: h.score })) }
  const fused: Fused[] = fusion === 'rrf' ? rrfFusion(lists.dense, lists.sparse, alpha) : convexFusion(lists.dense, lists.sparse, alpha)
  const hits: Hit[] = fused.slice(0, topK).map((f) => {
    const d = denseHits.get(f.id)
    const s = sparseHits.get(f.id)
    const base = (d ?? s) as Hit
    const hybrid: HybridExplanation = {
      fusion,
      alpha,
      ...(f.dense && d ? { dense: { distance: d.distance as number, ...f.dense } } : {}),
      ...(f.sparse ? { sparse: f.sparse } : {}),
      fused: f.fused,
    }
    return {
      id: f.id,
      score: f.fused,
      ...(d?.distance === undefined ? {} : { distance: d.distance }),
      metadata: base.metadata,
      explain: { ...(s?.explain ? { bm25: s.explain.bm25 } : {}), hybrid },
    }
  })
  return {
    hits,
    stats: {
      strategy: 'hybrid',
      reason: `${fusion === 'rrf' ? 'reciprocal rank fusion' : 'min-max normalized convex combination'}, alpha ${alpha}: dense ${dense.stats.strategy} (${dense.hits.length} candidates) + bm25 (${sparse.hits.length} candidates)`,
      live: dense.stats.live,
      dense: dense.stats,
      sparse: sparse.stats,
    },
  }
}
