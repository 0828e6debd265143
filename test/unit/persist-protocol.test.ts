import fc from 'fast-check'
import { createHash } from 'node:crypto'
import { spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder, createIndex, DirectoryLock, loadIndex, QuarryError, writeGeneration, type QuarryIndex } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine } from '@quarry/adapters'
import { DataDir } from '../../packages/adapters/src/transport/data-dir.js'
import { encodeManifest, type Manifest } from '../../packages/core/src/persist/manifest.js'
import { runs } from '../support/runs.js'
import { full } from '../support/tier.js'
import { thrown } from '../support/thrown.js'

/**
 * Issue 18, one checksummed persistence protocol: every file of a core snapshot and of a server's
 * data folder is checked (a corrupted one is refused as INVALID_SNAPSHOT naming the file, never
 * loaded as other data, never a raw Node error), a folder has one writer (LOCK), a dead writer's
 * lock is taken over, and debris of interrupted saves is removed.
 */
const root = mkdtempSync(join(tmpdir(), 'quarry-protocol-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let scratchCount = 0
const scratch = (): string => join(root, `s${scratchCount++}`)

/** A word in every id, text, fact and metadata value: no error message may contain it. */
const MARKER = 'zanzibarquux'
const embedder = createHashingEmbedder({ dimensions: 16 })

/** Every file under `dir`, '/'-separated relative paths, sorted. */
function filesOf(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name))
      else out.push(relative(dir, join(d, e.name)).split('\\').join('/'))
    }
  }
  walk(dir)
  return out.sort()
}

type Kind = 'flip' | 'truncate' | 'delete' | 'directory'
const KINDS: readonly Kind[] = ['flip', 'truncate', 'delete', 'directory']

/** Damages one file: one byte changed, cut short, removed, or replaced by an empty folder. */
function damage(path: string, kind: Kind, a: number, b: number): void {
  const bytes = readFileSync(path)
  if (kind === 'flip') {
    if (bytes.length === 0) writeFileSync(path, Buffer.from([b % 256]))
    else {
      const i = a % bytes.length
      bytes[i] = (bytes[i] as number) ^ ((b % 255) + 1)
      writeFileSync(path, bytes)
    }
  } else if (kind === 'truncate') {
    truncateSync(path, bytes.length === 0 ? 0 : a % bytes.length)
  } else {
    rmSync(path)
    if (kind === 'directory') mkdirSync(path)
  }
}

/** A refusal as the protocol promises it: INVALID_SNAPSHOT, one line, naming a file, no user data. */
function expectRefusal(error: unknown): void {
  expect(error).toBeInstanceOf(QuarryError)
  const e = error as QuarryError
  expect(e.code, e.message).toBe('INVALID_SNAPSHOT')
  expect(e.message).not.toContain('\n')
  expect(e.message).not.toContain(MARKER)
  expect(e.message).toMatch(/CURRENT|manifest\.json|\.jsonl|\.bin|\.f32|state\.json|snapshot-\d+/)
  if (e.cause !== undefined) expect(String((e.cause as Error).message ?? e.cause)).not.toContain(MARKER)
}

type Tally = Record<Kind, { loaded: number; refused: number }>
const tally = (): Tally => ({ flip: { loaded: 0, refused: 0 }, truncate: { loaded: 0, refused: 0 }, delete: { loaded: 0, refused: 0 }, directory: { loaded: 0, refused: 0 } })
const total = (t: Tally): number => Object.values(t).reduce((n, c) => n + c.loaded + c.refused, 0)

// ---------------------------------------------------------------------------------------------
// A core snapshot

function buildIndex(): QuarryIndex {
  const index = createIndex({ dimensions: 8, metric: 'cosine', planner: { exactBelow: 0 } })
  let seed = 7
  const next = (): number => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 2 - 1
  const words = ['desert', 'ocean', 'storm', 'garden', 'rose', 'spice', MARKER]
  for (let i = 0; i < 120; i++) {
    index.add({
      id: `${MARKER}-${i}`,
      vector: Array.from({ length: 8 }, next),
      text: `${words[i % 7]} ${words[(i * 3) % 7]} ${words[(i * 5) % 7]}`,
      metadata: { n: i, tag: `${MARKER}${i % 3}`, when: new Date(86_400_000 * i) },
    })
  }
  for (let i = 0; i < 120; i += 9) index.remove(`${MARKER}-${i}`)
  return index
}

