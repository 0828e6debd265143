import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, MemoryBank, SemanticRetriever, VertexRagEngine, type QuarryServer } from '@quarry/adapters'
import { DataDir } from '../../packages/adapters/src/transport/data-dir.js'
import { median, percentile } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'
import { buildDataFolder } from './startup.js'
// The same way the tests start `quarry serve` in its own process.
import { startServe, type ServeProcess } from '../../test/support/quarry-process.js'

/**
 * What `--data` costs and what it keeps (issue 18), on loopback with the hashing embedder (so the
 * figures are the persistence's, not the embedder's):
 * - writes and reads of 32 concurrent clients without a data folder and with each durability;
 * - a checkpoint against the state's size: its time, the longest event-loop pause meanwhile
 *   (queries wait that long), the folder's size, and the log it replaces; and one after a write
 *   to another corpus only (the big one's snapshot and documents' file linked, not written); and a data folder
 *   holding a RAG corpus of 100k and 1M chunks checkpointed after a write to the corpus and after
 *   one elsewhere (a memory: the corpus's snapshot linked); and one holding a Memory Bank of 100k
 *   memories after a memory is written and after a write to another engine (its state.json linked);
 * - recovery: a server killed after N logged writes, restarted: time to first answer;
 * - SIGKILLs of `quarry serve --data` under four writers: acknowledged writes lost.
 */
// The `quarry` command's hashing embedder (256-d): the recovery step restarts what the command wrote.
const embedder = createHashingEmbedder({ dimensions: 256 })
const agent = new Agent({ keepAlive: true, maxSockets: 64 })

function call(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const url = new URL(path, base)
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method, agent, headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
    })
    req.on('error', reject)
    req.end(payload)
  })
}

async function ok(p: Promise<{ status: number; text: string }>): Promise<void> {
  const r = await p
  if (r.status !== 200) throw new Error(`${r.status} ${r.text.slice(0, 300)}`)
}

const DOC = 'corpora/bench/documents/d'
const OTHER_CORPUS = 'corpora/other'
const OTHER_DOC = `${OTHER_CORPUS}/documents/d`

async function setUp(base: string): Promise<void> {
  await ok(call(base, 'POST', '/v1beta/corpora', { name: 'corpora/bench' }))
  await ok(call(base, 'POST', '/v1beta/corpora/bench/documents', { name: DOC }))
}

/**
 * Three interleaved rounds of checkpoints of `data` (`DataDir.save` in the server's 8 ms slices),
 * timed: one after `elsewhere` (a write that leaves `what` alone: the file `inode()` names must be
 * linked, the same inode), one after `here` (a write to it: that file must be written anew).
 */
async function writtenAndLinked(data: DataDir, inode: () => number, what: string, elsewhere: (round: number) => Promise<void>, here: (round: number) => Promise<void>): Promise<{ written: number[]; elsewhere: number[] }> {
  const timed = async (): Promise<number> => {
    const t = performance.now()
    await data.save({ sliceMs: 8 })
    return performance.now() - t
  }
  const out = { written: [] as number[], elsewhere: [] as number[] }
  for (let round = 0; round < 3; round++) {
    const before = inode()
    await elsewhere(round)
    out.elsewhere.push(await timed())
    if (inode() !== before) throw new Error(`a checkpoint after a write elsewhere wrote ${what}, unchanged, again`)
    await here(round)
    const linked = inode()
    out.written.push(await timed())
    if (inode() === linked) throw new Error(`a checkpoint after a write to ${what} linked its old copy`)
  }
  return out
}

/**
 * Checkpoints (`DataDir.save`, in the server's 8 ms slices) of the data folder `dir` holding one
 * RAG corpus of `chunks` chunks, loaded: medians of 3 after one memory is written (the corpus
 * unchanged: its snapshot linked) and of 3 after a small file is uploaded to the corpus (its
 * snapshot written), interleaved; each checked to have linked or written the corpus's files.
 */
