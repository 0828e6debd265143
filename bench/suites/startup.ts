import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Analyzer, chunkText, createHashingEmbedder, loadIndex } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine } from '@quarry/adapters'
import { DataDir } from '../../packages/adapters/src/transport/data-dir.js'
import { readAll, sizeOf } from '../lib/disk.js'
import { buildDist, DIST_CLI, DIST_CORE } from '../lib/dist.js'
import { npmCorpus } from '../lib/npm-corpus.js'
import { median } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const QUARRY = join(ROOT, 'packages', 'adapters', 'bin', 'quarry.mjs')

/**
 * How the server is started: `dist` (default) as a user's install runs it, the compiled
 * JavaScript of the built packages (built first: `tsc -b`); `source` (STARTUP_FROM=source) as
 * the workspace's bin does, the TypeScript sources through tsx.
 */
type StartFrom = 'dist' | 'source'

function quarryArgs(from: StartFrom, args: readonly string[]): string[] {
  if (from === 'source') return [QUARRY, ...args]
  // bin/quarry.mjs outside the workspace: import the bundled CLI and run it.
  const run = `const { runCli } = await import(${JSON.stringify(pathToFileURL(DIST_CLI).href)}); process.exitCode = await runCli(process.argv.slice(1))`
  return ['--input-type=module', '-e', run, ...args]
}

const PARENT = 'projects/bench/locations/local'
const QUERY = 'how to configure the option of the package'

/**
 * The corpus's vector search (RagManagedDb): `knn` (default), exact search, whose first answer
 * scans every vector; `ann` (STARTUP_CORPUS=ann), Quarry's HNSW graph, whose answer takes about a
 * millisecond, but whose 1M build takes long (build the folder once, then STARTUP_DATA=DIR).
 */
type CorpusKind = 'knn' | 'ann'

function corpusKind(): CorpusKind {
  const kind = process.env['STARTUP_CORPUS'] ?? 'knn'
  if (kind !== 'knn' && kind !== 'ann') throw new Error(`STARTUP_CORPUS must be knn or ann, not ${kind}`)
  return kind
}

/**
 * Issue 20, startup: a `--data` folder holding one RAG corpus of N chunks (KNN: exact search, or
 * ANN with STARTUP_CORPUS=ann;
 * the 256-d hashing embedder that `quarry serve --embedder hashing` uses, so the first query waits
 * on no model), checkpointed by the server's own writer (DataDir). Each round spawns the real
 * `quarry serve --data DIR --embedder hashing --port 0` (default durability: log) and times from
 * the spawn to the answer of its first request, a retrieveContexts (200, top 10) naming the corpus
 * (an unmeasured start lists it first), then kills it (SIGKILL: no final
 * snapshot) and times core's `loadIndex` of the same corpus snapshot in this process, and in a
 * fresh `node` that loads it and nothing else (timed there around the call: the stricter
 * baseline, free of this process's other steps; and from its spawn). Also: an
 * empty folder's time to first answer, a listRagCorpora (the process's fixed start: Node and the modules, plus tsx
 * compiling the sources with STARTUP_FROM=source). N = 1M (`--quick`: 100k); STARTUP_CHUNKS=N overrides (N,M,...: a row for each); STARTUP_DATA=DIR reuses a folder of N chunks built by an earlier run (not timed; DIR,DIR2,... one per size); STARTUP_ROUNDS=R rounds (15).
 * The server runs from the built packages (dist/, compiled first), as an installed `quarry` does;
 * STARTUP_FROM=source runs the workspace's TypeScript sources through tsx instead.
 */
export async function runStartup(ctx: SuiteContext): Promise<void> {
  // STARTUP_CHUNKS=N,M measures each size in turn (one row each), STARTUP_DATA=DIR,DIR2 their folders.
  const sizes = (process.env['STARTUP_CHUNKS'] ?? (ctx.quick ? '100000' : '1000000')).split(',').map(Number)
  const folders = process.env['STARTUP_DATA']?.split(',')
  if (folders !== undefined && folders.length !== sizes.length) throw new Error(`STARTUP_DATA names ${folders.length} folders for ${sizes.length} sizes (STARTUP_CHUNKS)`)
  const kind = corpusKind()
  const from: StartFrom = process.env['STARTUP_FROM'] === 'source' ? 'source' : 'dist'
  if (from === 'dist') buildDist('adapters')
  const measured = []
  // The host's load averages (1, 5, 15 min) before and after: the targets hold on a quiet machine.
  const loadBefore = loadavg()
  for (const [i, chunks] of sizes.entries()) measured.push(await measureSize(chunks, kind, from, folders?.[i]))
  const rows = measured.map((m) => m.row)
  writeFileSync(join(ctx.resultsDir, kind === 'ann' ? 'startup-ann.json' : 'startup.json'), `${JSON.stringify({ suite: 'startup', date: new Date().toISOString(), node: process.version, cpus: ctx.cpus, quick: ctx.quick, loadavg: { before: loadBefore, after: loadavg() }, rows, times: measured.map((m) => ({ chunks: m.row.chunks, ...m.times })) }, null, 1)}\n`)
}

