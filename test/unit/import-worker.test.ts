import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { afterAll, describe, expect, it } from 'vitest'
import { createGloveEmbedder, createHashingEmbedder, type Embedder } from '@quarry/core'
import { Analyzer } from '@quarry/core'
import { analyzeSource, chunkingAnalyzer, fromWire, toWire, type SourceAnalysis, type SourceJob } from '../../packages/adapters/src/vertex-rag/analysis.js'
import { FILE_BOUNDS_DEFAULT } from '../../packages/adapters/src/vertex-rag/file-bounds.js'
import { importWorker } from '../../packages/adapters/src/vertex-rag/import-worker.js'
import { defaultEmbedder } from '../../packages/adapters/src/rpc/default-embedder.js'
import { recording } from '../../packages/adapters/src/rpc/replay.js'
import { READ_AHEAD_BYTES, READ_WINDOW, READY_FOR_HERE, ReadAhead } from '../../packages/adapters/src/vertex-rag/read-ahead.js'

/**
 * The import worker reads, hashes and chunks a file exactly as the calling thread does
 * (analysis.ts `analyzeSource`): the same bytes, sha256, text, chunks (texts, offsets, tokens) and
 * pages for every file type, the same refusals for files it must not read, and no analysis of
 * bytes the import would skip. The oracle is the same function run on this thread.
 */
const LIBRARY = fileURLToPath(new URL('../contract/fixtures/gcs/library', import.meta.url))
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function jobOf(path: string, name: string, extra: Partial<SourceJob> = {}): SourceJob {
  return { file: { uri: `gs://library/${name}`, path }, maxBytes: 1 << 20, readAs: name, label: `gs://library/${name}`, chunking: { size: 12, overlap: 3 }, bounds: FILE_BOUNDS_DEFAULT, skipSha256: undefined, ...extra }
}

