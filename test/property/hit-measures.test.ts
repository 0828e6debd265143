import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createIndex, measureOfKey, type Hit, type Metric, type QuarryIndex } from '@quarry/core'
import { oracleKey } from '../support/oracle.js'
import { runs } from '../support/runs.js'

/**
 * What hits carry besides their rank: the metric's key (1 - cos, -dot, squared euclidean) against
 * the plainly written oracle, `distance` and a dense `score` derived from it by `measureOfKey`, on
 * every path that has a query vector (dense exact and graph, hybrid, text at alpha 0), and the
 * precise keys (`preciseDistances`) equal to the oracle's float64 sums.
 */
const metrics: Metric[] = ['cosine', 'dot', 'l2']
const DIM = 4
const WORDS = ['wing', 'flow', 'shock', 'heat'] as const

const component = fc.oneof(fc.integer({ min: -4, max: 4 }), fc.double({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }))
const vector = fc.array(component, { minLength: DIM, maxLength: DIM }).filter((v) => v.some((x) => Math.abs(x) > 1e-3))
const row = fc.tuple(vector, fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 5 }))
const corpus = fc.array(row, { minLength: 1, maxLength: 40 })
const queryWords = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }).map((w) => w.join(' '))

function build(rows: readonly [number[], string[]][], metric: Metric, dense: 'exact' | 'hnsw'): QuarryIndex {
  const index = createIndex({ dimensions: DIM, metric, dense, planner: { exactBelow: dense === 'hnsw' ? 0 : 1000 }, text: { analyzer: { tokenizer: 'unicode', stem: false, stopWords: false } } })
  rows.forEach(([v, words], i) => index.add({ id: `d${String(i).padStart(2, '0')}`, vector: v, text: words.join(' ') }))
  return index
}

const vectorOf = (rows: readonly [number[], string[]][], id: string): number[] => (rows[Number(id.slice(1))] as [number[], string[]])[0]

/** The search's key agrees with the oracle to float32 rounding; distance (and a dense score) are its conversions. */
function expectMeasured(metric: Metric, rows: readonly [number[], string[]][], query: number[], hits: readonly Hit[], dense: boolean): void {
  for (const hit of hits) {
    expect(typeof hit.key, `${hit.id} carries its key`).toBe('number')
    const key = hit.key as number
    const want = oracleKey(metric, query, vectorOf(rows, hit.id))
    expect(Math.abs(key - want)).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(want)))
    const measure = measureOfKey(metric, key)
    expect(hit.distance).toBe(measure.distance)
    if (dense) expect(hit.score).toBe(measure.score)
  }
}

/** Precise keys are the oracle's float64 sums: the same bits for dot and l2, and for cosine up to the order of one division. */
function expectPrecise(metric: Metric, rows: readonly [number[], string[]][], query: number[], hits: readonly Hit[], dense: boolean): void {
  for (const hit of hits) {
    const key = hit.key as number
    const want = oracleKey(metric, query, vectorOf(rows, hit.id))
    if (metric === 'cosine') expect(Math.abs(key - want)).toBeLessThanOrEqual(1e-12)
    else expect(key).toBe(want)
    const measure = measureOfKey(metric, key)
    expect(hit.distance).toBe(measure.distance)
    if (dense) expect(hit.score).toBe(measure.score)
  }
}

const strip = (hits: readonly Hit[]): [string, number][] => hits.map((h) => [h.id, h.score])

