import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createIndex, type Hit, type Metric, type QuarryIndex } from '@quarry/core'
import { oracleDistance } from '../support/oracle.js'

const WORDS = ['wing', 'flow', 'shock', 'heat', 'plate', 'layer'] as const
const record = fc.tuple(fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 3, maxLength: 3 }).filter((v) => v.some((x) => x !== 0)), fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }))
const corpus = fc.array(record, { minLength: 1, maxLength: 30 })
const query = fc.tuple(fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 3, maxLength: 3 }).filter((v) => v.some((x) => x !== 0)), fc.array(fc.constantFrom(...WORDS, 'absent'), { minLength: 1, maxLength: 3 }))

function build(rows: readonly [number[], string[]][], metric: Metric = 'cosine'): QuarryIndex {
  const index = createIndex({ dimensions: 3, metric, dense: 'exact', text: { analyzer: { tokenizer: 'unicode', stem: false, stopWords: false } } })
  rows.forEach(([v, words], i) => index.add({ id: `d${String(i).padStart(2, '0')}`, vector: v, text: words.join(' '), metadata: { i } }))
  return index
}

const strip = (hits: readonly Hit[]): [string, number][] => hits.map((h) => [h.id, h.score])

/** The fusion written plainly: min-max per list (1 for a single or all-equal list), absent = 0. */
function oracleConvex(dense: readonly Hit[], sparse: readonly Hit[], alpha: number): [string, number][] {
  const norm = (hits: readonly Hit[]): Map<string, number> => {
    const scores = hits.map((h) => h.score)
    const lo = Math.min(...scores)
    const hi = Math.max(...scores)
    return new Map(hits.map((h) => [h.id, hi > lo ? (h.score - lo) / (hi - lo) : 1]))
  }
  const dn = norm(dense)
  const sn = norm(sparse)
  const ids = [...new Set([...dense.map((h) => h.id), ...sparse.map((h) => h.id)])]
  return ids
    .map((id): [string, number] => [id, alpha * (dn.get(id) ?? 0) + (1 - alpha) * (sn.get(id) ?? 0)])
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
}

