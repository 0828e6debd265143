import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { keyAt, metricKind, scanKeys } from '../../packages/core/src/metric/kernels.js'
import { runs } from '../support/runs.js'

// Issue 20: scans compute keys two rows at a time (dotAt2 / l2SquaredAt2). Every key must have the
// bits of keyAt on its own row — what the single-row path, the oracle tests and the pool compare.
describe('scanKeys (rows in pairs) gives each row the bits of keyAt', () => {
  const component = fc.oneof(fc.integer({ min: -4, max: 4 }), fc.double({ min: -1e3, max: 1e3, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e-30, 3.4e38))
  it.each(['cosine', 'dot', 'l2'] as const)('%s, every dimension from 1 to 13, over rows and over label lists', (metric) => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 13 }).chain((dim) =>
          fc.record({
            dim: fc.constant(dim),
            rows: fc.array(fc.array(component, { minLength: dim, maxLength: dim }), { minLength: 1, maxLength: 17 }),
            query: fc.array(component, { minLength: dim, maxLength: dim }),
          }),
        ),
        fc.nat(),
        fc.nat(),
        ({ dim, rows, query }, a, b) => {
          const data = Float32Array.from(rows.flat())
          const q = Float32Array.from(query)
          const invNorms = Float32Array.from(rows, (r) => (r.some((x) => x !== 0) ? 1 / Math.hypot(...Float32Array.from(r)) : 0))
          const n = rows.length
          const kind = metricKind(metric)
          const from = Math.min(a % (n + 1), b % (n + 1))
          const to = Math.max(a % (n + 1), b % (n + 1))
          const out = new Float64Array(n).fill(Number.NaN)
          scanKeys(metric, q, data, invNorms, dim, null, from, to, out)
          for (let i = 0; i < n; i++) {
            const want = i >= from && i < to ? keyAt(kind, q, data, i * dim, dim, invNorms[i] as number) : Number.NaN
            expect(Object.is(out[i], want), `row ${i}: ${out[i]} vs ${want}`).toBe(true)
          }
          // A list of labels, repeats and any order included.
          const labels = Uint32Array.from({ length: n + 3 }, (_, i) => (i * 7 + a) % n)
          const listed = new Float64Array(labels.length)
          scanKeys(metric, q, data, invNorms, dim, labels, 0, labels.length, listed)
          labels.forEach((row, i) => expect(Object.is(listed[i], keyAt(kind, q, data, row * dim, dim, invNorms[row] as number))).toBe(true))
        },
      ),
      { numRuns: runs(300) },
    )
  })
})
