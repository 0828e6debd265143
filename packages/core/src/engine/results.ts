/** What every search returns, dense, text or hybrid: the hits, and how the search ran. */
import type { DenseStrategy } from '../dense/planner.js'
import type { SparseSearchStats, TermExplanation } from '../sparse/sparse-index.js'
import type { Metadata } from './record.js'

/** How a hybrid hit was scored: both sides' raw and normalized parts, and the fused score. */
export interface HybridExplanation {
  readonly fusion: 'convex' | 'rrf'
  readonly alpha: number
  /** The exact dense distance and score (higher is better), normalized, and rank among the fused candidates. */
  readonly dense: { readonly distance: number; readonly score: number; readonly normalized: number; readonly rank?: number }
  /** The exact BM25 score (0 when no query term matches: then no rank), normalized, and rank among the fused candidates. */
  readonly sparse: { readonly score: number; readonly normalized: number; readonly rank?: number }
  readonly fused: number
}

/** One search result. */
export interface Hit {
  readonly id: string
  /**
   * Higher is better: cosine similarity, dot product, 1 / (1 + euclidean distance) (dense hits),
   * BM25 (text hits), or the fused score (hybrid hits).
   */
  readonly score: number
  /**
   * Every hit of a search given a query vector (or an example `id`), dense, hybrid or text at
   * alpha 0: the metric's distance to the query (1 - cos in [0, 2], -dot, or euclidean).
   */
  readonly distance?: number
  /**
   * Beside `distance`: the metric's own measure, smaller is closer — 1 - cos (cosine), -(q · v)
   * (dot), ‖q - v‖² (l2, the square of `distance`). `distance` and a dense hit's `score` are
   * functions of it (`measureOfKey`).
   */
  readonly key?: number
  /** The record's metadata as stored (its own keys included): a caller finds its resource here, not in the id. */
  readonly metadata: Readonly<Metadata>
  /**
   * With `explain: true`. Text hits (and hybrid hits): each query term's part of the BM25 score.
   * Fused hybrid hits (alpha strictly between 0 and 1): also the dense and sparse parts,
   * normalized, and the fused score.
   */
  readonly explain?: { readonly bm25?: readonly TermExplanation[]; readonly hybrid?: HybridExplanation }
}

/** How a search ran: the planner's choice, its reason, and the work done. */
export interface SearchStats {
  readonly strategy: DenseStrategy | 'bm25' | 'hybrid'
  readonly reason: string
  /** Live records in the index. */
  readonly live: number
  /** ef used by the graph search, when the graph was used. */
  readonly ef?: number
  /** Estimated fraction of records passing the filter (from a sample). */
  readonly estimatedSelectivity?: number
  /** Exact number of records passing the filter, when it was fully evaluated. */
  readonly allowed?: number
  /** Candidates fetched from the graph before post-filtering. */
  readonly fetched?: number
  /** True when a graph search returned too few hits and an exact scan answered instead. */
  readonly fallback?: boolean
  /** Text searches: query terms found, terms scored in full, postings read, documents scored. */
  readonly bm25?: SparseSearchStats
  /** Hybrid searches: how each side ran. */
  readonly dense?: SearchStats
  readonly sparse?: SearchStats
}

export interface SearchResult {
  /**
   * Best first; hits at equal distances ordered by id ascending. An exact search returns the k
   * smallest by (distance, id); a graph search's set is approximate, ties at the k-th place included.
   */
  readonly hits: Hit[]
  readonly stats: SearchStats
}
