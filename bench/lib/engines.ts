import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { create, insertMultiple, search as oramaSearch, type AnyOrama } from '@orama/orama'
import { Index as UsearchIndex, MetricKind, ScalarKind } from 'usearch'
import { createIndex, type QuarryIndex, type SearchResult } from '@quarry/core'
import type { Graph as QuarryGraph } from '@quarry/hnsw'
import { replaceNativeLoader } from '../../packages/core/src/dense/hnsw.js'
import { row, type Dataset } from './datasets.js'
import { median, rssMB } from './stats.js'
import { HNSWLIB_SKIP_NOTE, hnswlibNode } from '../../test/support/hnswlib-node.js'

/** Graph parameters shared by every HNSW engine so they are compared like for like. */
export const GRAPH = { m: 16, efConstruction: 200, seed: 100 }

/** The engine name of raw hnswlib-node searching a copy of Quarry's own graph (see buildQuarry). */
export const SAME_GRAPH = "hnswlib-node on quarry's graph"

/** The engine name of a second raw hnswlib-node build, a control for the first (see buildHnswlib). */
export const SECOND_BUILD = 'hnswlib-node, second build'

/**
 * One engine under test: build once, then search query q at a given ef. `search` returns the
 * engine's own answer, as its users get it (Quarry's hits with string ids, hnswlib's labels,
 * usearch's bigint keys); `ids` reads it as dataset row numbers for recall, outside the timed call,
 * so no engine is charged for the benchmark's conversion.
 */
export interface AnnEngine<Answer = unknown> {
  readonly name: string
  /** Applies ef before a batch of searches (untimed: usearch reloads its index to change it). */
  setEf(ef: number): void
  search(q: number, k: number): Answer
  ids(answer: Answer): number[]
  close?(): void
}

/** Quarry's hits as dataset row numbers (ids are the rows' numbers as strings). */
function rowsOf(result: SearchResult): number[] {
  return result.hits.map((h) => Number(h.id))
}

interface NativeHnsw {
  initIndex(opts: { maxElements: number; m: number; efConstruction: number; randomSeed: number }): void
  readIndexSync(file: string): void
  addPoint(point: number[], label: number): void
  searchKnn(query: number[], k: number, filter?: (label: number) => boolean): { neighbors: number[] }
  setEf(ef: number): void
}
/** hnswlib-node, the baseline (an optional dependency: see test/support/hnswlib-node.ts); the suites that need it skip first without it. */
function rawHnswlib(space: string, dim: number): NativeHnsw {
  const reference = hnswlibNode<{ HierarchicalNSW: new (space: string, dim: number) => NativeHnsw }>()
  if (reference === undefined) throw new Error(HNSWLIB_SKIP_NOTE)
  return new reference.HierarchicalNSW(space, dim)
}

/** An engine being built in steps, so that several builds can be interleaved and timed fairly. */
export interface Build<T> {
  /** Adds base vectors [start, end). */
  add(start: number, end: number): void
  /** The finished engine (and whatever else the caller needs of it). */
  finish(): T
}

/** hnswlib-node's `searchKnn` called directly on `native`, given queries already as plain arrays (its best case). */
function rawEngine(name: string, native: NativeHnsw, queries: readonly number[][]): AnnEngine<number[]> {
  return {
    name,
    setEf: (ef) => native.setEf(ef),
    search: (q, k) => native.searchKnn(queries[q] as number[], k).neighbors,
    ids: (neighbors) => neighbors,
  }
}

/** Queries as Float32Array rows made once, so no engine pays for building its query objects. */
function queryRows(ds: Dataset): Float32Array[] {
  return Array.from({ length: ds.nq }, (_, q) => row(ds.queries, ds.dim, q).slice())
}

const quarryNative = createRequire(import.meta.url)('@quarry/hnsw') as { Graph: typeof QuarryGraph }

/**
 * Makes an index while recording the @quarry/hnsw graph it creates (through core's test-only
 * loader hook, so the bench must run core from source: `--conditions=quarry-source`).
 */
function indexWithItsGraph(make: () => QuarryIndex): { index: QuarryIndex; graph: QuarryGraph } {
  const made: QuarryGraph[] = []
  const restore = replaceNativeLoader(() => ({
    Graph: new Proxy(quarryNative.Graph, {
      construct(target, args: ['l2' | 'ip', number]) {
        const graph = Reflect.construct(target, args) as QuarryGraph
        made.push(graph)
        return graph
      },
    }),
  }))
  try {
    const index = make()
    const graph = made[0]
    if (graph === undefined) throw new Error("the index made no @quarry/hnsw graph through core's loader: run the bench with --conditions=quarry-source")
    return { index, graph }
  } finally {
    restore()
  }
}