async function ragCheckpoint(dir: string, chunks: number): Promise<Record<string, number>> {
  const embedder = createHashingEmbedder({ dimensions: 256 })
  const engines = { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }
  const data = new DataDir(dir, engines)
  try {
    if (!data.load()) throw new Error(`${dir} holds no data folder`)
    const listed = await engines.vertexRag.v1.listRagCorpora({ parent: 'projects/bench/locations/local' })
    const corpus = listed.ok ? listed.response.ragCorpora?.[0]?.name : undefined
    if (corpus === undefined) throw new Error(`${dir} holds no RAG corpus`)
    const engine = 'projects/bench/locations/local/reasoningEngines/1'
    const vectors = (): number => statSync(join(dir, readFileSync(join(dir, 'CURRENT'), 'latin1').trim(), 'vertex-rag', 'corpus-0', 'snapshot-000001', 'vectors.f32')).ino
    const { written, elsewhere } = await writtenAndLinked(data, vectors, 'the corpus', async (round) => {
      const memory = await engines.memoryBank.createMemory({ parent: engine, memory: { fact: `I walk my dog at noon, day ${round}`, scope: { user_id: 'u' } } })
      if (!memory.ok) throw new Error(memory.status.message)
    }, async (round) => {
      const upload = await engines.vertexRag.v1.uploadRagFile({ parent: corpus, ragFile: { displayName: `more-${round}.txt` } }, `One more file about the durable corpus, round ${round}.`)
      if (!upload.ok) throw new Error(upload.status.message)
    })
    return { chunks, folderMB: folderBytes(dir) / 1e6, 'written ms': median(written), 'linked ms': median(elsewhere), 'written / linked': median(written) / median(elsewhere) }
  } finally {
    data.close()
  }
}

/**
 * Checkpoints (`DataDir.save`, in 8 ms slices) of a data folder whose Memory Bank holds `memories`
 * memories, each with its first revision: medians of 3 after a write to another engine (a Semantic
 * Retriever corpus: the bank's `state.json` linked) and of 3 after one memory is written (it
 * written), interleaved; each checked by the inode of `state.json`.
 */
async function memoryBankCheckpoint(dir: string, memories: number): Promise<Record<string, number>> {
  const hashing = createHashingEmbedder({ dimensions: 64 })
  const engines = { semanticRetriever: new SemanticRetriever({ embedder: hashing }), vertexRag: new VertexRagEngine({ embedder: hashing }), memoryBank: new MemoryBank({ embedder: hashing }) }
  const engine = 'projects/bench/locations/local/reasoningEngines/1'
  for (let i = 0; i < memories; i++) {
    const made = await engines.memoryBank.createMemory({ parent: engine, memory: { fact: `I keep note number ${i}: the durable bench remembers it, day ${i % 365} of the year.`, scope: { user_id: `u${i % 100}` } } })
    if (!made.ok) throw new Error(made.status.message)
  }
  const data = new DataDir(dir, engines)
  try {
    await data.save()
    const state = (): number => statSync(join(dir, readFileSync(join(dir, 'CURRENT'), 'latin1').trim(), 'memory-bank', 'state.json')).ino
    const { written, elsewhere } = await writtenAndLinked(data, state, "the Memory Bank's state.json", async (round) => {
      const corpus = await engines.semanticRetriever.createCorpus({ corpus: { displayName: `other ${round}` } })
      if (!corpus.ok) throw new Error(corpus.status.message)
    }, async (round) => {
      const memory = await engines.memoryBank.createMemory({ parent: engine, memory: { fact: `One more note, round ${round}.`, scope: { user_id: 'u0' } } })
      if (!memory.ok) throw new Error(memory.status.message)
    })
    const stateMB = statSync(join(dir, readFileSync(join(dir, 'CURRENT'), 'latin1').trim(), 'memory-bank', 'state.json')).size / 1e6
    return { memories, stateMB, 'written ms': median(written), 'linked ms': median(elsewhere) }
  } finally {
    data.close()
  }
}

/** The longest gap between 1 ms ticks while `work` runs: how long the event loop stood still. */
async function longestPause(work: () => Promise<void>): Promise<{ ms: number; pauseMs: number }> {
  let last = performance.now()
  let worst = 0
  const timer = setInterval(() => {
    const now = performance.now()
    worst = Math.max(worst, now - last)
    last = now
  }, 1)
  const start = performance.now()
  await work()
  const ms = performance.now() - start
  await new Promise((r) => setTimeout(r, 5))
  clearInterval(timer)
  return { ms, pauseMs: Math.max(worst, performance.now() - last) }
}

function folderBytes(dir: string): number {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    total += entry.isDirectory() ? folderBytes(path) : statSync(path).size
  }
  return total
}