function observeIndex(index: QuarryIndex): unknown {
  const ids = [...index.ids()].sort()
  const query = [0.3, -0.2, 0.5, 0.1, -0.4, 0.2, 0.0, 0.6]
  return {
    ids,
    records: ids.map((id) => index.get(id)),
    options: index.options,
    textStats: index.textStats,
    dense: index.search({ vector: query, topK: 10 }),
    exact: index.search({ vector: query, topK: 10, exact: true }),
    text: index.search({ text: 'desert storm', topK: 10, explain: true }),
    hybrid: index.search({ text: 'ocean rose', vector: query, topK: 10 }),
    filtered: index.search({ vector: query, topK: 5, filter: { op: 'eq', field: 'tag', value: `${MARKER}1` } }),
  }
}

describe('a core snapshot under corruption', () => {
  const good = join(root, 'index')
  const index = buildIndex()
  index.save(good)
  index.save(good) // a second generation: the first must be gone, not fallen back to
  const expected = observeIndex(loadIndex(good))
  const files = filesOf(good)

  // One working copy, each damaged file put back after its case (copying the folder each time is the slow part).
  const work = scratch()
  cpSync(good, work, { recursive: true })
  const attempt = (kind: Kind, file: string, a: number, b: number, counts: Tally): void => {
    const path = join(work, file)
    const original = readFileSync(path)
    damage(path, kind, a, b)
    let loaded: QuarryIndex | undefined
    try {
      loaded = loadIndex(work)
    } catch (error) {
      expectRefusal(error)
      counts[kind].refused++
    } finally {
      rmSync(path, { recursive: true, force: true })
      writeFileSync(path, original)
    }
    if (loaded) {
      expect(observeIndex(loaded), `${kind} ${file} ${a} ${b}`).toEqual(expected)
      counts[kind].loaded++
    }
  }

  it('lists every file it loads from, and the old generation is gone', () => {
    expect(files).toEqual(['CURRENT', ...['forward.bin', 'hnsw.bin', 'ids.bin', 'manifest.json', 'metadata.bin', 'norms.f32', 'postings.bin', 'texts.bin', 'values.bin', 'vectors.f32'].map((f) => `snapshot-000002/${f}`)])
    expect(expected).toEqual(observeIndex(index))
  })

  it('random single-byte changes, truncations, deletions and folders in place of any file: the saved state exactly, or INVALID_SNAPSHOT', () => {
    const counts = tally()
    const cases = runs(400)
    fc.assert(
      fc.property(fc.nat({ max: files.length - 1 }), fc.constantFrom(...KINDS), fc.nat(), fc.nat(), (f, kind, a, b) => attempt(kind, files[f] as string, a, b, counts)),
      { numRuns: cases },
    )
    console.log(`core snapshot, random: ${total(counts)} cases ${JSON.stringify(counts)}`)
    expect(total(counts)).toBe(cases)
  })

  full.it('every byte of manifest.json and CURRENT changed, and every truncation of them: never other data', () => {
    const counts = tally()
    for (const file of ['CURRENT', 'snapshot-000002/manifest.json']) {
      const size = statSync(join(good, file)).size
      for (let i = 0; i < size; i++) {
        attempt('flip', file, i, 0, counts) // xor 1: the smallest change (cosine -> cosinf, 3 -> 2)
        attempt('flip', file, i, 0x1f, counts) // xor 0x20: case, digits to other characters
        attempt('truncate', file, i, 0, counts)
      }
    }
    console.log(`core snapshot, manifest and CURRENT exhaustively: ${total(counts)} cases ${JSON.stringify(counts)}`)
    // Only CURRENT's final newline may change without changing what is read: it is not read.
    expect(counts.flip.loaded + counts.truncate.loaded).toBeLessThanOrEqual(3)
  })
})

