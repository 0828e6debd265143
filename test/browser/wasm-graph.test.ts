import { build } from 'esbuild'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NativeGraph, type Graph, type GraphBuild } from '../support/graph-builds.js'
import { clustered } from '../support/random.js'
import { findChromium, launchChromium, skipNote, type Browser } from './chromium.js'
import type { PageAnswer, PageCase, PageResult, RunPage } from './wasm-graph-page.js'

// @quarry/hnsw's WebAssembly graph in a browser: `@quarry/hnsw/wasm/instantiate` bundled by esbuild
// for the browser (wasm-graph-page.ts), served with quarry_hnsw.wasm from a loopback server and run
// in headless Chromium. The page builds graphs from the same seeded vectors as the native build and
// loads the bytes the native build saved; both answer as the native build (the oracle) does: the
// same labels, in the same order, with the same float32 distances bit for bit, filtered or not.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PAGE_SOURCE = 'test/browser/wasm-graph-page.ts'
const WASM = join(ROOT, 'packages/hnsw/wasm/quarry_hnsw.wasm')
const executable = findChromium()
if (!executable) console.warn(skipNote())

const COUNT = 600
const QUERIES = 8
const INIT = { m: 12, efConstruction: 60, seed: 100 }
const K = 10
const EF = 40
// 32: hnswlib's whole-sixteens kernel; 35: sixteens then a scalar tail.
const CASES = (['l2', 'ip'] as const).flatMap((space) => [32, 35].map((dim) => ({ space, dim })))

interface Expected {
  built: { plain: PageAnswer[]; filtered: PageAnswer[] }
  loaded: { plain: PageAnswer[]; filtered: PageAnswer[] }
}

let dir = ''
let server: Server
let base = ''
let browser: Browser | undefined
let page: Page
/** Inputs by URL path: the page, its bundle, the .wasm and each case's data. */
const files = new Map<string, { type: string; body: Uint8Array }>()
const requested: string[] = []
/** Console errors, page errors and requests that left the loopback server. */
const problems: string[] = []
let bundleInputs: string[] = []
/** What the bundle still imports at run time (esbuild's metafile): nothing. */
let bundleImports: string[] = []
const cases: PageCase[] = []
const expected: Expected[] = []

function bits(distances: Float32Array): number[] {
  return Array.from(new Uint32Array(distances.buffer, distances.byteOffset, distances.length))
}

function answers(graph: Graph, queries: Float32Array[], allow?: Uint32Array): PageAnswer[] {
  return queries.map((query) => {
    const labels = new Uint32Array(K)
    const distances = new Float32Array(K)
    const n = graph.search(query, K, labels, distances, allow)
    return { labels: Array.from(labels.subarray(0, n)), distanceBits: bits(distances.subarray(0, n)) }
  })
}

/** Points 0, 2, 4, … by label (3·i): a bitset of label words. */
function everyOther(count: number): Uint32Array {
  const allow = new Uint32Array(Math.ceil((3 * count) / 32) + 1)
  for (let i = 0; i < count; i += 2) allow[(3 * i) >>> 5] = (allow[(3 * i) >>> 5] as number) | (1 << ((3 * i) & 31))
  return allow
}

function serve(path: string, type: string, body: Uint8Array): string {
  files.set(path, { type, body })
  return path
}

/** One case's data served, and the native build's answers for it. */
function prepare(native: GraphBuild, space: 'l2' | 'ip', dim: number): void {
  const vectors = clustered(dim, COUNT + QUERIES, dim, 12).map((p) => Float32Array.from(p))
  const points = vectors.slice(0, COUNT)
  const queries = vectors.slice(COUNT)
  const deleted = Array.from({ length: Math.ceil(COUNT / 7) }, (_, j) => 3 * 7 * j)
  const allow = everyOther(COUNT)

  const graph = new native(space, dim)
  graph.init(COUNT, INIT.m, INIT.efConstruction, INIT.seed)
  points.forEach((v, i) => graph.add(v, 3 * i))
  for (const label of deleted) graph.markDelete(label)
  graph.setEf(EF)
  const file = join(dir, `native-${space}-${dim}.bin`)
  graph.saveSync(file)
  const saved = readFileSync(file)
  const loaded = new native(space, dim)
  loaded.load(saved)
  loaded.setEf(EF)

  const name = `${space}-${dim}`
  const joined = (vs: Float32Array[]): Uint8Array => new Uint8Array(Float32Array.from(vs.flatMap((v) => Array.from(v))).buffer)
  cases.push({
    space,
    dim,
    count: COUNT,
    init: INIT,
    deleted,
    k: K,
    ef: EF,
    points: serve(`/data/${name}.points`, 'application/octet-stream', joined(points)),
    queries: serve(`/data/${name}.queries`, 'application/octet-stream', joined(queries)),
    allow: serve(`/data/${name}.allow`, 'application/octet-stream', new Uint8Array(allow.buffer)),
    saved: serve(`/data/${name}.graph`, 'application/octet-stream', new Uint8Array(saved)),
  })
  expected.push({
    built: { plain: answers(graph, queries), filtered: answers(graph, queries, allow) },
    loaded: { plain: answers(loaded, queries), filtered: answers(loaded, queries, allow) },
  })
}