describe.each(metrics)('hits carry the %s key', (metric) => {
  it('dense search, exact and through the graph: keys as the oracle, precise keys as its sums, the same ranking', () => {
    fc.assert(
      fc.property(corpus, vector, fc.integer({ min: 1, max: 12 }), fc.constantFrom<'exact' | 'hnsw'>('exact', 'hnsw'), (rows, query, k, dense) => {
        const index = build(rows, metric, dense)
        const { hits, stats } = index.search({ vector: query, topK: k })
        expect(stats.strategy).toBe(dense)
        expect(hits.length).toBe(Math.min(k, rows.length))
        expectMeasured(metric, rows, query, hits, true)
        const precise = index.search({ vector: query, topK: k, preciseDistances: true }).hits
        expect(precise.map((h) => h.id)).toEqual(hits.map((h) => h.id))
        expectPrecise(metric, rows, query, precise, true)
      }),
      { numRuns: runs(60) },
    )
  })

  it('hybrid hits: the dense key of each fused hit, the fused score kept when measured precisely', () => {
    fc.assert(
      fc.property(corpus, vector, queryWords, fc.double({ min: 0.05, max: 0.95, noNaN: true }), fc.integer({ min: 1, max: 8 }), (rows, query, text, alpha, k) => {
        const index = build(rows, metric, 'exact')
        const hits = index.search({ vector: query, text, alpha, topK: k }).hits
        expectMeasured(metric, rows, query, hits, false)
        const explained = index.search({ vector: query, text, alpha, topK: k, explain: true }).hits
        expect(explained.map((hit) => [hit.id, hit.explain?.hybrid?.dense.distance])).toEqual(hits.map((hit) => [hit.id, hit.distance]))
        const precise = index.search({ vector: query, text, alpha, topK: k, preciseDistances: true }).hits
        expect(strip(precise)).toEqual(strip(hits))
        expectPrecise(metric, rows, query, precise, false)
      }),
      { numRuns: runs(60) },
    )
  })

  it('text hits at alpha 0 with a query vector: the text ranking, each hit measured, the threshold applied to it', () => {
    fc.assert(
      fc.property(corpus, vector, queryWords, fc.integer({ min: 1, max: 8 }), fc.double({ min: -3, max: 12, noNaN: true }), (rows, query, text, k, t) => {
        const index = build(rows, metric, 'exact')
        const textOnly = index.search({ text, topK: k }).hits
        for (const hit of textOnly) expect([hit.key, hit.distance]).toEqual([undefined, undefined])
        const measured = index.search({ vector: query, text, alpha: 0, topK: k }).hits
        expect(strip(measured)).toEqual(strip(textOnly))
        expectMeasured(metric, rows, query, measured, false)
        // The threshold keeps the text ranking's hits within it, and fills topK from further down.
        const all = index.search({ vector: query, text, alpha: 0, topK: 100 }).hits
        const within = index.search({ vector: query, text, alpha: 0, topK: k, maxDistance: t }).hits
        expect(strip(within)).toEqual(strip(all.filter((h) => (h.distance as number) <= t).slice(0, k)))
        const precise = index.search({ vector: query, text, alpha: 0, topK: k, preciseDistances: true }).hits
        expect(strip(precise)).toEqual(strip(textOnly))
        expectPrecise(metric, rows, query, precise, false)
      }),
      { numRuns: runs(60) },
    )
  })
})

describe('precise distances', () => {
  it('measure the query as given, not its unit-length float32 copy (cosine)', () => {
    const index = createIndex({ dimensions: 3, metric: 'cosine', dense: 'exact' })
    const v = [0.1, 0.7, 0.3]
    index.add({ id: 'a', vector: v })
    const q = [0.3, 0.2, 0.9]
    const want = oracleKey('cosine', q, v)
    const [fast] = index.search({ vector: q, topK: 1 }).hits
    const [precise] = index.search({ vector: new Float32Array(q), topK: 1, preciseDistances: true }).hits
    expect(Math.abs((precise?.key as number) - want)).toBeLessThanOrEqual(1e-15)
    expect(Math.abs((fast?.key as number) - want)).toBeLessThanOrEqual(1e-6)
    expect(() => index.search({ vector: q, preciseDistances: 'yes' as never })).toThrowError(expect.objectContaining({ code: 'INVALID_QUERY', path: 'preciseDistances' }) as Error)
  })

  it('query by example measures against the example stored vector and leaves it out', () => {
    const index = createIndex({ dimensions: 2, metric: 'l2', dense: 'exact' })
    index.add({ id: 'a', vector: [1, 1] })
    index.add({ id: 'b', vector: [2, 3] })
    index.add({ id: 'c', vector: [-1, 0.5] })
    const hits = index.search({ id: 'a', topK: 5, preciseDistances: true }).hits
    expect(hits.map((h) => [h.id, h.key])).toEqual([['c', oracleKey('l2', [1, 1], [-1, 0.5])], ['b', oracleKey('l2', [1, 1], [2, 3])]])
  })
})
