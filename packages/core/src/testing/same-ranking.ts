import { intOption, numberOption } from './check.js'

/** An entry of a ranking: an id and the score it was ranked by (a similarity or a distance: ties only look at differences). */
export interface RankedEntry {
  readonly id: string
  readonly score: number
}

/** Options of {@link sameRanking}. */
export interface SameRankingOptions {
  /** Scores within this (absolute) difference are ties, and may swap. @defaultValue 1e-6 */
  readonly tolerance?: number
  /** Ranks compared: the first k of `expected`. @defaultValue expected.length */
  readonly k?: number
}

/** The verdict of {@link sameRanking}: the first rank (1 = best) where the rankings differ, and why. */
export type RankingComparison = { readonly same: true } | { readonly same: false; readonly rank: number; readonly reason: string }

/**
 * Whether `actual` ranks like `expected` (the reference, e.g. `exactOracle`'s hits), best
 * first. With n = min(k, expected.length) and E = the first n entries of `expected`, it is the same
 * ranking when:
 *
 * 1. `actual` has exactly n entries, with distinct ids;
 * 2. at every rank i, `actual[i].id` is in `expected` and its reference score is within
 *    `tolerance` of `E[i].score`: the same id as the reference's, or one tied with it. So equal
 *    ids in equal order wherever scores differ by more than the tolerance; tied entries may swap;
 *    and an entry of `expected` past k tied with `E[n-1]` may take its place (pass the reference's
 *    top k + a few, and `k`, so that a tie at the cut is not a false failure);
 * 3. at every rank i where `actual[i]` carries a `score`, it is within `tolerance` of `E[i].score`
 *    (the store scores on the reference's scale: map distances to similarities first if needed).
 *
 * Ties are judged against the reference score of each rank, never chained: with a tolerance of
 * 0.01, scores 0.90, 0.895 and 0.89 let the first two swap and the last two, not the first and
 * the last. Returns `{ same: true }`, or the first rank that differs with a reason.
 */
export function sameRanking(expected: readonly RankedEntry[], actual: readonly { readonly id: string; readonly score?: number }[], options: SameRankingOptions = {}): RankingComparison {
  const tolerance = numberOption(options.tolerance, 'tolerance', 0, Number.MAX_VALUE, 1e-6)
  const k = intOption(options.k, 'k', 1, Number.MAX_SAFE_INTEGER, Math.max(expected.length, 1))
  const n = Math.min(k, expected.length)
  const reference = new Map<string, number>()
  for (const e of expected) if (!reference.has(e.id)) reference.set(e.id, e.score)
  const seen = new Map<string, number>()
  for (let i = 0; i < Math.min(n, actual.length); i++) {
    const { id, score } = actual[i] as { readonly id: string; readonly score?: number }
    const want = expected[i] as RankedEntry
    const rank = i + 1
    const earlier = seen.get(id)
    if (earlier !== undefined) return differ(rank, `"${id}" is at rank ${earlier} and again at rank ${rank}.`)
    seen.set(id, rank)
    const own = reference.get(id)
    if (own === undefined) return differ(rank, `"${id}" is not in the reference ranking; "${want.id}" (score ${want.score}) belongs at rank ${rank}.`)
    if (!(Math.abs(own - want.score) <= tolerance)) {
      return differ(rank, `"${id}" has reference score ${own}, but rank ${rank} scores ${want.score} (difference above the tolerance ${tolerance}): "${want.id}" belongs here.`)
    }
    if (score !== undefined && !(Math.abs(score - want.score) <= tolerance)) {
      return differ(rank, `"${id}" is scored ${score}; the reference scores rank ${rank} ${want.score} (difference above the tolerance ${tolerance}).`)
    }
  }
  if (actual.length !== n) return differ(Math.min(n, actual.length) + 1, `actual has ${actual.length} entries; expected ${n} (k = ${k}, the reference has ${expected.length}).`)
  return { same: true }
}

function differ(rank: number, reason: string): RankingComparison {
  return { same: false, rank, reason }
}