describe.skipIf(!executable || NativeGraph === undefined)('the WebAssembly graph in headless Chromium, against the native build', () => {
  beforeAll(async () => {
    const native = NativeGraph as GraphBuild
    dir = mkdtempSync(join(tmpdir(), 'quarry-wasm-browser-'))
    const bundled = await build({
      absWorkingDir: ROOT,
      entryPoints: [PAGE_SOURCE],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      outfile: join(dir, 'page.js'),
      metafile: true,
      logLevel: 'silent',
    })
    bundleInputs = Object.keys(bundled.metafile.inputs).sort()
    bundleImports = Object.values(bundled.metafile.outputs).flatMap((output) => output.imports.map((i) => i.path))
    serve('/page.js', 'text/javascript; charset=utf-8', readFileSync(join(dir, 'page.js')))
    serve('/', 'text/html; charset=utf-8', new TextEncoder().encode('<!doctype html>\n<meta charset="utf-8">\n<link rel="icon" href="data:,">\n<title>quarry_hnsw.wasm</title>\n<script type="module" src="/page.js"></script>\n'))
    serve('/quarry_hnsw.wasm', 'application/wasm', readFileSync(WASM))
    for (const { space, dim } of CASES) prepare(native, space, dim)

    server = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname
      requested.push(path)
      const file = files.get(path)
      if (request.method !== 'GET' || file === undefined) {
        response.writeHead(404).end()
        return
      }
      response.writeHead(200, { 'content-type': file.type, 'content-length': file.body.length }).end(file.body)
    })
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

    browser = await launchChromium(executable ?? '', { width: 800, height: 600 })
    page = await browser.context.newPage()
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`)
    })
    page.on('pageerror', (error) => problems.push(`page: ${String(error)}`))
    page.on('request', (request) => {
      if (!request.url().startsWith(`${base}/`)) problems.push(`request to another origin: ${request.url()}`)
    })
  })

  afterAll(async () => {
    await browser?.close()
    await new Promise((closed) => (server ? server.close(closed) : closed(undefined)))
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('bundles for the browser from graph.cjs alone: no node: module, no loader that reads files', () => {
    expect(bundleInputs).toEqual(['packages/hnsw/wasm/graph.cjs', PAGE_SOURCE])
    expect(bundleImports).toEqual([])
  })

  it('fetches the .wasm, builds and loads graphs that answer as the native build, bit for bit, filtered or not', async () => {
    await page.goto(`${base}/`)
    await page.waitForFunction(() => typeof (globalThis as { quarryWasmGraph?: unknown }).quarryWasmGraph === 'function')
    const results: PageResult[] = await page.evaluate(
      ({ wasm, all }) => ((globalThis as { quarryWasmGraph?: RunPage }).quarryWasmGraph as RunPage)(wasm, all),
      { wasm: '/quarry_hnsw.wasm', all: cases },
    )
    expect(requested).toContain('/quarry_hnsw.wasm')
    expect(results).toHaveLength(CASES.length)
    results.forEach((result, i) => {
      const { space, dim } = CASES[i] as { space: string; dim: number }
      const oracle = expected[i] as Expected
      const where = `${space} dimension ${dim}`
      expect(result.built.size, where).toBe(COUNT)
      expect(result.loaded.size, where).toBe(COUNT)
      expect(result.built.plain, `${where}: built in the page`).toEqual(oracle.built.plain)
      expect(result.built.filtered, `${where}: built in the page, filtered`).toEqual(oracle.built.filtered)
      expect(result.loaded.plain, `${where}: the native build's bytes`).toEqual(oracle.loaded.plain)
      expect(result.loaded.filtered, `${where}: the native build's bytes, filtered`).toEqual(oracle.loaded.filtered)
      expect(result.saveRefusal).toBe("saveSync needs node:fs; in a browser, keep the graph's bytes another way")
    })
    // The oracle's answers are full and the filter changes them: every allowed, none deleted.
    const allowed = (label: number): boolean => (label / 3) % 2 === 0 && (label / 3) % 7 !== 0
    for (const oracle of expected) {
      for (const answer of [...oracle.built.plain, ...oracle.built.filtered, ...oracle.loaded.plain]) expect(answer.labels).toHaveLength(K)
      for (const answer of oracle.built.filtered) expect(answer.labels.filter((l) => !allowed(l))).toEqual([])
      expect(oracle.built.filtered).not.toEqual(oracle.built.plain)
    }
    expect(problems).toEqual([])
  })
})

// Without a Chromium the run says so in its report: this one test, skipped with the reason.
if (!executable) {
  describe('the WebAssembly graph in headless Chromium', () => {
    it('is skipped: no Chromium', (ctx) => ctx.skip(skipNote()))
  })
}
