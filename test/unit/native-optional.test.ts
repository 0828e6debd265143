import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createHashingEmbedder, createIndex, loadIndex, QuarryError, type Hit, type QuarryIndex } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine } from '@quarry/adapters'
import { replaceNativeLoader } from '../../packages/core/src/dense/hnsw.js'

interface Host {
  env: Record<string, string | undefined>
  platform: string
  arch: string
  glibc(): boolean
  localBuild: string | undefined
  resolve(name: string): string
  requirePath(file: string): unknown
  requireWasm(): unknown
}
const { loadGraph } = createRequire(import.meta.url)('../../packages/hnsw/load.cjs') as { loadGraph: (host: Host) => unknown }

function notFound(name: string): never {
  throw Object.assign(new Error(`Cannot find module '${name}'\nRequire stack:\n- /home/someone/app/node_modules/@quarry/hnsw/index.cjs`), { code: 'MODULE_NOT_FOUND' })
}

/** A Linux x64 glibc machine with nothing installed but what `over` gives. */
function host(over: Partial<Host>): Host {
  return {
    env: {},
    platform: 'linux',
    arch: 'x64',
    glibc: () => true,
    localBuild: undefined,
    resolve: notFound,
    requirePath: notFound,
    requireWasm: () => notFound('./wasm/index.cjs'),
    ...over,
  }
}

// @quarry/hnsw always has its WebAssembly build, so the graph is unavailable only when the package
// is missing (a tarball install without it in "overrides"), when QUARRY_HNSW asks for a build that
// cannot load, or when the package is damaged. These tests load it through stand-ins that fail each
// way: a missing module, and @quarry/hnsw's own loader (load.cjs) on a pretend host.
function missingModule(): never {
  throw Object.assign(new Error("Cannot find module '@quarry/hnsw'\nRequire stack:\n- packages/core/src/dense/hnsw.ts"), { code: 'MODULE_NOT_FOUND' })
}

const RECORDS = [
  { id: 'a', vector: [1, 0, 0], text: 'red fox', metadata: { kind: 'animal' } },
  { id: 'b', vector: [0.6, 0.8, 0], text: 'red red dog', metadata: { kind: 'animal' } },
  { id: 'c', vector: [0, 1, 0], text: 'dog sun', metadata: { kind: 'thing' } },
  { id: 'd', vector: [0, 0, 1], text: 'sun sun sun', metadata: { kind: 'thing' } },
]

/** Lucene's BM25 written plainly: idf · tf(k1+1) / (tf + k1(1 − b + b·dl/avgdl)), k1 1.2, b 0.75. */
function bm25(tf: number, df: number, length: number, documents: number, averageLength: number): number {
  const idf = Math.log(1 + (documents - df + 0.5) / (df + 0.5))
  return (idf * (tf * 2.2)) / (tf + 1.2 * (0.25 + (0.75 * length) / averageLength))
}

function ranked(hits: readonly Hit[]): [string, number][] {
  return hits.map((h) => [h.id, h.score])
}

function expectRanked(hits: readonly Hit[], expected: [string, number][]): void {
  expect(hits.map((h) => h.id)).toEqual(expected.map(([id]) => id))
  ranked(hits).forEach(([, score], i) => expect(score).toBeCloseTo((expected[i] as [string, number])[1], 6))
}

function nativeError(run: () => unknown): QuarryError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(QuarryError)
    return error as QuarryError
  }
  throw new Error('expected NATIVE_UNAVAILABLE, nothing was thrown')
}

// Not IndexOptions: createIndex takes IndexOptions & { embedder?: Embedder }, which IndexOptions' embedder identity is not.
function filled(options: Parameters<typeof createIndex>[0]): QuarryIndex {
  const index = createIndex(options)
  index.addMany(RECORDS)
  return index
}

