import { execFileSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { NativeGraph, WasmGraph, type Graph, type GraphBuild } from '../support/graph-builds.js'
import { clustered } from '../support/random.js'
import { full } from '../support/tier.js'

// @quarry/hnsw's WebAssembly Graph against its native one (the oracle): the same saved graph loaded
// into both answers the same labels, in the same order, with the same float32 distances bit for bit,
// for each of hnswlib's distance kernels (chosen by dimension); saving gives the same bytes; a
// damaged file and a bad argument are refused with the same error and message.

const dir = mkdtempSync(join(tmpdir(), 'quarry-wasm-graph-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const COUNT = 700
// One dimension per kernel of hnswlib's SSE build: scalar (3), 4 + scalar tail (7), whole fours
// (12, 20, 100), whole sixteens (32, 128), 16 + scalar tail (35).
const DIMS = [3, 7, 12, 20, 32, 35, 100, 128]

interface Answer {
  labels: number[]
  distances: number[]
}

function answer(g: Graph, query: Float32Array, k: number, allow?: Uint32Array): Answer {
  const labels = new Uint32Array(k)
  const distances = new Float32Array(k)
  const n = g.search(query, k, labels, distances, allow)
  return { labels: Array.from(labels.subarray(0, n)), distances: Array.from(distances.subarray(0, n)) }
}

/** toEqual treats 0 and -0 alike and compares floats as numbers; this says which element differs, bit for bit. */
function expectSame(ours: Answer, oracle: Answer): void {
  expect(ours.labels).toEqual(oracle.labels)
  expect(ours.distances.length).toBe(oracle.distances.length)
  ours.distances.forEach((d, i) => expect(Object.is(d, oracle.distances[i]), `distance ${i}: ${d} against ${oracle.distances[i]}`).toBe(true))
}

/** A graph of `count` points, labels 3·i, every 7th deleted, built by `Build`. */
function built(Build: GraphBuild, space: 'l2' | 'ip', dim: number, count = COUNT, seed = dim): { graph: Graph; queries: Float32Array[] } {
  const points = clustered(seed, count + 12, dim, 12).map((p) => Float32Array.from(p))
  const graph = new Build(space, dim)
  graph.init(64, 12, 60, 100)
  points.slice(0, count).forEach((v, i) => {
    if (graph.size() >= graph.maxElements()) graph.resize(graph.maxElements() * 2)
    graph.add(v, 3 * i)
  })
  for (let i = 0; i < count; i += 7) graph.markDelete(3 * i)
  return { graph, queries: points.slice(count) }
}

function saved(g: Graph, name: string): Buffer {
  const file = join(dir, name)
  g.saveSync(file)
  return readFileSync(file)
}

/** Every other base record: a bitset of label words. */
function everyOther(count: number): Uint32Array {
  const allow = new Uint32Array(Math.ceil((3 * count) / 32) + 1)
  for (let i = 0; i < count; i += 2) allow[(3 * i) >>> 5] = (allow[(3 * i) >>> 5] as number) | (1 << ((3 * i) & 31))
  return allow
}

const native = NativeGraph as GraphBuild

describe.skipIf(NativeGraph === undefined)('the WebAssembly graph against the native one (linux-x64)', () => {
  describe.each(['l2', 'ip'] as const)('%s', (space) => {
    it.each(DIMS)('dimension %i: a graph saved by the native build answers the same in both, filtered or not', (dim) => {
      const { graph, queries } = built(native, space, dim)
      const bytes = saved(graph, `native-${space}-${dim}.bin`)
      const wasm = new WasmGraph(space, dim)
      wasm.load(bytes)
      const oracle = new native(space, dim)
      oracle.load(bytes)
      expect(wasm.size()).toBe(COUNT)
      expect(wasm.maxElements()).toBe(oracle.maxElements())
      const allow = everyOther(COUNT)
      for (const ef of [10, 64]) {
        wasm.setEf(ef)
        oracle.setEf(ef)
        for (const query of queries) {
          const ours = answer(wasm, query, 10)
          expect(ours.labels).toHaveLength(10)
          expect(ours.labels.every((l) => l % 21 !== 0), 'no deleted label').toBe(true)
          expectSame(ours, answer(oracle, query, 10))
          const filtered = answer(wasm, query, 10, allow)
          expect(filtered.labels.every((l) => (l / 3) % 2 === 0)).toBe(true)
          expectSame(filtered, answer(oracle, query, 10, allow))
        }
      }
      // Saved again from WebAssembly memory (4-byte labels there): the same 64-bit layout, byte for byte.
      expect(saved(wasm, `wasm-${space}-${dim}.bin`).equals(bytes)).toBe(true)
    })
  })

  it('a graph built in WebAssembly loads in the native build, which saves it back byte for byte and answers the same', async () => {
    const { graph, queries } = built(WasmGraph, 'ip', 20, 900, 5)
    const bytes = saved(graph, 'wasm-built.bin')
    await graph.save(join(dir, 'wasm-built-async.bin'))
    expect(readFileSync(join(dir, 'wasm-built-async.bin')).equals(bytes)).toBe(true)
    const oracle = new native('ip', 20)
    oracle.load(bytes)
    expect(saved(oracle, 'wasm-built-again.bin').equals(bytes)).toBe(true)
    // The graph that built it answers as the native build reading it; a loaded graph's ef is 10.
    for (const query of queries) expectSame(answer(graph, query, 8), answer(oracle, query, 8))
    graph.setEf(10)
    for (const query of queries) expectSame(answer(graph, query, 8), answer(oracle, query, 8))
  })

  it('reads the same graph from an open file: load(fd, size), with the same refusals', () => {
    const { graph, queries } = built(native, 'l2', 12)
    const bytes = saved(graph, 'from-file.bin')
    const fd = openSync(join(dir, 'from-file.bin'), 'r')
    try {
      const fromFile = new WasmGraph('l2', 12)
      fromFile.load(fd, bytes.length)
      const oracle = new native('l2', 12)
      oracle.load(bytes)
      for (const query of queries) expectSame(answer(fromFile, query, 10), answer(oracle, query, 10))
      for (const [name, fdOf, size] of [
        ['past the end', fd, bytes.length + 1],
        ['short', fd, bytes.length - 1],
        ['a negative size', fd, -1],
        ['a bad descriptor', 1_000_000, bytes.length],
      ] as const) {
        expect(refusal(() => new WasmGraph('l2', 12).load(fdOf, size)), name).toEqual(refusal(() => new native('l2', 12).load(fdOf, size)))
      }
    } finally {
      closeSync(fd)
    }
  })

  describe('a saved graph with something wrong in it', () => {
    const good = saved(built(native, 'l2', 16, 400).graph, 'good.bin')
    const view = (b: Buffer): DataView => new DataView(b.buffer, b.byteOffset, b.byteLength)
    // hnswlib's header as saved on 64-bit: six size_t, maxLevel (int), enterpoint (uint32), three
    // size_t, mult (double), efConstruction (size_t); then count elements of sizeDataPerElement bytes.
    const HEADER = 6 * 8 + 4 + 4 + 3 * 8 + 8 + 8
    const count = Number(view(good).getBigUint64(16, true))
    const perElement = Number(view(good).getBigUint64(24, true))
    const labelOffset = Number(view(good).getBigUint64(32, true))
    const maxM0 = Number(view(good).getBigUint64(64, true))

    const cases: [string, (b: Buffer) => Buffer][] = [
      ['truncated by a byte', (b) => b.subarray(0, b.length - 1)],
      ['cut inside the header', (b) => b.subarray(0, 40)],
      ['cut inside the base layer', (b) => b.subarray(0, HEADER + 3 * perElement + 5)],
      ['a byte appended', (b) => Buffer.concat([b, Buffer.of(0)])],
      ['a count larger than the file holds', (b) => (view(b).setBigUint64(16, BigInt(count * 50), true), b)],
      ['a count above maxElements', (b) => (view(b).setBigUint64(8, BigInt(count - 1), true), b)],
      ['the entry point past the last element', (b) => (view(b).setUint32(52, count + 3, true), b)],
      ['a base-layer link to no element', (b) => (view(b).setUint32(HEADER + 5 * perElement + 4, count + 1, true), b)],
      ['a base-layer list longer than the degree', (b) => (view(b).setUint16(HEADER + 9 * perElement, maxM0 + 1, true), b)],
      ['a degree of zero', (b) => (view(b).setBigUint64(64, 0n, true), b)],
      ['a label above uint32', (b) => (view(b).setUint32(HEADER + 6 * perElement + labelOffset + 4, 1, true), b)],
      ['a 4-byte label layout (a 32-bit save)', (b) => (view(b).setBigUint64(24, BigInt(perElement - 4), true), b)],
      ['a level multiplier of zero', (b) => (view(b).setFloat64(80, 0, true), b)],
      ['a level multiplier other than 1 / ln M', (b) => (view(b).setFloat64(80, 100, true), b)],
      ['room for more than twice its count plus 1024', (b) => (view(b).setBigUint64(8, BigInt(2 * count + 1025), true), b)],
      ['a construction breadth below M', (b) => (view(b).setBigUint64(88, 1n, true), b)],
      ['a top layer above the entry point’s', (b) => (view(b).setInt32(48, view(b).getInt32(48, true) + 1, true), b)],
      ['two elements with the same label', (b) => (b.copy(b, HEADER + 6 * perElement + labelOffset, HEADER + 5 * perElement + labelOffset, HEADER + 5 * perElement + labelOffset + 8), b)],
      ['an empty graph with an entry point', (b) => {
        const empty = Buffer.from(b.subarray(0, HEADER))
        view(empty).setBigUint64(16, 0n, true)
        return (view(empty).setInt32(48, 3, true), view(empty).setUint32(52, 5, true), empty)
      }],
    ]

    it.each(cases)('%s: the native message, and the graph loaded before is unchanged', (_, alter) => {
      const g = new WasmGraph('l2', 16)
      g.load(good)
      const queries = clustered(3, 5, 16, 2).map((q) => Float32Array.from(q))
      const before = queries.map((q) => answer(g, q, 10))
      const expected = refusal(() => new native('l2', 16).load(alter(Buffer.from(good))))
      expect(expected).not.toBeUndefined()
      expect(refusal(() => g.load(alter(Buffer.from(good))))).toEqual(expected)
      expect(queries.map((q) => answer(g, q, 10))).toEqual(before)
    })

    it('another dimension than the graph was saved with', () => {
      expect(refusal(() => new WasmGraph('l2', 17).load(good))).toEqual({ name: 'Error', message: "its element layout does not match the index's dimensions" })
    })
  })

  describe('arguments: the native error class and message', () => {
    const make = (Build: GraphBuild): Graph => built(Build, 'ip', 4, 30).graph
    const g = { wasm: make(WasmGraph), native: make(native) }
    const query = new Float32Array([0.1, 0.2, 0.3, 0.4])
    it.each<[string, (G: GraphBuild, g: Graph) => unknown]>([
      ['a plain array query', (_, g) => g.search(Array.from(query) as unknown as Float32Array, 5, new Uint32Array(5), new Float32Array(5))],
      ['a short query', (_, g) => g.search(query.subarray(1), 5, new Uint32Array(5), new Float32Array(5))],
      ['labels shorter than k', (_, g) => g.search(query, 5, new Uint32Array(4), new Float32Array(5))],
      ['distances of another type', (_, g) => g.search(query, 5, new Uint32Array(5), new Float64Array(5) as unknown as Float32Array)],
      ['an allow set of another type', (_, g) => g.search(query, 5, new Uint32Array(5), new Float32Array(5), new Uint8Array(4) as unknown as Uint32Array)],
      ['a negative k', (_, g) => g.search(query, -1, new Uint32Array(5), new Float32Array(5))],
      ['a k that is not a number', (_, g) => g.search(query, '5' as unknown as number, new Uint32Array(5), new Float32Array(5))],
      ['a short vector', (_, g) => g.add(query.subarray(2), 1)],
      ['a label past uint32', (_, g) => g.add(query, 2 ** 32)],
      ['a fractional label', (_, g) => g.markDelete(1.5)],
      ['a space that does not exist', (G) => new G('cosine' as 'l2', 4)],
      ['a dimension of zero', (G) => new G('l2', 0)],
      ['deleting a label not in the graph', (_, g) => g.markDelete(1)],
      ['deleting a label twice', (_, g) => (g.markDelete(3), g.markDelete(3))],
      ['adding past maxElements', (G) => { const h = new G('l2', 4); h.init(1, 4, 10, 1); h.add(query, 1); h.add(query, 2) }],
      ['resizing below the count', (_, g) => g.resize(2)],
      ['searching a graph never initialized', (G) => new G('l2', 4).search(new Float32Array(4), 1, new Uint32Array(1), new Float32Array(1))],
      ['saving a graph never initialized', (G) => new G('l2', 4).saveSync(join(dir, 'never.bin'))],
      ['loading something that is not bytes', (G) => new G('l2', 4).load('graph.bin' as unknown as Uint8Array)],
      ['an ef that is not an integer', (_, g) => g.setEf(-3)],
    ])('%s', (_, call) => {
      const expected = refusal(() => call(native, g.native))
      expect(expected).not.toBeUndefined()
      expect(refusal(() => call(WasmGraph, g.wasm))).toEqual(expected)
    })

    it('k = 0 writes nothing and returns 0; an empty graph finds nothing', () => {
      expect(g.wasm.search(query, 0, new Uint32Array(0), new Float32Array(0))).toBe(0)
      const empty = new WasmGraph('l2', 4)
      empty.init(10, 4, 10, 1)
      expect(answer(empty, query, 3)).toEqual({ labels: [], distances: [] })
    })
  })
})

describe('the committed quarry_hnsw.wasm', () => {
  const fromHnsw = createRequire(new URL('../../packages/hnsw/wasm/', import.meta.url))
  it('was built from the sources and flags in the tree (else: node packages/hnsw/scripts/build-wasm.mjs)', () => {
    const { inputsDigest } = fromHnsw('./inputs.cjs') as { inputsDigest(): string }
    const recorded = readFileSync(new URL('../../packages/hnsw/wasm/inputs.sha256', import.meta.url), 'utf8').trim()
    expect(recorded).toMatch(/^[0-9a-f]{64}$/)
    expect(inputsDigest()).toBe(recorded)
  })

  it('asks only for the imports graph.cjs gives, and instantiates from bytes without node:fs (a browser)', async () => {
    const bytes = readFileSync(new URL('../../packages/hnsw/wasm/quarry_hnsw.wasm', import.meta.url))
    // Node's WebAssembly global, typed here: the repository's TypeScript has no DOM lib.
    const { Module } = (globalThis as unknown as { WebAssembly: { Module: { new (bytes: Uint8Array): object; imports(module: object): { module: string; name: string }[] } } }).WebAssembly
    const imports = Module.imports(new Module(bytes)).map((i) => `${i.module}.${i.name}`).sort()
    expect(imports).toEqual([
      'env.emscripten_notify_memory_growth', 'env.quarry_read', 'env.quarry_write',
      'wasi_snapshot_preview1.environ_get', 'wasi_snapshot_preview1.environ_sizes_get', 'wasi_snapshot_preview1.fd_close',
      'wasi_snapshot_preview1.fd_read', 'wasi_snapshot_preview1.fd_seek', 'wasi_snapshot_preview1.fd_write', 'wasi_snapshot_preview1.proc_exit',
    ])
    const { instantiate } = fromHnsw('./graph.cjs') as { instantiate(wasm: Uint8Array): Promise<{ Graph: GraphBuild }> }
    const { Graph } = await instantiate(bytes)
    const g = new Graph('l2', 3)
    g.init(4, 4, 10, 1)
    g.add(new Float32Array([0, 0, 0]), 7)
    g.add(new Float32Array([1, 0, 0]), 8)
    // float32 arithmetic: (0.9f - 1)² and 0.9f², each rounded.
    const near = Math.fround(Math.fround(0.9) - 1)
    const far = Math.fround(0.9)
    expect(answer(g, new Float32Array([0.9, 0, 0]), 2)).toEqual({ labels: [8, 7], distances: [Math.fround(near * near), Math.fround(far * far)] })
    const bytesOfGraph = new Uint8Array(0)
    expect(() => g.saveSync(join(dir, 'x.bin'))).toThrow(/saveSync needs node:fs/)
    expect(() => g.load(3, 10)).toThrow(/needs node:fs/)
    expect(() => g.load(bytesOfGraph)).toThrow(/ends early/)
  })

  it('grows its memory past what a search holds views of (a graph of ~40 MB after a small one)', () => {
    const small = new WasmGraph('l2', 4)
    small.init(4, 4, 10, 1)
    small.add(new Float32Array([1, 2, 3, 4]), 1)
    const big = new WasmGraph('l2', 256)
    big.init(40_000, 8, 10, 1)
    const v = new Float32Array(256)
    for (let i = 0; i < 200; i++) big.add((v.fill(i), v), i)
    expect(answer(small, new Float32Array([1, 2, 3, 4]), 1)).toEqual({ labels: [1], distances: [0] })
    expect(answer(big, v.fill(7.2), 2).labels).toEqual([7, 8])
  })
})

describe('a WebAssembly graph that is garbage', () => {
  full.it("gives its memory back: 300 dropped graphs of ~1.6 MB each leave the module's memory far below 300 × 1.6 MB", () => {
    // A child with --expose-gc, so collections happen when the script asks. Each graph holds hnswlib's
    // 65,536 label locks (~1.5 MB) and 1,000 vectors; after a collection and a turn of the event
    // loop, the FinalizationRegistry frees it and the next graph reuses its memory.
    const script = `
      const { Graph, memoryBytes } = require(${JSON.stringify(new URL('../../packages/hnsw/wasm/index.cjs', import.meta.url).pathname)})
      const v = new Float32Array(16)
      ;(async () => {
        for (let i = 0; i < 300; i++) {
          const g = new Graph('l2', 16)
          g.init(1000, 8, 20, i)
          for (let j = 0; j < 1000; j++) g.add(v.fill(j), j)
          if (i % 10 === 9) {
            globalThis.gc()
            await new Promise((resolve) => setImmediate(resolve))
          }
        }
        process.stdout.write(String(memoryBytes()))
      })()
    `
    const out = execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' })
    const mb = Number(out) / 2 ** 20
    expect(mb).toBeGreaterThan(0)
    expect(mb, `${mb} MB`).toBeLessThan(100)
  })
})

/** What a call throws, as data; undefined when it does not throw. */
function refusal(call: () => unknown): { name: string; message: string } | undefined {
  try {
    call()
  } catch (error) {
    const e = error as Error
    return { name: e.constructor.name, message: e.message }
  }
  return undefined
}