describe('the import worker', () => {
  // First in this file: the thread starts inside a recorded write (as the first import of a
  // server with a write-ahead log does) and must not keep that write's trace alive.
  it('does not hold on to the write that started it', async () => {
    expect(importWorker.running).toBe(false)
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const job = jobOf(join(LIBRARY, 'dune.txt'), 'dune.txt')
    const traced = async (): Promise<WeakRef<object>> => {
      const { trace } = await recording(async () => {
        await importWorker.analyze(job)
        return 0
      })
      return new WeakRef(trace)
    }
    const trace = await traced()
    expect(importWorker.running).toBe(true)
    // The thread answers again, then the trace has no holder left.
    await importWorker.analyze(job)
    await new Promise((resolve) => setTimeout(resolve, 20))
    gc()
    expect(trace.deref()).toBeUndefined()
  })

  it('answers every file type of the fixtures as the calling thread does (PDF pages and chunk offsets too)', async () => {
    const names = readdirSync(LIBRARY).filter((n) => statSync(join(LIBRARY, n)).isFile())
    expect(names).toEqual(expect.arrayContaining(['dune-pages.pdf', 'dune.txt', 'emma.md', 'facts.json', 'ocean.html', 'broken.pdf', 'binary.txt']))
    const answered = importWorker.answered
    for (const name of names) {
      const job = jobOf(join(LIBRARY, name), name)
      const here = await analyzeSource(job)
      const there = await importWorker.analyze(job)
      expect(there, name).toEqual(here)
      if (name === 'dune-pages.pdf') {
        expect(there.analysis).toMatchObject({ ok: true, type: 'RAG_FILE_TYPE_PDF' })
        expect(there.analysis?.ok && there.analysis.pageStarts?.length).toBe(2)
      }
      if (name === 'broken.pdf') expect(there.analysis).toEqual({ ok: false, message: 'gs://library/broken.pdf: not a readable PDF (InvalidPDFException).' })
    }
    expect(importWorker.answered - answered).toBe(names.length)
    expect(importWorker.running).toBe(true)
  })

  it('refuses what the calling thread refuses: a missing file, a FIFO, a file over the limit, a link out of the roots', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'quarry-worker-')))
    dirs.push(root)
    writeFileSync(join(root, 'big.txt'), 'word '.repeat(100))
    execFileSync('mkfifo', [join(root, 'pipe.txt')])
    const jobs = [
      jobOf(join(root, 'missing.txt'), 'missing.txt'),
      jobOf(join(root, 'pipe.txt'), 'pipe.txt'),
      jobOf(join(root, 'big.txt'), 'big.txt', { maxBytes: 10 }),
      { ...jobOf('/etc/hostname', 'hostname.txt'), file: { uri: 'file:///hostname.txt', path: '/etc/hostname', roots: [root] } },
    ]
    const statuses = []
    for (const job of jobs) {
      const there = await importWorker.analyze(job)
      expect(there).toEqual(await analyzeSource(job))
      expect(there.read.ok).toBe(false)
      statuses.push(there.read.ok ? 0 : there.read.status.code)
    }
    // NOT_FOUND, INVALID_ARGUMENT (not a regular file), INVALID_ARGUMENT (too large), PERMISSION_DENIED.
    expect(statuses).toEqual([5, 3, 3, 7])
  })

  it('reads and hashes but does not chunk bytes the import would skip (the sha256 of the file imported before)', async () => {
    const job = jobOf(join(LIBRARY, 'dune.txt'), 'dune.txt')
    const full = await importWorker.analyze(job)
    expect(full.analysis?.ok).toBe(true)
    const skipped = await importWorker.analyze({ ...job, skipSha256: full.sha256 })
    expect(skipped).toEqual({ read: full.read, sha256: full.sha256 })
  })

  it('embeds the chunks with core\'s embedders rebuilt from their recipe: the same bits as this thread; a user\'s embedder is left to this thread', async () => {
    const glove = createGloveEmbedder({ vocabulary: 20_000 })
    const hashing = createHashingEmbedder({ dimensions: 24 })
    // The adapters' default: GloVe made on first use (lazyEmbedder), its recipe GloVe's.
    const lazy = defaultEmbedder()
    const mine: Embedder = { name: 'mine', dimensions: 24, embed: (texts) => hashing.embed(texts) }
    const bytes = (vectors: readonly Float32Array[] | undefined): Buffer[] | undefined => vectors?.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength))
    const names = ['dune.txt', 'emma.md', 'facts.json', 'ocean.html', 'dune-pages.pdf']
    const embedded = importWorker.embedded
    for (const name of names) {
      const job = jobOf(join(LIBRARY, name), name)
      const here = await analyzeSource(job)
      if (!here.analysis?.ok) throw new Error(`${name} has no chunks`)
      const texts = here.analysis.pieces.map((p) => p.text)
      for (const embedder of [glove, hashing, lazy]) {
        const there = await importWorker.analyze(job, embedder)
        expect({ ...there, vectors: undefined }, name).toEqual({ ...here, vectors: undefined })
        expect(there.vectors?.length, name).toBe(texts.length)
        expect(bytes(there.vectors), `${name}, ${embedder.name}`).toEqual(bytes(await embedder.embed(texts)))
      }
      expect((await importWorker.analyze(job, mine)).vectors).toBeUndefined()
    }
    expect(importWorker.embedded - embedded).toBe(3 * names.length)
    // Nothing to embed: a file without words, bytes the import skips.
    const skipped = await importWorker.analyze({ ...jobOf(join(LIBRARY, 'dune.txt'), 'dune.txt'), skipSha256: (await analyzeSource(jobOf(join(LIBRARY, 'dune.txt'), 'dune.txt'))).sha256 }, hashing)
    expect(skipped.vectors).toBeUndefined()
    expect(importWorker.embedded - embedded).toBe(3 * names.length)
  })

  it('hands this thread the units its chunking read, so the index reads the chunks without reading their words again', async () => {
    const root = mkdtempSync(join(tmpdir(), 'quarry-worker-'))
    dirs.push(root)
    // Words no other test reads: new to both threads.
    const words = Array.from({ length: 60 }, (_, i) => `zorvex${i}qua${(i * 7919) % 997}`)
    const text = `${words.join(' ')}; plus ${words.slice(0, 9).map((w) => `${w}.${w}`).join(', ')} and café-naïve.`
    writeFileSync(join(root, 'new-words.txt'), text)
    const answered = importWorker.answered
    const there = await importWorker.analyze(jobOf(join(root, 'new-words.txt'), 'new-words.txt'))
    expect(there.analysis?.ok).toBe(true)
    // Read on the worker, not here (where the units would be this thread's own).
    expect(importWorker.answered - answered).toBe(1)
    const read = chunkingAnalyzer.unitsAnalyzed
    expect(chunkingAnalyzer.tokens(text)).toEqual(new Analyzer().tokens(text))
    expect(chunkingAnalyzer.unitsAnalyzed).toBe(read)
  })

  it('sends an embedder\'s recipe once and has the thread forget it once the embedder is collected', async () => {
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const job = jobOf(join(LIBRARY, 'dune.txt'), 'dune.txt')
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 5; i++) {
        gc()
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    // The embedders of earlier tests are collected first.
    await settle()
    const held = importWorker.embeddersHeld
    const use = async (): Promise<void> => {
      const embedder = createHashingEmbedder({ dimensions: 16 })
      for (let i = 0; i < 3; i++) expect((await importWorker.analyze(job, embedder)).vectors?.length).toBeGreaterThan(0)
      expect(importWorker.embeddersHeld).toBe(held + 1)
    }
    await use()
    for (let i = 0; i < 20 && importWorker.embeddersHeld > held; i++) {
      gc()
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(importWorker.embeddersHeld).toBe(held)
    // The thread still answers, and embeds with an embedder it is sent afresh.
    expect((await importWorker.analyze(job, createHashingEmbedder({ dimensions: 16 }))).vectors?.length).toBeGreaterThan(0)
  })

  it('carries chunks as offsets that slice back to the same texts', async () => {
    const root = mkdtempSync(join(tmpdir(), 'quarry-worker-'))
    dirs.push(root)
    const text = '  # Title\n\nÉté — naïve café; emoji 🌵 cactus, “quotes”, tabs\tand\nnew lines. '.repeat(40)
    writeFileSync(join(root, 'u.md'), text)
    const here = await analyzeSource(jobOf(join(root, 'u.md'), 'u.md'))
    const { wire } = toWire(await analyzeSource(jobOf(join(root, 'u.md'), 'u.md')))
    const back = fromWire(structuredClone(wire))
    expect(back).toEqual(here)
    expect(back.analysis?.ok && back.analysis.pieces.every((p) => p.text === text.slice(p.start, p.end))).toBe(true)
  })
})

