import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { create, insertMultiple, search as oramaSearch, type AnyOrama } from '@orama/orama'
import { Index as UsearchIndex, MetricKind, ScalarKind } from 'usearch'
import { createIndex, type QuarryIndex } from '@quarry/core'
import { row, type Dataset } from './datasets.js'

/** Graph parameters shared by every HNSW engine so they are compared like for like. */
export const GRAPH = { m: 16, efConstruction: 200, seed: 100 }

/** One engine under test: build once, then search query q at a given ef. */
export interface AnnEngine {
  readonly name: string
  /** Applies ef before a batch of searches (untimed: usearch reloads its index to change it). */
  setEf(ef: number): void
  search(q: number, k: number): number[]
  close?(): void
}

interface NativeHnsw {
  initIndex(opts: { maxElements: number; m: number; efConstruction: number; randomSeed: number }): void
  addPoint(point: number[], label: number): void
  searchKnn(query: number[], k: number, filter?: (label: number) => boolean): { neighbors: number[] }
  setEf(ef: number): void
}
const { HierarchicalNSW } = createRequire(import.meta.url)('hnswlib-node') as { HierarchicalNSW: new (space: string, dim: number) => NativeHnsw }

/** Quarry's HNSW index, exactly as a user would call it (string ids, Float32Array queries). */
export function buildQuarry(ds: Dataset, metadata?: (i: number) => Record<string, number>): { engine: AnnEngine; index: QuarryIndex } {
  const index = createIndex({ dimensions: ds.dim, metric: ds.metric, hnsw: GRAPH, planner: { exactBelow: 0 } })
  for (let i = 0; i < ds.n; i++) index.add({ id: String(i), vector: row(ds.base, ds.dim, i), metadata: metadata ? metadata(i) : {} })
  let ef = 64
  return {
    index,
    engine: {
      name: 'quarry-hnsw',
      setEf: (value) => {
        ef = value
      },
      search: (q, k) => index.search({ vector: row(ds.queries, ds.dim, q), topK: k, ef }).hits.map((h) => Number(h.id)),
    },
  }
}

/** Quarry's exact path on the same index (brute force, recall 1). */
export function quarryExact(ds: Dataset, index: QuarryIndex): AnnEngine {
  return {
    name: 'quarry-exact',
    setEf: () => {},
    search: (q, k) => index.search({ vector: row(ds.queries, ds.dim, q), topK: k, exact: true }).hits.map((h) => Number(h.id)),
  }
}

/** hnswlib-node called directly, given queries already as plain arrays (its best case). */
export function buildHnswlib(ds: Dataset): { engine: AnnEngine; native: NativeHnsw; queries: number[][] } {
  const native = new HierarchicalNSW(ds.metric === 'l2' ? 'l2' : ds.metric === 'cosine' ? 'cosine' : 'ip', ds.dim)
  native.initIndex({ maxElements: ds.n, m: GRAPH.m, efConstruction: GRAPH.efConstruction, randomSeed: GRAPH.seed })
  for (let i = 0; i < ds.n; i++) native.addPoint(Array.from(row(ds.base, ds.dim, i)), i)
  const queries = Array.from({ length: ds.nq }, (_, q) => Array.from(row(ds.queries, ds.dim, q)))
  return {
    native,
    queries,
    engine: {
      name: 'hnswlib-node',
      setEf: (ef) => native.setEf(ef),
      search: (q, k) => native.searchKnn(queries[q] as number[], k).neighbors,
    },
  }
}

/** usearch (prebuilt native, SIMD); ef changes need a reload of the saved index. */
export function buildUsearch(ds: Dataset): AnnEngine {
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
  const keys = BigUint64Array.from({ length: ds.n }, (_, i) => BigInt(i))
  built.add(keys, ds.base.slice(), 0)
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-usearch-'))
  const file = join(dir, 'index.usearch')
  built.save(file)
  let index = built
  return {
    name: 'usearch',
    setEf: (ef) => {
      index = new UsearchIndex({ ...config, expansion_search: ef })
      index.load(file)
    },
    search: (q, k) => Array.from(index.search(row(ds.queries, ds.dim, q), k, 1).keys, Number),
    close: () => rmSync(dir, { recursive: true, force: true }),
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
