import * as grpc from '@grpc/grpc-js'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { exactScenario, fullScenario, type Ranked } from './consumer/scenario.js'
import { testingExports } from './consumer/testing.js'

// Packs @quarry/core, @quarry/adapters and @quarry/hnsw as they would be published (pnpm pack:
// prepack builds the first two), installs them with plain npm into a fresh project outside the
// repository (@quarry/hnsw as core's optional dependency, from its tarball, as from a registry), and
// uses them there as an application would: strict TypeScript (NodeNext) against the shipped .d.ts,
// plain node, the `quarry` bin. The first install runs with a C++ compiler that does not exist, so
// the native HNSW module (@quarry/hnsw) fails to build and the install must still succeed; the
// second `npm install` builds it for real (node-gyp against local Node headers).

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
const CONSUMER = fileURLToPath(new URL('./consumer', import.meta.url))
const TYPES_NODE = '@types/node@20.19.43'
const FAST_CHECK = 'fast-check@4.10.2'

interface Ran {
  stdout: string
  stderr: string
  ms: number
}

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  const start = performance.now()
  return new Promise((done, fail) => {
    execFile(command, args, { cwd, env, maxBuffer: 64 << 20 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`${command} ${args.join(' ')} failed in ${cwd}: ${error.message}\n${stdout}\n${stderr}`))
      else done({ stdout, stderr, ms: performance.now() - start })
    })
  })
}

/** The pnpm running this test (npm_execpath), else the pinned one through npx, as scripts/setup.mjs. */
function pnpm(args: readonly string[]): [string, string[]] {
  const execPath = process.env.npm_execpath
  if (execPath && /pnpm/.test(execPath)) return /\.[cm]?js$/.test(execPath) ? [process.execPath, [execPath, ...args]] : [execPath, [...args]]
  return ['npx', ['-y', 'pnpm@12.4.2', ...args]]
}

/** A Node install with headers for node-gyp (npm_config_nodedir), as scripts/setup.mjs finds it. */
function nodeHeaders(): string | undefined {
  const configured = process.env.npm_config_nodedir
  if (configured && existsSync(join(configured, 'include', 'node', 'node.h'))) return configured
  const prefix = resolve(dirname(process.execPath), '..')
  return existsSync(join(prefix, 'include', 'node', 'node.h')) ? prefix : undefined
}

/**
 * The environment of an ordinary shell outside the workspace: none of the npm_* settings pnpm passes
 * to its scripts, no NODE_PATH (pnpm's bin shims point it at the workspace's .pnpm/node_modules,
 * where the consumer would find the workspace's @quarry/hnsw), NODE_OPTIONS or vitest variables.
 */
function outsideEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(npm_|NODE_PATH$|NODE_OPTIONS$|NODE_ENV$|VITEST)/i.test(key)))
  const headers = nodeHeaders()
  return { ...env, ...(headers ? { npm_config_nodedir: headers } : {}), npm_config_update_notifier: 'false', ...extra }
}

const NPM_FLAGS = ['--no-audit', '--no-fund', '--prefer-offline']

/** Lucene's BM25 (k1 1.2, b 0.75) of one term, written plainly. */
function bm25(tf: number, df: number, length: number, documents: number, averageLength: number): number {
  const idf = Math.log(1 + (documents - df + 0.5) / (df + 0.5))
  return (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * length) / averageLength))
}

function expectRanked(actual: Ranked, expected: Ranked): void {
  expect(actual.map(([id]) => id)).toEqual(expected.map(([id]) => id))
  actual.forEach(([, score], i) => expect(score).toBeCloseTo((expected[i] as [string, number])[1], 6))
}

/** The hand-computed answers over scenario.ts's four records (cosine; "red"; hybrid at alpha 0.5). */
function expectKnownAnswers(result: { dense: Ranked; text: Ranked; hybrid: Ranked; reloaded: { dense: Ranked; text: Ranked } }): void {
  const dense: Ranked = [['a', 1], ['b', 0.6], ['c', 0], ['d', 0]]
  const text: Ranked = [['b', bm25(2, 2, 3, 4, 2.5)], ['a', bm25(1, 2, 2, 4, 2.5)]]
  expectRanked(result.dense, dense)
  expectRanked(result.text, text)
  // TM2C2 ("sun", vector [0, 1, 0]): dense (cos + 1) / 2 — c 1, b 0.9, a and d 0.5; BM25 over the best (d)
  expectRanked(result.hybrid, [['c', 0.5 + 0.5 * (bm25(1, 2, 2, 4, 2.5) / bm25(3, 2, 3, 4, 2.5))], ['d', 0.75], ['b', 0.45]])
  expectRanked(result.reloaded.dense, dense)
  expectRanked(result.reloaded.text, text)
}

