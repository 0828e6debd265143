import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { Graph as NativeGraph } from '@quarry/hnsw'
import { HNSWLIB_SKIP_NOTE, hnswlibNode } from '../support/hnswlib-node.js'
import { clustered } from '../support/random.js'

// @quarry/hnsw, Quarry's binding to hnswlib 0.8.0, against hnswlib-node 3.0.0 (the same hnswlib
// behind a general binding) as the oracle: the same file format both ways, the same answers bit
// for bit, filtered or not; and a saved graph altered in any way the checks name is refused with
// the graph left as it was.

interface Raw {
  initIndex(opts: { maxElements: number; m: number; efConstruction: number; randomSeed: number }): void
  readIndexSync(file: string): void
  writeIndexSync(file: string): void
  addPoint(point: number[], label: number): void
  markDelete(label: number): void
  setEf(ef: number): void
  searchKnn(query: number[], k: number, filter?: (label: number) => boolean): { distances: number[]; neighbors: number[] }
}
const fromRoot = createRequire(new URL('../../package.json', import.meta.url))
const { Graph } = fromRoot('@quarry/hnsw') as { Graph: typeof NativeGraph }
type Graph = NativeGraph
const reference = hnswlibNode<{ HierarchicalNSW: new (space: string, dim: number) => Raw }>()