/** One size's rounds: its folder built (or `reused`, STARTUP_DATA), then served and loaded in interleaved rounds. */
async function measureSize(chunks: number, kind: CorpusKind, from: StartFrom, reused: string | undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-startup-'))
  try {
    // STARTUP_DATA=DIR reuses a folder an earlier run of this suite built (its build is not timed).
    const data = reused ?? join(dir, 'data')
    const buildSeconds = reused === undefined ? await buildDataFolder(data, chunks, kind) : Number.NaN
    // Read anew before each use: a start may checkpoint a new generation and remove the old one.
    const corpusDir = (): string => join(data, readFileSync(join(data, 'CURRENT'), 'latin1').trim(), 'vertex-rag', 'corpus-0')
    const empty = join(dir, 'empty')
    const embedder = createHashingEmbedder({ dimensions: 256 })
    // Single rounds move by ±1 s on this shared host (page cache, other jobs): the median of 15.
    const rounds = Number(process.env['STARTUP_ROUNDS'] ?? 15)
    const times = { first: [] as number[], listening: [] as number[], opened: [] as number[], load: [] as number[], process: [] as number[], fresh: [] as number[], heap: [] as number[], empty: [] as number[] }
    // One unmeasured start first: the folder was just written, and the first process to read it
    // (page cache, the binary's code) would pay for all that follow. It lists the corpus's name.
    const corpus = (await firstAnswer(from, data, undefined)).corpora[0]
    if (corpus === undefined) throw new Error(`${data} serves no RAG corpus`)
    for (let round = 0; round < rounds; round++) {
      const steps = [
        async () => {
          const t = await firstAnswer(from, data, corpus)
          times.first.push(t.answer)
          times.listening.push(t.listening)
          times.opened.push(t.opened)
        },
        async () => {
          const t = performance.now()
          const index = loadIndex(corpusDir(), { embedder })
          times.load.push((performance.now() - t) / 1000)
          if (index.size !== chunks) throw new Error(`the corpus holds ${index.size} chunks, not ${chunks}`)
        },
        async () => {
          times.empty.push((await firstAnswer(from, empty, undefined)).answer)
        },
        async () => {
          const fresh = await freshLoad(from, corpusDir(), chunks)
          times.process.push(fresh.spawned)
          times.fresh.push(fresh.load)
          times.heap.push(fresh.heapMb)
        },
      ]
      if (round % 2 === 1) steps.reverse()
      for (const step of steps) {
        // The bench's own loaded index (1 GB of vectors at 1M) is freed before the next step runs:
        // the loop turns first (the load's checksum worker, which read the rows into the store's
        // shared memory, is joined only then and holds that memory until it is), then a GC, then
        // a moment for the memory to go back to the system.
        await new Promise((resolve) => setTimeout(resolve, 100))
        global.gc?.()
        await new Promise((resolve) => setTimeout(resolve, 1000))
        // Untimed: each step starts with the folder in the page cache. These hosts reclaim file
        // pages left unread for about a minute (DAMON pageout), and a file read once per round looks
        // unread to it: at 1M (1.6 GB) whichever step came first after an eviction read part of the
        // folder from disk.
        readAll(data)
        await step()
      }
    }
    const m = { first: median(times.first), listening: median(times.listening), opened: median(times.opened), load: median(times.load), process: median(times.process), fresh: median(times.fresh), empty: median(times.empty) }
    // Each round's own ratio too (its steps ran back to back), whose median a slow spell on the host moves less.
    const perRound = (over: number[]): number => median(times.first.map((first, i) => first / (over[i] as number)))
    const row = {
      chunks,
      corpus: kind,
      'serve from': from,
      'build s': buildSeconds,
      'data MB': sizeOf(data) / 1e6,
      'core loadIndex s': m.load,
      'serve: listening s': m.listening,
      // The server's own account (its start-up line): reading the checkpoint, in a fresh process.
      'serve: --data read s': m.opened,
      'serve: --data read / load': m.opened / m.load,
      'serve: first answer − --data read s': median(times.first.map((first, i) => first - (times.opened[i] as number))),
      'serve: first answer s': m.first,
      '**first answer / load**': m.first / m.load,
      'first answer / load, median of rounds': perRound(times.load),
      'empty folder: first answer s': m.empty,
      '(first answer − empty) / load': (m.first - m.empty) / m.load,
      'node + core loadIndex, spawn → loaded s': m.process,
      'first answer / (spawn → loaded)': m.first / m.process,
      'first answer / (spawn → loaded), median of rounds': perRound(times.process),
      // The stricter baseline: the load alone, in a process that did nothing before it.
      'core loadIndex in a fresh process s': m.fresh,
      'first answer / fresh-process load, median of rounds': perRound(times.fresh),
      // That fresh process's JS heap once loaded (after a full collection), Node's own included.
      'fresh process: JS heap after load MB': median(times.heap),
      rounds,
    }
    printTable(`quarry serve --data with ${chunks} RAG chunks: spawn → first retrieveContexts answer, against core's loadIndex of the corpus (medians of ${rounds} interleaved rounds)`, [row])
    return { row, times }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Fills a `--data` folder with one corpus (KNN or ANN) of `chunks` chunks through the RAG engine, checkpointed; returns the seconds it took. */
export async function buildDataFolder(root: string, chunks: number, kind: CorpusKind = 'knn'): Promise<number> {
  const t = performance.now()
  const embedder = createHashingEmbedder({ dimensions: 256 })
  const engines = { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }
  const s = engines.vertexRag.v1
  const created = await s.createRagCorpus({ parent: PARENT, ragCorpus: { displayName: 'startup', vectorDbConfig: { ragManagedDb: kind === 'ann' ? { ann: {} } : { knn: {} } } } })
  if (!created.ok) throw new Error(created.status.message)
  const corpus = created.response.response?.name as string
  const passages = npmCorpus().map((p) => p.text)
  // Chunks of 32 tokens overlapping by 1 (an overlap of 0 reads as unset: 31), files of about 1,000 chunks
  // of the npm corpus's passages, the last one cut to make `chunks` (counted with the engine's chunker).
  const chunking = { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 32, chunkOverlap: 1 } } } }
  const analyzer = new Analyzer()
  let next = 0
  for (let made = 0, f = 0; made < chunks; f++) {
    const parts: string[] = []
    let size = 0
    while (size < 1000 * 200) {
      const passage = passages[next++ % passages.length] as string
      parts.push(passage)
      size += passage.length
    }
    let text = parts.join('\n\n')
    const cut = chunkText(analyzer, text, { size: 32, overlap: 1 })
    // k chunks of stride 31 take exactly 31·k tokens (one more would start a chunk of its own).
    if (made + cut.length > chunks) text = text.slice(0, (analyzer.tokens(text)[31 * (chunks - made) - 1] as { end: number }).end)
    const uploaded = await s.uploadRagFile({ parent: corpus, ragFile: { displayName: `f${f}.txt` }, uploadRagFileConfig: chunking }, text)
    if (!uploaded.ok) throw new Error(uploaded.status.message)
    made += Math.min(cut.length, chunks - made)
    if (f % 100 === 0) console.log(`  ${made} chunks uploaded, ${((performance.now() - t) / 1000).toFixed(0)} s`)
  }
  const folder = new DataDir(root, engines)
  try {
    await folder.save()
  } finally {
    folder.close()
  }
  return (performance.now() - t) / 1000
}

