import fc from 'fast-check'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { createIndex, loadIndex, QuarryError, type Filter, type IndexOptions, type Metric, type QuarryIndex, type SearchResult } from '@quarry/core'
import { scanPool } from '../../packages/core/src/dense/scan-pool.js'
import { expectSameRanking, oracleDistances, oracleSearch } from '../support/oracle.js'
import { runs } from '../support/runs.js'

/**
 * Issue 20, exact scans on a worker pool: a pooled scan returns exactly what the single-thread
 * scan returns (ids, order, scores, distances, stats), which is the brute-force oracle's ranking,
 * for every metric, with ties, filters, removed records (label reuse) and growth of the store.
 */
const metrics: Metric[] = ['cosine', 'dot', 'l2']
/** The pool for every scan, however small, with one worker. */
const POOLED = { workers: 1, parallelAbove: 0 } as const
const SINGLE = { workers: 0 } as const

function pair(options: Omit<IndexOptions, 'embedder' | 'scan'>): { pooled: QuarryIndex; single: QuarryIndex } {
  return { pooled: createIndex({ ...options, scan: POOLED }), single: createIndex({ ...options, scan: SINGLE }) }
}

/** Both indexes' answers to one search, asserted identical; the pooled one is returned. */
function same(indexes: { pooled: QuarryIndex; single: QuarryIndex }, request: Parameters<QuarryIndex['search']>[0]): SearchResult {
  const pooled = indexes.pooled.search(request)
  expect(pooled).toEqual(indexes.single.search(request))
  return pooled
}

/** Small integer components: many exactly equal distances, ordered by id. */
function vectorOf(i: number, dim: number): number[] {
  return Array.from({ length: dim }, (_, j) => ((i * 7 + j * 13 + ((i * j) % 5)) % 9) - 4 || 1)
}

const component = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.double({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }))
const vector = (dim: number): fc.Arbitrary<number[]> => fc.array(component, { minLength: dim, maxLength: dim }).filter((v) => v.some((x) => Math.abs(x) > 1e-6))