describe('hybrid search', () => {
  it('alpha = 0 ranks exactly like text-only search, alpha = 1 exactly like vector-only search', () => {
    fc.assert(
      fc.property(corpus, query, fc.integer({ min: 1, max: 12 }), (rows, [v, words], k) => {
        const index = build(rows)
        const text = words.join(' ')
        expect(strip(index.search({ text, vector: v, alpha: 0, topK: k }).hits)).toEqual(strip(index.search({ text, topK: k }).hits))
        expect(strip(index.search({ text, vector: v, alpha: 1, topK: k }).hits)).toEqual(strip(index.search({ vector: v, topK: k }).hits))
      }),
      { numRuns: 200 },
    )
  })

  it('fuses min-max normalized lists by alpha, like the plainly written oracle; scores finite in [0, 1]', () => {
    fc.assert(
      fc.property(corpus, query, fc.double({ min: 0.01, max: 0.99, noNaN: true }), fc.integer({ min: 1, max: 10 }), (rows, [v, words], alpha, k) => {
        const index = build(rows)
        const text = words.join(' ')
        const depth = 50
        const dense = index.search({ vector: v, topK: depth }).hits
        const sparse = index.search({ text, topK: depth }).hits
        const { hits, stats } = index.search({ text, vector: v, alpha, topK: k, depth, explain: true })
        expect(stats.strategy).toBe('hybrid')
        const expected = oracleConvex(dense, sparse, alpha).slice(0, k)
        expect(hits.map((h) => h.id)).toEqual(expected.map(([id]) => id))
        hits.forEach((h, i) => {
          expect(h.score).toBeCloseTo((expected[i] as [string, number])[1], 12)
          expect(Number.isFinite(h.score) && h.score >= 0 && h.score <= 1).toBe(true)
          const parts = h.explain?.hybrid
          expect(parts?.fused).toBe(h.score)
          expect(alpha * (parts?.dense?.normalized ?? 0) + (1 - alpha) * (parts?.sparse?.normalized ?? 0)).toBeCloseTo(h.score, 12)
        })
      }),
      { numRuns: 200 },
    )
  })

  it('guards: no lexical match, a single hit, all-equal scores', () => {
    const index = build([
      [[1, 0, 0], ['wing']],
      [[1, 0, 0], ['wing']],
      [[0, 1, 0], ['flow']],
    ])
    // No lexical match: the sparse list is empty, fused = alpha · dense'.
    const none = index.search({ text: 'absent', vector: [1, 0, 0], alpha: 0.3, topK: 3 })
    expect(none.hits.map((h) => [h.id, h.score])).toEqual([
      ['d00', 0.3],
      ['d01', 0.3],
      ['d02', 0],
    ])
    // One sparse hit normalizes to 1; equal dense scores normalize to 1 each.
    const one = index.search({ text: 'flow', vector: [1, 0, 0], alpha: 0.5, topK: 3 })
    expect(one.hits.map((h) => h.id)).toEqual(['d00', 'd01', 'd02'])
    for (const h of one.hits) expect(h.score).toBe(0.5)
  })

  it('reciprocal rank fusion weighs 1 / (60 + rank) by alpha', () => {
    const index = build([
      [[1, 0, 0], ['flow']],
      [[0, 1, 0], ['wing', 'wing']],
      [[0.9, 0.1, 0], ['wing']],
    ])
    const { hits } = index.search({ text: 'wing', vector: [1, 0, 0], alpha: 0.5, fusion: 'rrf', topK: 3 })
    const dense = index.search({ vector: [1, 0, 0], topK: 3 }).hits.map((h) => h.id)
    const sparse = index.search({ text: 'wing', topK: 3 }).hits.map((h) => h.id)
    const rrf = (id: string): number => (dense.includes(id) ? 0.5 / (61 + dense.indexOf(id)) : 0) + (sparse.includes(id) ? 0.5 / (61 + sparse.indexOf(id)) : 0)
    const expected = ['d00', 'd01', 'd02'].sort((a, b) => rrf(b) - rrf(a) || (a < b ? -1 : 1))
    expect(hits.map((h) => h.id)).toEqual(expected)
    hits.forEach((h) => expect(h.score).toBeCloseTo(rrf(h.id), 14))
  })

  it('dense thresholds keep exactly the hits within maxDistance / above minSimilarity, per metric', () => {
    fc.assert(
      fc.property(corpus, query, fc.constantFrom<Metric>('cosine', 'l2', 'dot'), fc.double({ min: -3, max: 3, noNaN: true }), (rows, [v], metric, t) => {
        const index = build(rows, metric)
        const all = index.search({ vector: v, topK: 100 }).hits
        const within = index.search({ vector: v, topK: 100, maxDistance: t }).hits
        expect(within.map((h) => h.id)).toEqual(all.filter((h) => (h.distance as number) <= t).map((h) => h.id))
        const above = index.search({ vector: v, topK: 100, minSimilarity: t }).hits
        expect(above.map((h) => h.id)).toEqual(all.filter((h) => h.score >= t).map((h) => h.id))
        for (const h of within) expect(Math.abs((h.distance as number) - oracleDistance(metric, v, rows[Number(h.id.slice(1))]?.[0] ?? []))).toBeLessThan(1e-6)
      }),
      { numRuns: 150 },
    )
  })
})

describe('hybrid search by example and with thresholds', () => {
  it('leaves the example out of both sides, and keeps no hit beyond the dense threshold', () => {
    fc.assert(
      fc.property(corpus, query, fc.double({ min: 0, max: 2, noNaN: true }), (rows, [, words], t) => {
        const index = build(rows)
        const text = words.join(' ')
        const byExample = index.search({ id: 'd00', text, topK: 50 }).hits
        expect(byExample.map((h) => h.id)).not.toContain('d00')
        const v = rows[0]?.[0] as number[]
        const all = index.search({ vector: v, topK: 100 }).hits
        const distance = new Map(all.map((h) => [h.id, h.distance as number]))
        for (const hit of index.search({ vector: v, text, maxDistance: t, topK: 50 }).hits) {
          expect(distance.get(hit.id) as number).toBeLessThanOrEqual(t)
        }
      }),
      { numRuns: 150 },
    )
  })
})