/**
 * Spawns `quarry serve --data dir` and times (seconds from the spawn) the "serving" line and the
 * first answer: a retrieveContexts on `corpus` (its name known beforehand, as a client configured
 * with its corpus knows it), or without one a listRagCorpora, whose names it returns; with the
 * seconds the server says it took to read the checkpoint (its start-up line).
 */
async function firstAnswer(from: StartFrom, dir: string, corpus: string | undefined): Promise<{ listening: number; opened: number; answer: number; corpora: string[] }> {
  return whileRunning(quarryArgs(from, ['serve', '--data', dir, '--embedder', 'hashing', '--port', '0']), 'quarry serve', async (start, line) => {
    const url = (await line(/serving on (http:\/\/[^\s]+)/))[1] as string
    const listening = (performance.now() - start) / 1000
    let corpora: string[] = []
    if (corpus === undefined) {
      const listed = await call(`${url}/v1/${PARENT}/ragCorpora`, undefined)
      corpora = ((listed.ragCorpora as { name: string }[] | undefined) ?? []).map((c) => c.name)
    } else {
      const answer = await call(`${url}/v1/${PARENT}:retrieveContexts`, { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: QUERY, ragRetrievalConfig: { topK: 10 } } })
      const contexts = (answer.contexts as { contexts?: unknown[] } | undefined)?.contexts ?? []
      if (contexts.length !== 10) throw new Error(`the first query answered ${contexts.length} contexts, not 10`)
    }
    const answer = (performance.now() - start) / 1000
    // Printed after the serving line: how long the server took to read the checkpoint of --data.
    const opened = Number((await line(/checkpoint of --data read in ([\d.]+) s/))[1])
    return { listening, opened, answer, corpora }
  })
}

