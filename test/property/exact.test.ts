import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createIndex, type Metric } from '@quarry/core'
import { expectSameRanking, oracleDistances, oracleSearch } from '../support/oracle.js'
import { runs } from '../support/runs.js'

const metrics: Metric[] = ['cosine', 'dot', 'l2']
const DIM = 6

// Small integers make exact ties common, which exercises the id tie-break; floats cover the rest.
const component = fc.oneof(fc.integer({ min: -4, max: 4 }), fc.double({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }))
const vector = fc.array(component, { minLength: DIM, maxLength: DIM }).filter((v) => v.some((x) => Math.abs(x) > 1e-6))

describe.each(metrics)('exact search (%s) equals brute force', (metric) => {
  it('ranks every record like the oracle: ids, order and distances', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 4 }), vector), { selector: ([id]) => id, maxLength: 60 }),
        vector,
        fc.integer({ min: 1, max: 70 }),
        (entries, query, k) => {
          const index = createIndex({ dimensions: DIM, metric, dense: 'exact' })
          const records = new Map(entries)
          for (const [id, v] of entries) index.add({ id, vector: v })
          const { hits, stats } = index.search({ vector: query, topK: k })
          expect(stats.strategy).toBe('exact')
          const integral = [query, ...records.values()].every((v) => v.every(Number.isInteger))
          expectSameRanking(hits, oracleSearch(metric, records, query, Infinity), k, oracleDistances(metric, records, query), 1e-5, integral || metric !== 'l2')
          for (const hit of hits) {
            const expectedScore = metric === 'cosine' ? 1 - (hit.distance as number) : metric === 'dot' ? -(hit.distance as number) : 1 / (1 + (hit.distance as number))
            expect(hit.score).toBeCloseTo(expectedScore, 12)
          }
        },
      ),
      { numRuns: runs(150) },
    )
  })

  it('keeps exactly the records a filter passes', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 4 }), vector, fc.integer({ min: 0, max: 3 })), { selector: ([id]) => id, maxLength: 60 }),
        vector,
        fc.integer({ min: 0, max: 3 }),
        (entries, query, wanted) => {
          const index = createIndex({ dimensions: DIM, metric, dense: 'exact' })
          for (const [id, v, group] of entries) index.add({ id, vector: v, metadata: { group } })
          const records = new Map(entries.map(([id, v]) => [id, v]))
          const groups = new Map(entries.map(([id, , g]) => [id, g]))
          const { hits } = index.search({ vector: query, topK: 10, filter: (m) => m.group === wanted })
          const ranking = oracleSearch(metric, records, query, Infinity, (id) => groups.get(id) === wanted)
          expectSameRanking(hits, ranking, 10, oracleDistances(metric, records, query))
          for (const hit of hits) expect(hit.metadata).toEqual({ group: wanted })
        },
      ),
      { numRuns: runs(100) },
    )
  })
})