describe.each(metrics)('pooled exact scans (%s)', (metric) => {
  it('return the single-thread answer, which is the oracle\'s, with and without filters', () => {
    const DIM = 5
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 3 }), vector(DIM), fc.integer({ min: 0, max: 2 })), { selector: ([id]) => id, maxLength: 80 }),
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { maxLength: 20 }),
        vector(DIM),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 2 }),
        (entries, removed, query, k, group) => {
          const indexes = pair({ dimensions: DIM, metric, dense: 'exact' })
          for (const index of [indexes.pooled, indexes.single]) {
            for (const [id, v, g] of entries) index.add({ id, vector: v, metadata: { g } })
            for (const id of removed) index.remove(id)
            // Re-adding takes the freed labels back, last freed first.
            for (const id of removed.slice(0, 5)) if (!index.has(id)) index.add({ id, vector: query.map((x) => -x), metadata: { g: 0 } })
          }
          const records = new Map<string, number[]>()
          const groups = new Map<string, number>()
          for (const [id, v, g] of entries) (records.set(id, v), groups.set(id, g))
          for (const id of removed) (records.delete(id), groups.delete(id))
          for (const id of removed.slice(0, 5)) if (!records.has(id)) (records.set(id, query.map((x) => -x)), groups.set(id, 0))
          const all = oracleDistances(metric, records, query)
          const integral = [query, ...records.values()].every((v) => v.every(Number.isInteger))
          const plain = same(indexes, { vector: query, topK: k })
          expectSameRanking(plain.hits, oracleSearch(metric, records, query, Infinity), k, all, 1e-5, integral || metric !== 'l2')
          const filter: Filter = { op: 'eq', field: 'g', value: group }
          const filtered = same(indexes, { vector: query, topK: k, filter })
          if (records.size > 0) expect(filtered.stats.strategy).toBe('exact-filtered')
          expectSameRanking(filtered.hits, oracleSearch(metric, records, query, Infinity, (id) => groups.get(id) === group), k, all, 1e-5, integral || metric !== 'l2')
          // A function filter is evaluated on the calling thread; only the passing labels cross.
          same(indexes, { vector: query, topK: k, filter: (m) => m.g !== group })
        },
      ),
      { numRuns: runs(60) },
    )
  })

  it('workers take part, and answers stay identical through removals, label reuse and growth', async () => {
    const DIM = 24
    const indexes = pair({ dimensions: DIM, metric, dense: 'exact' })
    const records = new Map<string, number[]>()
    const add = (id: string, v: number[]): void => {
      indexes.pooled.upsert({ id, vector: v, metadata: { odd: Number(id.slice(1)) % 2 } })
      indexes.single.upsert({ id, vector: v, metadata: { odd: Number(id.slice(1)) % 2 } })
      records.set(id, v)
    }
    const check = (query: number[]): void => {
      const all = oracleDistances(metric, records, query)
      expectSameRanking(same(indexes, { vector: query, topK: 25 }).hits, oracleSearch(metric, records, query, Infinity), 25, all)
      const odd = same(indexes, { vector: query, topK: 25, filter: { op: 'eq', field: 'odd', value: 1 } })
      expectSameRanking(odd.hits, oracleSearch(metric, records, query, Infinity, (id) => Number(id.slice(1)) % 2 === 1), 25, all)
    }
    for (let i = 0; i < 3000; i++) add(`r${i}`, vectorOf(i, DIM))
    const queries = Array.from({ length: 4 }, (_, q) => vectorOf(q * 31 + 5, DIM).map((x, j) => x + (j % 3) / 2))
    for (const q of queries) check(q)
    // Removals, then new ids on the freed labels (the store is shared by now).
    for (let i = 0; i < 3000; i += 3) {
      indexes.pooled.remove(`r${i}`)
      indexes.single.remove(`r${i}`)
      records.delete(`r${i}`)
    }
    for (let i = 3000; i < 3400; i++) add(`r${i}`, vectorOf(i, DIM))
    for (const q of queries) check(q)
    // Growth past the shared allocation, and changed vectors.
    for (let i = 3400; i < 9000; i++) add(`r${i}`, vectorOf(i, DIM))
    for (let i = 1; i < 500; i += 7) add(`r${i}`, vectorOf(i + 1, DIM))
    for (const q of queries) check(q)
    // Until a worker has computed some chunks (it starts with the first pooled scan).
    const until = Date.now() + 20_000
    while (scanPool().chunksByWorkers === 0 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      for (const q of queries) same(indexes, { vector: q, topK: 25 })
    }
    expect(scanPool().size).toBeGreaterThanOrEqual(1)
    expect(scanPool().chunksByWorkers).toBeGreaterThan(0)
  })
})

