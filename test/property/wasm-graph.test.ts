import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { NativeGraph, WasmGraph, type Graph, type GraphBuild } from '../support/graph-builds.js'
import { gaussian, prng } from '../support/random.js'
import { runs } from '../support/runs.js'

// A snapshot is the same bytes whichever build wrote it: random graphs (inserts that grow the graph,
// duplicate vectors, deletes, replaced and revived labels) built with the native Graph, saved, and
// loaded in the WebAssembly one answer the same labels, order and float32 distances for random
// queries, k, ef and filters; and the other way round, where the native build also saves the graph
// back byte for byte. The same inserts and seed even build the same bytes in both (graph.cc gives
// hnswlib libstdc++'s random engine and heaps); not when a label is replaced by a vector equal to
// another element's, where hnswlib walks an unordered_set whose order differs between the two
// standard libraries (not generated here: replacements are fresh vectors).

const RUNS = runs(40)
const dir = mkdtempSync(join(tmpdir(), 'quarry-wasm-graph-prop-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Case {
  space: 'l2' | 'ip'
  dim: number
  seed: number
  duplicateEvery: number
  labels: number[]
  deletes: number[]
  replaces: number[]
  m: number
  queries: { k: number; ef: number; filtered: boolean }[]
}

const MAX_LABEL = 4095

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    space: fc.constantFrom('l2' as const, 'ip' as const),
    dim: fc.oneof(fc.integer({ min: 1, max: 40 }), fc.constantFrom(64, 100, 128)),
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    labels: fc.uniqueArray(fc.integer({ min: 0, max: MAX_LABEL }), { minLength: 1, maxLength: 220 }),
    deleteEvery: fc.integer({ min: 2, max: 9 }),
    replaceEvery: fc.integer({ min: 3, max: 12 }),
    m: fc.integer({ min: 2, max: 16 }),
    // Every so many labels repeat an earlier vector: equal distances, which both builds order alike.
    duplicateEvery: fc.integer({ min: 2, max: 50 }),
    queries: fc.array(fc.record({ k: fc.integer({ min: 1, max: 25 }), ef: fc.integer({ min: 1, max: 120 }), filtered: fc.boolean() }), { minLength: 1, maxLength: 8 }),
  })
  .map(({ labels, deleteEvery, replaceEvery, ...rest }) => ({
    ...rest,
    labels,
    deletes: labels.filter((_, i) => i % deleteEvery === 1),
    // Some replaced labels were deleted: adding them again revives them.
    replaces: labels.filter((_, i) => i % replaceEvery === 1),
  }))

function vector(rand: () => number, dim: number): Float32Array {
  return Float32Array.from({ length: dim }, () => gaussian(rand))
}

/** The case's graph, built by `Build`: every label, then deletes, then replaced vectors. */
function build(Build: GraphBuild, c: Case): Graph {
  const rand = prng(c.seed)
  const g = new Build(c.space, c.dim)
  g.init(8, c.m, 40, c.seed % 1000)
  const added: Float32Array[] = []
  for (const label of c.labels) {
    if (g.size() >= g.maxElements()) g.resize(g.maxElements() * 2)
    const v = added.length > 0 && added.length % c.duplicateEvery === 0 ? (added[Math.floor(rand() * added.length)] as Float32Array) : vector(rand, c.dim)
    added.push(v)
    g.add(v, label)
  }
  for (const label of c.deletes) g.markDelete(label)
  for (const label of c.replaces) g.add(vector(rand, c.dim), label)
  return g
}

function saved(g: Graph, name: string): Buffer {
  const file = join(dir, name)
  g.saveSync(file)
  return readFileSync(file)
}

/** Runs the case's queries on both graphs and expects the same answers, float for float. */
function expectSameAnswers(ours: Graph, oracle: Graph, c: Case): void {
  const rand = prng(c.seed ^ 0x5bd1e995)
  const allow = new Uint32Array(MAX_LABEL / 32 + 1)
  for (let i = 0; i < allow.length; i++) allow[i] = Math.floor(rand() * 2 ** 32)
  for (const q of c.queries) {
    ours.setEf(q.ef)
    oracle.setEf(q.ef)
    const query = vector(rand, c.dim)
    const filter = q.filtered ? allow : undefined
    const a = { labels: new Uint32Array(q.k), distances: new Float32Array(q.k) }
    const b = { labels: new Uint32Array(q.k), distances: new Float32Array(q.k) }
    const n = ours.search(query, q.k, a.labels, a.distances, filter)
    expect(n).toBe(oracle.search(query, q.k, b.labels, b.distances, filter))
    expect(Array.from(a.labels.subarray(0, n))).toEqual(Array.from(b.labels.subarray(0, n)))
    for (let i = 0; i < n; i++) expect(Object.is(a.distances[i], b.distances[i]), `distance ${i}: ${a.distances[i]} against ${b.distances[i]}`).toBe(true)
    for (const label of a.labels.subarray(0, n)) {
      if (filter) expect(((filter[label >>> 5] as number) >>> (label & 31)) & 1).toBe(1)
    }
  }
}

const native = NativeGraph as GraphBuild

/**
 * Lets the event loop turn, so the FinalizationRegistry frees the WebAssembly memory of the graphs
 * of earlier runs (a synchronous loop of thousands of runs would hold them all, up to the 4 GB cap).
 */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

describe.skipIf(NativeGraph === undefined)('a saved graph is the same bytes in the native and the WebAssembly build', () => {
  it('built natively, loaded in WebAssembly: the same answers, and saved again the same bytes', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        await turn()
        const bytes = saved(build(native, c), 'native.bin')
        const wasm = new WasmGraph(c.space, c.dim)
        wasm.load(bytes)
        const oracle = new native(c.space, c.dim)
        oracle.load(bytes)
        expect(wasm.size()).toBe(c.labels.length)
        expectSameAnswers(wasm, oracle, c)
        expect(saved(wasm, 'wasm-again.bin').equals(bytes)).toBe(true)
      }),
      { numRuns: RUNS },
    )
  })

  it('built in WebAssembly, loaded natively: the same answers, and the native build saves it back byte for byte', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        await turn()
        const wasm = build(WasmGraph, c)
        const bytes = saved(wasm, 'wasm.bin')
        const oracle = new native(c.space, c.dim)
        oracle.load(bytes)
        expect(saved(oracle, 'native-again.bin').equals(bytes)).toBe(true)
        expectSameAnswers(wasm, oracle, c)
      }),
      { numRuns: RUNS },
    )
  })

  it('the same inserts, deletes and replacements build the same bytes in both', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async (generated) => {
        await turn()
        // Duplicates only in graphs without replacements (see the top of this file).
        const c = generated.replaces.length > 0 ? { ...generated, duplicateEvery: Number.POSITIVE_INFINITY } : generated
        expect(saved(build(WasmGraph, c), 'wasm-built.bin').equals(saved(build(native, c), 'native-built.bin'))).toBe(true)
      }),
      { numRuns: RUNS },
    )
  })
})