function tarEntries(tarball: string): Promise<string[]> {
  return run('tar', ['-tzf', tarball], dirname(tarball)).then((r) => r.stdout.split('\n').filter(Boolean).map((e) => e.replace(/^package\//, '')))
}

function packedManifest(dir: string, name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(join(dir, name, 'package', 'package.json'), 'utf8')) as Record<string, unknown>
}

let dir = ''
let app = ''
let server: ChildProcess | undefined
const tarballs: Record<'core' | 'adapters' | 'hnsw', string> = { core: '', adapters: '', hnsw: '' }
const timings: Record<string, string> = {}
const time = (label: string, ms: number): void => void (timings[label] = `${(ms / 1000).toFixed(1)} s`)

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-pack-'))
  const out = join(dir, 'tarballs')
  for (const name of ['core', 'adapters', 'hnsw'] as const) {
    const [command, args] = pnpm(['pack', '--pack-destination', out])
    time(`pnpm pack ${name} (build included)`, (await run(command, args, join(ROOT, 'packages', name))).ms)
    tarballs[name] = join(out, `quarry-${name}-0.1.0.tgz`)
    expect(existsSync(tarballs[name]), tarballs[name]).toBe(true)
    mkdirSync(join(dir, name))
    await run('tar', ['-xzf', tarballs[name], '-C', join(dir, name)], dir)
  }
  app = join(dir, 'app')
  mkdirSync(join(app, 'src'), { recursive: true })
  // @quarry/core's optional dependency on @quarry/hnsw 0.1.0 resolves to its tarball, as it would to
  // the registry's copy (npm overrides).
  const manifest = { name: 'quarry-consumer', private: true, type: 'module', overrides: { '@quarry/hnsw': `file:${tarballs.hnsw}` } }
  writeFileSync(join(app, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  for (const file of ['scenario.ts', 'main.ts', 'testing.ts']) cpSync(join(CONSUMER, file), join(app, 'src', file))
  const strict = {
    target: 'ES2022',
    lib: ['ES2023'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    verbatimModuleSyntax: true,
    skipLibCheck: false,
    types: ['node'],
    rootDir: 'src',
    outDir: 'out',
  }
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: strict, files: ['src/main.ts'] }))
  writeFileSync(join(app, 'tsconfig.testing.json'), JSON.stringify({ compilerOptions: strict, files: ['src/testing.ts'] }))
}, 300_000)

afterAll(() => {
  if (server?.pid !== undefined && server.exitCode === null) process.kill(-server.pid, 'SIGTERM')
  if (dir) rmSync(dir, { recursive: true, force: true })
  console.log(`pack-install timings: ${JSON.stringify(timings)}`)
})