describe('a core snapshot altered behind a valid checksum (the manifest re-sealed)', () => {
  const good = join(root, 'resealed')
  buildIndex().save(good)
  const generation = readFileSync(join(good, 'CURRENT'), 'latin1').trim()
  // The binary sections a reader parses itself (hnsw.bin by @quarry/hnsw, which checks every link).
  const sections = ['ids.bin', 'texts.bin', 'metadata.bin', 'postings.bin', 'forward.bin', 'values.bin', 'vectors.f32', 'norms.f32', 'hnsw.bin']
  const work = scratch()
  cpSync(good, work, { recursive: true })
  const manifestPath = join(work, generation, 'manifest.json')
  const manifest = readFileSync(manifestPath)

  it('random changes and truncations of a section with its sum updated: loaded, or INVALID_SNAPSHOT naming the file, never another error', () => {
    const counts = { loaded: 0, refused: 0 }
    fc.assert(
      fc.property(fc.constantFrom(...sections), fc.constantFrom<Kind>('flip', 'truncate'), fc.nat(), fc.nat(), (file, kind, a, b) => {
        const path = join(work, generation, file)
        const original = readFileSync(path)
        damage(path, kind, a, b)
        const bytes = readFileSync(path)
        const sealed = JSON.parse(manifest.toString('utf8')) as { manifest: Manifest }
        const files = { ...sealed.manifest.files, [file]: { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') } }
        writeFileSync(manifestPath, encodeManifest({ ...sealed.manifest, files }))
        try {
          // A graph that loads is searched too: whatever changed, no link leads outside it.
          const loaded = loadIndex(work)
          if (file === 'hnsw.bin') loaded.search({ vector: [1, 0.5, -0.5, 0.25, 0, 1, -1, 0.5], topK: 5 })
          counts.loaded++
        } catch (error) {
          expectRefusal(error)
          expect((error as Error).message).toContain(file)
          counts.refused++
        } finally {
          writeFileSync(path, original)
          writeFileSync(manifestPath, manifest)
        }
      }),
      // Each run loads a whole snapshot: 120 keep the test within a minute on two busy cores. The
      // examples are runs that once took 5 s to 3 min: a value index's label with a high byte
      // flipped sized its bitsets by it (readValues now refuses a label past the snapshot's extent
      // before any bitset is made).
      { numRuns: runs(120), examples: [['values.bin', 'flip', 1_349_024_851, 2_147_483_622], ['values.bin', 'flip', 1_483_879_915, 739_395_755], ['values.bin', 'flip', 587_947_183, 910_393_642], ['values.bin', 'flip', 1_781_285_927, 610_449_874]] },
    )
    console.log(`core snapshot, re-sealed damage: ${JSON.stringify(counts)}`)
    expect(counts.refused).toBeGreaterThan(0)
  }, 240_000)
})

// ---------------------------------------------------------------------------------------------
// A server's data folder (DataDir: the three engines' state and their indexes)

const ENGINE = 'projects/p/locations/l/reasoningEngines/1'
type Engines = ConstructorParameters<typeof DataDir>[1]
const freshEngines = (): Engines => ({ semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) })

async function fillEngines(e: Engines): Promise<string> {
  const sr = e.semanticRetriever
  await sr.createCorpus({ corpus: { name: 'corpora/c' } })
  await sr.createDocument({ parent: 'corpora/c', document: { name: 'corpora/c/documents/d', customMetadata: [{ key: 'year', numericValue: 2001 }] } })
  const texts = ['desert spice', `ocean storm ${MARKER}`, 'garden rose']
  await sr.batchCreateChunks({ parent: 'corpora/c/documents/d', requests: texts.map((t, i) => ({ parent: 'corpora/c/documents/d', chunk: { name: `corpora/c/documents/d/chunks/k${i}`, data: { stringValue: t } } })) })
  const created = await e.vertexRag.v1beta1.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'R' } })
  if (!created.ok) throw new Error('createRagCorpus')
  const corpus = created.response.response?.name as string
  const up = await e.vertexRag.v1beta1.uploadRagFile({ parent: corpus, ragFile: { displayName: 'a.txt' } }, `The desert wind erases tracks ${MARKER}.`)
  if (!up.ok) throw new Error('uploadRagFile')
  const memory = await e.memoryBank.createMemory({ parent: ENGINE, memory: { fact: `I like tea and ${MARKER}`, scope: { user_id: 'u' } } })
  if (!memory.ok) throw new Error('createMemory')
  return corpus
}

async function observeEngines(e: Engines, corpus: string): Promise<unknown[]> {
  return [
    await e.semanticRetriever.queryCorpus({ name: 'corpora/c', query: 'desert storm' }),
    await e.semanticRetriever.listChunks({ parent: 'corpora/c/documents/d' }),
    await e.vertexRag.v1beta1.retrieveContexts({ parent: 'projects/p/locations/l', vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'desert wind' } }),
    await e.vertexRag.v1beta1.listRagFiles({ parent: corpus }),
    await e.memoryBank.retrieveMemories({ parent: ENGINE, scope: { user_id: 'u' }, similaritySearchParams: { searchQuery: 'tea' } }),
  ]
}

