/** How filtered and small searches choose between the exact scan and the HNSW graph. */
export interface PlannerOptions {
  /**
   * Collections with at most this many records are always scanned exactly; and a filtered search
   * whose filter is estimated to pass at most this many records scans just those exactly, however
   * big the index (a small scope of a big index). @defaultValue 1000
   */
  exactBelow?: number
  /**
   * A filter passing at most this many records is answered by scanning exactly those records: a
   * declarative filter (its count is exact) whatever its selectivity, a filter function estimated
   * (from a sample) to pass at most this many once evaluated on every record and counted; more use
   * the graph. The count holds for searches whose candidate list (the larger of `topK` and `ef`)
   * is at most 64, where it was measured; a larger list makes a graph search visit that many times
   * more records, and the limit grows by the same factor (topK 1000: 125,000 records).
   * @defaultValue 8000
   */
  exactFilterMax?: number
  /**
   * A filter estimated to pass at least this fraction of records, and more than `exactFilterMax`
   * records, post-filters a graph search over-fetched by 1/fraction, without evaluating the filter
   * on every record. @defaultValue 0.02
   */
  postFilterAbove?: number
}

export type ResolvedPlannerOptions = Required<PlannerOptions>

/**
 * Crossovers measured by `pnpm bench filtered` (100k × 64-d, declarative filter, each strategy
 * forced): a scan of the passing rows beats the bitset-restricted graph below about 7,000 rows and
 * the post-filtered graph below about 7,000 to 10,000 (docs/filters.md has the table).
 */
export const PLANNER_DEFAULTS: ResolvedPlannerOptions = { exactBelow: 1000, exactFilterMax: 8000, postFilterAbove: 0.02 }

/**
 * How a dense search runs:
 * - `exact`: brute-force scan of every record (no graph, tiny collection, or asked for);
 * - `hnsw`: graph search, no filter;
 * - `exact-filtered`: evaluate the filter on every record, then scan only the passing ones;
 * - `hnsw-filtered`: evaluate the filter into a bitset, graph search restricted to it;
 * - `hnsw-postfilter`: graph search over-fetched by 1/selectivity, then filtered (broad filters).
 */
export type DenseStrategy = 'exact' | 'hnsw' | 'exact-filtered' | 'hnsw-filtered' | 'hnsw-postfilter'

export interface DensePlan {
  readonly strategy: DenseStrategy
  /** Why this strategy, in words (shown in `stats.reason`). */
  readonly reason: string
}

/**
 * The candidate list (max(topK, ef)) at which `exactFilterMax` was measured: `bench filtered`
 * runs k = 10 and ef = 64.
 */
const MEASURED_LIST = 64

/**
 * The most passing records a search scans exactly rather than searching the graph:
 * `exactFilterMax` (at least `exactBelow`), scaled by how much longer than 64 the search's
 * candidate list is. A graph search's work grows with max(k, ef) (it visits about that many
 * passing records, and keeps that many candidates in its heaps); a scan's does not. Unscaled,
 * topK 1000 with a filter passing 8% of 100k records post-filtered a graph search over-fetched to
 * about 19,000 candidates rather than scan its 8,000 rows.
 */
export function scanLimit(options: ResolvedPlannerOptions, k: number, ef: number): number {
  return Math.max(options.exactBelow, options.exactFilterMax) * Math.max(1, Math.max(k, ef) / MEASURED_LIST)
}

interface PlanInput {
  readonly live: number
  /** Hits asked for and the search's ef: the graph's candidate list is the larger. */
  readonly k: number
  readonly ef: number
  readonly hasGraph: boolean
  readonly forceExact: boolean
  /** Estimated fraction passing the filter; undefined without a filter. */
  readonly selectivity: number | undefined
  /** Records passing, when known exactly before the search (a declarative filter). */
  readonly passing?: number
  readonly options: ResolvedPlannerOptions
}

/** The plan of most searches, made once. */
const GRAPH_UNFILTERED: DensePlan = Object.freeze({ strategy: 'hnsw', reason: 'no filter' })

/** Chooses a strategy before any filter is fully evaluated (see {@link refinePlan} after). */
export function planDense(input: PlanInput): DensePlan {
  const { live, hasGraph, forceExact, selectivity, options } = input
  const limit = scanLimit(options, input.k, input.ef)
  const filtered = selectivity !== undefined
  const exact: DenseStrategy = filtered ? 'exact-filtered' : 'exact'
  if (forceExact) return { strategy: exact, reason: 'exact search was requested' }
  if (!hasGraph) return { strategy: exact, reason: 'the index has no HNSW graph (dense: "exact")' }
  if (live <= options.exactBelow) return { strategy: exact, reason: `${live} records <= planner.exactBelow (${options.exactBelow})` }
  if (!filtered) return GRAPH_UNFILTERED
  // A handful of passing records is cheaper to scan than any graph search, whatever fraction they are.
  const passing = Math.round(selectivity * live)
  if (passing <= options.exactBelow) {
    return { strategy: 'exact-filtered', reason: `about ${passing} records pass <= planner.exactBelow (${options.exactBelow}): scanning them exactly is cheaper than the graph` }
  }
  // Known exactly: as few rows as this scan faster than either graph search, at any selectivity.
  if (input.passing !== undefined && input.passing <= limit) {
    return { strategy: 'exact-filtered', reason: `${input.passing} records pass <= ${limitText(options, limit)}: scanning them exactly is cheaper than the graph` }
  }
  // A filter function estimated to pass as few: evaluated on every record (one tight loop,
  // filter/predicate.ts), then its passing records scanned, or the graph searched within them when
  // more pass than the sample said (refinePlan). Post-filtering must over-fetch by 1/selectivity:
  // the scan wins below a few percent even on the cheapest graph bench filtered measures, and
  // further on harder data; near 8% on that graph post-filtering can win (docs/filters.md).
  if (input.passing === undefined && passing <= limit) {
    return { strategy: 'hnsw-filtered', reason: `about ${passing} records pass <= ${limitText(options, limit)}: the filter is evaluated on every record` }
  }
  if (selectivity >= options.postFilterAbove) {
    return { strategy: 'hnsw-postfilter', reason: `estimated selectivity ${fmt(selectivity)} >= planner.postFilterAbove (${options.postFilterAbove})` }
  }
  return { strategy: 'hnsw-filtered', reason: `estimated selectivity ${fmt(selectivity)} < planner.postFilterAbove (${options.postFilterAbove})` }
}

/** After the filter is evaluated exactly: scan the passing records when they are few enough. */
export function refinePlan(plan: DensePlan, allowed: number, limit: number): DensePlan {
  if (plan.strategy !== 'hnsw-filtered') return plan
  if (allowed <= limit) return { strategy: 'exact-filtered', reason: `${plan.reason}; ${allowed} records pass <= ${Math.round(limit)}: scanning them exactly is cheaper than the graph` }
  return { strategy: 'hnsw-filtered', reason: `${plan.reason}; ${allowed} records pass > ${Math.round(limit)}: graph search restricted to them` }
}

/** How a reason names the scan limit: the option, and the scaled count when the list is longer than 64. */
function limitText(options: ResolvedPlannerOptions, limit: number): string {
  const base = `planner.exactFilterMax (${options.exactFilterMax})`
  return limit > Math.max(options.exactBelow, options.exactFilterMax) ? `${Math.round(limit)} (${base}, scaled to the search's candidate list)` : base
}

function fmt(x: number): string {
  return `${(x * 100).toFixed(1)}%`
}
