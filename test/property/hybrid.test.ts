import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createIndex, type Hit, type Metric, type QuarryIndex } from '@quarry/core'
import { oracleDistance } from '../support/oracle.js'
import { runs } from '../support/runs.js'
import { convexFusion, type Candidate } from '../../packages/core/src/hybrid/fusion.js'

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

/**
 * The fusion written plainly, over every document: each side's exact score of every document
 * (dense from the exact vector search over all records, BM25 from the text search over all, 0
 * when no term matches), the candidates are the union of each side's top `depth`, each side
 * normalized by its theoretical minimum (cosine -1, BM25 0) and its maximum over the candidates.
 */
function oracleConvex(index: QuarryIndex, v: number[], text: string, alpha: number, depth: number): { id: string; fused: number; dense: number; sparse: number; dn: number; sn: number }[] {
  const dense = index.search({ vector: v, topK: 1000 }).hits
  const sparse = index.search({ text, topK: 1000 }).hits
  const denseOf = new Map(dense.map((h) => [h.id, h.score]))
  const sparseOf = new Map(sparse.map((h) => [h.id, h.score]))
  const ids = [...new Set([...dense.slice(0, depth).map((h) => h.id), ...sparse.slice(0, depth).map((h) => h.id)])]
  const dMax = Math.max(...ids.map((id) => denseOf.get(id) as number))
  const sMax = Math.max(...ids.map((id) => sparseOf.get(id) ?? 0))
  return ids
    .map((id) => {
      const d = denseOf.get(id) as number
      const s = sparseOf.get(id) ?? 0
      const dn = dMax > -1 ? Math.min(1, Math.max(0, (d + 1) / (dMax + 1))) : 0
      const sn = sMax > 0 ? s / sMax : 0
      return { id, fused: alpha * dn + (1 - alpha) * sn, dense: d, sparse: s, dn, sn }
    })
    .sort((x, y) => y.fused - x.fused || (x.id < y.id ? -1 : 1))
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
      { numRuns: runs(200) },
    )
  })

  it('explain is false by default: fused hits carry explain.hybrid only when asked; at alpha 1 explain keeps the BM25 terms', () => {
    const index = build([
      [[1, 0, 0], ['wing', 'flow']],
      [[0, 1, 0], ['shock']],
      [[1, 1, 0], ['wing']],
    ])
    const request = { vector: [1, 0, 0], text: 'wing', topK: 3 }
    const plain = index.search(request).hits
    expect(plain.map((h) => Object.keys(h))).toEqual(plain.map(() => ['id', 'score', 'distance', 'key', 'metadata']))
    expect(index.search({ ...request, explain: false }).hits).toEqual(plain)
    const explained = index.search({ ...request, explain: true }).hits
    expect(explained.map(({ explain, ...hit }) => [hit, explain?.hybrid?.fused, explain?.bm25?.map((t) => t.term)])).toEqual(plain.map((h) => [h, h.score, ['wing']]))
    // alpha 1 ranks by the vector alone, as a vector search does; explain gives each hit its text's terms (d01 matches none).
    const dense = index.search({ vector: [1, 0, 0], topK: 3 }).hits
    const text = new Map(index.search({ text: 'wing', topK: 3, explain: true }).hits.map((h) => [h.id, h.explain?.bm25]))
    const alpha1 = index.search({ ...request, alpha: 1, explain: true }).hits
    expect(alpha1.map(({ explain, ...hit }) => [hit, explain])).toEqual(dense.map((h) => [h, { bm25: text.get(h.id) ?? [expect.objectContaining({ term: 'wing', tf: 0, score: 0 })] }]))
    expect(index.search({ ...request, alpha: 1 }).hits).toEqual(dense)
  })

  it('fuses the union of both sides, each candidate scored exactly on both, like the plainly written oracle', () => {
    fc.assert(
      fc.property(corpus, query, fc.double({ min: 0.01, max: 0.99, noNaN: true }), fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 8 }), (rows, [v, words], alpha, k0, depth) => {
        const index = build(rows)
        const text = words.join(' ')
        const k = Math.min(k0, depth)
        const { hits, stats } = index.search({ text, vector: v, alpha, topK: k, depth, explain: true })
        expect(stats.strategy).toBe('hybrid')
        const expected = oracleConvex(index, v, text, alpha, depth).slice(0, k)
        expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id))
        hits.forEach((h, i) => {
          const e = expected[i] as (typeof expected)[number]
          expect(h.score).toBeCloseTo(e.fused, 12)
          expect(Number.isFinite(h.score) && h.score >= 0 && h.score <= 1).toBe(true)
          const parts = h.explain?.hybrid
          // Both raw scores are the exact single-mode scores, whichever list the candidate came from.
          expect(parts?.dense.score).toBe(e.dense)
          expect(parts?.sparse.score).toBe(e.sparse)
          expect(parts?.dense.distance).toBe(h.distance)
          expect(Math.abs((h.distance as number) - oracleDistance('cosine', v, rows[Number(h.id.slice(1))]?.[0] ?? []))).toBeLessThan(1e-6)
          expect(parts?.dense.normalized).toBeCloseTo(e.dn, 12)
          expect(parts?.sparse.normalized).toBeCloseTo(e.sn, 12)
          expect(parts?.fused).toBe(h.score)
          expect(alpha * (parts?.dense.normalized ?? NaN) + (1 - alpha) * (parts?.sparse.normalized ?? NaN)).toBeCloseTo(h.score, 12)
          expect(h.explain?.bm25?.reduce((sum, t) => sum + t.score, 0) ?? NaN).toBeCloseTo(e.sparse, 12)
        })
        // Ties by id: equal fused scores are in id order.
        for (let i = 1; i < hits.length; i++) {
          const [a, b] = [hits[i - 1] as Hit, hits[i] as Hit]
          expect(a.score > b.score || (a.score === b.score && a.id < b.id)).toBe(true)
        }
      }),
      { numRuns: runs(200) },
    )
  })

  it('a candidate missing from one list gets its exact score on that side, not the list minimum', () => {
    const index = build([
      [[1, 0, 0], ['flow']],
      [[0, 1, 0], ['wing', 'wing']],
      [[0.9, 0.1, 0], ['wing']],
    ])
    const dense = index.search({ vector: [0.9, 0.1, 0], topK: 3 }).hits
    const sparse = index.search({ text: 'wing', topK: 3 }).hits
    expect([dense[0]?.id, sparse[0]?.id]).toEqual(['d02', 'd01'])
    // depth 1: the dense list holds d02 only, the text list d01 only; each gets its exact other score.
    const fusedAt = (alpha: number) => index.search({ text: 'wing', vector: [0.9, 0.1, 0], alpha, topK: 1, depth: 1, explain: true }).hits[0]
    const d02 = fusedAt(0.9)
    expect(d02?.id).toBe('d02')
    expect(d02?.explain?.hybrid?.sparse).toEqual({ score: sparse.find((h) => h.id === 'd02')?.score, normalized: (sparse[1]?.score ?? NaN) / (sparse[0]?.score ?? NaN), rank: 2 })
    const d01 = fusedAt(0.1)
    expect(d01?.id).toBe('d01')
    expect(d01?.explain?.hybrid?.dense.score).toBe(dense.find((h) => h.id === 'd01')?.score)
    expect(d01?.explain?.hybrid?.dense.rank).toBe(2)
    expect(d01?.distance).toBe(dense.find((h) => h.id === 'd01')?.distance)
  })

  it('guards: no lexical match, a single hit, all-equal scores', () => {
    const index = build([
      [[1, 0, 0], ['wing']],
      [[1, 0, 0], ['wing']],
      [[0, 1, 0], ['flow']],
    ])
    // No lexical match: every BM25 score is 0 (normalized 0), fused = alpha · (cos + 1) / (max + 1).
    const none = index.search({ text: 'absent', vector: [1, 0, 0], alpha: 0.3, topK: 3 })
    expect(none.hits.map((h) => h.id)).toEqual(['d00', 'd01', 'd02'])
    none.hits.forEach((h, i) => expect(h.score).toBeCloseTo([0.3, 0.3, 0.15][i] as number, 6))
    // One text hit normalizes to 1; equal dense scores normalize equally and tie by id.
    const one = index.search({ text: 'flow', vector: [1, 0, 0], alpha: 0.5, topK: 3 })
    expect(one.hits.map((h) => h.id)).toEqual(['d02', 'd00', 'd01'])
    one.hits.forEach((h, i) => expect(h.score).toBeCloseTo([0.75, 0.5, 0.5][i] as number, 6))
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
      { numRuns: runs(150) },
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
        // At alpha 0 (the text alone ranks) too: the text search's hits and scores, less the example.
        const textOnly = index.search({ id: 'd00', text, topK: 5, alpha: 0 }).hits
        const plain = index.search({ text, topK: 6 }).hits.filter((h) => h.id !== 'd00').slice(0, 5)
        expect(textOnly.map((h) => [h.id, h.score])).toEqual(plain.map((h) => [h.id, h.score]))
        const v = rows[0]?.[0] as number[]
        const all = index.search({ vector: v, topK: 100 }).hits
        const distance = new Map(all.map((h) => [h.id, h.distance as number]))
        for (const hit of index.search({ vector: v, text, maxDistance: t, topK: 50 }).hits) {
          expect(distance.get(hit.id) as number).toBeLessThanOrEqual(t)
        }
      }),
      { numRuns: runs(150) },
    )
  })
})

