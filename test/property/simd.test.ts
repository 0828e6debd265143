import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createIndex, type Metric } from '@quarry/core'
import { VectorStore } from '../../packages/core/src/dense/vector-store.js'
import { keyAt, metricKind, norm } from '../../packages/core/src/metric/kernels.js'
import { SIMD_BLOCK_ROWS, SIMD_MAX_BYTES, SIMD_SLOTS, SIMD_STORE_MIN_COMPONENTS, simdLayout, simdMemory, simdModule, simdScanKeys } from '../../packages/core/src/metric/simd.js'
import type { Label } from '../../packages/core/src/ids.js'
import { expectSameRanking, oracleDistances, oracleSearch } from '../support/oracle.js'
import { runs } from '../support/runs.js'

// Issue 20: exact scans run WebAssembly SIMD kernels over a store's rows in a WebAssembly memory.
// Every key they give must have the bits of kernels.ts' keyAt on its own row — the pool, the
// single-thread scan, the JavaScript fallback and the oracle tests all rest on that.
const metrics: Metric[] = ['cosine', 'dot', 'l2']
const component = fc.oneof(fc.integer({ min: -4, max: 4 }), fc.double({ min: -1e3, max: 1e3, noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e-30, 3.4e38))

/** A store held in a memory (rows written up to the threshold), filled with `rows` from label 0. */
function storeOf(dim: number, rows: readonly (readonly number[])[]): VectorStore {
  const threshold = Math.ceil(SIMD_STORE_MIN_COMPONENTS / dim)
  const store = new VectorStore(dim, threshold)
  rows.forEach((r, i) => store.set(i as Label, Float32Array.from(r)))
  // The threshold's row makes the store move into a memory (rows past `rows` are never scanned).
  if (rows.length < threshold) store.set((threshold - 1) as Label, new Float32Array(dim).fill(1))
  return store
}

/**
 * The rows and their 1/‖v‖ as plain arrays of their own, as the store computes them: what the
 * expected keys are read from, so that a kernel writing over the rows could not change both sides.
 */
function reference(dim: number, rows: readonly (readonly number[])[]): { data: Float32Array; invNorms: Float32Array } {
  const data = Float32Array.from(rows.flat())
  const invNorms = Float32Array.from(rows, (_, i) => {
    const n = norm(data.subarray(i * dim, (i + 1) * dim))
    return n === 0 ? 0 : 1 / n
  })
  return { data, invNorms }
}

describe('SIMD kernels give every row the bits of keyAt', () => {
  it('this Node runs them (every Node 20 on x64 and arm64 does)', () => {
    expect(simdModule()).not.toBeNull()
  })

  it.each(metrics)('%s: dimensions 1 to 40 and 100, over rows and label lists, from any slot', (metric) => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 1, max: 40 }), fc.constant(100)).chain((dim) =>
          fc.record({
            dim: fc.constant(dim),
            rows: fc.array(fc.array(component, { minLength: dim, maxLength: dim }), { minLength: 1, maxLength: 40 }),
            query: fc.array(component, { minLength: dim, maxLength: dim }),
          }),
        ),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 0, max: SIMD_SLOTS - 1 }),
        ({ dim, rows, query }, a, b, slot) => {
          const store = storeOf(dim, rows)
          const simd = store.simd()
          expect(simd).toBeDefined()
          if (!simd) return
          const ref = reference(dim, rows)
          const q = Float32Array.from(query)
          const kind = metricKind(metric)
          const n = rows.length
          const from = Math.min(a % (n + 1), b % (n + 1))
          const to = Math.max(a % (n + 1), b % (n + 1))
          const out = new Float64Array(n).fill(Number.NaN)
          simdScanKeys(simd.kernels, simd.memory, simd.layout.slotBytes, simd.layout.dataOffset, slot, kind, q, store.invNorms, dim, null, from, to, out)
          for (let i = 0; i < n; i++) {
            const want = i >= from && i < to ? keyAt(kind, q, ref.data, i * dim, dim, ref.invNorms[i] as number) : Number.NaN
            expect(Object.is(out[i], want), `row ${i}: ${out[i]} vs ${want}`).toBe(true)
          }
          // A list of labels, repeats and any order included.
          const labels = Array.from({ length: n + 3 }, (_, i) => (i * 7 + a) % n)
          const listed = new Float64Array(labels.length)
          simdScanKeys(simd.kernels, simd.memory, simd.layout.slotBytes, simd.layout.dataOffset, slot, kind, q, store.invNorms, dim, labels, 0, labels.length, listed)
          labels.forEach((row, i) => expect(Object.is(listed[i], keyAt(kind, q, ref.data, row * dim, dim, ref.invNorms[row] as number))).toBe(true))
          // The rows are as written: no slot reaches into them.
          rows.forEach((r, i) => expect(store.get(i as Label)).toEqual(Float32Array.from(r)))
        },
      ),
      { numRuns: runs(200) },
    )
  })

  it('scans longer than one block (256 rows) and odd counts, on 768-d rows', () => {
    const dim = 768
    const rows = Array.from({ length: 601 }, (_, r) => Array.from({ length: dim }, (_, j) => Math.sin(r * 0.37 + j * 1.3) * (1 + (j % 7))))
    const store = storeOf(dim, rows)
    const simd = store.simd()
    if (!simd) throw new Error('no SIMD')
    const ref = reference(dim, rows)
    const q = Float32Array.from({ length: dim }, (_, j) => Math.cos(j * 0.11))
    for (const metric of metrics) {
      const kind = metricKind(metric)
      const out = new Float64Array(601)
      simdScanKeys(simd.kernels, simd.memory, simd.layout.slotBytes, simd.layout.dataOffset, 0, kind, q, store.invNorms, dim, null, 0, 601, out)
      for (let i = 0; i < 601; i++) expect(Object.is(out[i], keyAt(kind, q, ref.data, i * dim, dim, ref.invNorms[i] as number))).toBe(true)
    }
  })

  it('the block the scan walks is the slot layout\'s (the workers\' copy of the number is a literal)', () => {
    expect(String(simdScanKeys)).toContain(`const block = ${SIMD_BLOCK_ROWS}`)
    const dim = 100
    const { slotBytes, dataOffset } = simdLayout(dim)
    expect(slotBytes).toBe(Math.ceil((dim * 8) / 16) * 16 + SIMD_BLOCK_ROWS * 16)
    expect(dataOffset).toBeGreaterThanOrEqual(SIMD_SLOTS * slotBytes)
  })
})

