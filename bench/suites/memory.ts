// Bytes per record: Quarry's dense, text and metadata storage against raw hnswlib-node and
// MiniSearch holding the same records. Every case runs in a child process of its own, so that
// nothing one case allocates (or leaves to the allocator) is counted in another.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import MiniSearch from 'minisearch'
import { createIndex, type IndexOptions, type Metadata, type QuarryIndex } from '@quarry/core'
import { gaussian, prng } from '../../test/support/random.js'
import { HNSWLIB_SKIP_NOTE, hnswlibNode } from '../../test/support/hnswlib-node.js'
import { npmCorpus } from '../lib/npm-corpus.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

const DIM = 100
/** Graph degree as in every other suite; efConstruction does not change what a graph holds, only how well it is linked, so builds use a small one. */
const GRAPH = { m: 16, efConstruction: 32, seed: 100 }

interface Usage {
  readonly rss: number
  readonly heapUsed: number
  readonly external: number
  readonly arrayBuffers: number
}

/** What one case measured: growth over the baseline taken after its inputs were made. */
interface Measured {
  readonly case: string
  readonly n: number
  readonly seconds: number
  /** Bytes per record: V8 heap, external (array buffers and what native code reports), RSS. */
  readonly heap: number
  readonly external: number
  readonly arrayBuffers: number
  readonly rss: number
}

function usage(): Usage {
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) throw new Error('run with --expose-gc (pnpm bench does)')
  gc()
  gc()
  const m = process.memoryUsage()
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }
}

/** Record i's vector, made on the fly into one reused array (no input held). */
function vectorMaker(): (out: number[] | Float32Array) => void {
  const rand = prng(42)
  return (out) => {
    for (let j = 0; j < DIM; j++) out[j] = gaussian(rand)
  }
}

/**
 * Record i's text: the npm corpus (sentences and paragraphs of the packages' docs and comments,
 * built from node_modules, no network) cycled, as a fresh flat string, so that an engine keeping
 * the text pays for it and one that drops it does not.
 */
let corpus: readonly { text: string }[] | undefined

function textMaker(): (i: number) => string {
  corpus ??= npmCorpus()
  const docs = corpus
  return (i) => Buffer.from((docs[i % docs.length] as { text: string }).text).toString()
}

/** A few metadata fields as applications carry them: a category, a year, a price, one to three tags. */
function metadataOf(i: number, unique: boolean): Metadata {
  const tags = ['red', 'green', 'blue', 'cyan', 'amber', 'teal', 'lime', 'rose']
  const m: Metadata = {
    category: `c${i % 20}`,
    year: 1990 + (i % 35),
    price: Math.round(((i * 7919) % 100_000) * 1.37) / 100,
    tags: tags.slice(i % 6, (i % 6) + 1 + (i % 3)),
  }
  // A per-record string (a URL, a document id): every value distinct.
  if (unique) m.source = `https://example.org/doc/${i}`
  return m
}

type Case = (n: number) => unknown

/** A Quarry index of `n` generated vectors (ids "0".."n−1"), with `options`. */
function quarryVectors(n: number, options: Omit<IndexOptions, 'embedder'>): QuarryIndex {
  const index = createIndex(options)
  const next = vectorMaker()
  const v = new Float32Array(DIM)
  for (let i = 0; i < n; i++) {
    next(v)
    index.add({ id: String(i), vector: v })
  }
  return index
}

/** The cases, each building one structure over n records; what it returns is kept alive until measured. */
const CASES: Record<string, Case> = {
  'hnswlib-node': (n) => {
    const { HierarchicalNSW } = hnswlibNode() as {
      HierarchicalNSW: new (space: string, dim: number) => { initIndex(o: object): void; addPoint(p: number[], l: number): void }
    }
    const graph = new HierarchicalNSW('cosine', DIM)
    graph.initIndex({ maxElements: n, m: GRAPH.m, efConstruction: GRAPH.efConstruction, randomSeed: GRAPH.seed })
    const next = vectorMaker()
    const v = new Array<number>(DIM).fill(0)
    for (let i = 0; i < n; i++) {
      next(v)
      graph.addPoint(v, i)
    }
    return graph
  },
  'quarry-hnsw': (n) => quarryVectors(n, { dimensions: DIM, metric: 'cosine', hnsw: GRAPH }),
  'quarry-exact': (n) => quarryVectors(n, { dimensions: DIM, metric: 'cosine', dense: 'exact' }),
  minisearch: (n) => {
    const text = textMaker()
    const ms = new MiniSearch<{ id: string; text: string }>({ fields: ['text'], idField: 'id' })
    for (let i = 0; i < n; i++) ms.add({ id: String(i), text: text(i) })
    return ms
  },
  'quarry-text': (n) => {
    const text = textMaker()
    const index = createIndex({})
    for (let i = 0; i < n; i++) index.add({ id: String(i), text: text(i) })
    return index
  },
  // Metadata: a 1-d exact index with and without metadata (the difference is the metadata's),
  // and the same metadata objects in a plain array (what an application holding them pays).
  'quarry-1d': (n) => oneDimensional(n, undefined),
  'quarry-1d+metadata': (n) => oneDimensional(n, false),
  'quarry-1d+metadata+unique': (n) => oneDimensional(n, true),
  'plain-metadata': (n) => Array.from({ length: n }, (_, i) => ({ id: String(i), metadata: metadataOf(i, false) })),
}