describe('convex fusion: the ranks an explanation gives', () => {
  // Each side's rank counted plainly: 1 + the candidates ahead by score, then by id; no sparse rank without a match.
  const counted = (all: readonly Candidate[], c: Candidate, side: 'dense' | 'sparse'): number | undefined =>
    side === 'sparse' && !(c.sparse > 0) ? undefined : 1 + all.filter((o) => o[side] > c[side] || (o[side] === c[side] && o.id < c.id)).length
  it('property: every returned hit carries the counted ranks, for a few hits (counted) and for many (each side sorted once)', () => {
    const candidates = fc.uniqueArray(fc.record({ id: fc.stringMatching(/^[a-e]{1,3}$/), dense: fc.constantFrom(-0.5, 0, 0.25, 0.5, 0.9, 1), sparse: fc.constantFrom(0, 0, 1.5, 2, 7.25) }), { selector: (c) => c.id, minLength: 1, maxLength: 120 })
    fc.assert(
      fc.property(candidates, fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 1, max: 120 }), (all, alpha, limit) => {
        const fused = convexFusion(all, alpha, { dense: undefined, sparse: 0 }, limit)
        expect(fused).toHaveLength(Math.min(limit, all.length))
        for (const f of fused) {
          const c = all.find((x) => x.id === f.id) as Candidate
          expect([f.id, f.dense.rank, f.sparse.rank]).toEqual([f.id, counted(all, c, 'dense'), counted(all, c, 'sparse')])
        }
      }),
      { numRuns: runs(300) },
    )
  })
})
