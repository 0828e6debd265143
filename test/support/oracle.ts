import { expect } from 'vitest'
import type { Hit, Metric } from '@quarry/core'

/**
 * The metric's key of two vectors (smaller is closer: 1 - cos, -dot, squared euclidean), written
 * plainly in float64 from float32-rounded inputs.
 */
export function oracleKey(metric: Metric, q: readonly number[], v: readonly number[]): number {
  const a = q.map(Math.fround)
  const b = v.map(Math.fround)
  let dot = 0
  let qq = 0
  let vv = 0
  let l2 = 0
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as number
    const y = b[i] as number
    dot += x * y
    qq += x * x
    vv += y * y
    l2 += (x - y) * (x - y)
  }
  if (metric === 'cosine') return 1 - dot / (Math.sqrt(qq) * Math.sqrt(vv))
  if (metric === 'dot') return -dot
  return l2
}

/** The distance of two vectors: the key, or for l2 its square root (euclidean). */
export function oracleDistance(metric: Metric, q: readonly number[], v: readonly number[]): number {
  const key = oracleKey(metric, q, v)
  return metric === 'l2' ? Math.sqrt(key) : key
}

export interface OracleHit {
  id: string
  distance: number
}

/** Brute force: every record's distance, sorted by distance then id, cut to k. */
export function oracleSearch(
  metric: Metric,
  records: ReadonlyMap<string, readonly number[]>,
  query: readonly number[],
  k: number,
  keep: (id: string) => boolean = () => true,
): OracleHit[] {
  return [...records]
    .filter(([id]) => keep(id))
    .map(([id, v]) => ({ id, distance: oracleDistance(metric, query, v) }))
    .sort((x, y) => x.distance - y.distance || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
    .slice(0, k)
}

/**
 * Asserts that `actual` is the oracle's top k of `ranking` (the full oracle ranking): same length, the same distance at every rank and
 * for every returned id (within `eps`, float32 storage), the same id wherever the oracle's
 * distance is unambiguous, and ids ascending among exactly equal distances.
 */
export function expectSameRanking(actual: readonly Hit[], ranking: readonly OracleHit[], k: number, all: ReadonlyMap<string, number>, eps = 1e-5, exactTies = true): void {
  const expected = ranking.slice(0, k)
  expect(actual.map((h) => h.id).length).toBe(expected.length)
  actual.forEach((hit, i) => {
    expect(typeof hit.distance, 'dense hits carry a distance').toBe('number')
    const want = expected[i] as OracleHit
    expect(Math.abs((hit.distance as number) - want.distance)).toBeLessThanOrEqual(eps)
    const own = all.get(hit.id)
    expect(own, `hit ${hit.id} is not a live record`).toBeDefined()
    expect(Math.abs((hit.distance as number) - (own as number))).toBeLessThanOrEqual(eps)
    // Neighbours come from the whole ranking: a near-tie just past k makes the k-th place ambiguous.
    const prev = ranking[i - 1]
    const next = ranking[i + 1]
    const unambiguous = (!prev || want.distance - prev.distance > 2 * eps) && (!next || next.distance - want.distance > 2 * eps)
    if (unambiguous) expect(hit.id).toBe(want.id)
    const before = actual[i - 1]
    // Equal public distances are equal keys only in exact arithmetic: with fractional inputs two
    // keys a few ulps apart can round to one distance (l2 takes a square root), and keys decide.
    if (exactTies && before && (before.distance as number) === (hit.distance as number)) expect(before.id < hit.id).toBe(true)
    if (before) expect((before.distance as number)).toBeLessThanOrEqual((hit.distance as number))
  })
}

/** Every record's oracle distance to the query, by id. */
export function oracleDistances(metric: Metric, records: ReadonlyMap<string, readonly number[]>, query: readonly number[]): Map<string, number> {
  return new Map([...records].map(([id, v]) => [id, oracleDistance(metric, query, v)]))
}
