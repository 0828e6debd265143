/**
 * Score fusion as pure functions over the candidates of a hybrid search, each scored exactly on
 * both sides (the union of what either side retrieved). See ARCHITECTURE.md ("Hybrid ranking")
 * for why theoretical-minimum min-max normalization (TM2C2) and a convex combination.
 */

/** A candidate with its exact score on each side (BM25 0 when no query term matches). */
export interface Candidate {
  readonly id: string
  readonly dense: number
  readonly sparse: number
}

/** One side's part of a fused score: the raw score, its normalized value and its rank among the candidates. */
interface FusedPart {
  readonly score: number
  readonly normalized: number
  /** 1-based, by that side's score then id; absent on the sparse side for a document matching no term. */
  readonly rank?: number
}

export interface Fused {
  readonly id: string
  readonly fused: number
  readonly dense: FusedPart
  readonly sparse: FusedPart
}

/**
 * The lowest score each side can give: the metric's (cosine −1, l2 0) and BM25's 0. Undefined
 * when unbounded (dot): the candidates' own minimum is used instead.
 */
interface ScoreFloors {
  readonly dense: number | undefined
  readonly sparse: number | undefined
}

/** BM25 scores are sums of positive terms: 0 is its theoretical minimum. */
export const BM25_FLOOR = 0

/**
 * Theoretical-minimum min-max (TM2C2, Bruch, Gai & Ingber, ACM TOIS 2023):
 * s' = (s − floor) / (max − floor), the max over the candidates, clamped to [0, 1]. With the
 * floor undefined it is plain min-max over the candidates. Guards: an empty list gives an empty
 * array; all scores at the floor give 0; all-equal scores with no floor give 1 (each is as good
 * as the best). Always finite.
 */
function normalizeScores(scores: readonly number[], floor: number | undefined): number[] {
  if (scores.length === 0) return []
  let lo = Infinity
  let hi = -Infinity
  for (const s of scores) {
    if (s < lo) lo = s
    if (s > hi) hi = s
  }
  const base = floor ?? lo
  const span = hi - base
  if (!(span > 0) || !Number.isFinite(span)) return scores.map(() => (floor === undefined ? 1 : 0))
  return scores.map((s) => Math.min(1, Math.max(0, (s - base) / span)))
}

function byId(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** 1-based ranks by score descending, ties by id; `eligible` false leaves a candidate unranked. */
function ranksOf(candidates: readonly Candidate[], side: 'dense' | 'sparse', eligible: (c: Candidate) => boolean): (number | undefined)[] {
  const order = candidates.map((_, i) => i).filter((i) => eligible(candidates[i] as Candidate))
  order.sort((i, j) => {
    const a = candidates[i] as Candidate
    const b = candidates[j] as Candidate
    return b[side] - a[side] || byId(a.id, b.id)
  })
  const ranks = new Array<number | undefined>(candidates.length).fill(undefined)
  order.forEach((i, r) => (ranks[i] = r + 1))
  return ranks
}

function byFusedThenId(a: Fused, b: Fused): number {
  return b.fused - a.fused || byId(a.id, b.id)
}

/** Up to this many hits, their ranks are counted (rankAmong); past it, each side is sorted once (ranksOf). */
const COUNT_RANKS_UP_TO = 32

/** A candidate's 1-based rank on one side by counting the candidates ahead of it (score, then id): ranksOf's rank. */
function rankAmong(candidates: readonly Candidate[], side: 'dense' | 'sparse', i: number): number | undefined {
  const c = candidates[i] as Candidate
  if (side === 'sparse' && !(c.sparse > 0)) return undefined
  let rank = 1
  for (const o of candidates) if (o[side] > c[side] || (o[side] === c[side] && o.id < c.id)) rank++
  return rank
}

function part(score: number, normalized: number, rank: number | undefined): FusedPart {
  return rank === undefined ? { score, normalized } : { score, normalized, rank }
}

/**
 * fused = alpha · dense' + (1 − alpha) · sparse', each side normalized by `normalizeScores` over
 * the candidates (TM2C2). Every candidate carries both exact scores, so none is scored by its
 * absence from a list. In [0, 1], finite; the best `limit` (default all), by fused score, ties by id.
 */
export function convexFusion(candidates: readonly Candidate[], alpha: number, floors: ScoreFloors, limit = candidates.length): Fused[] {
  const dn = normalizeScores(candidates.map((c) => c.dense), floors.dense)
  const sn = normalizeScores(candidates.map((c) => c.sparse), floors.sparse)
  const fused = candidates.map((_, i) => alpha * (dn[i] as number) + (1 - alpha) * (sn[i] as number))
  const order = candidates.map((_, i) => i)
  order.sort((i, j) => (fused[j] as number) - (fused[i] as number) || byId((candidates[i] as Candidate).id, (candidates[j] as Candidate).id))
  // Ranks only for what is returned: for a few hits, counting the candidates ahead of each is
  // cheaper than sorting each side; for many, it would be quadratic (topK 10,000 over 30,000
  // candidates: 6·10^8 comparisons), so each side is sorted once.
  const sorted = limit > COUNT_RANKS_UP_TO ? { dense: ranksOf(candidates, 'dense', () => true), sparse: ranksOf(candidates, 'sparse', (c) => c.sparse > 0) } : undefined
  return order.slice(0, limit).map((i): Fused => {
    const c = candidates[i] as Candidate
    const denseRank = sorted ? sorted.dense[i] : rankAmong(candidates, 'dense', i)
    const sparseRank = sorted ? sorted.sparse[i] : rankAmong(candidates, 'sparse', i)
    return { id: c.id, fused: fused[i] as number, dense: part(c.dense, dn[i] as number, denseRank), sparse: part(c.sparse, sn[i] as number, sparseRank) }
  })
}

/**
 * Weighted reciprocal rank fusion: fused = alpha / (k + rank_dense) + (1 − alpha) / (k + rank_sparse),
 * ranks from 1 among the candidates by each side's exact score, k = 60 (Cormack et al., 2009); a
 * document matching no query term has no sparse rank and no sparse part. Ignores score gaps.
 */
export function rrfFusion(candidates: readonly Candidate[], alpha: number, floors: ScoreFloors, k = 60): Fused[] {
  const dn = normalizeScores(candidates.map((c) => c.dense), floors.dense)
  const sn = normalizeScores(candidates.map((c) => c.sparse), floors.sparse)
  const dr = ranksOf(candidates, 'dense', () => true)
  const sr = ranksOf(candidates, 'sparse', (c) => c.sparse > 0)
  const dense = candidates.map((c, i) => part(c.dense, dn[i] as number, dr[i]))
  const sparse = candidates.map((c, i) => part(c.sparse, sn[i] as number, sr[i]))
  return candidates
    .map((c, i): Fused => {
      const d = dense[i] as FusedPart
      const s = sparse[i] as FusedPart
      const fused = (d.rank === undefined ? 0 : alpha / (k + d.rank)) + (s.rank === undefined ? 0 : (1 - alpha) / (k + s.rank))
      return { id: c.id, fused, dense: d, sparse: s }
    })
    .sort(byFusedThenId)
}