const DIM = 16
const COUNT = 1500
const dir = mkdtempSync(join(tmpdir(), 'quarry-native-graph-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const points = clustered(11, COUNT + 40, DIM, 20)
const base = points.slice(0, COUNT)
const queries = points.slice(COUNT)

/** A graph of `base`, every 7th label deleted (labels are 3·i, so they are sparse). */
function built(space: 'l2' | 'ip'): Graph {
  const g = new Graph(space, DIM)
  g.init(64, 16, 100, 100)
  base.forEach((v, i) => {
    if (g.size() >= g.maxElements()) g.resize(g.maxElements() * 2)
    g.add(Float32Array.from(v), 3 * i)
  })
  for (let i = 0; i < COUNT; i += 7) g.markDelete(3 * i)
  return g
}

function answer(g: Graph, query: number[], k: number, allow?: Uint32Array): { labels: number[]; distances: number[] } {
  const labels = new Uint32Array(k)
  const distances = new Float32Array(k)
  const n = g.search(Float32Array.from(query), k, labels, distances, allow)
  return { labels: Array.from(labels.subarray(0, n)), distances: Array.from(distances.subarray(0, n)) }
}

function rawAnswer(raw: Raw, query: number[], k: number, filter?: (label: number) => boolean): { labels: number[]; distances: number[] } {
  const { neighbors, distances } = filter ? raw.searchKnn(Array.from(Float32Array.from(query)), k, filter) : raw.searchKnn(Array.from(Float32Array.from(query)), k)
  return { labels: neighbors, distances }
}

function savedBytes(g: Graph, name: string): Buffer {
  const file = join(dir, name)
  g.saveSync(file)
  return readFileSync(file)
}

describe.skipIf(reference === undefined)('@quarry/hnsw against hnswlib-node on the same graph', () => {
  // (Collected, not run, when skipped: no hnswlib-node then.)
  const HierarchicalNSW = reference?.HierarchicalNSW as new (space: string, dim: number) => Raw
  it.each(['l2', 'ip'] as const)('its saved graph reads in hnswlib-node, which answers the same labels and distances, filtered or not (%s)', (space) => {
    const g = built(space)
    const file = join(dir, `graph-${space}.bin`)
    g.saveSync(file)
    const raw = new HierarchicalNSW(space, DIM)
    raw.readIndexSync(file)
    // Every third base record passes the filter: a bitset of label words, and the same as a callback.
    const allow = new Uint32Array(Math.ceil((3 * COUNT) / 32))
    for (let i = 0; i < COUNT; i += 3) allow[(3 * i) >>> 5] = (allow[(3 * i) >>> 5] as number) | (1 << ((3 * i) & 31))
    const passes = (label: number): boolean => label % 9 === 0
    for (const ef of [10, 40, 200]) {
      g.setEf(ef)
      raw.setEf(ef)
      for (const query of queries) {
        const ours = answer(g, query, 10)
        expect(ours.labels).toHaveLength(10)
        expect(ours).toEqual(rawAnswer(raw, query, 10))
        expect(ours.labels.every((l) => l % 21 !== 0), 'no deleted label').toBe(true)
        const filtered = answer(g, query, 10, allow)
        expect(filtered.labels.every(passes)).toBe(true)
        expect(filtered).toEqual(rawAnswer(raw, query, 10, passes))
      }
    }
  })

  it("reads hnswlib-node's saved graph byte for byte, and saves it back the same (sync and on libuv's pool)", async () => {
    const raw = new HierarchicalNSW('l2', DIM)
    raw.initIndex({ maxElements: COUNT, m: 12, efConstruction: 80, randomSeed: 5 })
    base.forEach((v, i) => raw.addPoint(v, i))
    raw.markDelete(3)
    const file = join(dir, 'raw.bin')
    raw.writeIndexSync(file)
    const bytes = readFileSync(file)
    const g = new Graph('l2', DIM)
    g.load(bytes)
    expect(g.size()).toBe(COUNT)
    expect(g.maxElements()).toBe(COUNT)
    expect(savedBytes(g, 'again.bin').equals(bytes)).toBe(true)
    await g.save(join(dir, 'async.bin'))
    expect(readFileSync(join(dir, 'async.bin')).equals(bytes)).toBe(true)
    raw.setEf(50)
    g.setEf(50)
    for (const query of queries) expect(answer(g, query, 5)).toEqual(rawAnswer(raw, query, 5))
  })
})

// Only where hnswlib-node is missing: a test that says why the comparison did not run.
if (reference === undefined) {
  describe('@quarry/hnsw against hnswlib-node on the same graph', () => {
    it('is skipped: no hnswlib-node', (ctx) => ctx.skip(HNSWLIB_SKIP_NOTE))
  })
}

describe('a saved graph read from an open file', () => {
  it('answers as the same bytes read from memory; a size past the end, or a bad descriptor, is refused', () => {
    const bytes = savedBytes(built('ip'), 'from-file.bin')
    const file = join(dir, 'from-file.bin')
    const fd = openSync(file, 'r')
    try {
      const fromFile = new Graph('ip', DIM)
      fromFile.load(fd, bytes.length)
      const fromMemory = new Graph('ip', DIM)
      fromMemory.load(bytes)
      for (const q of queries) expect(answer(fromFile, q, 10)).toEqual(answer(fromMemory, q, 10))
      expect(() => new Graph('ip', DIM).load(fd, bytes.length + 1)).toThrow(/ends early/)
      expect(() => new Graph('ip', DIM).load(fd, bytes.length - 1)).toThrow(/ends early|link list is invalid/)
      expect(() => new Graph('ip', DIM).load(fd, -1)).toThrow(/size must be a byte count/)
    } finally {
      closeSync(fd)
    }
    writeFileSync(join(dir, 'short.bin'), bytes.subarray(0, 10))
    const short = openSync(join(dir, 'short.bin'), 'r')
    try {
      expect(() => new Graph('ip', DIM).load(short, bytes.length)).toThrow(/ends early/)
    } finally {
      closeSync(short)
    }
    expect(() => new Graph('ip', DIM).load(1_000_000, bytes.length)).toThrow(/could not be read \(EBADF\)/)
  })
})

describe('a saved graph with something wrong in it', () => {
  const good = savedBytes(built('l2'), 'good.bin')
  const view = (b: Buffer): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength)
  // hnswlib's header (saveIndex): offsetLevel0, maxElements, count, sizeDataPerElement, labelOffset,
  // offsetData (size_t each), maxLevel (int), enterpoint (uint32), maxM, maxM0, M (size_t), mult
  // (double), efConstruction (size_t); then count elements of sizeDataPerElement bytes.
  const HEADER = 6 * 8 + 4 + 4 + 3 * 8 + 8 + 8
  const count = Number(view(good).getBigUint64(16, true))
  const perElement = Number(view(good).getBigUint64(24, true))
  const maxM0 = Number(view(good).getBigUint64(64, true))
  const labelOffset = Number(view(good).getBigUint64(32, true))

  const cases: [string, (b: Buffer) => Buffer, RegExp][] = [
    ['truncated by a byte', (b) => b.subarray(0, b.length - 1), /ends early|link list is invalid/],
    ['cut inside the header', (b) => b.subarray(0, 40), /ends early/],
    ['a byte appended', (b) => Buffer.concat([b, Buffer.of(0)]), /bytes after the last element/],
    ['a count larger than the file holds', (b) => (view(b).setBigUint64(16, BigInt(count * 50), true), b), /element counts are invalid|ends early/],
    ['the entry point past the last element', (b) => (view(b).setUint32(52, count + 3, true), b), /entry point is invalid/],
    ['a base-layer link to no element', (b) => (view(b).setUint32(HEADER + 5 * perElement + 4, count + 1, true), b), /a link names no element of its layer/],
    ['a base-layer list longer than the degree', (b) => (view(b).setUint16(HEADER + 9 * perElement, maxM0 + 1, true), b), /a link list is too long/],
    ['a degree of zero', (b) => (view(b).setBigUint64(64, 0n, true), b), /degree is invalid/],
    ['a base-layer degree other than twice M', (b) => (view(b).setBigUint64(64, BigInt(maxM0 + 2), true), b), /degree is invalid/],
    ['room for more than twice its count plus 1024', (b) => (view(b).setBigUint64(8, BigInt(2 * count + 1025), true), b), /reserves room for more elements than twice its count plus 1024/],
    ['room for 4 billion elements', (b) => (view(b).setBigUint64(8, 0xffff_ffffn, true), b), /reserves room for more elements/],
    ['a level multiplier other than 1 / ln M', (b) => (view(b).setFloat64(80, 100, true), b), /level multiplier is invalid/],
    ['a construction breadth below M', (b) => (view(b).setBigUint64(88, 1n, true), b), /construction breadth is invalid/],
    ['a top layer above the entry point’s', (b) => (view(b).setInt32(48, view(b).getInt32(48, true) + 1, true), b), /entry point is invalid/],
    ['two elements with the same label', (b) => (b.copy(b, HEADER + 6 * perElement + labelOffset, HEADER + 5 * perElement + labelOffset, HEADER + 5 * perElement + labelOffset + 8), b), /two elements have the same label/],
  ]

  it.each(cases)('%s: an Error saying what, and the graph loaded before is unchanged', (_, alter, message) => {
    const g = new Graph('l2', DIM)
    g.load(good)
    const before = queries.map((q) => answer(g, q, 10))
    expect(() => g.load(alter(Buffer.from(good)))).toThrow(message)
    expect(queries.map((q) => answer(g, q, 10))).toEqual(before)
  })

  it('another dimension than the graph was saved with', () => {
    expect(() => new Graph('l2', DIM + 1).load(good)).toThrow(/element layout does not match the index's dimensions/)
  })

  it('room for exactly twice its count plus 1024 loads, and keeps that room', () => {
    const b = Buffer.from(good)
    view(b).setBigUint64(8, BigInt(2 * count + 1024), true)
    const g = new Graph('l2', DIM)
    g.load(b)
    expect([g.size(), g.maxElements()]).toEqual([count, 2 * count + 1024])
  })

  it('an empty graph: as hnswlib saves it (no entry point, top layer -1) it loads and takes adds; with an entry point it is refused', () => {
    const fresh = new Graph('l2', DIM)
    fresh.init(10, 16, 100, 100)
    const empty = savedBytes(fresh, 'empty.bin')
    expect(empty.length).toBe(HEADER)
    expect([view(empty).getInt32(48, true), view(empty).getUint32(52, true)]).toEqual([-1, 0xffff_ffff])
    const g = new Graph('l2', DIM)
    g.load(empty)
    g.add(Float32Array.from(base[0] as number[]), 4)
    g.add(Float32Array.from(base[1] as number[]), 9)
    expect(answer(g, base[1] as number[], 2).labels).toEqual([9, 4])
    // What crashed the process on its first add (exit 139): count 0 with an entry point and a top layer.
    for (const [maxLevel, enterpoint] of [[3, 5], [0, 0], [-1, 0], [2, 0xffff_ffff]]) {
      const crafted = Buffer.from(empty)
      view(crafted).setInt32(48, maxLevel as number, true)
      view(crafted).setUint32(52, enterpoint as number, true)
      expect(() => new Graph('l2', DIM).load(crafted)).toThrow(/it is empty but has an entry point/)
    }
  })

  it('an element with more layers than the entry point', () => {
    // The entry point moved to an element of the base layer only, with the top layer lowered to 0.
    const b = Buffer.from(good)
    let at = HEADER + count * perElement
    let groundOnly = -1
    for (let i = 0; i < count && groundOnly < 0; i++) {
      const size = view(b).getUint32(at, true)
      if (size === 0) groundOnly = i
      at += 4 + size
    }
    view(b).setInt32(48, 0, true)
    view(b).setUint32(52, groundOnly, true)
    expect(() => new Graph('l2', DIM).load(b)).toThrow(/an element has more layers than the entry point/)
  })

  it('a link on an upper layer to an element without that layer', () => {
    // The first element with an upper layer: its level-1 list follows its size in the link-list part.
    const b = Buffer.from(good)
    let at = HEADER + count * perElement
    const levels: number[] = []
    for (let i = 0; i < count; i++) {
      const size = view(b).getUint32(at, true)
      levels.push(size)
      at += 4 + size
    }
    const first = levels.findIndex((size) => size > 0)
    let offset = HEADER + count * perElement
    for (let i = 0; i < first; i++) offset += 4 + (levels[i] as number)
    const groundOnly = levels.findIndex((size) => size === 0)
    expect(first).toBeGreaterThanOrEqual(0)
    view(b).setUint16(offset + 4, 1, true)
    view(b).setUint32(offset + 8, groundOnly, true)
    expect(() => new Graph('l2', DIM).load(b)).toThrow(/a link names no element of its layer/)
  })
})

describe('arguments', () => {
  const g = built('ip')
  const query = Float32Array.from(queries[0] as number[])
  it.each<[string, () => unknown, RegExp]>([
    ['a plain array query', () => g.search(Array.from(query) as unknown as Float32Array, 5, new Uint32Array(5), new Float32Array(5)), /query must be a Float32Array/],
    ['a short query', () => g.search(query.subarray(1), 5, new Uint32Array(5), new Float32Array(5)), /query must be a Float32Array of the graph's dimensions/],
    ['labels shorter than k', () => g.search(query, 5, new Uint32Array(4), new Float32Array(5)), /labels must be a Uint32Array of at least k/],
    ['distances of another type', () => g.search(query, 5, new Uint32Array(5), new Float64Array(5) as unknown as Float32Array), /distances must be a Float32Array/],
    ['an allow set of another type', () => g.search(query, 5, new Uint32Array(5), new Float32Array(5), new Uint8Array(4) as unknown as Uint32Array), /allow must be a Uint32Array/],
    ['a negative k', () => g.search(query, -1, new Uint32Array(5), new Float32Array(5)), /k must be an integer/],
    ['a short vector', () => g.add(query.subarray(2), 1), /vector must be a Float32Array/],
    ['a label past uint32', () => g.add(query, 2 ** 32), /label must be a uint32/],
    ['a space that does not exist', () => new Graph('cosine' as 'l2', 4), /space must be 'l2' or 'ip'/],
    ['deleting a label not in the graph', () => g.markDelete(1), /Label not found/],
    ['searching a graph never initialized', () => new Graph('l2', 4).search(new Float32Array(4), 1, new Uint32Array(1), new Float32Array(1)), /not been initialized or loaded/],
  ])('%s: an Error, nothing else', (_, call, message) => {
    expect(call).toThrow(message)
  })
})