interface LoadRow {
  readonly mode: string
  readonly writesPerS: number
  readonly writeP50: number
  readonly writeP99: number
  readonly readP99: number
}

/** 32 clients, each alternating a write (one chunk) and a query, for `perClient` rounds. */
async function load(mode: string, server: QuarryServer, perClient: number): Promise<LoadRow> {
  const { url } = await server.listen()
  await setUp(url)
  const writes: number[] = []
  const reads: number[] = []
  const start = performance.now()
  await Promise.all(
    Array.from({ length: 32 }, async (_, c) => {
      for (let i = 0; i < perClient; i++) {
        let t = performance.now()
        await ok(call(url, 'POST', `/v1beta/${DOC}/chunks`, { name: `${DOC}/chunks/c${c}-${i}`, data: { stringValue: `client ${c} writes passage ${i} about durable logs and checkpoints` } }))
        writes.push(performance.now() - t)
        t = performance.now()
        await ok(call(url, 'POST', '/v1beta/corpora/bench:query', { query: `passage ${i} logs`, resultsCount: 5 }))
        reads.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - start) / 1000
  await server.close()
  return { mode, writesPerS: writes.length / seconds, writeP50: percentile(writes, 0.5), writeP99: percentile(writes, 0.99), readP99: percentile(reads, 0.99) }
}

const startChild = (dir: string): Promise<ServeProcess> => startServe(['--embedder', 'hashing', '--data', dir])

export async function runDurability(ctx: SuiteContext): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'quarry-durability-'))
  const results: Record<string, unknown> = { suite: 'durability', node: process.version, cpus: ctx.cpus, quick: ctx.quick }
  try {
    // 1. Throughput and tails under 32 clients.
    const perClient = ctx.quick ? 20 : 60
    // Rounds interleave the modes (a first round warms the process up and is not reported); each
    // mode's figures are the median over rounds, its latencies pooled.
    const modes = [
      { mode: 'no data folder', make: (): QuarryServer => createServer({ embedder }) },
      ...(['none', 'checkpoint', 'log'] as const).map((durability) => ({ mode: `--data, durability ${durability}`, make: (): QuarryServer => createServer({ embedder, dataDir: mkdtempSync(join(root, `load-${durability}-`)), durability }) })),
    ]
    const rounds = ctx.quick ? 2 : 4
    const runs = new Map<string, LoadRow[]>()
    for (let round = 0; round <= rounds; round++) {
      for (const m of modes) {
        const row = await load(m.mode, m.make(), perClient)
        if (round > 0) runs.set(m.mode, [...(runs.get(m.mode) ?? []), row])
      }
    }
    const rows: LoadRow[] = modes.map(({ mode }) => {
      const r = runs.get(mode) ?? []
      return { mode, writesPerS: percentile(r.map((x) => x.writesPerS), 0.5), writeP50: percentile(r.map((x) => x.writeP50), 0.5), writeP99: percentile(r.map((x) => x.writeP99), 0.5), readP99: percentile(r.map((x) => x.readP99), 0.5) }
    })
    const memory = rows[0] as LoadRow
    printTable(`32 clients, each ${perClient} × (one-chunk write + query); medians of ${rounds} interleaved rounds`, rows.map((r) => ({ mode: r.mode, 'writes/s': r.writesPerS, 'vs memory': r.writesPerS / memory.writesPerS, 'write p50 ms': r.writeP50, 'write p99 ms': r.writeP99, 'query p99 ms': r.readP99 })))
    results['load'] = rows

    // 2. Checkpoints against the state's size: written in slices (the default) and in one go, on the same state.
    const sizes = ctx.quick ? [10_000] : [10_000, 100_000, 1_000_000]
    const checkpoints: Record<string, number | string>[] = []
    for (const chunks of sizes) {
      const dataDir = join(root, `checkpoint-${chunks}`)
      // 64-d vectors here, so a million chunks fit this machine's memory with their HNSW graph.
      const server = createServer({ embedder: createHashingEmbedder({ dimensions: 64 }), dataDir, durability: 'checkpoint', snapshotDelayMs: 3_600_000 })
      const { url } = await server.listen()
      await setUp(url)
      // A second, small corpus: a write to it leaves the big one unchanged (the last checkpoint below).
      await ok(call(url, 'POST', '/v1beta/corpora', { name: OTHER_CORPUS }))
      await ok(call(url, 'POST', `/v1beta/${OTHER_CORPUS}/documents`, { name: OTHER_DOC }))
      const fillStart = performance.now()
      const writers = 4
      await Promise.all(
        Array.from({ length: writers }, async (_, w) => {
          // Two chunks short: the checkpoints below add one each (a corpus holds at most 1,000,000).
          for (let i = w * 100; i < chunks - 100; i += writers * 100) {
            await ok(call(url, 'POST', `/v1beta/${DOC}/chunks:batchCreate`, { requests: Array.from({ length: 100 }, (_, j) => ({ chunk: { name: `${DOC}/chunks/k${i + j}`, data: { stringValue: `passage ${i + j} on write-ahead logs, checkpoints and recovery after a crash` } } })) }))
          }
        }),
      )
      const fillS = (performance.now() - fillStart) / 1000
      // The last hundred, less two.
      await ok(call(url, 'POST', `/v1beta/${DOC}/chunks:batchCreate`, { requests: Array.from({ length: 98 }, (_, j) => ({ chunk: { name: `${DOC}/chunks/k${chunks - 100 + j}`, data: { stringValue: `passage ${chunks - 100 + j} on write-ahead logs, checkpoints and recovery after a crash` } } })) }))
      for (const [slicing, sliceMs] of [['8 ms slices (default)', 8], ['one go', Number.POSITIVE_INFINITY]] as const) {
        // One more write, so there is a change to checkpoint.
        await ok(call(url, 'POST', `/v1beta/${DOC}/chunks`, { name: `${DOC}/chunks/extra-${checkpoints.length}`, data: { stringValue: 'one more' } }))
        const { ms, pauseMs } = await longestPause(() => server.flush({ sliceMs }))
        checkpoints.push({ chunks, slicing, checkpointMs: ms, longestPauseMs: pauseMs, folderMB: folderBytes(dataDir) / 1e6, fillS })
        console.log(JSON.stringify(checkpoints.at(-1)))
      }
      {
        // One write to the other corpus: the big one has not changed since the last checkpoint,
        // whose files of it the new one links instead of writing them again.
        await ok(call(url, 'POST', `/v1beta/${OTHER_DOC}/chunks`, { name: `${OTHER_DOC}/chunks/one`, data: { stringValue: 'a write elsewhere' } }))
        // The big corpus (created first: corpus-0) keeps its documents' file and its snapshot's rows.
        const bigCorpus = (): number[] => ['corpus-0.json', 'corpus-0/snapshot-000001/vectors.f32'].map((f) => statSync(join(dataDir, readFileSync(join(dataDir, 'CURRENT'), 'latin1').trim(), 'semantic-retriever', f)).ino)
        const before = bigCorpus()
        const { ms, pauseMs } = await longestPause(() => server.flush({ sliceMs: 8 }))
        if (bigCorpus().join() !== before.join()) throw new Error('a checkpoint after a write to another corpus wrote the unchanged one again')
        checkpoints.push({ chunks, slicing: 'a write to another corpus (this one linked)', checkpointMs: ms, longestPauseMs: pauseMs, folderMB: folderBytes(dataDir) / 1e6, fillS })
        console.log(JSON.stringify(checkpoints.at(-1)))
      }
      await server.close()
      rmSync(dataDir, { recursive: true, force: true })
    }
    printTable('a checkpoint against the state (one corpus of 64-d chunks with text, HNSW graph): longest event-loop pause', checkpoints)
    results['checkpoints'] = checkpoints

    // 2b. A RAG corpus of N chunks (exact search, 256-d; the startup suite's folder) in a data folder:
    // a checkpoint after a write to the corpus (its snapshot written) against one after a write
    // elsewhere, a memory (the corpus's snapshot linked), interleaved.
    const ragCheckpoints: Record<string, number>[] = []
    for (const chunks of ctx.quick ? [10_000] : [100_000, 1_000_000]) {
      const dir = join(root, `rag-${chunks}`)
      await buildDataFolder(dir, chunks)
      ragCheckpoints.push(await ragCheckpoint(dir, chunks))
      console.log(JSON.stringify(ragCheckpoints.at(-1)))
      rmSync(dir, { recursive: true, force: true })
    }
    printTable('a checkpoint of a data folder holding a RAG corpus: after a write to it, and after a write elsewhere (a memory; the corpus linked)', ragCheckpoints)
    results['ragCheckpoints'] = ragCheckpoints

    // 2c. A Memory Bank of N memories: a checkpoint after a memory is written (its state.json
    // written) against one after a write to another engine (state.json linked), interleaved.
    const bankCheckpoints: Record<string, number>[] = []
    for (const memories of ctx.quick ? [5_000] : [100_000]) {
      const dir = join(root, `bank-${memories}`)
      bankCheckpoints.push(await memoryBankCheckpoint(dir, memories))
      rmSync(dir, { recursive: true, force: true })
    }
    printTable("a checkpoint of a data folder holding a Memory Bank: after a memory written, and after a write elsewhere (its state.json linked)", bankCheckpoints)
    results['bankCheckpoints'] = bankCheckpoints

    // 3. Recovery: N logged writes, SIGKILL, restart in process; time until listening (replay included).
    const logged = ctx.quick ? 5_000 : 100_000
    const recoveryDir = join(root, 'recovery')
    // No checkpoint while writing: every write stays in the log, to be replayed.
    const writer = await startServe(['--embedder', 'hashing', '--data', recoveryDir, '--checkpoint-mb', '100000', '--checkpoint-seconds', '100000'])
    const childBase = writer.base
    await setUp(childBase)
    let next = 0
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let i = next++; i < logged; i = next++) await ok(call(childBase, 'POST', `/v1beta/${DOC}/chunks`, { name: `${DOC}/chunks/r${i}`, data: { stringValue: `logged write ${i}` } }))
      }),
    )
    await writer.kill()
    const logMB = folderBytes(recoveryDir) / 1e6
    let recovered: QuarryServer | undefined
    const recoveryMs = (
      await longestPause(async () => {
        recovered = createServer({ embedder, dataDir: recoveryDir, snapshotDelayMs: 3_600_000 })
        await recovered.listen()
      })
    ).ms
    const replayed = recovered?.replayed ?? 0
    await recovered?.close()
    printTable('recovery after SIGKILL', [{ 'logged writes': logged + 2, 'replayed': replayed, 'folder MB': logMB, 'restart ms': recoveryMs, 'writes/s replayed': replayed / (recoveryMs / 1000) }])
    results['recovery'] = { logged: logged + 2, replayed, folderMB: logMB, restartMs: recoveryMs }

    // 4. SIGKILLs under four writers.
    const kills = ctx.quick ? 5 : 20
    const killDir = join(root, 'kills')
    const acked = new Set<string>()
    let setUpDone = false
    let attempts = 0
    for (let round = 0; round < kills; round++) {
      const server = await startChild(killDir)
      const base = server.base
      if (!setUpDone) {
        await setUp(base)
        setUpDone = true
      }
      let stop = false
      const writers = Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; !stop; i++) {
          const id = `k${round}-${w}-${i}`
          attempts++
          try {
            if ((await call(base, 'POST', `/v1beta/${DOC}/chunks`, { name: `${DOC}/chunks/${id}`, data: { stringValue: id } })).status === 200) acked.add(id)
          } catch {
            // killed mid-request
          }
        }
      })
      await new Promise((r) => setTimeout(r, 300 + ((round * 397) % 1000)))
      stop = true
      await server.kill()
      await Promise.all(writers)
    }
    const last = await startChild(killDir)
    const base = last.base
    const present = new Set<string>()
    let token = ''
    do {
      const page = JSON.parse((await call(base, 'GET', `/v1beta/${DOC}/chunks?pageSize=100${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`)).text) as { chunks?: { name: string }[]; nextPageToken?: string }
      for (const c of page.chunks ?? []) present.add(c.name.slice(`${DOC}/chunks/`.length))
      token = page.nextPageToken ?? ''
    } while (token !== '')
    await last.kill()
    const lost = [...acked].filter((id) => !present.has(id)).length
    printTable(`${kills} SIGKILLs of quarry serve --data, 4 writers`, [{ 'writes sent': attempts, acknowledged: acked.size, lost }])
    results['kills'] = { kills, attempts, acknowledged: acked.size, lost }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
  writeFileSync(join(ctx.resultsDir, 'durability.json'), `${JSON.stringify({ ...results, date: new Date().toISOString() }, null, 2)}\n`)
}
