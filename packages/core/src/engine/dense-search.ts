import { exactTopK, type ScanDomain } from '../dense/exact.js'
import { planDense, refinePlan, scanLimit, type DensePlan } from '../dense/planner.js'
import { QuarryError } from '../errors.js'
import { passingLabels, selectivityOf, testerOf, type FilterInput } from '../filter/plan-input.js'
import { toBitset, type FilterSubject } from '../filter/predicate.js'
import type { Label } from '../ids.js'
import type { MetricOps } from '../metric/metric.js'
import type { Bitset } from '../util/bitset.js'
import type { TopK } from '../util/top-k.js'
import type { Metadata } from './record.js'
import type { Hit, SearchResult, SearchStats } from './results.js'
import type { ValidatedSearch } from './search-request.js'
import { filterSubject, type DenseState, type IndexState } from './state.js'
import { normalized, toQueryVector, type VectorBuffers } from './vector-input.js'

/** A dense request's query, prepared once: the index (with vectors) and the query vector (unit length for cosine). */
export interface PreparedQuery {
  readonly state: DenseState
  readonly query: Float32Array
  /** The query as given, as float32 (not normalized): what precise distances measure. */
  readonly given: Float32Array
}

/**
 * Prepares a dense request's query: the given `vector`, or the stored vector of the example `id`,
 * normalized for cosine, in the reused buffers (a Float32Array `vector` for dot or l2 is used as
 * given). Fails on a text-only index, an unknown id or an invalid vector.
 */
export function prepareQuery(state: IndexState, r: ValidatedSearch, buffers: VectorBuffers): PreparedQuery {
  if (!state.store) {
    const by = r.id === undefined ? 'vector' : 'id'
    throw new QuarryError('INVALID_QUERY', `search by ${by === 'id' ? 'example (id)' : 'vector'} needs vectors, but this index is text-only (created without dimensions); search by text instead.`, { path: by })
  }
  const dense = state as DenseState
  const metric = state.options.metric
  if (r.id === undefined) {
    const query = toQueryVector(r.vector, dense.store.dim, metric, 'vector', buffers)
    // toQueryVector reads a Float32Array where it is and copies anything else into buffers.input.
    return { state: dense, query, given: r.vector instanceof Float32Array ? r.vector : buffers.input }
  }
  const label = state.ids.labelOf(r.id)
  if (label === undefined) throw new QuarryError('UNKNOWN_ID', `no record has id "${r.id}"; search by vector or add the record first.`, { path: 'id' })
  const vector = buffers.input
  vector.set(dense.store.view(label))
  return { state: dense, query: metric === 'cosine' ? normalized(vector, buffers.unit) : vector, given: vector }
}

/**
 * A dense request to k hits: query by example leaves the example out, and the request's
 * distance / similarity threshold applies. `precise`: the hits' distances measured precisely
 * ({@link withPreciseDistances}; hybrid search fuses the search's own scores and asks afterwards).
 */
export function searchByVector(prepared: PreparedQuery, r: ValidatedSearch, filter: FilterInput | undefined, k: number, precise = r.preciseDistances): SearchResult {
  const self = r.id
  // Query by example: fetch one more and leave the example itself out.
  const result = denseSearch(prepared.state, { query: prepared.query, k: self === undefined ? k : k + 1, ef: r.ef, exact: r.exact, filter })
  // Nothing to leave out: the k hits as they are.
  const hits = self === undefined && r.maxDistance === undefined && r.minSimilarity === undefined ? result.hits : result.hits.filter((hit) => hit.id !== self && withinThreshold(r, hit.distance as number, hit.score)).slice(0, k)
  if (precise) return { hits: withPreciseDistances(prepared, hits, true), stats: result.stats }
  return hits === result.hits ? result : { hits, stats: result.stats }
}

/**
 * The hits with `key` and `distance` measured in float64 from the query as given and each
 * record's stored vector ({@link MetricOps.preciseKey}); `dense` hits take the matching score too
 * (a fused or BM25 score is kept). Reads each hit's row where it is stored: no copy.
 */