describe('the packed packages', () => {
  it('hold bundled ESM with source maps for every export, the bin and the worker, .d.ts files, a README and a LICENSE; no sources or tests', async () => {
    for (const name of ['core', 'adapters'] as const) {
      const entries = await tarEntries(tarballs[name])
      const manifest = packedManifest(dir, name)
      for (const file of ['package.json', 'README.md', 'LICENSE']) expect(entries, `${name}: ${file}`).toContain(file)
      // The adapters also ship the console's browser files (served by quarry serve), not its tsconfig.
      const shipped = (e: string): boolean => e.startsWith('dist/') || (name === 'adapters' && e.startsWith('console/') && !e.endsWith('tsconfig.json'))
      expect(entries.filter((e) => !shipped(e) && !['package.json', 'README.md', 'LICENSE', 'bin/quarry.mjs'].includes(e)), name).toEqual([])
      expect(entries.filter((e) => (e.endsWith('.ts') && !e.endsWith('.d.ts')) || /(^|\/)(src|test)\//.test(e) || e.endsWith('.tsbuildinfo')), name).toEqual([])
      // What runs is the bundle (scripts/bundle.mjs), each file with its source map; tsc's modules
      // are not shipped, only their declarations.
      expect(entries.filter((e) => e.startsWith('dist/') && !e.startsWith('dist/bundle/') && !e.endsWith('.d.ts')), `${name}: only the bundle and .d.ts files under dist/`).toEqual([])
      for (const js of entries.filter((e) => e.endsWith('.js') && e.startsWith('dist/'))) expect(entries, `${name}: ${js} has a source map`).toContain(`${js}.map`)
      const sources: string[] = []
      for (const file of entries.filter((e) => e.startsWith('dist/bundle/') && e.endsWith('.js.map'))) {
        const bundled = JSON.parse(readFileSync(join(dir, name, 'package', file), 'utf8')) as { sources: string[]; sourcesContent?: unknown[] }
        expect(bundled.sourcesContent?.length, `${name}: ${file} carries its sources`).toBe(bundled.sources.length)
        sources.push(...bundled.sources.map((source) => join(dirname(file), source)))
      }
      expect(sources.filter((s) => !/^src\/.+\.ts$/.test(s)), `${name}: the bundle maps to the package's .ts sources`).toEqual([])
      expect(sources, `${name}: the bundle maps its main module`).toContain(name === 'core' ? 'src/engine/quarry-index.ts' : 'src/cli/main.ts')
      expect(manifest.exports).toEqual({
        '.': { types: './dist/index.d.ts', default: './dist/bundle/index.js' },
        './testing': { types: './dist/testing/index.d.ts', default: './dist/bundle/testing/index.js' },
        './package.json': './package.json',
      })
      const targets = ['dist/bundle/index.js', 'dist/index.d.ts', 'dist/bundle/testing/index.js', 'dist/testing/index.d.ts', ...(name === 'adapters' ? ['dist/bundle/cli/main.js', 'dist/bundle/vertex-rag/analysis-worker.js'] : [])]
      for (const target of targets) expect(entries, `${name}: ${target}`).toContain(target)
      expect(manifest.peerDependenciesMeta).toEqual({ 'fast-check': { optional: true } })
      expect(manifest.license).toBe('MIT')
    }
    const core = packedManifest(dir, 'core')
    const adapters = packedManifest(dir, 'adapters')
    expect(core.optionalDependencies).toEqual({ '@quarry/hnsw': core.version })
    expect(Object.keys(core.dependencies as object)).not.toContain('@quarry/hnsw')
    expect((adapters.dependencies as Record<string, string>)['@quarry/core']).toBe(core.version)
    expect(adapters.bin).toEqual({ quarry: './bin/quarry.mjs' })
    expect(readFileSync(join(dir, 'adapters', 'package', 'bin', 'quarry.mjs'), 'utf8')).not.toMatch(/tsx|\.ts['"]/)
    expect(await tarEntries(tarballs.adapters)).toContain('console/index.html')
    // The native package ships its C++ (built at install) and hnswlib's headers with their licence.
    const hnsw = packedManifest(dir, 'hnsw')
    expect((await tarEntries(tarballs.hnsw)).sort()).toEqual(
      ['LICENSE', 'README.md', 'binding.gyp', 'index.cjs', 'index.d.ts', 'package.json', 'src/graph.cc', ...['LICENSE', 'bruteforce.h', 'hnswalg.h', 'hnswlib.h', 'space_ip.h', 'space_l2.h', 'stop_condition.h', 'visited_list_pool.h'].map((f) => `vendor/hnswlib/${f}`)].sort(),
    )
    expect(hnsw.version).toBe(core.version)
    expect(hnsw.scripts).toEqual({ install: 'node-gyp rebuild' })
    expect(hnsw.license).toBe('(MIT AND Apache-2.0)')
  })
})

describe('installed with npm into a project outside the workspace', () => {
  it('installs without a C++ toolchain; exact search, BM25, snapshots and the client work, the graph is NATIVE_UNAVAILABLE', async () => {
    const noCompiler = outsideEnv({ CXX: '/nonexistent/c++', CC: '/nonexistent/cc' })
    time('npm install, no C++ compiler', (await run('npm', ['install', tarballs.core, tarballs.adapters, TYPES_NODE, ...NPM_FLAGS], app, noCompiler)).ms)
    expect(existsSync(join(app, 'node_modules', '@quarry', 'hnsw')), 'the failed optional dependency is left out').toBe(false)
    expect(existsSync(join(app, 'node_modules', 'fast-check')), 'an optional peer is not installed').toBe(false)

    time('tsc (strict, NodeNext)', (await run(process.execPath, [TSC, '-p', 'tsconfig.json'], app, outsideEnv())).ms)
    const installed = JSON.parse((await run(process.execPath, ['out/main.js', 'exact'], app, outsideEnv())).stdout) as Awaited<ReturnType<typeof exactScenario>>
    const expected = await exactScenario()
    expect(installed.native).toMatch(/^NATIVE_UNAVAILABLE: @quarry\/hnsw, the native HNSW module .* could not be loaded: Cannot find module '@quarry\/hnsw'.*python3, make and a C\+\+ compiler.*npm_config_nodedir/)
    expect(expected.native).toBe('loaded')
    expect({ ...installed, native: 'loaded' }).toEqual(expected)
    expect(installed.exact.strategy).toBe('exact')
    expectKnownAnswers(installed.exact)
    expect(installed.google.texts[0]).toBe('The spice must flow.')
    expect(installed.google.invalid).toBe(3)
    expect(installed.pooled).toEqual({ same: true, ids: expected.pooled.ids, warnings: [] })
    expect(installed.pooled.ids).toHaveLength(10)
    expect(installed.ragImport).toEqual({ ...expected.ragImport, warnings: [] })
    expect(installed.ragImport.same).toBe(true)
    expect(installed.ragImport.files).toEqual(['dune.txt', 'notes.md', 'page.html', ...Array.from({ length: 20 }, (_, i) => `w${String(i).padStart(2, '0')}.txt`)])
    expect(installed.ragImport.contexts[0]).toMatch(/^dune\.txt: .*spice/)

    const help = await run('npx', ['--no', '--', 'quarry', '--help'], app, outsideEnv())
    expect(help.stdout).toMatch(/^usage: quarry/)
  }, 300_000)

  it('builds the native module on the next npm install; HNSW, save/load and the Google client work under plain node', async () => {
    time('npm install fast-check + native build', (await run('npm', ['install', FAST_CHECK, ...NPM_FLAGS], app, outsideEnv())).ms)
    expect(existsSync(join(app, 'node_modules', '@quarry', 'hnsw', 'build', 'Release', 'quarry_hnsw.node'))).toBe(true)
    expect(existsSync(join(app, 'node_modules', 'hnswlib-node')), 'hnswlib-node is not installed').toBe(false)

    const installed = JSON.parse((await run(process.execPath, ['out/main.js', 'full'], app, outsideEnv())).stdout) as Awaited<ReturnType<typeof fullScenario>>
    expect(installed).toEqual(await fullScenario())
    expect(installed.graph.strategy).toBe('hnsw')
    expect(installed.graph.reloaded.strategy).toBe('hnsw')
    expectKnownAnswers(installed.graph)
    expect(installed.duplicate).toBe('DUPLICATE_ID')
    expect(installed.google.texts[0]).toBe('The spice must flow.')
    expect(installed.google.scores[0]).toBeGreaterThan(installed.google.scores[1] as number)

    // The ./testing entries, now that their optional peer is installed.
    time('tsc ./testing entries', (await run(process.execPath, [TSC, '-p', 'tsconfig.testing.json'], app, outsideEnv())).ms)
    const exports = JSON.parse((await run(process.execPath, ['out/testing.js', 'print'], app, outsideEnv())).stdout) as ReturnType<typeof testingExports>
    expect(exports).toEqual(testingExports())
    expect(exports.core.length).toBeGreaterThan(0)
    expect(exports.adapters.length).toBeGreaterThan(0)
  }, 300_000)

  it('npx quarry serve --port 0 --grpc-port 0 answers over REST and gRPC (the protos come with the install), and serves the console at /', async () => {
    server = spawn('npx', ['--no', '--', 'quarry', 'serve', '--port', '0', '--grpc-port', '0', '--embedder', 'hashing'], { cwd: app, env: outsideEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    const child = server
    const { port, grpcPort } = await new Promise<{ port: number; grpcPort: number }>((done, fail) => {
      let out = ''
      child.stdout?.on('data', (c: Buffer) => {
        out += c.toString()
        const m = /serving on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)
        const g = /gRPC on 127\.0\.0\.1:(\d+)/.exec(out)
        if (m && g) done({ port: Number(m[1]), grpcPort: Number(g[1]) })
      })
      child.stderr?.on('data', (c: Buffer) => (out += c.toString()))
      child.once('exit', (code) => fail(new Error(`quarry serve exited (${code}): ${out}`)))
    })
    const response = await fetch(`http://127.0.0.1:${port}/v1beta/corpora`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ displayName: 'Books' }),
    })
    expect(response.status).toBe(200)
    const { name } = (await response.json()) as { name: string }
    expect(name).toMatch(/^corpora\/books-[a-z0-9]{12}$/)
    // ListCorpora over gRPC (an empty request message): the answer holds the corpus made over REST.
    const client = new grpc.Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure())
    const bytes = await new Promise<Buffer>((done, fail) =>
      client.makeUnaryRequest('/google.ai.generativelanguage.v1beta.RetrieverService/ListCorpora', (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), (error, value) => (error || !value ? fail(error ?? new Error('no answer')) : done(value))),
    )
    client.close()
    expect(bytes.includes(Buffer.from(name))).toBe(true)
    expect(bytes.includes(Buffer.from('Books'))).toBe(true)
    // The console, from the installed package's own files (its console/ folder, found from the bundle).
    const page = await fetch(`http://127.0.0.1:${port}/`)
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'")
    expect(await page.text()).toBe(readFileSync(join(app, 'node_modules', '@quarry', 'adapters', 'console', 'index.html'), 'utf8'))
    const overview = (await (await fetch(`http://127.0.0.1:${port}/console/api/overview`)).json()) as { generation: number; semanticRetriever: { corpora: Array<{ name: string }> } }
    expect(overview).toMatchObject({ generation: 1, semanticRetriever: { corpora: [{ name }] } })
  }, 120_000)
})