describe('a vector store keeps its rows in a memory once it is big enough', () => {
  it('an empty store of any capacity holds no memory; the rows written move into one when they reach the threshold', () => {
    const dim = 64
    const store = new VectorStore(dim, 4096)
    expect(store.simd()).toBeUndefined()
    const rowsAtThreshold = SIMD_STORE_MIN_COMPONENTS / dim
    for (let i = 0; i < rowsAtThreshold - 1; i++) store.set(i as Label, new Float32Array(dim).fill(i))
    expect(store.simd()).toBeUndefined()
    store.set((rowsAtThreshold - 1) as Label, new Float32Array(dim).fill(-1))
    expect(store.simd()).toBeDefined()
    expect(store.rows).toBe(4096)
    for (let i = 0; i < rowsAtThreshold - 1; i++) expect(store.get(i as Label)).toEqual(new Float32Array(dim).fill(i))
    // A snapshot's store of that many rows is in a memory from the start.
    expect(VectorStore.sized(dim, rowsAtThreshold).simd()).toBeDefined()
    expect(VectorStore.sized(dim, 10).simd()).toBeUndefined()
  })

  it('a small store keeps a typed array; growing past the threshold moves the rows, and they stay as written through growth', () => {
    const dim = 8
    const store = new VectorStore(dim, 4)
    expect(store.simd()).toBeUndefined()
    const written: Float32Array[] = []
    const rowsNeeded = (2 * SIMD_STORE_MIN_COMPONENTS) / dim
    for (let i = 0; i < rowsNeeded + 3; i++) {
      const v = Float32Array.from({ length: dim }, (_, j) => i * 10 + j - 0.5)
      written.push(v)
      store.set(i as Label, v)
      if (i === 10) expect(store.simd()).toBeUndefined()
    }
    const simd = store.simd()
    expect(simd).toBeDefined()
    expect(store.data.buffer).toBe(simd?.memory.buffer)
    written.forEach((v, i) => expect(store.get(i as Label)).toEqual(v))
    // Shared already: the scan pool reads the same memory, no copy.
    const { data } = store.shared()
    expect(data.buffer).toBe(simd?.memory.buffer)
    expect(store.invNorms.buffer).toBeInstanceOf(SharedArrayBuffer)
  })

  it('rows written out of order, with gaps and rewrites, read back as last written and every other row as zero (pages are brought in ahead of the rows)', () => {
    const dim = 24
    const rows = (3 * SIMD_STORE_MIN_COMPONENTS) / dim + 17
    const store = new VectorStore(dim, 2)
    const expected = new Map<number, Float32Array>()
    // A fixed pseudo-random order over every third label, with jumps forward and back, then rewrites.
    let state = 7
    const next = (): number => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648)
    const labels = Array.from({ length: Math.floor(rows / 3) }, (_, i) => i * 3 + (i % 2))
    for (let i = labels.length - 1; i > 0; i--) {
      const j = next() % (i + 1)
      ;[labels[i], labels[j]] = [labels[j] as number, labels[i] as number]
    }
    for (const label of [...labels, ...labels.slice(0, 50)]) {
      const v = Float32Array.from({ length: dim }, (_, j) => (next() % 2001) / 100 - 10 + j)
      expected.set(label, v)
      store.set(label as Label, v)
    }
    expect(store.simd()).toBeDefined()
    const zero = new Float32Array(dim)
    const used = Math.max(...labels) + 1
    for (let label = 0; label < store.rows; label++) {
      const want = expected.get(label) ?? zero
      if (label < used || label % 997 === 0) expect(store.get(label as Label)).toEqual(want)
    }
    expect(store.data.subarray(used * dim).every((x) => x === 0)).toBe(true)

    // A snapshot's store: its rows read in whole, then more added one by one.
    for (const extent of [100, Math.ceil(SIMD_STORE_MIN_COMPONENTS / dim) + 5]) {
      const loaded = VectorStore.sized(dim, extent)
      const rowsRead = Float32Array.from({ length: extent * dim }, (_, i) => (i % 977) - 400.5)
      loaded.slice(extent).set(rowsRead)
      const added = Array.from({ length: 3 * extent }, (_, i) => Float32Array.from({ length: dim }, (_, j) => i + j / 8))
      added.forEach((v, i) => loaded.set((extent + i) as Label, v))
      expect(loaded.slice(extent)).toEqual(rowsRead)
      added.forEach((v, i) => expect(loaded.get((extent + i) as Label)).toEqual(v))
    }
  })

  it('refuses a memory past 4 GiB (the store then keeps a typed array)', () => {
    expect(simdMemory(SIMD_MAX_BYTES + 1)).toBeUndefined()
    expect(simdMemory(1000)?.buffer.byteLength).toBe(65_536)
  })
})

