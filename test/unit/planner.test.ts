import { describe, expect, it } from 'vitest'
import { createIndex } from '@quarry/core'
import { PLANNER_DEFAULTS, planDense, refinePlan, scanLimit } from '../../packages/core/src/dense/planner.js'

// Issue 43: a declarative filter's count is exact before the search, so the planner scans its
// rows whenever they are at most exactFilterMax, at any selectivity; a filter function keeps its
// estimate-driven plan (post-filtering skips evaluating it on every record).
const base = { live: 100_000, k: 10, ef: 64, hasGraph: true, forceExact: false, options: PLANNER_DEFAULTS }

describe('planDense on the bitset path', () => {
  it('scans a declarative filter passing at most exactFilterMax rows, even above postFilterAbove', () => {
    expect(planDense({ ...base, selectivity: 0.05, passing: 5000 }).strategy).toBe('exact-filtered')
    expect(planDense({ ...base, selectivity: 0.08, passing: 8000 }).strategy).toBe('exact-filtered')
    expect(planDense({ ...base, selectivity: 0.08, passing: 8000 }).reason).toBe('8000 records pass <= planner.exactFilterMax (8000): scanning them exactly is cheaper than the graph')
  })

  it('post-filters a declarative filter passing more, and a filter function estimated to pass more', () => {
    expect(planDense({ ...base, selectivity: 0.08001, passing: 8001 }).strategy).toBe('hnsw-postfilter')
    expect(planDense({ ...base, selectivity: 0.0801 }).strategy).toBe('hnsw-postfilter')
  })

  it('evaluates a filter function estimated to pass at most exactFilterMax, then scans what passes unless more do', () => {
    const planned = planDense({ ...base, selectivity: 0.05 })
    expect(planned).toEqual({ strategy: 'hnsw-filtered', reason: 'about 5000 records pass <= planner.exactFilterMax (8000): the filter is evaluated on every record' })
    expect(refinePlan(planned, 5200, 8000).strategy).toBe('exact-filtered')
    // The sample said 5,000; 9,000 pass: the graph within them.
    expect(refinePlan(planned, 9000, 8000).strategy).toBe('hnsw-filtered')
  })

  it('keeps the graph within the bitset for many rows below postFilterAbove, and refines a function by its count', () => {
    expect(planDense({ ...base, live: 1_000_000, selectivity: 0.015, passing: 15_000 }).strategy).toBe('hnsw-filtered')
    const planned = planDense({ ...base, selectivity: 0.015 })
    expect(planned.strategy).toBe('hnsw-filtered')
    expect(refinePlan(planned, 1500, 8000).strategy).toBe('exact-filtered')
    expect(refinePlan(planned, 8001, 8000).strategy).toBe('hnsw-filtered')
  })

  it('scales the scan limit by a candidate list longer than 64: topK 1000 scans 8% of 100k rows', () => {
    expect(scanLimit(PLANNER_DEFAULTS, 10, 64)).toBe(8000)
    expect(scanLimit(PLANNER_DEFAULTS, 10, 32)).toBe(8000)
    expect(scanLimit(PLANNER_DEFAULTS, 1000, 64)).toBe(125_000)
    expect(scanLimit(PLANNER_DEFAULTS, 10, 256)).toBe(32_000)
    // Post-filtering at topK 1000 would fetch 16,675 candidates for these 9,000 rows.
    expect(planDense({ ...base, selectivity: 0.09 }).strategy).toBe('hnsw-postfilter')
    expect(planDense({ ...base, k: 1000, selectivity: 0.09 })).toEqual({ strategy: 'hnsw-filtered', reason: 'about 9000 records pass <= 125000 (planner.exactFilterMax (8000), scaled to the search\'s candidate list): the filter is evaluated on every record' })
    expect(planDense({ ...base, k: 1000, selectivity: 0.3, passing: 30_000 }).strategy).toBe('exact-filtered')
    expect(planDense({ ...base, k: 1000, live: 1_000_000, selectivity: 0.3, passing: 300_000 }).strategy).toBe('hnsw-postfilter')
    expect(refinePlan(planDense({ ...base, k: 1000, selectivity: 0.09 }), 9000, scanLimit(PLANNER_DEFAULTS, 1000, 64)).strategy).toBe('exact-filtered')
  })

  it('forcing the graph (exactFilterMax 0) still searches it for a declarative filter', () => {
    const options = { exactBelow: 0, exactFilterMax: 0, postFilterAbove: 1 }
    expect(planDense({ ...base, options, selectivity: 0.05, passing: 5000 }).strategy).toBe('hnsw-filtered')
  })
})

describe('a declarative filter over a graph index', () => {
  it('scans its passing rows when they are few, with the exact answer (ids, order, distances)', () => {
    const index = createIndex({ dimensions: 2, metric: 'l2', planner: { exactBelow: 0 } })
    index.addMany(Array.from({ length: 1000 }, (_, i) => ({ id: `r${i}`, vector: [i % 97, i % 89], metadata: { i } })))
    const vector = [40, 40]
    const declarative = index.search({ vector, topK: 10, filter: { op: 'lt', field: 'i', value: 100 } })
    const oracle = index.search({ vector, topK: 10, exact: true, filter: (m) => (m.i as number) < 100 })
    expect(declarative.stats.strategy).toBe('exact-filtered')
    expect(declarative.hits.map((h) => [h.id, h.distance])).toEqual(oracle.hits.map((h) => [h.id, h.distance]))
    // A filter function passing as few is evaluated on every record, then its rows scanned: the same answer.
    const fn = index.search({ vector, topK: 10, filter: (m) => (m.i as number) < 100 })
    expect(fn.stats.strategy).toBe('exact-filtered')
    expect(fn.hits.map((h) => [h.id, h.distance])).toEqual(oracle.hits.map((h) => [h.id, h.distance]))
    // Estimated to pass more than exactFilterMax, at 10% of the records: it post-filters the graph.
    const narrow = createIndex({ dimensions: 2, metric: 'l2', planner: { exactBelow: 0, exactFilterMax: 50 } })
    narrow.addMany(Array.from({ length: 1000 }, (_, i) => ({ id: `r${i}`, vector: [i % 97, i % 89], metadata: { i } })))
    expect(narrow.search({ vector, topK: 10, filter: (m) => (m.i as number) < 100 }).stats.strategy).toBe('hnsw-postfilter')
  })

  it('a search asking for many hits scans the passing rows a short list would post-filter: the exact answer', () => {
    const index = createIndex({ dimensions: 2, metric: 'l2', planner: { exactBelow: 0, exactFilterMax: 100 } })
    index.addMany(Array.from({ length: 5000 }, (_, i) => ({ id: `r${i}`, vector: [i % 97, i % 89], metadata: { i } })))
    const vector = [40, 40]
    const passes = (m: Record<string, unknown>): boolean => (m.i as number) % 5 === 0
    // 1,000 rows pass (20%): above exactFilterMax, below it scaled by 1000 / 64 (1,562).
    for (const filter of [passes, { op: 'in', field: 'i', values: Array.from({ length: 1000 }, (_, j) => j * 5) }] as const) {
      expect(index.search({ vector, topK: 10, filter }).stats.strategy).toBe('hnsw-postfilter')
      const many = index.search({ vector, topK: 1000, filter })
      expect(many.stats.strategy).toBe('exact-filtered')
      const oracle = index.search({ vector, topK: 1000, exact: true, filter: passes })
      expect(many.hits.map((h) => [h.id, h.distance])).toEqual(oracle.hits.map((h) => [h.id, h.distance]))
    }
  })
})