describe('the scan pool over stores in WebAssembly memories', () => {
  it('more workers than SIMD slots (9: the eighth and ninth use the JavaScript kernels), several stores, same answers as one thread; each worker is sent a memory once', async () => {
    const DIM = 64
    const scan = { workers: 9, parallelAbove: 0 } as const
    const made = Array.from({ length: 3 }, (_, s) => {
      const pooled = createIndex({ dimensions: DIM, metric: metrics[s] as Metric, dense: 'exact', scan })
      const single = createIndex({ dimensions: DIM, metric: metrics[s] as Metric, dense: 'exact', scan: SINGLE })
      // 1,100 rows of 64-d: past the 65,536 components that move a store into a memory.
      for (let i = 0; i < 1100; i++) {
        const vector = vectorOf(i * (s + 1), DIM)
        pooled.add({ id: `r${i}`, vector, metadata: { odd: i % 2 } })
        single.add({ id: `r${i}`, vector, metadata: { odd: i % 2 } })
      }
      return { pooled, single }
    })
    const sentBefore = scanPool().memoriesSent
    const retiredBefore = scanPool().retired
    const queries = Array.from({ length: 6 }, (_, q) => vectorOf(q * 17 + 3, DIM).map((x, j) => x + (j % 4) / 3))
    // The stores alternate query by query, as a search over several corpora does.
    for (let round = 0; round < 5; round++) {
      for (const q of queries) {
        for (const indexes of made) {
          same(indexes, { vector: q, topK: 15 })
          same(indexes, { vector: q, topK: 15, filter: { op: 'eq', field: 'odd', value: 0 } })
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(scanPool().size).toBeGreaterThanOrEqual(9)
    // Workers 1–7 have slots; each got each store's memory once, however many scans followed (a
    // worker retired meanwhile, as the earlier tests' stores were collected, is started afresh
    // and sent these memories once more).
    const retired = scanPool().retired - retiredBefore
    expect(scanPool().memoriesSent - sentBefore).toBeGreaterThanOrEqual(7 * made.length)
    expect(scanPool().memoriesSent - sentBefore).toBeLessThanOrEqual(7 * made.length + retired * made.length)
  })
})

describe('scan pool options and lifetime', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-scan-pool-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('scan.workers 0 keeps every scan on the calling thread', () => {
    const index = createIndex({ dimensions: 8, metric: 'dot', dense: 'exact', scan: { workers: 0, parallelAbove: 0 } })
    for (let i = 0; i < 5000; i++) index.add({ id: `r${i}`, vector: vectorOf(i, 8) })
    const before = scanPool().chunksByWorkers
    for (let q = 0; q < 20; q++) index.search({ vector: vectorOf(q, 8), topK: 3 })
    expect(scanPool().chunksByWorkers).toBe(before)
    expect(index.options.scan).toEqual({ workers: 0, parallelAbove: 0 })
    expect(createIndex({ dimensions: 8 }).options.scan).toEqual({ workers: 'auto', parallelAbove: 1_000_000 })
  })

  it.each([
    [{ workers: -1 }, 'scan.workers'],
    [{ workers: 1.5 }, 'scan.workers'],
    [{ workers: 'many' }, 'scan.workers'],
    [{ parallelAbove: -5 }, 'scan.parallelAbove'],
    [{ threads: 2 }, 'scan.threads'],
  ])('rejects scan %j naming %s', (scan, path) => {
    let error: unknown
    try {
      createIndex({ dimensions: 4, scan } as unknown as Parameters<typeof createIndex>[0])
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(QuarryError)
    expect((error as QuarryError).code).toBe('INVALID_OPTION')
    expect((error as QuarryError).path).toBe(path)
  })

  it('saves a store the pool has shared, and the loaded index answers the same', () => {
    const index = createIndex({ dimensions: 16, metric: 'cosine', dense: 'exact', scan: POOLED })
    for (let i = 0; i < 4000; i++) index.add({ id: `r${i}`, vector: vectorOf(i, 16), metadata: { i } })
    const query = vectorOf(77, 16).map((x) => x + 0.25)
    const before = index.search({ vector: query, topK: 10 })
    index.save(join(dir, 'saved'))
    const loaded = loadIndex(join(dir, 'saved'))
    // A pooled index's load reads the rows straight into shared memory and starts the pool's threads.
    expect(scanPool().size).toBeGreaterThanOrEqual(1)
    expect(loaded.search({ vector: query, topK: 10 })).toEqual(before)
    expect(loaded.options.scan).toEqual(POOLED)
    // The loaded (shared) store grows, frees and reuses labels like the one it was saved from.
    for (const edited of [index, loaded]) {
      for (let i = 4000; i < 9000; i++) edited.add({ id: `r${i}`, vector: vectorOf(i, 16), metadata: { i } })
      for (let i = 0; i < 9000; i += 7) edited.remove(`r${i}`)
      for (let i = 0; i < 700; i += 7) edited.add({ id: `r${i}`, vector: vectorOf(i + 1, 16).map((x) => -x), metadata: { i } })
    }
    for (const q of [query, vectorOf(5, 16), vectorOf(8123, 16)]) {
      const expected = index.search({ vector: q, topK: 25 })
      expect(loaded.search({ vector: q, topK: 25 })).toEqual(expected)
      expect(loaded.search({ vector: q, topK: 25, filter: { op: 'lt', field: 'i', value: 3000 } })).toEqual(index.search({ vector: q, topK: 25, filter: { op: 'lt', field: 'i', value: 3000 } }))
    }
  })

  it('a loaded index in WebAssembly memory has its memory sent to the workers by the load, not by its first search', () => {
    // 20,000 × 32 components: above SIMD_STORE_MIN_COMPONENTS, so the rows load into a memory,
    // and a scan long enough for the worker to claim chunks of it.
    const index = createIndex({ dimensions: 32, metric: 'l2', dense: 'exact', scan: POOLED })
    for (let i = 0; i < 20_000; i++) index.add({ id: `r${i}`, vector: vectorOf(i, 32) })
    index.save(join(dir, 'in-memory'))
    const query = vectorOf(4321, 32).map((x) => x * 0.5)
    const records = new Map(Array.from({ length: 20_000 }, (_, i) => [`r${i}`, vectorOf(i, 32)] as const))
    const expected = oracleSearch('l2', records, query, 10)
    const all = oracleDistances('l2', records, query)
    const sentBefore = scanPool().memoriesSent
    const byWorkersBefore = scanPool().chunksByWorkers
    const byKernelsBefore = scanPool().chunksByWorkerKernels
    const loaded = loadIndex(join(dir, 'in-memory'))
    expect(scanPool().memoriesSent - sentBefore).toBe(1)
    // The searches bring no memory, and the worker scans with the instance it made at the load.
    for (let i = 0; i < 200 && scanPool().chunksByWorkers === byWorkersBefore; i++) {
      expectSameRanking(loaded.search({ vector: query, topK: 10 }).hits, expected, 10, all)
    }
    expect(scanPool().chunksByWorkers).toBeGreaterThan(byWorkersBefore)
    // With the SIMD instance it made from what the load sent: no job brought it the memory.
    expect(scanPool().chunksByWorkerKernels - byKernelsBefore).toBe(scanPool().chunksByWorkers - byWorkersBefore)
    expect(scanPool().memoriesSent - sentBefore).toBe(1)
  })

  it('a process whose only work is done exits by itself, pool workers running; a collected store\'s memory is given back', async () => {
    const { out, err, code, signal } = await runNode(['--expose-gc', '--conditions=quarry-source', '--import', 'tsx', fileURLToPath(new URL('./scan-pool-child.ts', import.meta.url))])
    expect(err).toBe('')
    expect({ code, signal }).toEqual({ code: 0, signal: null })
    const report = JSON.parse(out) as { workers: number; chunksByWorkers: number; ids: string[]; same: boolean; again: string[]; heldWithBoth: number; retired: number; workersAfter: number; heldAfter: number; before?: number; withBoth?: number; after?: number }
    expect(report.chunksByWorkers).toBeGreaterThan(0)
    expect(report.same).toBe(true)
    expect(report.ids).toHaveLength(5)
    // The worker held both stores' memories; once the dropped one was collected, the worker was
    // retired (an idle worker never collects its garbage, so it would have kept that memory) ...
    expect(report.heldWithBoth).toBe(2)
    expect(report.retired).toBe(1)
    expect(report.workersAfter).toBe(0)
    // ... and the live index's next search started a new one, and found the same rows.
    expect(report.again).toEqual(report.ids)
    expect(report.workers).toBe(1)
    expect(report.heldAfter).toBe(1)
    if (process.platform === 'linux') {
      // Each store's memory reserves gigabytes of address space (a 4 GiB maximum and guard pages):
      // the dropped one's is given back.
      const { before = 0, withBoth = 0, after = Infinity } = report
      expect(withBoth - before).toBeGreaterThan(2 ** 31)
      expect(after - before).toBeLessThan(2 ** 30)
    }
  })

  it('its workers and a load\'s checksum worker run in a process whose string code runs as a module (node --input-type=module -e)', async () => {
    // Such a process evaluates a worker's source as a module too, where `require` does not exist:
    // before, the pool's worker died at once (scans fell back to one thread, with a warning) and a
    // load waited 10 s for sums that never came.
    const child = new URL('./module-input-child.ts', import.meta.url).href
    const { out, err, code, signal } = await runNode(['--conditions=quarry-source', '--import', 'tsx', '--input-type=module', '-e', `await import(${JSON.stringify(child)})`])
    expect(err).toBe('')
    expect({ code, signal }).toEqual({ code: 0, signal: null })
    const report = JSON.parse(out) as { chunksByWorkers: number; hits: string[]; oracle: string[]; sumWorkers: number; missed: number; loadedHits: string[]; warnings: string[] }
    expect(report.warnings).toEqual([])
    expect(report.chunksByWorkers).toBeGreaterThan(0)
    expect(report.oracle).toHaveLength(5)
    expect(report.hits).toEqual(report.oracle)
    expect(report.sumWorkers).toBe(1)
    expect(report.missed).toBe(0)
    expect(report.loadedHits).toEqual(report.oracle)
  })
})

/** Runs `node args` to its end (killed after 90 s): what it printed and how it exited. */
async function runNode(args: readonly string[]): Promise<{ out: string; err: string; code: number | null; signal: NodeJS.Signals | null }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (b: Buffer) => (out += b.toString()))
  child.stderr.on('data', (b: Buffer) => (err += b.toString()))
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000)
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])))
  clearTimeout(timer)
  return { out, err, code, signal }
}
