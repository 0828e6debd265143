/**
 * Score fusion as pure functions over (id, score) lists, each sorted best first. See
 * ARCHITECTURE.md ("Hybrid ranking") for why min-max normalization and a convex combination.
 */

export interface Scored {
  readonly id: string
  readonly score: number
}

export interface Fused {
  readonly id: string
  readonly fused: number
  /** The list's own score and its normalized value; absent when the id is not in that list. */
  readonly dense?: { readonly score: number; readonly normalized: number; readonly rank: number }
  readonly sparse?: { readonly score: number; readonly normalized: number; readonly rank: number }
}

/**
 * Min-max normalization to [0, 1]. A single hit, or hits whose scores are all equal, normalize
 * to 1 (each is as good as the best); an empty list gives an empty map. Always finite.
 */
export function minMax(list: readonly Scored[]): Map<string, number> {
  const out = new Map<string, number>()
  if (list.length === 0) return out
  let lo = Infinity
  let hi = -Infinity
  for (const { score } of list) {
    if (score < lo) lo = score
    if (score > hi) hi = score
  }
  const span = hi - lo
  for (const { id, score } of list) out.set(id, span > 0 && Number.isFinite(span) ? (score - lo) / span : 1)
  return out
}

function byFusedThenId(a: Fused, b: Fused): number {
  return b.fused - a.fused || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
}

function parts(dense: readonly Scored[], sparse: readonly Scored[], normalize: (list: readonly Scored[]) => Map<string, number>) {
  const dn = normalize(dense)
  const sn = normalize(sparse)
  const ids = new Set<string>([...dense.map((d) => d.id), ...sparse.map((s) => s.id)])
  const dIndex = new Map(dense.map((d, rank) => [d.id, { score: d.score, normalized: dn.get(d.id) ?? 0, rank: rank + 1 }]))
  const sIndex = new Map(sparse.map((s, rank) => [s.id, { score: s.score, normalized: sn.get(s.id) ?? 0, rank: rank + 1 }]))
  return { ids, dIndex, sIndex }
}

/**
 * fused = alpha · dense' + (1 - alpha) · sparse', each list min-max normalized; an id missing
 * from a list contributes 0 for it. Sorted by fused score, ties by id.
 */
export function convexFusion(dense: readonly Scored[], sparse: readonly Scored[], alpha: number): Fused[] {
  const { ids, dIndex, sIndex } = parts(dense, sparse, minMax)
  const out: Fused[] = []
  for (const id of ids) {
    const d = dIndex.get(id)
    const s = sIndex.get(id)
    out.push({ id, fused: alpha * (d?.normalized ?? 0) + (1 - alpha) * (s?.normalized ?? 0), ...(d ? { dense: d } : {}), ...(s ? { sparse: s } : {}) })
  }
  return out.sort(byFusedThenId)
}

/**
 * Weighted reciprocal rank fusion: fused = alpha / (k + rank_dense) + (1 - alpha) / (k + rank_sparse),
 * ranks from 1, k = 60 (Cormack et al., 2009). Uses ranks only, so no normalization is needed.
 */
export function rrfFusion(dense: readonly Scored[], sparse: readonly Scored[], alpha: number, k = 60): Fused[] {
  const { ids, dIndex, sIndex } = parts(dense, sparse, minMax)
  const out: Fused[] = []
  for (const id of ids) {
    const d = dIndex.get(id)
    const s = sIndex.get(id)
    const fused = (d ? alpha / (k + d.rank) : 0) + (s ? (1 - alpha) / (k + s.rank) : 0)
    out.push({ id, fused, ...(d ? { dense: d } : {}), ...(s ? { sparse: s } : {}) })
  }
  return out.sort(byFusedThenId)
}
