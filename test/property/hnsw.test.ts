import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createIndex, type Metric, type QuarryIndex } from '@quarry/core'
import { clustered } from '../support/random.js'
import { recallAtK } from '@quarry/core/testing'
import { expectSameRanking, oracleDistances, oracleSearch } from '../support/oracle.js'

const DIM = 24

function build(metric: Metric, vectors: number[][], planner: { exactBelow?: number; exactFilterMax?: number; postFilterAbove?: number } = {}): QuarryIndex {
  const index = createIndex({ dimensions: DIM, metric, planner: { exactBelow: 0, ...planner } })
  index.addMany(vectors.map((vector, i) => ({ id: `doc-${String(i).padStart(5, '0')}`, vector, metadata: { bucket: i % 1000 } })))
  return index
}

describe('HNSW recall against the exact oracle (clustered data, default graph settings)', () => {
  it.each<Metric>(['cosine', 'l2', 'dot'])('recall@10 >= 0.95 (%s)', (metric) => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), (seed) => {
        // Overlapping clusters (noise 1.5 against centre spread 1): recall here is ~0.99, not a trivial 1.
        const data = clustered(seed, 4000 + 50, DIM, 40, 1.5)
        const base = data.slice(0, 4000)
        const queries = data.slice(4000)
        const index = build(metric, base)
        const records = new Map(base.map((v, i) => [`doc-${String(i).padStart(5, '0')}`, v]))
        let total = 0
        for (const query of queries) {
          const { hits, stats } = index.search({ vector: query, topK: 10 })
          expect(stats.strategy).toBe('hnsw')
          const distances = oracleDistances(metric, records, query)
          // Every reported distance is the exact one for its id, whatever path found it.
          for (const hit of hits) expect(Math.abs((hit.distance as number) - (distances.get(hit.id) as number))).toBeLessThan(1e-4)
          total += recallAtK(oracleSearch(metric, records, query, 10).map((h) => h.id), hits.map((h) => h.id), 10)
        }
        expect(total / queries.length).toBeGreaterThanOrEqual(0.95)
      }),
      { numRuns: 2 },
    )
  })
})

describe('filtered search equals exact filtered search', () => {
  const seed = 20261130
  const data = clustered(seed, 10_000 + 40, DIM, 50)
  const base = data.slice(0, 10_000)
  const queries = data.slice(10_000)
  const records = new Map(base.map((v, i) => [`doc-${String(i).padStart(5, '0')}`, v]))
  const bucketOf = (id: string): number => Number(id.slice(4)) % 1000
  const planned = build('cosine', base)
  const graphOnly = build('cosine', base, { exactFilterMax: 0, postFilterAbove: 1 })
  const postOnly = build('cosine', base, { postFilterAbove: 0 })

  const cases = [
    { selectivity: 0.5, below: 500 },
    { selectivity: 0.1, below: 100 },
    { selectivity: 0.01, below: 10 },
    { selectivity: 0.001, below: 1 },
  ]
  for (const { selectivity, below } of cases) {
    for (const [name, index] of [['planner defaults', planned], ['bitset graph forced', graphOnly], ['post-filter forced', postOnly]] as const) {
      it(`selectivity ${selectivity * 100}% (${name}): recall >= 0.99, exact distances, k hits whenever k pass`, () => {
        let total = 0
        const strategies = new Set<string>()
        for (const query of queries) {
          const { hits, stats } = index.search({ vector: query, topK: 10, filter: (m) => (m.bucket as number) < below })
          strategies.add(stats.strategy)
          const expected = oracleSearch('cosine', records, query, 10, (id) => bucketOf(id) < below)
          expect(hits.length).toBe(expected.length)
          for (const hit of hits) expect(bucketOf(hit.id)).toBeLessThan(below)
          total += recallAtK(expected.map((h) => h.id), hits.map((h) => h.id), 10)
          if (stats.strategy === 'exact-filtered') expectSameRanking(hits, oracleSearch('cosine', records, query, Infinity, (id) => bucketOf(id) < below), 10, oracleDistances('cosine', records, query))
        }
        expect(total / queries.length).toBeGreaterThanOrEqual(0.99)
        // Post-filtering may widen into a full evaluation when too few candidates pass: then the
        // filter is evaluated and the passing records are scanned or searched, never fewer found.
        if (name === 'bitset graph forced') expect([...strategies]).toEqual(['hnsw-filtered'])
        else if (name === 'post-filter forced') expect(strategies.has('hnsw-postfilter')).toBe(true)
        else expect([...strategies]).toEqual([selectivity >= 0.02 ? 'hnsw-postfilter' : 'exact-filtered'])
      })
    }
  }

  it('returns every passing record when fewer than k pass, and none when none pass', () => {
    const query = queries[0] as number[]
    const few = planned.search({ vector: query, topK: 25, filter: (_m, id) => id.endsWith('7') && bucketOf(id) < 20 })
    const expected = oracleSearch('cosine', records, query, 25, (id) => id.endsWith('7') && bucketOf(id) < 20)
    expect(few.hits.map((h) => h.id)).toEqual(expected.map((h) => h.id))
    expect(planned.search({ vector: query, topK: 5, filter: () => false }).hits).toEqual([])
  })
})