/**
 * Raw hnswlib-node over a copy of Quarry's graph: Quarry's saved file read by hnswlib-node (the
 * same format), in the space Quarry's graph uses (inner product over unit vectors for cosine).
 */
function copyOfGraph(ds: Dataset, graph: QuarryGraph): NativeHnsw {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-graph-'))
  try {
    const file = join(dir, 'hnsw.bin')
    graph.saveSync(file)
    const native = rawHnswlib(ds.metric === 'l2' ? 'l2' : 'ip', ds.dim)
    native.readIndexSync(file)
    return native
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Quarry's HNSW index, called as a user would (string ids, Float32Array queries). */
export function buildQuarry(ds: Dataset, metadata?: (i: number) => Record<string, number>): Build<{ engine: AnnEngine; index: QuarryIndex; graph: QuarryGraph; sameGraph: AnnEngine }> {
  const { index, graph } = indexWithItsGraph(() => createIndex({ dimensions: ds.dim, metric: ds.metric, hnsw: GRAPH, planner: { exactBelow: 0 } }))
  return {
    add: (start, end) => {
      for (let i = start; i < end; i++) index.add({ id: String(i), vector: row(ds.base, ds.dim, i), metadata: metadata ? metadata(i) : {} })
    },
    finish: () => {
      const queries = queryRows(ds)
      let ef = 64
      // Quarry's graph holds unit vectors in inner-product space for cosine: its raw caller gives unit queries.
      const unit = ds.metric === 'cosine'
      const plain = queries.map((v) => {
        const length = unit ? Math.sqrt(v.reduce((sum, x) => sum + x * x, 0)) : 1
        return Array.from(v, (x) => Math.fround(x / length))
      })
      return {
        index,
        graph,
        sameGraph: rawEngine(SAME_GRAPH, copyOfGraph(ds, graph), plain),
        engine: {
          name: 'quarry-hnsw',
          setEf: (value) => {
            ef = value
          },
          search: (q, k) => index.search({ vector: queries[q] as Float32Array, topK: k, ef }),
          ids: rowsOf,
        } satisfies AnnEngine<SearchResult>,
      }
    },
  }
}

/** Quarry's exact path on the same index (brute force, recall 1). */
export function quarryExact(ds: Dataset, index: QuarryIndex): AnnEngine {
  return {
    name: 'quarry-exact',
    setEf: () => {},
    search: (q, k) => index.search({ vector: row(ds.queries, ds.dim, q), topK: k, exact: true }),
    ids: rowsOf,
  } satisfies AnnEngine<SearchResult>
}

/** The hnswlib-node space of a dataset's metric (cosine: hnswlib's own, which normalizes in C++). */
function hnswlibSpace(ds: Dataset): 'l2' | 'cosine' | 'ip' {
  return ds.metric === 'l2' ? 'l2' : ds.metric === 'cosine' ? 'cosine' : 'ip'
}

/** hnswlib-node's own graph, searched by {@link rawEngine}; `name` tells a second build from the first. */
export function buildHnswlib(ds: Dataset, name = 'hnswlib-node'): Build<{ engine: AnnEngine; native: NativeHnsw; queries: number[][] }> {
  const native = rawHnswlib(hnswlibSpace(ds), ds.dim)
  native.initIndex({ maxElements: ds.n, m: GRAPH.m, efConstruction: GRAPH.efConstruction, randomSeed: GRAPH.seed })
  return {
    add: (start, end) => {
      for (let i = start; i < end; i++) native.addPoint(Array.from(row(ds.base, ds.dim, i)), i)
    },
    finish: () => {
      const queries = Array.from({ length: ds.nq }, (_, q) => Array.from(row(ds.queries, ds.dim, q)))
      return {
        native,
        queries,
        engine: rawEngine(name, native, queries),
      }
    },
  }
}

/**
 * What one call costs without a graph walk to speak of: raw hnswlib-node's `searchKnn` and
 * Quarry's `index.search` over a graph of the dataset's first 16 vectors (k = 10, ef 16), µs per
 * call, medians of `rounds` interleaved rounds of `calls` calls. Raw's figure is its binding's
 * boundary: every element of the plain-array query read (and boxed) through N-API, the two
 * result arrays made. Quarry's adds its wrapper, hot (request and query checks, ten hits).
 */
export function callFloor(ds: Dataset, rounds = 9, calls = 20_000): { rawUs: number; quarryUs: number } {
  const size = 16
  const native = rawHnswlib(hnswlibSpace(ds), ds.dim)
  native.initIndex({ maxElements: size, m: GRAPH.m, efConstruction: GRAPH.efConstruction, randomSeed: GRAPH.seed })
  const index = createIndex({ dimensions: ds.dim, metric: ds.metric, hnsw: GRAPH, planner: { exactBelow: 0 } })
  for (let i = 0; i < size; i++) {
    native.addPoint(Array.from(row(ds.base, ds.dim, i)), i)
    index.add({ id: String(i), vector: row(ds.base, ds.dim, i) })
  }
  native.setEf(16)
  const plain = Array.from({ length: size }, (_, q) => Array.from(row(ds.queries, ds.dim, q)))
  const typed = Array.from({ length: size }, (_, q) => row(ds.queries, ds.dim, q).slice())
  const raw = (): void => {
    for (let i = 0; i < calls; i++) native.searchKnn(plain[i % size] as number[], 10)
  }
  const quarry = (): void => {
    for (let i = 0; i < calls; i++) index.search({ vector: typed[i % size] as Float32Array, topK: 10, ef: 16 })
  }
  const times = { raw: [] as number[], quarry: [] as number[] }
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of r % 2 === 0 ? ([['raw', raw], ['quarry', quarry]] as const) : ([['quarry', quarry], ['raw', raw]] as const)) {
      const t = performance.now()
      run()
      times[name].push(((performance.now() - t) * 1000) / calls)
    }
  }
  return { rawUs: median(times.raw), quarryUs: median(times.quarry) }
}