const dirs: string[] = []
let restore: (() => void) | undefined
afterEach(() => {
  restore?.()
  restore = undefined
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-native-'))
  dirs.push(dir)
  return dir
}

describe('without the native HNSW module', () => {
  it('exact dense search, BM25, hybrid search and snapshots still work', () => {
    restore = replaceNativeLoader(missingModule)
    const index = filled({ dimensions: 3, dense: 'exact' })

    const dense = index.search({ vector: [1, 0, 0], topK: 4 })
    expect(dense.stats.strategy).toBe('exact')
    // cosine: a 1, b 0.6, c and d 0 (a tie, ordered by id)
    expectRanked(dense.hits, [['a', 1], ['b', 0.6], ['c', 0], ['d', 0]])
    const filtered = index.search({ vector: [0, 1, 0], topK: 2, filter: { op: 'eq', field: 'kind', value: 'animal' } })
    expect(filtered.stats.strategy).toBe('exact-filtered')
    expectRanked(filtered.hits, [['b', 0.8], ['a', 0]])

    // "red": df 2 of 4 documents, lengths 2, 3, 2, 3 (average 2.5)
    const text = index.search({ text: 'red', topK: 4 })
    expectRanked(text.hits, [['b', bm25(2, 2, 3, 4, 2.5)], ['a', bm25(1, 2, 2, 4, 2.5)]])

    const hybrid = index.search({ text: 'sun', vector: [0, 1, 0], topK: 3, alpha: 0.5 })
    // TM2C2: dense (cos + 1) / 2 — c 1, b 0.9, a and d 0.5; sparse BM25 over the best (d) — d 1, c its share
    const sunC = bm25(1, 2, 2, 4, 2.5) / bm25(3, 2, 3, 4, 2.5)
    expectRanked(hybrid.hits, [['c', 0.5 + 0.5 * sunC], ['d', 0.75], ['b', 0.45]])

    const textOnly = createIndex({})
    textOnly.addMany(RECORDS.map(({ id, text }) => ({ id, text })))
    expectRanked(textOnly.search({ text: 'red', topK: 4 }).hits, ranked(text.hits))

    const dir = tempDir()
    index.save(dir)
    const loaded = loadIndex(dir)
    expectRanked(loaded.search({ vector: [1, 0, 0], topK: 4 }).hits, ranked(dense.hits))
    expectRanked(loaded.search({ text: 'red', topK: 4 }).hits, ranked(text.hits))
  })

  it('what needs the graph fails with NATIVE_UNAVAILABLE naming the cause and its fix', () => {
    // A snapshot with a graph, written while the module loads.
    const dir = tempDir()
    filled({ dimensions: 3 }).save(dir)

    restore = replaceNativeLoader(missingModule)
    const created = nativeError(() => createIndex({ dimensions: 3 }))
    expect(created.code).toBe('NATIVE_UNAVAILABLE')
    expect(created.message).toBe(
      'The HNSW graph (@quarry/hnsw) is unavailable: @quarry/hnsw, the HNSW graph package @quarry/core depends on, is not installed. ' +
        'From the npm registry it comes with @quarry/core; installing from packed tarballs, map it (and its platform packages) to their tarballs ' +
        'in your package.json\'s "overrides", e.g. "@quarry/hnsw": "file:./quarry-hnsw-0.1.0.tgz", then run npm install (see Quarry\'s docs/install.md) ' +
        'An index with dimensions needs it unless created with dense: "exact" (brute-force search); text (BM25) search never does.',
    )
    expect((created.cause as { code?: string }).code).toBe('MODULE_NOT_FOUND')
    const loaded = nativeError(() => loadIndex(dir))
    expect(loaded.code).toBe('NATIVE_UNAVAILABLE')
    expect(loaded.message).toBe(created.message)

    // QUARRY_HNSW=native where the platform package was left out, where none exists, where it fails to load.
    const native = { QUARRY_HNSW: 'native' }
    const messageFor = (h: Host): string => {
      restore?.()
      restore = replaceNativeLoader(() => loadGraph(h))
      const error = nativeError(() => createIndex({ dimensions: 3 }))
      expect(error.code).toBe('NATIVE_UNAVAILABLE')
      expect(error.message).not.toMatch(/\/home\/someone/)
      return error.message
    }
    expect(messageFor(host({ env: native }))).toMatch(
      /^The HNSW graph \(@quarry\/hnsw\) is unavailable: QUARRY_HNSW=native, but @quarry\/hnsw-linux-x64-gnu is not installed: the prebuilt graph for linux-x64-gnu is the optional dependency @quarry\/hnsw-linux-x64-gnu, left out of this install .*Install it \(npm install @quarry\/hnsw-linux-x64-gnu; from tarballs see Quarry's docs\/install.md\), or unset QUARRY_HNSW to use the WebAssembly build/,
    )
    expect(messageFor(host({ env: native, platform: 'darwin', arch: 'arm64' }))).toMatch(
      /unavailable: QUARRY_HNSW=native, but no prebuilt native graph for darwin-arm64: no prebuilt native graph is shipped for darwin-arm64\. Unset QUARRY_HNSW \(or set it to wasm\) to use the WebAssembly build, or build the native one from source: npm explore @quarry\/hnsw -- npm run build-from-source/,
    )
    expect(messageFor(host({ env: native, glibc: () => false }))).toMatch(/no prebuilt native graph is shipped for linux-x64-musl\./)
    const badElf = host({
      env: native,
      resolve: (name) => `/home/someone/app/node_modules/${name}/quarry_hnsw.node`,
      requirePath: (file) => {
        throw new Error(`/lib/x86_64-linux-gnu/libc.so.6: version \`GLIBC_2.32' not found (required by ${file})`)
      },
    })
    expect(messageFor(badElf)).toMatch(
      /unavailable: QUARRY_HNSW=native, but @quarry\/hnsw-linux-x64-gnu failed to load: libc\.so\.6: version `GLIBC_2\.32' not found \(required by quarry_hnsw\.node\)\. The prebuilt binary needs Linux with glibc 2\.32 or later; or unset QUARRY_HNSW to use the WebAssembly build .*, or build it for this system from source: npm explore @quarry\/hnsw -- npm run build-from-source/,
    )
    const badLocal = host({ env: native, localBuild: '/home/someone/app/node_modules/@quarry/hnsw/src/build/Release/quarry_hnsw.node', requirePath: () => ({}) })
    expect(messageFor(badLocal)).toMatch(/QUARRY_HNSW=native, but the build from source \(src\/build\/Release\/quarry_hnsw\.node\) failed to load: it exports no Graph class\. Rebuild it \(npm explore/)
    expect(messageFor(host({ env: { QUARRY_HNSW: 'gpu' } }))).toMatch(/unavailable: QUARRY_HNSW is "gpu"; set it to native or wasm, or unset it/)
    // Without QUARRY_HNSW the WebAssembly build is the fallback; when it too fails, both causes are named.
    expect(messageFor(host({}))).toMatch(
      /unavailable: the WebAssembly graph of @quarry\/hnsw failed to load: Cannot find module '\.\/wasm\/index\.cjs' \(and the native graph: @quarry\/hnsw-linux-x64-gnu is not installed\)\. Its wasm\/ folder is missing or damaged: reinstall @quarry\/hnsw/,
    )

    // A module that loads but is not @quarry/hnsw's shape is refused the same way.
    restore?.()
    restore = replaceNativeLoader(() => ({}))
    expect(nativeError(() => createIndex({ dimensions: 3 })).message).toMatch(/could not be loaded: it exports no Graph class\. Reinstall it/)

    // A failure is not remembered: once the module loads, the default index and the graph work.
    restore()
    restore = undefined
    const index = filled({ dimensions: 3, planner: { exactBelow: 0 } })
    const hits = index.search({ vector: [1, 0, 0], topK: 2 })
    expect(hits.stats.strategy).toBe('hnsw')
    expectRanked(hits.hits, [['a', 1], ['b', 0.6]])
    expectRanked(loadIndex(dir).search({ vector: [1, 0, 0], topK: 2 }).hits, [['a', 1], ['b', 0.6]])
  })

  it('the adapters answer FAILED_PRECONDITION saying how to get it (no local path), and RAG Engine (exact by default) works', async () => {
    restore = replaceNativeLoader(missingModule)
    const embedder = createHashingEmbedder({ dimensions: 8 })
    const internal: unknown[] = []
    const expected = {
      ok: false,
      status: { code: 9, message: "This Quarry install cannot load its HNSW graph (@quarry/hnsw is missing, or QUARRY_HNSW names a build that cannot load; the server's error log says which and how to fix it). Until then create the engine with the option dense: 'exact'." },
    }
    const sr = new SemanticRetriever({ embedder, onInternalError: (e) => internal.push(e) })
    expect(await sr.createCorpus({ corpus: { name: 'corpora/c' } })).toEqual(expected)
    const bank = new MemoryBank({ embedder, onInternalError: (e) => internal.push(e) })
    expect(await bank.createMemory({ parent: 'projects/p/locations/l/reasoningEngines/1', memory: { fact: 'I like tea', scope: { user: 'u' } } })).toEqual(expected)
    // The cause (which names local paths) goes to onInternalError only.
    expect(internal.map((e) => (e as QuarryError).code)).toEqual(['NATIVE_UNAVAILABLE', 'NATIVE_UNAVAILABLE'])
    const exact = new SemanticRetriever({ embedder, dense: 'exact' })
    expect((await exact.createCorpus({ corpus: { name: 'corpora/c' } })).ok).toBe(true)
    const exactBank = new MemoryBank({ embedder, dense: 'exact' })
    expect((await exactBank.createMemory({ parent: 'projects/p/locations/l/reasoningEngines/1', memory: { fact: 'I like tea', scope: { user: 'u' } } })).ok).toBe(true)
    const rag = new VertexRagEngine({ embedder })
    const created = await rag.v1beta1.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'c' } })
    expect(created.ok).toBe(true)
  })
})