function oneDimensional(n: number, unique: boolean | undefined): unknown {
  const index = createIndex({ dimensions: 1, metric: 'l2', dense: 'exact' })
  for (let i = 0; i < n; i++) index.add(unique === undefined ? { id: String(i), vector: [i] } : { id: String(i), vector: [i], metadata: metadataOf(i, unique) })
  return index
}

/** In the child: warm the inputs up, take the baseline, build, measure. */
function measure(name: string, n: number): Measured {
  const build = CASES[name] as Case
  build(Math.min(n, 1000)) // loads modules and the corpus, so the baseline holds them
  const before = usage()
  const t = performance.now()
  const kept = build(n)
  const seconds = (performance.now() - t) / 1000
  const after = usage()
  if (kept === undefined) throw new Error('nothing kept')
  const per = (key: keyof Usage): number => (after[key] - before[key]) / n
  return { case: name, n, seconds, heap: per('heapUsed'), external: per('external'), arrayBuffers: per('arrayBuffers'), rss: per('rss') }
}

const SELF = fileURLToPath(import.meta.url)

function inChild(name: string, n: number): Measured | undefined {
  const run = spawnSync(process.execPath, [...process.execArgv, SELF, '--memory-child', name, String(n)], { encoding: 'utf8', maxBuffer: 1 << 24 })
  const line = run.stdout.trim().split('\n').at(-1) ?? ''
  if (run.status !== 0 || !line.startsWith('{')) {
    console.log(`  ${name} at ${n}: failed (${run.status ?? run.signal}) ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`)
    return undefined
  }
  return JSON.parse(line) as Measured
}

/** Cases per size (QUARRY_MEMORY_CASES=a,b picks some); the unique-string case runs up to 100k. */
function casesAt(n: number): string[] {
  const only = process.env.QUARRY_MEMORY_CASES?.split(',')
  return Object.keys(CASES).filter((c) => (only === undefined || only.includes(c)) && (c !== 'quarry-1d+metadata+unique' || n <= 100_000))
}

export async function runMemory(ctx: SuiteContext): Promise<void> {
  // Its baseline is hnswlib-node, which is not built on a machine without a C++ toolchain.
  if (hnswlibNode() === undefined) {
    console.log(`suite memory skipped: ${HNSWLIB_SKIP_NOTE}`)
    return
  }
  const sizes = ctx.quick ? [10_000] : (process.env.QUARRY_MEMORY_SIZES ?? '100000,1000000').split(',').map(Number)
  const results: Measured[] = []
  for (const n of sizes) {
    console.log(`\n== ${n} records`)
    for (const name of casesAt(n)) {
      const m = inChild(name, n)
      if (!m) continue
      results.push(m)
      console.log(`  ${name}: ${m.seconds.toFixed(1)} s, heap ${m.heap.toFixed(0)} B, external ${m.external.toFixed(0)} B, rss ${m.rss.toFixed(0)} B per record`)
    }
    const at = results.filter((r) => r.n === n)
    printTable(`bytes per record at ${n.toLocaleString('en-US')} records (growth after GC, each case in its own process)`, at.map((r) => ({
      case: r.case,
      'heap B': r.heap,
      'external B': r.external,
      'heap + external B': r.heap + r.external,
      'RSS B': r.rss,
      'build s': r.seconds,
    })))
  }
  const meta = { suite: 'memory', date: new Date().toISOString(), node: process.version, cpus: ctx.cpus, quick: ctx.quick, dim: DIM, graph: GRAPH }
  writeFileSync(join(ctx.resultsDir, 'memory.json'), `${JSON.stringify({ ...meta, results }, null, 1)}\n`)
}

if (process.argv[2] === '--memory-child') {
  const m = measure(process.argv[3] as string, Number(process.argv[4]))
  process.stdout.write(`${JSON.stringify(m)}\n`)
}