describe('a server data folder (DataDir) under corruption', () => {
  const good = join(root, 'data')
  let corpus = ''
  let expected: unknown[] = []
  let files: string[] = []

  beforeAll(async () => {
    const engines = freshEngines()
    corpus = await fillEngines(engines)
    const data = new DataDir(good, engines)
    expect(data.generation).toBe(0)
    expect(data.load()).toBe(false)
    await data.save()
    await data.save()
    expect(data.generation).toBe(2)
    expected = await observeEngines(engines, corpus)
    data.close()
    files = filesOf(good)
  })

  it('saves the three engines as one checksummed generation, releases the lock on close, and loads them back', async () => {
    expect(existsSync(join(good, 'LOCK'))).toBe(false)
    expect(files).toContain('snapshot-000002/semantic-retriever/state.json')
    expect(files.filter((f) => !f.startsWith('snapshot-000002/'))).toEqual(['CURRENT'])
    const again = freshEngines()
    const reopened = new DataDir(good, again)
    expect(reopened.load()).toBe(true)
    expect(reopened.generation).toBe(2)
    expect(await observeEngines(again, corpus)).toEqual(expected)
    reopened.close()
  })

  it('random damage to any file of the folder: the saved state exactly, or INVALID_SNAPSHOT', async () => {
    const counts = tally()
    const cases = runs(250)
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: files.length - 1 }), fc.constantFrom(...KINDS), fc.nat(), fc.nat(), async (f, kind, a, b) => {
        const file = files[f] as string
        const dir = scratch()
        cpSync(good, dir, { recursive: true })
        damage(join(dir, file), kind, a, b)
        const engines = freshEngines()
        const data = new DataDir(dir, engines)
        let restored = false
        try {
          restored = data.load()
        } catch (error) {
          expectRefusal(error)
          counts[kind].refused++
        } finally {
          data.close()
        }
        if (restored) {
          expect(await observeEngines(engines, corpus), `${kind} ${file} ${a} ${b}`).toEqual(expected)
          counts[kind].loaded++
        }
        rmSync(dir, { recursive: true, force: true })
      }),
      { numRuns: cases },
    )
    console.log(`data folder (${files.length} files), random: ${total(counts)} cases ${JSON.stringify(counts)}`)
    expect(total(counts)).toBe(cases)
  })

  it('refuses an edited chunk text with a message naming the file, not the text', async () => {
    const dir = scratch()
    cpSync(good, dir, { recursive: true })
    // A corpus's documents and chunks are in its own file beside state.json.
    const state = join(dir, 'snapshot-000002', 'semantic-retriever', 'corpus-0.json')
    const text = readFileSync(state, 'utf8')
    expect(text).toContain('ocean storm')
    writeFileSync(state, text.replace('ocean storm', 'ocean calm!'))
    const engines = freshEngines()
    const error = thrown(() => new DataDir(dir, engines).load())
    expectRefusal(error)
    expect((error as Error).message).toMatch(/snapshot-000002\/semantic-retriever\/corpus-0\.json does not match its checksum \(corrupted\)\. Restore the folder from a backup, or remove the folder to start empty\.$/)
    expect((error as Error).message).not.toContain('calm')
    // Nothing was loaded, and the lock is released (the folder can be opened again).
    expect(await engines.semanticRetriever.listCorpora({})).toEqual({ ok: true, response: {} })
    expect(existsSync(join(dir, 'LOCK'))).toBe(false)
  })

  it('refuses a garbage CURRENT and a truncated engine state with one clean line', () => {
    const dir = scratch()
    cpSync(good, dir, { recursive: true })
    writeFileSync(join(dir, 'CURRENT'), `${MARKER}\n`)
    expect(() => new DataDir(dir, freshEngines()).load()).toThrowError(/^\S+ is not a readable Quarry data folder: CURRENT does not name a snapshot \(it should hold one line, "snapshot-N"\)\. Restore the folder from a backup, or remove the folder to start empty\.$/)
    // An engine's own saveTo / loadFrom (outside a data folder): a generation of the same protocol.
    const sr = new SemanticRetriever({ embedder })
    const alone = scratch()
    mkdirSync(alone)
    cpSync(join(good, 'snapshot-000002', 'semantic-retriever'), alone, { recursive: true })
    expect(() => sr.loadFrom(alone)).toThrowError(/^\S+ holds no Semantic Retriever save \(no CURRENT\): save one there with saveTo first\.$/)
    const saved = scratch()
    const source = freshEngines().semanticRetriever
    source.loadFolder(join(good, 'snapshot-000002', 'semantic-retriever'))
    source.saveTo(saved)
    const savedState = join(saved, 'snapshot-000001', 'state.json')
    const savedBytes = readFileSync(savedState)
    writeFileSync(savedState, Buffer.concat([savedBytes.subarray(0, 10), Buffer.from('X'), savedBytes.subarray(11)]))
    const refused = thrown(() => sr.loadFrom(saved))
    expectRefusal(refused)
    expect((refused as Error).message).toMatch(/snapshot-000001\/state\.json does not match its checksum \(corrupted\)\. Restore the folder from a backup, or save the engine again\.$/)
    // A folder read as it is (inside a checked generation): versioned, a bad file refused without its content.
    const state = join(alone, 'state.json')
    const bytes = readFileSync(state)
    writeFileSync(state, bytes.subarray(0, bytes.length - 20))
    const error = thrown(() => sr.loadFolder(alone))
    expectRefusal(error)
    expect((error as Error).message).toMatch(/state\.json is not a readable Semantic Retriever state: it is not JSON \(truncated\?\)/)
    writeFileSync(state, JSON.stringify({ ...(JSON.parse(bytes.toString('utf8')) as object), version: 9 }))
    expect(() => sr.loadFolder(alone)).toThrowError(/version 9 is not supported/)
  })
})