/** Builds all to completion in chunks, rotating who goes first; returns seconds and RSS growth per build. */
export function buildInterleaved(n: number, builds: readonly { name: string; build: Build<unknown> }[], chunk = 10_000): Map<string, { seconds: number; memoryMB: number }> {
  const totals = new Map(builds.map((b) => [b.name, { seconds: 0, memoryMB: 0 }]))
  for (let start = 0, c = 0; start < n; start += chunk, c++) {
    for (let j = 0; j < builds.length; j++) {
      const { name, build } = builds[(j + c) % builds.length] as { name: string; build: Build<unknown> }
      const before = rssMB()
      const t = performance.now()
      build.add(start, Math.min(n, start + chunk))
      const seconds = (performance.now() - t) / 1000
      const total = totals.get(name) as { seconds: number; memoryMB: number }
      total.seconds += seconds
      total.memoryMB += rssMB() - before
    }
  }
  return totals
}

/** usearch (prebuilt native, SIMD); ef changes need a reload of the saved index. */
export function buildUsearch(ds: Dataset): Build<AnnEngine> {
  const config = {
    dimensions: ds.dim,
    metric: ds.metric === 'l2' ? MetricKind.L2sq : ds.metric === 'cosine' ? MetricKind.Cos : MetricKind.IP,
    quantization: ScalarKind.F32,
    connectivity: GRAPH.m,
    expansion_add: GRAPH.efConstruction,
    expansion_search: 64,
    multi: false,
  }
  const built = new UsearchIndex(config)
  return {
    // One thread: the other engines build single-threaded too.
    add: (start, end) => built.add(BigUint64Array.from({ length: end - start }, (_, i) => BigInt(start + i)), ds.base.slice(start * ds.dim, end * ds.dim), 1),
    finish: () => {
      const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-usearch-'))
      const file = join(dir, 'index.usearch')
      built.save(file)
      const queries = queryRows(ds)
      let index = built
      return {
        name: 'usearch',
        setEf: (ef) => {
          index = new UsearchIndex({ ...config, expansion_search: ef })
          index.load(file)
        },
        search: (q, k) => index.search(queries[q] as Float32Array, k, 1).keys,
        ids: (keys: BigUint64Array) => Array.from(keys, Number),
        close: () => rmSync(dir, { recursive: true, force: true }),
      }
    },
  }
}

/** An engine whose search is asynchronous (Orama). */
export interface AsyncEngine {
  readonly name: string
  search(q: number, k: number): Promise<number[]>
}

/** Orama's vector search: exact cosine (no ANN index), so only one point at recall 1. */
export async function buildOrama(ds: Dataset): Promise<AsyncEngine> {
  const db: AnyOrama = create({ schema: { id: 'string', embedding: `vector[${ds.dim}]` } as const })
  const docs = Array.from({ length: ds.n }, (_, i) => ({ id: String(i), embedding: Array.from(row(ds.base, ds.dim, i)) }))
  await insertMultiple(db, docs, 1000)
  return {
    name: 'orama',
    search: async (q, k) => {
      const r = await oramaSearch(db, { mode: 'vector', vector: { value: Array.from(row(ds.queries, ds.dim, q)), property: 'embedding' }, similarity: 0, limit: k, includeVectors: false })
      return r.hits.map((h) => Number(h.id))
    },
  }
}
