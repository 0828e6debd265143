import { exactTopK } from '../dense/exact.js'
import { planDense, refinePlan, type DenseStrategy } from '../dense/planner.js'
import { estimateSelectivity, materialize, testLabel, type FilterFn, type FilterSubject } from '../filter/predicate.js'
import type { Label } from '../ids.js'
import type { Bitset } from '../util/bitset.js'
import type { TopK } from '../util/top-k.js'
import type { Metadata } from './record.js'
import type { IndexState } from './state.js'

/** One search result. */
export interface Hit {
  readonly id: string
  /** Higher is better: cosine similarity, dot product, or 1 / (1 + euclidean distance). */
  readonly score: number
  /** The metric's distance: 1 - cos in [0, 2], -dot, or euclidean. */
  readonly distance: number
  readonly metadata: Readonly<Metadata>
}

/** How a search ran: the planner's choice, its reason, and the work done. */
export interface SearchStats {
  readonly strategy: DenseStrategy
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
}

export interface SearchResult {
  /** Best first; equal distances ordered by id ascending. */
  readonly hits: Hit[]
  readonly stats: SearchStats
}

export interface DenseQuery {
  /** Prepared query (unit length for cosine). */
  readonly query: Float32Array
  readonly k: number
  readonly ef: number
  readonly exact: boolean
  readonly filter: FilterFn | undefined
}

/** Runs a dense search: estimate the filter, plan, execute, and re-score the winners exactly. */
export function denseSearch(state: IndexState, q: DenseQuery): SearchResult {
  const live = state.ids.size
  const k = Math.min(q.k, live)
  const subject = filterSubject(state)
  const estimate = q.filter && k > 0 ? estimateSelectivity(q.filter, subject, live) : undefined
  let plan = planDense({
    live,
    hasGraph: state.graph !== undefined,
    forceExact: q.exact,
    selectivity: estimate?.selectivity,
    options: state.options.planner,
  })
  const base = { live, ...(estimate ? { estimatedSelectivity: estimate.selectivity } : {}) }
  if (k === 0) return { hits: [], stats: { strategy: plan.strategy, reason: 'the index is empty', ...base } }

  switch (plan.strategy) {
    case 'exact': {
      const top = exactTopK(state.store, state.ops, q.query, k, { kind: 'all', extent: state.ids.extent, isLive: (l) => state.ids.idOf(l) !== undefined }, state.tie)
      return { hits: toHits(state, top), stats: { ...plan, ...base } }
    }
    case 'hnsw':
      return { hits: graphHits(state, q.query, k, q.ef, undefined), stats: { ...plan, ...base, ef: Math.max(q.ef, k) } }
    case 'hnsw-postfilter': {
      const found = postFilter(state, q, k, estimate?.selectivity ?? 1, subject)
      if (found) return { hits: found.hits, stats: { ...plan, ...base, ef: found.ef, fetched: found.fetched } }
      plan = { strategy: 'hnsw-filtered', reason: `${plan.reason}; post-filtering found fewer than ${k} hits, so the filter was evaluated in full` }
      break
    }
    default:
      break
  }

  // The filter is evaluated on every record: scan the passing ones, or search the graph within them.
  const match = materialize(q.filter as FilterFn, subject)
  const allowed = match.labels.length
  plan = refinePlan(plan, allowed, state.options.planner)
  const stats = { ...base, allowed }
  const exactOverAllowed = (): Hit[] =>
    toHits(state, exactTopK(state.store, state.ops, q.query, Math.min(k, allowed), { kind: 'labels', labels: match.labels }, state.tie))
  if (plan.strategy === 'exact-filtered' || state.graph === undefined) {
    return { hits: exactOverAllowed(), stats: { ...plan, ...stats } }
  }
  const hits = graphHits(state, q.query, k, q.ef, match.bitset)
  if (hits.length < Math.min(k, allowed)) {
    return { hits: exactOverAllowed(), stats: { ...plan, ...stats, ef: Math.max(q.ef, k), fallback: true } }
  }
  return { hits, stats: { ...plan, ...stats, ef: Math.max(q.ef, k) } }
}

/**
 * Over-fetches from the graph by about 1/selectivity and keeps passing hits in order. Returns
 * undefined when fewer than k pass after a few widening rounds (the caller then evaluates the
 * filter in full, so recall never collapses).
 */
function postFilter(state: IndexState, q: DenseQuery, k: number, selectivity: number, subject: FilterSubject): { hits: Hit[]; ef: number; fetched: number } | undefined {
  const graph = state.graph
  if (!graph) return undefined
  const live = state.ids.size
  let fetch = Math.min(live, Math.ceil((k / Math.max(selectivity, 0.01)) * 1.5) + 8)
  for (let round = 0; round < 3; round++) {
    const ef = Math.max(q.ef, fetch)
    const result = graph.search(q.query, fetch, ef)
    const passing: Label[] = []
    for (const label of result.labels) {
      if (testLabel(q.filter as FilterFn, subject, label as Label)) passing.push(label as Label)
    }
    if (passing.length >= k) return { hits: rescore(state, q.query, passing, k), ef, fetched: result.labels.length }
    if (fetch >= live) return undefined
    fetch = Math.min(live, fetch * 4)
  }
  return undefined
}

/**
 * Graph search, then exact re-scoring so every path reports identical distances for an id. A few
 * more than k candidates are taken from the graph's candidate list (free: the search keeps ef of
 * them anyway), so equal distances at the k-th place are still ordered by id.
 */
function graphHits(state: IndexState, query: Float32Array, k: number, ef: number, allow: Bitset | undefined): Hit[] {
  if (!state.graph) return []
  const fetch = Math.max(k, Math.min(Math.max(ef, k), 2 * k + 8))
  const result = state.graph.search(query, fetch, ef, allow)
  return rescore(state, query, result.labels as Label[], k)
}

/** Exact keys for candidate labels, best k kept with the id tie-break. */
function rescore(state: IndexState, query: Float32Array, labels: readonly Label[], k: number): Hit[] {
  const live = labels.filter((label) => state.ids.idOf(label) !== undefined)
  return toHits(state, exactTopK(state.store, state.ops, query, k, { kind: 'labels', labels: live }, state.tie))
}

function toHits(state: IndexState, top: TopK): Hit[] {
  return top.sorted().map(({ key, label }) => ({
    id: state.ids.idOf(label) as string,
    score: state.ops.score(key),
    distance: state.ops.distance(key),
    metadata: state.metadata[label] ?? {},
  }))
}

function filterSubject(state: IndexState): FilterSubject {
  return {
    extent: state.ids.extent,
    idOf: (label) => state.ids.idOf(label),
    metadataOf: (label) => state.metadata[label] ?? {},
  }
}