/**
 * A fresh `node` that loads the corpus with core's `loadIndex` and nothing else (the built package
 * as the server runs, or its sources): seconds from the spawn to its line saying it loaded (what
 * the smallest program that loads the snapshot takes, Node's start and core's modules included),
 * and the load alone, timed in that process around the call (no state of the bench's own process
 * in it: the bench's in-process loads follow its other steps, and have run slower than this one);
 * then, untimed, its JS heap after a full collection.
 */
async function freshLoad(from: StartFrom, corpusDir: string, chunks: number): Promise<{ spawned: number; load: number; heapMb: number }> {
  const core = from === 'dist' ? DIST_CORE : join(ROOT, 'packages', 'core', 'src', 'index.ts')
  const script = [
    `const { loadIndex, createHashingEmbedder } = await import(${JSON.stringify(pathToFileURL(core).href)})`,
    'const embedder = createHashingEmbedder({ dimensions: 256 })',
    'const start = performance.now()',
    `const index = loadIndex(${JSON.stringify(corpusDir)}, { embedder })`,
    'console.log(`loaded ${index.size} in ${((performance.now() - start) / 1000).toFixed(4)} s`)',
    // Then (untimed) what the loaded index holds on the JS heap; the typed arrays it reads into are outside it.
    'globalThis.gc()',
    'console.log(`heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(1)} MB`)',
  ].join('\n')
  return whileRunning([...(from === 'source' ? ['--import', 'tsx'] : []), '--expose-gc', '--input-type=module', '-e', script], 'the load script', async (start, line) => {
    const loaded = await line(/loaded (\d+) in ([\d.]+) s/)
    const spawned = (performance.now() - start) / 1000
    const size = Number(loaded[1])
    if (size !== chunks) throw new Error(`the corpus holds ${size} chunks, not ${chunks}`)
    const heap = await line(/heap ([\d.]+) MB/)
    return { spawned, load: Number(loaded[2]), heapMb: Number(heap[1]) }
  })
}

/**
 * Spawns `node args` and runs `use` with the spawn's time and a wait for the first match of a
 * pattern in its output (failing, with its stderr, if it exits first); then kills it.
 */
async function whileRunning<T>(args: readonly string[], what: string, use: (start: number, line: (pattern: RegExp) => Promise<RegExpExecArray>) => Promise<T>): Promise<T> {
  const start = performance.now()
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  const line = (pattern: RegExp): Promise<RegExpExecArray> =>
    new Promise((resolveLine, reject) => {
      const check = (): void => {
        const match = pattern.exec(out)
        if (match) resolveLine(match)
      }
      child.stdout.on('data', check)
      child.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${stderr.slice(0, 500)}`)))
      check()
    })
  try {
    return await use(start, line)
  } finally {
    child.kill('SIGKILL')
    await new Promise((r) => (child.exitCode === null && child.signalCode === null ? child.once('exit', r) : r(undefined)))
  }
}

/** One JSON request (GET without a body, else POST), its 200 answer parsed. */
function call(url: string, body: unknown): Promise<Record<string, unknown>> {
  return new Promise((resolveCall, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const req = request(url, { method: payload === undefined ? 'GET' : 'POST', headers: payload === undefined ? {} : { 'content-type': 'application/json' } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d: string) => (text += d))
      res.on('end', () => (res.statusCode === 200 ? resolveCall(JSON.parse(text) as Record<string, unknown>) : reject(new Error(`${url}: ${res.statusCode} ${text.slice(0, 300)}`))))
    })
    req.on('error', reject)
    req.end(payload)
  })
}