describe('reading ahead', () => {
  it('balances: while the worker is behind, files are sent without embedding and embedded here, each with the vectors the embedder gives', async () => {
    const embedder = createHashingEmbedder({ dimensions: 8 })
    const files = Array.from({ length: 3 * READ_WINDOW }, (_, i) => ({ uri: `gs://b/f${i}.txt`, path: `/nowhere/f${i}.txt`, size: 100 }))
    const textsOf = (i: number): string[] => [`file ${i} first chunk`, `file ${i} second chunk`]
    const asked: boolean[] = []
    // A slow worker: each file takes a few ms; its vectors are marked (all 7s) to tell them apart.
    const analyze = async (job: SourceJob, embed: boolean): Promise<SourceAnalysis> => {
      const i = files.findIndex((f) => f === job.file)
      asked[i] = embed
      await new Promise((resolve) => setTimeout(resolve, 2))
      const texts = textsOf(i)
      const analysis = { ok: true as const, text: texts.join(' '), type: 'RAG_FILE_TYPE_TXT' as const, pageStarts: undefined, pieces: texts.map((t) => ({ text: t, start: 0, end: 0, firstToken: 0, tokens: 1 })) }
      return { read: { ok: true, bytes: Buffer.from(job.file.uri) }, sha256: job.file.uri, analysis, ...(embed ? { vectors: texts.map(() => new Float32Array(8).fill(7)) } : {}) }
    }
    const ahead = new ReadAhead({ embedder, files, jobOf: (file) => jobOf(file.path, file.uri.slice(8), { file }), analyze, balance: true })
    for (let i = 0; i < files.length; i++) {
      const read = await ahead.read(i)
      if (!read.ok) throw new Error('unread')
      ahead.analysis(i, read.bytes)
      const vectors = await ahead.embed(i, textsOf(i))
      const expected = asked[i] ? textsOf(i).map(() => new Float32Array(8).fill(7)) : await embedder.embed(textsOf(i))
      expect(vectors, `file ${i}`).toEqual(expected)
    }
    // At the start nothing is ready: half the first window is embedded here, the other half there.
    expect(asked.slice(0, READ_WINDOW).filter((e) => !e).length).toBe(READ_WINDOW / 2)
    expect(asked.slice(0, READ_WINDOW / 2).every((e) => !e)).toBe(true)
    expect(READY_FOR_HERE).toBe(12)
    // Without balance, every file goes to the worker to embed.
    asked.length = 0
    const plain = new ReadAhead({ embedder, files, jobOf: (file) => jobOf(file.path, file.uri.slice(8), { file }), analyze })
    for (let i = 0; i < files.length; i++) await plain.read(i)
    expect(asked.every((e) => e)).toBe(true)
  })

  it('holds at most READ_WINDOW files and READ_AHEAD_BYTES bytes read ahead, the one asked for always started', async () => {
    const started: number[] = []
    const sizes = [5, 20, 10, 30, 1, 1, 1].map((mb) => mb * 1024 * 1024)
    const files = sizes.map((size, i) => ({ uri: `gs://b/f${i}.txt`, path: `/nowhere/f${i}.txt`, size }))
    const ahead = new ReadAhead({
      embedder: createHashingEmbedder({ dimensions: 8 }),
      files,
      jobOf: (file) => jobOf(file.path, file.uri.slice(8), { file }),
      analyze: async (job) => {
        started.push(files.findIndex((f) => f === job.file))
        return { read: { ok: true, bytes: Buffer.from(job.file.uri) }, sha256: job.file.uri }
      },
    })
    expect(READ_AHEAD_BYTES).toBe(32 * 1024 * 1024)
    await ahead.read(0)
    // File 0 (5 MB, the one asked for) and 20 MB after it; 10 MB more would pass 32 MiB.
    expect(started).toEqual([0, 1])
    await ahead.read(1)
    // File 0 taken: 20 + 10 MB held; file 3's 30 MB would pass.
    expect(started).toEqual([0, 1, 2])
    await ahead.read(2)
    expect(started).toEqual([0, 1, 2])
    // File 3 is started when asked for, larger than what is left or not; then 1 + 1 MB fit, the third would not.
    await ahead.read(3)
    expect(started).toEqual([0, 1, 2, 3, 4, 5])
    await ahead.read(4)
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6])
    expect(READ_WINDOW).toBe(48)
  })
})