export function withPreciseDistances(prepared: PreparedQuery, hits: readonly Hit[], dense: boolean): Hit[] {
  const { state, given } = prepared
  const { store, ops, ids } = state
  return hits.map((hit) => {
    const label = ids.labelOf(hit.id) as Label
    const key = ops.preciseKey(given, store.data, label * store.dim, store.dim)
    return dense ? { ...hit, key, distance: ops.distance(key), score: ops.score(key) } : { ...hit, key, distance: ops.distance(key) }
  })
}

/** Whether a distance and its score pass the request's maxDistance / minSimilarity (if any). */
export function withinThreshold(r: Pick<ValidatedSearch, 'maxDistance' | 'minSimilarity'>, distance: number, score: number): boolean {
  return (r.maxDistance === undefined || distance <= r.maxDistance) && (r.minSimilarity === undefined || score >= r.minSimilarity)
}

interface DenseQuery {
  /** Prepared query (unit length for cosine). */
  readonly query: Float32Array
  readonly k: number
  readonly ef: number
  readonly exact: boolean
  readonly filter: FilterInput | undefined
}

/** Runs a dense search: estimate the filter, plan, execute. */
function denseSearch(state: DenseState, q: DenseQuery): SearchResult {
  const live = state.ids.size
  const k = Math.min(q.k, live)
  const subject = q.filter ? filterSubject(state) : undefined
  const estimate = q.filter && subject && k > 0 ? selectivityOf(q.filter, subject, live) : undefined
  const passing = q.filter?.kind === 'indexed' ? q.filter.count : undefined
  const plan = planDense({ live, k, ef: q.ef, hasGraph: state.graph !== undefined, forceExact: q.exact, selectivity: estimate, ...(passing === undefined ? {} : { passing }), options: state.options.planner })
  const stats: StatsOf = { live, estimate }
  if (k === 0) return { hits: [], stats: statsOf(stats, { strategy: plan.strategy, reason: 'the index is empty' }) }

  switch (plan.strategy) {
    case 'exact': {
      return { hits: toHits(state, exactTopK(state.store, state.ops, q.query, k, allLive(state), state.tie, state.options.scan)), stats: statsOf(stats, plan) }
    }
    case 'hnsw': {
      const hits = graphHits(state, q.query, k, q.ef, undefined)
      if (hits.length >= k) return { hits, stats: statsOf(stats, plan, { ef: Math.max(q.ef, k) }) }
      // The graph reached fewer than k live records (possible after heavy churn in small graphs):
      // answer exactly rather than return fewer hits than exist.
      return { hits: toHits(state, exactTopK(state.store, state.ops, q.query, k, allLive(state), state.tie, state.options.scan)), stats: statsOf(stats, plan, { ef: Math.max(q.ef, k), fallback: true }) }
    }
    case 'hnsw-postfilter': {
      const found = postFilter(state, q, k, estimate ?? 1, subject as FilterSubject)
      if (found) return { hits: found.hits, stats: statsOf(stats, plan, { ef: found.ef, fetched: found.fetched }) }
      const widened: DensePlan = { strategy: 'hnsw-filtered', reason: `${plan.reason}; post-filtering found fewer than ${k} hits, so the filter was evaluated in full` }
      return fullyFiltered(state, q, k, widened, subject as FilterSubject, estimate ?? 0, stats)
    }
    default:
      return fullyFiltered(state, q, k, plan, subject as FilterSubject, estimate ?? 0, stats)
  }
}

/** What every SearchStats of one search shares. */
interface StatsOf {
  readonly live: number
  readonly estimate: number | undefined
}

/** A search's stats: the plan, the live count, the estimate if any, and `extra` added in place (no copy: the graph path is hot). */
function statsOf(base: StatsOf, plan: DensePlan, extra?: Partial<SearchStats>): SearchStats {
  const { strategy, reason } = plan
  const stats: SearchStats = base.estimate === undefined ? { strategy, reason, live: base.live } : { strategy, reason, live: base.live, estimatedSelectivity: base.estimate }
  return extra === undefined ? stats : Object.assign(stats, extra)
}

