import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Graph as NativeGraph } from '@quarry/hnsw'
import { HNSWLIB_SKIP_NOTE, hnswlibNode } from '../support/hnswlib-node.js'
import { clustered } from '../support/random.js'

// @quarry/hnsw moves a graph's base layer into 2 MB-aligned memory when it is made and after every
// resize (hnswlib's own malloc and realloc give 4 kB pages). The graphs here cross 2 MB, so the
// aligned branch runs, from a first capacity of that size and across doublings: each must hold what
// hnswlib-node (the same hnswlib in its own memory) holds after the same inserts, byte for byte,
// and answer as it does.

interface Raw {
  initIndex(opts: { maxElements: number; m: number; efConstruction: number; randomSeed: number }): void
  resizeIndex(maxElements: number): void
  getMaxElements(): number
  getCurrentCount(): number
  writeIndexSync(file: string): void
  addPoint(point: number[], label: number): void
  setEf(ef: number): void
  searchKnn(query: number[], k: number): { distances: number[]; neighbors: number[] }
}
const fromRoot = createRequire(new URL('../../package.json', import.meta.url))
const { Graph } = fromRoot('@quarry/hnsw') as { Graph: typeof NativeGraph }
const reference = hnswlibNode<{ HierarchicalNSW: new (space: string, dim: number) => Raw }>()

// 128-d with M = 8: 588 bytes an element, so 4,096 elements (2.4 MB) and more take the aligned branch.
const DIM = 128
const M = 8
const COUNT = 5000
const CAPACITY = 8192
const dir = mkdtempSync(join(tmpdir(), 'quarry-grown-memory-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const points = clustered(29, COUNT + 20, DIM, 12)
const base = points.slice(0, COUNT)
const queries = points.slice(COUNT)

/** Our graph and hnswlib-node's after the same inserts, each doubling from `first` when full (labels 2·i + 1). */
function grown(first: number): { ours: NativeGraph; raw: Raw } {
  const ours = new Graph('l2', DIM)
  ours.init(first, M, 32, 100)
  const raw = new (reference as NonNullable<typeof reference>).HierarchicalNSW('l2', DIM)
  raw.initIndex({ maxElements: first, m: M, efConstruction: 32, randomSeed: 100 })
  base.forEach((v, i) => {
    if (ours.size() >= ours.maxElements()) ours.resize(ours.maxElements() * 2)
    if (raw.getCurrentCount() >= raw.getMaxElements()) raw.resizeIndex(raw.getMaxElements() * 2)
    ours.add(Float32Array.from(v), 2 * i + 1)
    raw.addPoint(Array.from(Float32Array.from(v)), 2 * i + 1)
  })
  return { ours, raw }
}

describe.skipIf(reference === undefined)('a graph whose base layer crosses 2 MB', () => {
  it.each([
    ['grown from 64 by doublings (two of them past 2 MB)', 64],
    ['made with its whole capacity at once', CAPACITY],
  ])('%s holds and answers what hnswlib-node does', (name, first) => {
    const { ours, raw } = grown(first)
    expect(ours.maxElements()).toBe(CAPACITY)
    ours.saveSync(join(dir, `ours-${first}.bin`))
    raw.writeIndexSync(join(dir, `raw-${first}.bin`))
    const saved = readFileSync(join(dir, `ours-${first}.bin`))
    expect(saved.length).toBeGreaterThan(COUNT * 588)
    expect(saved.equals(readFileSync(join(dir, `raw-${first}.bin`))), name).toBe(true)
    ours.setEf(50)
    raw.setEf(50)
    const labels = new Uint32Array(10)
    const distances = new Float32Array(10)
    for (const q of queries) {
      const n = ours.search(Float32Array.from(q), 10, labels, distances)
      const expected = raw.searchKnn(Array.from(Float32Array.from(q)), 10)
      expect({ labels: Array.from(labels.subarray(0, n)), distances: Array.from(distances.subarray(0, n)) }).toEqual({ labels: expected.neighbors, distances: expected.distances })
    }
  })
})

// Only where hnswlib-node is missing: a test that says why the comparison did not run.
if (reference === undefined) {
  describe('a graph whose base layer crosses 2 MB', () => {
    it('is skipped: no hnswlib-node', (ctx) => ctx.skip(HNSWLIB_SKIP_NOTE))
  })
}