// The whole path: an index big enough for the memory, searched with and without filters (label
// lists), against the brute-force oracle.
describe.each(metrics)('exact search over a store in a memory (%s) equals brute force', (metric) => {
  it('ids, order and distances, with and without a filter', () => {
    const DIM = 64
    const index = createIndex({ dimensions: DIM, metric, dense: 'exact', scan: { workers: 0 } })
    const records = new Map<string, number[]>()
    for (let i = 0; i < 1500; i++) {
      // Small integers: many exactly equal distances, ordered by id.
      const v = Array.from({ length: DIM }, (_, j) => ((i * 7 + j * 13 + ((i * j) % 5)) % 9) - 4 || 1)
      records.set(`r${i}`, v)
      index.add({ id: `r${i}`, vector: v, metadata: { odd: i % 2 } })
    }
    for (let q = 0; q < 5; q++) {
      const query = Array.from({ length: DIM }, (_, j) => ((q * 5 + j * 3) % 7) - 3 || 2)
      const all = oracleDistances(metric, records, query)
      expectSameRanking(index.search({ vector: query, topK: 20 }).hits, oracleSearch(metric, records, query, Infinity), 20, all)
      const odd = index.search({ vector: query, topK: 20, filter: { op: 'eq', field: 'odd', value: 1 } })
      expectSameRanking(odd.hits, oracleSearch(metric, records, query, Infinity, (id) => Number(id.slice(1)) % 2 === 1), 20, all)
    }
  })
})