/** Evaluates the filter on every record, then scans the passing ones or searches the graph within them. */
function fullyFiltered(
  state: DenseState,
  q: DenseQuery,
  k: number,
  planned: DensePlan,
  subject: FilterSubject,
  estimate: number,
  base: StatsOf,
): SearchResult {
  const labels = passingLabels(q.filter as FilterInput, subject, Math.ceil(estimate * state.ids.extent * 1.5))
  const allowed = labels.length
  const plan = refinePlan(planned, allowed, scanLimit(state.options.planner, k, q.ef))
  const exactOverAllowed = (): Hit[] =>
    toHits(state, exactTopK(state.store, state.ops, q.query, Math.min(k, allowed), { kind: 'labels', labels }, state.tie, state.options.scan))
  if (plan.strategy === 'exact-filtered' || state.graph === undefined) return { hits: exactOverAllowed(), stats: statsOf(base, plan, { allowed }) }
  const ef = Math.max(q.ef, k)
  const hits = graphHits(state, q.query, k, q.ef, toBitset(labels, state.ids.extent))
  // The graph can miss passing records when they are scattered thinly: never return fewer than exist.
  if (hits.length < Math.min(k, allowed)) return { hits: exactOverAllowed(), stats: statsOf(base, plan, { allowed, ef, fallback: true }) }
  return { hits, stats: statsOf(base, plan, { allowed, ef }) }
}

/**
 * Over-fetches from the graph by about 1/selectivity (with ef scaled the same way, so about ef
 * passing candidates are explored, as in a filtered graph search) and keeps passing hits in order.
 * Returns undefined when fewer than k pass after a few widening rounds: the caller then evaluates
 * the filter in full, so recall never collapses.
 */
function postFilter(state: DenseState, q: DenseQuery, k: number, selectivity: number, subject: FilterSubject): { hits: Hit[]; ef: number; fetched: number } | undefined {
  const graph = state.graph
  if (!graph) return undefined
  const live = state.ids.size
  const scale = 1 / Math.max(selectivity, 0.01)
  let fetch = Math.min(live, Math.ceil(k * scale * 1.5) + TIE_MARGIN)
  for (let round = 0; round < 3; round++) {
    const ef = Math.max(fetch, Math.ceil(q.ef * scale))
    const result = graph.search(q.query, fetch, ef)
    const labels: Label[] = []
    const distances: number[] = []
    const passes = testerOf(q.filter as FilterInput, subject)
    result.neighbors.forEach((label, i) => {
      if (passes(label as Label)) {
        labels.push(label as Label)
        distances.push(result.distances[i] as number)
      }
    })
    if (labels.length >= k) return { hits: graphToHits(state, labels, distances, k), ef, fetched: result.neighbors.length }
    if (fetch >= live) return undefined
    fetch = Math.min(live, fetch * 4)
  }
  return undefined
}

/**
 * Graph search. The graph returns its candidates best first, and how many it returns does not
 * change the search (it keeps max(ef, k) of them anyway), so k + 1 come first: when the (k+1)-th
 * is farther than the k-th, the first k are the answer. A tie at the k-th place (or equal keys
 * within the k, or a removed record among them) fetches a few more and orders them by key then id:
 * the k + 1 are the head of the longer answer, so equal distances are ordered by id either way.
 */
function graphHits(state: DenseState, query: Float32Array, k: number, ef: number, allow: Bitset | undefined): Hit[] {
  const graph = state.graph
  if (!graph) return []
  const most = Math.max(ef, k)
  const first = graph.search(query, Math.min(most, k + 1), ef, allow)
  const hits = tiedAtCut(state.ops, first.distances, k) ? undefined : inOrder(state, first.neighbors, first.distances, k)
  if (hits) return hits
  const wider = most > k + 1 ? graph.search(query, Math.min(most, k + TIE_MARGIN), ef, allow) : first
  return graphToHits(state, wider.neighbors, wider.distances, k)
}