// ---------------------------------------------------------------------------------------------
// One writer per folder

const CHILD = fileURLToPath(new URL('./persist-protocol-child.ts', import.meta.url))
const BIN = fileURLToPath(new URL('../../packages/adapters/bin/quarry.mjs', import.meta.url))

function child(args: readonly string[]): { process: ChildProcess; lines: string[]; exited: Promise<number | null>; waitFor: (re: RegExp) => Promise<string> } {
  const proc = spawn(process.execPath, ['--conditions=quarry-source', '--import', 'tsx', CHILD, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  return watch(proc)
}

function watch(proc: ChildProcess): { process: ChildProcess; lines: string[]; exited: Promise<number | null>; waitFor: (re: RegExp) => Promise<string> } {
  const lines: string[] = []
  let text = ''
  const waiters: { re: RegExp; resolve: (s: string) => void }[] = []
  const take = (chunk: Buffer): void => {
    text += chunk.toString()
    const parts = text.split('\n')
    text = parts.pop() ?? ''
    for (const l of parts) {
      lines.push(l)
      for (const w of waiters.splice(0)) (w.re.test(l) ? w.resolve(l) : waiters.push(w))
    }
  }
  proc.stdout?.on('data', take)
  proc.stderr?.on('data', take)
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  const waitFor = (re: RegExp): Promise<string> => {
    const seen = lines.find((l) => re.test(l))
    if (seen !== undefined) return Promise.resolve(seen)
    return Promise.race([new Promise<string>((resolve) => waiters.push({ re, resolve })), exited.then((code) => Promise.reject(new Error(`exited (${code}) before ${re}: ${lines.join('\n')}`)))])
  }
  return { process: proc, lines, exited, waitFor }
}

/** The pid of a process that has exited (a LOCK naming it is stale). */
async function deadPid(): Promise<number> {
  const proc = spawn(process.execPath, ['-e', ''])
  await new Promise((resolve) => proc.once('exit', resolve))
  return proc.pid as number
}

describe('one writer per folder', () => {
  it('a folder held by another process is refused at once, clearly, for a DataDir and for index.save; released on close', async () => {
    const dir = scratch()
    const holder = child(['hold', dir])
    await holder.waitFor(/^held$/)
    const pid = holder.process.pid as number
    const refused = new RegExp(`is in use by process ${pid} on ${hostname().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: a folder has one writer at a time`)
    expect(() => new DataDir(dir, freshEngines())).toThrowError(refused)
    expect(() => buildIndex().save(dir)).toThrowError(expect.objectContaining({ code: 'LOCKED' }) as Error)
    const other = child(['open', dir])
    const line = await other.waitFor(/^\{/)
    expect(JSON.parse(line)).toMatchObject({ ok: false, code: 'LOCKED' })
    holder.process.stdin?.end()
    expect(await holder.exited).toBe(0)
    expect(existsSync(join(dir, 'LOCK'))).toBe(false)
    const data = new DataDir(dir, freshEngines())
    expect(() => new DataDir(dir, freshEngines())).toThrowError(/in use by this process \(pid \d+\), which is saving into it already or keeps it open/)
    data.close()
  })

  it('save({ lock }) saves under a lock the caller holds (kept held after), so no writer comes between a check and the save; a wrong lock is refused', async () => {
    const dir = scratch()
    const index = buildIndex()
    const lock = DirectoryLock.acquire(dir)
    // Held here: a save taking its own lock is refused; one given the lock saves, twice, and it stays held.
    expect(() => index.save(dir)).toThrowError(expect.objectContaining({ code: 'LOCKED' }) as Error)
    index.save(dir, { lock })
    index.add({ id: 'late', vector: [1, 0, 0, 0, 0, 0, 0, 0], text: 'late' })
    await index.saveInSlices(dir, { lock, sliceMs: 0 })
    expect(lock.held).toBe(true)
    expect(readFileSync(join(dir, 'LOCK'), 'utf8')).toContain(`"pid":${process.pid}`)
    expect(loadIndex(dir).has('late')).toBe(true)
    const other = DirectoryLock.acquire(scratch())
    const wrong = [
      [other, /the lock given is for .*, not held for .*: pass the lock DirectoryLock.acquire\(dir\) returned/],
      [{ dir, held: true }, /lock must be a DirectoryLock of the folder saved to \(DirectoryLock.acquire\(dir\)\), or left out .*; received an object/],
    ] as const
    for (const [given, message] of wrong) {
      const error = thrown(() => index.save(dir, { lock: given as DirectoryLock }))
      expect(error).toMatchObject({ code: 'INVALID_OPTION', path: 'lock' })
      expect((error as Error).message).toMatch(message)
    }
    other.release()
    lock.release()
    expect(existsSync(join(dir, 'LOCK'))).toBe(false)
    expect(thrown(() => index.save(dir, { lock }))).toMatchObject({ code: 'INVALID_OPTION', path: 'lock', message: expect.stringMatching(/^the lock given is released, not held for /) as string })
    index.save(dir)
    expect(loadIndex(dir).size).toBe(index.size)
  })

  full.it('two processes saving to the same folder at once: the loser is refused with LOCKED, readers always find a whole generation', async () => {
    const rounds = 3
    let refusedSaves = 0
    let okSaves = 0
    let reads = 0
    for (let round = 0; round < rounds; round++) {
      const dir = scratch()
      const a = child(['save', dir, 'a', '6'])
      const b = child(['save', dir, 'b', '6'])
      let done = false
      const both = Promise.all([a.exited, b.exited]).then((codes) => {
        done = true
        return codes
      })
      // Read while they write: once a generation exists, every read is one of the two states, whole.
      while (!done) {
        if (existsSync(join(dir, 'CURRENT'))) {
          const loaded = loadIndex(dir)
          const ids = [...loaded.ids()]
          expect(ids.length).toBe(3000)
          const tag = (ids[0] as string)[0] as string
          expect(ids.every((id) => id.startsWith(tag))).toBe(true)
          expect(loaded.get(`${tag}7`)?.metadata).toEqual({ n: 7 })
          reads++
        }
        await new Promise((resolve) => setTimeout(resolve, 15))
      }
      expect(await both).toEqual([0, 0])
      for (const line of [...a.lines, ...b.lines]) {
        const result = JSON.parse(line) as { ok: boolean; code?: string; message?: string }
        if (result.ok) okSaves++
        else {
          expect(result.code, result.message).toBe('LOCKED')
          expect(result.message).toMatch(/is in use by process \d+ on .*: a folder has one writer at a time/)
          refusedSaves++
        }
      }
      const final = loadIndex(dir)
      expect(final.size).toBe(3000)
      expect(readdirSync(dir).sort()).toEqual(['CURRENT', readFileSync(join(dir, 'CURRENT'), 'utf8').trim()])
    }
    console.log(`racing saves: ${rounds} rounds, ${okSaves} saves succeeded, ${refusedSaves} refused with LOCKED, ${reads} concurrent reads all whole`)
    expect(okSaves + refusedSaves).toBe(rounds * 12)
    expect(okSaves).toBeGreaterThan(0)
  })

  full.it('a second `quarry serve --data` on the same folder exits at once with one line; after a kill -9 the next one takes the lock over', async () => {
    const dir = scratch()
    const serve = (): ReturnType<typeof watch> => watch(spawn(process.execPath, [BIN, 'serve', '--port', '0', '--embedder', 'hashing', '--data', dir], { stdio: ['ignore', 'pipe', 'pipe'] }))
    const first = serve()
    await first.waitFor(/serving on/)
    const second = serve()
    expect(await second.exited).toBe(1)
    expect(second.lines.join('\n')).toMatch(new RegExp(`^quarry serve: \\S+ is in use by process ${first.process.pid} on .*: a folder has one writer at a time\\. .*retry\\.$`))
    first.process.kill('SIGKILL')
    await first.exited
    expect(JSON.parse(readFileSync(join(dir, 'LOCK'), 'utf8'))).toMatchObject({ pid: first.process.pid })
    const third = serve()
    await third.waitFor(/serving on/)
    third.process.kill('SIGKILL')
    await third.exited
  })
})

describe('stale locks and debris', () => {
  it('takes over a LOCK naming a dead process on this host, a zombie or a reused pid; refuses another host\'s', async () => {
    const dir = scratch()
    const index = buildIndex()
    index.save(dir)
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: await deadPid(), host: hostname(), token: 'old' }))
    index.save(dir)
    expect(existsSync(join(dir, 'LOCK'))).toBe(false)
    expect(loadIndex(dir).size).toBe(index.size)
    // A live pid (our parent) that started at another time than the LOCK says: the pid was reused.
    if (existsSync(`/proc/${process.ppid}/stat`)) {
      writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: process.ppid, host: hostname(), started: 1, token: 'old' }))
      index.save(dir)
      expect(existsSync(join(dir, 'LOCK'))).toBe(false)
    }
    // A zombie (killed, never reaped: its parent `sleep` does not wait) that started when the LOCK says: taken over.
    if (existsSync(`/proc/${process.ppid}/stat`)) {
      const parent = spawn('sh', ['-c', 'sleep 0.05 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] })
      try {
        const zombie = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(d.toString()))))
        const stat = (): string[] => readFileSync(`/proc/${zombie}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
        for (let i = 0; i < 100 && stat()[0] !== 'Z'; i++) await new Promise((resolve) => setTimeout(resolve, 20))
        expect(stat()[0]).toBe('Z')
        writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: zombie, host: hostname(), started: Number(stat()[19]), token: 'old' }))
        index.save(dir)
        expect(existsSync(join(dir, 'LOCK'))).toBe(false)
      } finally {
        parent.kill('SIGKILL')
      }
    }
    // The same live pid without a start time to compare: held.
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: process.ppid, host: hostname(), token: 'old' }))
    expect(() => index.save(dir)).toThrowError(expect.objectContaining({ code: 'LOCKED' }) as Error)
    // Another host's, from a Quarry that does not refresh its LOCK: nothing to check, so held, and the message says how to clear it.
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: 4242, host: 'elsewhere.example', token: 'old' }))
    expect(() => new DataDir(dir, freshEngines())).toThrowError(`is in use by process 4242 on elsewhere.example: a folder has one writer at a time. Close the index or server using it (or wait for its save to finish) and retry. If that process is no longer running, delete ${join(dir, 'LOCK')} (its Quarry does not refresh its LOCK, so another host cannot tell).`)
    // A LOCK that is not JSON: being written if fresh (held), left by a crash if old (taken over).
    writeFileSync(join(dir, 'LOCK'), '')
    expect(() => index.save(dir)).toThrowError(/its LOCK is being written/)
    utimesSync(join(dir, 'LOCK'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
    index.save(dir)
    expect(readdirSync(dir).sort()).toEqual(['CURRENT', 'snapshot-000005'])
  })

  it('a holder refreshes its LOCK every second; another host\'s LOCK that is refreshed is held', async () => {
    const dir = scratch()
    const lock = DirectoryLock.acquire(dir)
    try {
      const owner = JSON.parse(readFileSync(join(dir, 'LOCK'), 'utf8')) as { refreshMs?: number }
      expect(owner.refreshMs).toBe(1000)
      const old = new Date(Date.now() - 60_000)
      utimesSync(join(dir, 'LOCK'), old, old)
      await new Promise((resolve) => setTimeout(resolve, 1300))
      expect(Date.now() - statSync(join(dir, 'LOCK')).mtimeMs).toBeLessThan(1500)
    } finally {
      lock.release()
    }
    expect(existsSync(join(dir, 'LOCK'))).toBe(false)
    // Another host's owner, alive: a process there refreshes its LOCK (here a child touching it every 200 ms).
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: 4242, host: 'elsewhere.example', token: 'theirs', refreshMs: 200 }))
    const toucher = spawn(process.execPath, ['-e', `const fs = require('node:fs'); setInterval(() => { const t = new Date(); fs.utimesSync(${JSON.stringify(join(dir, 'LOCK'))}, t, t) }, 200)`], { stdio: 'ignore' })
    try {
      await new Promise((resolve) => setTimeout(resolve, 300))
      const started = performance.now()
      expect(() => new DataDir(dir, freshEngines())).toThrowError(`is in use by process 4242 on elsewhere.example: a folder has one writer at a time. Close the index or server using it (or wait for its save to finish) and retry. Its LOCK is refreshed, so that process is running; once it stops, its LOCK is taken over 10 s after its last refresh.`)
      // Told as soon as a refresh is seen, not after the whole watch.
      expect(performance.now() - started).toBeLessThan(2000)
      expect(JSON.parse(readFileSync(join(dir, 'LOCK'), 'utf8'))).toMatchObject({ token: 'theirs' })
    } finally {
      toucher.kill('SIGKILL')
    }
  })

  full.it('refreshes from a worker: a holder whose main thread is busy keeps its LOCK fresh; a save that lost its LOCK writes nothing', () => {
    const dir = scratch()
    const lock = DirectoryLock.acquire(dir)
    try {
      const old = new Date(Date.now() - 60_000)
      utimesSync(join(dir, 'LOCK'), old, old)
      // 2.5 s of this thread's time with no turn of its event loop: the refresh goes on.
      const until = Date.now() + 2500
      while (Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50)
      expect(Date.now() - statSync(join(dir, 'LOCK')).mtimeMs).toBeLessThan(2000)
      // Taken over during a save (its holder stopped past the grace): the generation is not put in place.
      expect(() =>
        writeGeneration(dir, { format: 'quarry-test', version: 1, kind: 'test folder', remedy: 'Remove it.' }, function* (out) {
          const file = out.create('a.txt')
          file.text('written after the takeover')
          yield* file.finish()
          rmSync(join(dir, 'LOCK'))
          writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: 4242, host: 'elsewhere.example', token: 'new-owner', refreshMs: 1000 }))
        }, { lock }),
      ).toThrowError(expect.objectContaining({ code: 'LOCKED' }) as Error)
      expect(readdirSync(dir).sort()).toEqual(['LOCK'])
    } finally {
      lock.release()
    }
  })

  it('judges a LOCK from another pid namespace under this hostname (another container) by its refresh, not its pid', async () => {
    const dir = scratch()
    mkdirSync(dir, { recursive: true })
    // Our own pid, as pid 1 of two containers would be; refreshed by a live process there.
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: process.pid, host: hostname(), token: 'theirs', refreshMs: 1000, pidns: 'pid:[1]' }))
    const toucher = spawn(process.execPath, ['-e', `const fs = require('node:fs'); setInterval(() => { const t = new Date(); fs.utimesSync(${JSON.stringify(join(dir, 'LOCK'))}, t, t) }, 200)`], { stdio: 'ignore' })
    try {
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(() => DirectoryLock.acquire(dir)).toThrowError(`is in use by process ${process.pid} on ${hostname()} (in another pid namespace: another container): a folder has one writer at a time.`)
    } finally {
      toucher.kill('SIGKILL')
    }
    // A promise of refreshes that is not a number of milliseconds: held, as a LOCK of an older Quarry is.
    for (const refreshMs of ['1000', 0, -5, null]) {
      writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: 4242, host: 'elsewhere.example', token: 'theirs', refreshMs }))
      utimesSync(join(dir, 'LOCK'), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
      expect(() => DirectoryLock.acquire(dir)).toThrowError(/its Quarry does not refresh its LOCK, so another host cannot tell/)
    }
  })

  // A container recreated under a new hostname on the same volume: the LOCK its last run left names another host.
  full.it('takes over another host\'s LOCK once it has gone unrefreshed: after 2.5 s of watching when already 10 s old', () => {
    const dir = scratch()
    const index = buildIndex()
    index.save(dir)
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: 1, host: 'container-before.example', token: 'old', refreshMs: 1000 }))
    const old = new Date(Date.now() - 60_000)
    utimesSync(join(dir, 'LOCK'), old, old)
    const started = performance.now()
    const data = new DataDir(dir, freshEngines())
    const waited = performance.now() - started
    try {
      expect(waited).toBeGreaterThanOrEqual(2400)
      expect(waited).toBeLessThan(8000)
      expect(JSON.parse(readFileSync(join(dir, 'LOCK'), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() })
    } finally {
      data.close()
    }
  })

  it('a LOCK.takeover dated ahead (a clock stepped back) does not block the takeover of a stale LOCK', async () => {
    const dir = scratch()
    const index = buildIndex()
    index.save(dir)
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: await deadPid(), host: hostname(), token: 'old' }))
    // Left by a crash, dated an hour ahead: its age was negative, so it never expired and every save failed.
    writeFileSync(join(dir, 'LOCK.takeover'), '')
    utimesSync(join(dir, 'LOCK.takeover'), new Date(Date.now() + 3_600_000), new Date(Date.now() + 3_600_000))
    index.save(dir)
    expect(readdirSync(dir).filter((f) => f.startsWith('LOCK'))).toEqual([])
  })

  it('debris of interrupted saves is removed by the next save (index) and the next open (data folder); older generations only after a switch', async () => {
    const dir = scratch()
    const index = buildIndex()
    index.save(dir)
    const debris = ['.snapshot-000002.tmp-4242', '.snapshot-000009.tmp-1', 'CURRENT.tmp-4242', '.tmp-snapshot-3-999']
    for (const d of debris) {
      if (d.startsWith('CURRENT')) writeFileSync(join(dir, d), 'snapshot-000009\n')
      else {
        mkdirSync(join(dir, d))
        writeFileSync(join(dir, d, 'vectors.f32'), 'partial')
      }
    }
    // A generation renamed into place whose CURRENT switch never happened.
    mkdirSync(join(dir, 'snapshot-000002'))
    writeFileSync(join(dir, 'snapshot-000002', 'manifest.json'), '{}')
    expect(observeIndex(loadIndex(dir))).toEqual(observeIndex(index))
    index.save(dir)
    expect(readdirSync(dir).sort()).toEqual(['CURRENT', 'snapshot-000002'])
    expect(observeIndex(loadIndex(dir))).toEqual(observeIndex(index))

    const data = scratch()
    const engines = freshEngines()
    const corpus = await fillEngines(engines)
    const first = new DataDir(data, engines)
    await first.save()
    first.close()
    for (const d of debris) mkdirSync(join(data, d))
    const reopened = new DataDir(data, freshEngines())
    expect(readdirSync(data).sort()).toEqual(['CURRENT', 'LOCK', 'snapshot-000001'])
    expect(reopened.load()).toBe(true)
    reopened.close()
    expect(corpus).toMatch(/ragCorpora/)
  })
})
