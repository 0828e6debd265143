import { convexFusion, rrfFusion, type Fused } from '../hybrid/fusion.js'
import type { Hit, SearchResult } from './dense-search.js'

/** How a hybrid hit was scored: both sides' raw and normalized parts, and the fused score. */
export interface HybridExplanation {
  readonly fusion: 'convex' | 'rrf'
  readonly alpha: number
  readonly dense?: { readonly distance: number; readonly score: number; readonly normalized: number; readonly rank: number }
  readonly sparse?: { readonly score: number; readonly normalized: number; readonly rank: number }
  readonly fused: number
}

export interface HybridInput {
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
export function fuse(input: HybridInput): SearchResult {
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