/** Whether the candidate after the k-th may tie it (equal keys, or keys that are not numbers). */
function tiedAtCut(ops: MetricOps, distances: ArrayLike<number>, k: number): boolean {
  if (distances.length <= k) return false
  return !(ops.keyOfHnsw(distances[k] as number) > ops.keyOfHnsw(distances[k - 1] as number))
}

/**
 * The first k candidates as hits, in one pass, when every one is live and their keys strictly
 * increase (ordering them by key then id keeps them as they are); undefined otherwise, for
 * `graphToHits` to order.
 */
function inOrder(state: DenseState, labels: ArrayLike<number>, distances: ArrayLike<number>, k: number): Hit[] | undefined {
  const { ids, ops, metadata } = state
  const n = Math.min(k, labels.length)
  // Each label's id and metadata are read in loops of their own first: the reads are independent,
  // so the CPU overlaps their cache misses (two arrays of one entry per record, cold after a graph
  // walk) instead of taking them one hit at a time. Into reused arrays: searches are synchronous.
  const idOf = ID_SCRATCH
  const metadataOf = METADATA_SCRATCH
  for (let i = 0; i < n; i++) idOf[i] = ids.idOf(labels[i] as Label)
  for (let i = 0; i < n; i++) metadataOf[i] = metadata[labels[i] as Label]
  const hits = new Array<Hit>(n)
  let previous = -Infinity
  for (let i = 0; i < n; i++) {
    const id = idOf[i]
    const key = ops.keyOfHnsw(distances[i] as number)
    if (id === undefined || !(key > previous)) return undefined
    hits[i] = hitWith(ops, id, key, metadataOf[i])
    previous = key
  }
  return hits
}

/**
 * inOrder's scratch: read only below the n it has just written. Until overwritten they keep
 * references to the ids and metadata of the last search's hits (at most the largest topK asked).
 */
const ID_SCRATCH: (string | undefined)[] = []
const METADATA_SCRATCH: (Readonly<Metadata> | undefined)[] = []

/** Extra graph candidates fetched beyond k to order ties at the k-th place by id. */
const TIE_MARGIN = 8

/**
 * Turns graph candidates into hits: hnswlib's float32 distances become keys (they agree with the
 * exact path to about 1e-7; re-computing them here would touch a second, cold copy of every
 * vector and cost more than the wrapper may), ordered by key then id, cut to k.
 */
function graphToHits(state: DenseState, labels: ArrayLike<number>, distances: ArrayLike<number>, k: number): Hit[] {
  const { ops, ids } = state
  const candidates: { key: number; label: Label }[] = []
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i] as Label
    if (ids.idOf(label) !== undefined) candidates.push({ key: ops.keyOfHnsw(distances[i] as number), label })
  }
  candidates.sort((a, b) => a.key - b.key || state.tie(a.label, b.label))
  if (candidates.length > k) candidates.length = k
  return candidates.map(({ key, label }) => toHit(state, key, label))
}

/** Every live record, for a full exact scan. */
function allLive(state: DenseState): ScanDomain {
  return { kind: 'all', extent: state.ids.extent, live: state.ids }
}

function toHits(state: DenseState, top: TopK): Hit[] {
  return top.sorted().map(({ key, label }) => toHit(state, key, label))
}

function toHit(state: DenseState, key: number, label: Label): Hit {
  return hitOf(state, state.ids.idOf(label) as string, key, label)
}

function hitOf(state: DenseState, id: string, key: number, label: Label): Hit {
  return hitWith(state.ops, id, key, state.metadata[label])
}

/** A hit of `key` with its metadata already read (none: the shared empty object). */
function hitWith(ops: MetricOps, id: string, key: number, metadata: Readonly<Metadata> | undefined): Hit {
  return { id, score: ops.score(key), distance: ops.distance(key), key, metadata: metadata ?? EMPTY }
}

const EMPTY = Object.freeze({})
