import fc from 'fast-check'
import { closeSync, cpSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder, createIndex, LinkableFile, loadIndex, saveIndexInto, writeGeneration, type GenerationFormat, type Embedder, type GenerationWriter, type IndexOptions, type QuarryIndex, type RecordInput, type Steps } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine } from '@quarry/adapters'
import { DataDir } from '../../packages/adapters/src/transport/data-dir.js'
import { runRetrieverScenario, tickingClock } from '../support/retriever-scenario.js'
import { runs } from '../support/runs.js'
import { current, shared } from '../support/generation-files.js'

/**
 * Saving an index that has not changed since it was last saved or loaded hard-links that
 * snapshot's files into the new generation instead of writing them again (a server's checkpoint
 * after one memory was written no longer rewrites every corpus). What must hold: links only when
 * nothing changed (every kind of write makes the next save write), only from the very snapshot
 * recorded (its manifest's seal), a failed link never writes through to the other generation, and
 * every save loads back as the index it saved.
 */
const root = mkdtempSync(join(tmpdir(), 'quarry-reuse-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let scratchCount = 0
const scratch = (): string => join(root, `s${scratchCount++}`)
const embedder = createHashingEmbedder({ dimensions: 16 })

const record = (i: number, word = 'alpha'): RecordInput => ({ id: `r${i}`, text: `${word} record ${i} of the set`, vector: Float32Array.from({ length: 16 }, (_, d) => Math.sin(i * 7 + d * 3) + (d === i % 16 ? 2 : 0)), metadata: { n: i, group: i % 3 === 0 ? 'a' : 'b' } })

/** An index of 16-d records r0 … r(count − 1), created with `options`. */
function filled(count: number, options: Omit<IndexOptions, 'dimensions'> & { embedder?: Embedder } = {}): QuarryIndex {
  const index = createIndex({ dimensions: 16, ...options })
  index.addMany(Array.from({ length: count }, (_, i) => record(i)))
  return index
}

/** Every record's stored form and a few searches (ids, order, scores): what a loaded index must answer as the original does. */
function observe(index: QuarryIndex): unknown {
  const ids = Array.from({ length: 40 }, (_, i) => `r${i}`)
  const query = Float32Array.from({ length: 16 }, (_, d) => Math.cos(d))
  return {
    size: index.size,
    records: ids.map((id) => index.get(id) ?? null),
    dense: index.search({ vector: query, topK: 8 }).hits.map((h) => [h.id, h.score]),
    text: index.search({ text: 'record alpha', topK: 8 }).hits.map((h) => [h.id, h.score]),
    filtered: index.search({ vector: query, topK: 5, filter: { field: 'group', op: 'eq', value: 'a' } }).hits.map((h) => [h.id, h.score]),
  }
}

describe('saving an unchanged index links its last snapshot', () => {
  for (const dense of ['exact', 'hnsw'] as const) {
    it(`${dense}: a second save links every file; a write makes the next one write every file; each loads back as saved`, () => {
      const dir = scratch()
      const index = filled(30, { dense })
      index.save(dir)
      const first = current(dir)
      expect([...first.keys()]).toContain('vectors.f32')
      index.save(dir)
      const second = current(dir)
      expect(shared(first, second).sort()).toEqual([...first.keys()].sort())
      expect(observe(loadIndex(dir))).toEqual(observe(index))
      index.add(record(30))
      index.save(dir)
      const third = current(dir)
      expect(shared(second, third)).toEqual([])
      expect(observe(loadIndex(dir))).toEqual(observe(index))
    })
  }

  it('linkUnchanged: false writes every file of an unchanged index, and that copy is the one the next save links', async () => {
    const dir = scratch()
    const index = filled(10)
    index.save(dir)
    const first = current(dir)
    index.save(dir, { linkUnchanged: false })
    const second = current(dir)
    expect(shared(first, second)).toEqual([])
    expect([...second].map(([name, f]) => [name, f.sha256])).toEqual([...first].map(([name, f]) => [name, f.sha256]))
    await index.saveInSlices(dir, { linkUnchanged: false })
    const third = current(dir)
    expect(shared(second, third)).toEqual([])
    index.save(dir)
    expect(shared(third, current(dir)).sort()).toEqual([...third.keys()].sort())
    expect(observe(loadIndex(dir))).toEqual(observe(index))
  })

  it('a loaded index saved into another folder writes a copy that shares no file, unless linkUnchanged: true', () => {
    const a = scratch()
    const index = filled(25, { dense: 'hnsw' })
    index.save(a)
    const loaded = loadIndex(a)
    const b = scratch()
    loaded.save(b)
    expect(shared(current(a), current(b))).toEqual([])
    expect(observe(loadIndex(b))).toEqual(observe(index))
    const c = scratch()
    loadIndex(a).save(c, { linkUnchanged: true })
    expect(shared(current(a), current(c)).sort()).toEqual([...current(a).keys()].sort())
    expect(observe(loadIndex(c))).toEqual(observe(index))
  })

  it('a snapshot file written in place since it was recorded is not linked: the save writes the index from memory', () => {
    const dir = scratch()
    const index = filled(30)
    index.save(dir)
    // One byte of the snapshot changed in place (same inode, same size), later than the save.
    const path = join(dir, readFileSync(join(dir, 'CURRENT'), 'latin1').trim(), 'vectors.f32')
    const fd = openSync(path, 'r+')
    writeSync(fd, Buffer.from([readFileSync(path)[100]! ^ 0xff]), 0, 1, 100)
    closeSync(fd)
    utimesSync(path, new Date(), new Date(Date.now() + 5000))
    const damaged = current(dir)
    expect(() => loadIndex(dir)).toThrow(/vectors\.f32/)
    index.save(dir)
    expect(shared(damaged, current(dir))).toEqual([])
    expect(observe(loadIndex(dir))).toEqual(observe(index))
  })

  it('a generation that fails after the index was saved into it leaves the snapshot before it as the last: the next save links it', () => {
    const FORMAT: GenerationFormat = { format: 'quarry-test-outer', version: 1, kind: 'test folder', remedy: 'Remove it.' }
    const dir = scratch()
    const index = filled(30)
    writeGeneration(dir, FORMAT, (out) => saveIndexInto(out, 'idx', index))
    const first = current(join(dir, readFileSync(join(dir, 'CURRENT'), 'latin1').trim(), 'idx'))
    const failing = function* (out: GenerationWriter): Steps {
      yield* saveIndexInto(out, 'idx', index)
      throw new Error('the disk is full')
    }
    expect(() => writeGeneration(dir, FORMAT, failing)).toThrow(/disk is full/)
    writeGeneration(dir, FORMAT, (out) => saveIndexInto(out, 'idx', index))
    const again = current(join(dir, readFileSync(join(dir, 'CURRENT'), 'latin1').trim(), 'idx'))
    expect(shared(first, again).sort()).toEqual([...first.keys()].sort())
  })

  it('every kind of write, even one that fails or changes nothing, makes the next save write', async () => {
    const writes: [string, (index: QuarryIndex) => unknown][] = [
      ['add', (i) => i.add(record(50))],
      ['addMany', (i) => i.addMany([record(51), record(52)])],
      ['upsert of a new id', (i) => i.upsert(record(53))],
      ['upsert of an existing id', (i) => i.upsert(record(3, 'beta'))],
      ['remove', (i) => i.remove('r4')],
      ['remove of an unknown id', (i) => i.remove('nobody')],
      ['a failing add', (i) => expect(() => i.add({ id: 'r1', text: 'duplicate id' })).toThrow()],
      ['ingest', async (i) => i.ingest([{ id: 'r54', text: 'ingested text' }])],
      ['replaceMetadata', (i) => i.replaceMetadata('r2', { n: 2, group: 'a' })],
      ['removeMany', (i) => i.removeMany(['r5', 'r6'])],
      ['removeMany of unknown ids', (i) => i.removeMany(['nobody'])],
    ]
    for (const [what, write] of writes) {
      const dir = scratch()
      const index = filled(10, { embedder })
      index.save(dir)
      const before = current(dir)
      await write(index)
      index.save(dir)
      expect(shared(before, current(dir)), what).toEqual([])
      expect(observe(loadIndex(dir, { embedder })), what).toEqual(observe(index))
    }
  })

  it('links only from the very snapshot recorded: one replaced under the same name by another index is written over, not linked', () => {
    const dir = scratch()
    const mine = filled(12)
    mine.save(dir)
    // The folder is removed and another index saved there: the same generation name, other files.
    rmSync(dir, { recursive: true })
    const other = createIndex({ dimensions: 16 })
    other.addMany(Array.from({ length: 12 }, (_, i) => record(i + 100, 'gamma')))
    other.save(dir)
    const theirs = current(dir)
    const out = scratch()
    mine.save(out, { linkUnchanged: true })
    expect(shared(theirs, current(out))).toEqual([])
    expect(observe(loadIndex(out))).toEqual(observe(mine))
    // And a snapshot removed since is written again, whole.
    const gone = scratch()
    mine.save(gone)
    const kept = scratch()
    rmSync(gone, { recursive: true })
    mine.save(kept, { linkUnchanged: true })
    expect(observe(loadIndex(kept))).toEqual(observe(mine))
  })

  it('a link that fails midway drops the links made and writes the files, leaving the other snapshot as it was', () => {
    const a = scratch()
    const index = filled(20, { dense: 'hnsw' })
    index.save(a)
    // A file of the recorded snapshot disappears (a link to it fails) after others were linked.
    const generation = join(a, readFileSync(join(a, 'CURRENT'), 'latin1').trim())
    rmSync(join(generation, 'vectors.f32'))
    const before = current(a)
    const b = scratch()
    index.save(b, { linkUnchanged: true })
    // The files still there are untouched (same bytes, never written: same modification times), and the new snapshot shares none of them.
    expect(current(a)).toEqual(before)
    expect(shared(before, current(b))).toEqual([])
    expect(observe(loadIndex(b))).toEqual(observe(index))
  })

  it('saveInSlices links as save does, and counts as the last snapshot for the next save', async () => {
    const dir = scratch()
    const index = filled(20, { dense: 'hnsw' })
    await index.saveInSlices(dir)
    const first = current(dir)
    await index.saveInSlices(dir)
    const second = current(dir)
    expect(shared(first, second).sort()).toEqual([...first.keys()].sort())
    index.save(dir)
    expect(shared(second, current(dir)).sort()).toEqual([...first.keys()].sort())
    expect(observe(loadIndex(dir))).toEqual(observe(index))
  })

  it('random writes and saves: every save loads back as the index, and links exactly when nothing was written since the last save or load', () => {
    type Op = { kind: 'add' | 'remove' | 'upsert'; i: number } | { kind: 'save' } | { kind: 'reload' }
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constantFrom('add' as const, 'remove' as const, 'upsert' as const), i: fc.integer({ min: 0, max: 39 }) }),
      fc.constant({ kind: 'save' as const }),
      fc.constant({ kind: 'reload' as const }),
    )
    fc.assert(
      fc.property(fc.constantFrom('exact' as const, 'hnsw' as const), fc.array(op, { minLength: 1, maxLength: 12 }), (dense, ops) => {
        const dir = scratch()
        let index = filled(8, { dense })
        let wrote = true
        let last: Map<string, { ino: number }> | undefined
        for (const o of [...ops, { kind: 'save' } as Op]) {
          if (o.kind === 'save') {
            index.save(dir)
            const now = current(dir)
            if (last !== undefined) expect(shared(last, now).length).toBe(wrote ? 0 : now.size)
            expect(observe(loadIndex(dir))).toEqual(observe(index))
            last = now
            wrote = false
          } else if (o.kind === 'reload') {
            if (last === undefined) continue
            // Back to the last save: what was written since is gone, and the loaded index is its snapshot.
            index = loadIndex(dir)
            wrote = false
          } else if (o.kind !== 'add' || !index.has(`r${o.i}`)) {
            wrote = true
            if (o.kind === 'remove') index.remove(`r${o.i}`)
            else if (o.kind === 'upsert') index.upsert(record(o.i, 'delta'))
            else index.add(record(o.i))
          }
        }
      }),
      { numRuns: runs(25) },
    )
  })
})

describe('a server data folder checkpoint', () => {
  it('links the corpora no write touched, writes those written, and loads back every engine as it was', async () => {
    const dir = scratch()
    const engines = { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }
    const rag = engines.vertexRag.v1beta1
    const corpora: string[] = []
    for (const name of ['A', 'B']) {
      const created = await rag.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: name } })
      if (!created.ok) throw new Error('createRagCorpus')
      const corpus = created.response.response?.name as string
      corpora.push(corpus)
      const up = await rag.uploadRagFile({ parent: corpus, ragFile: { displayName: `${name}.txt` } }, `The ${name} corpus: desert wind, ocean storm and garden rose, told again and again.`)
      if (!up.ok) throw new Error('uploadRagFile')
    }
    const engine = 'projects/p/locations/l/reasoningEngines/1'
    const memory = await engines.memoryBank.createMemory({ parent: engine, memory: { fact: 'I like tea', scope: { user_id: 'u' } } })
    if (!memory.ok) throw new Error('createMemory')
    const observeAll = async (e: typeof engines): Promise<unknown[]> => [
      ...(await Promise.all(corpora.map((corpus) => e.vertexRag.v1beta1.retrieveContexts({ parent: 'projects/p/locations/l', vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'desert storm' } })))),
      await e.memoryBank.retrieveMemories({ parent: engine, scope: { user_id: 'u' }, similaritySearchParams: { searchQuery: 'tea' } }),
    ]
    const data = new DataDir(dir, engines)
    await data.save()
    const first = current(dir)
    // An index's own files (its CURRENT is written anew with each save): `corpus-0/snapshot-000001/ids.bin`.
    const files = (prefix: string): string[] => [...first.keys()].filter((f) => f.startsWith(prefix) && f.includes('/snapshot-')).sort()
    // One memory written: the corpora are linked, the Memory Bank's index written.
    const more = await engines.memoryBank.createMemory({ parent: engine, memory: { fact: 'I walk my dog at noon', scope: { user_id: 'u' } } })
    if (!more.ok) throw new Error('createMemory')
    await data.save()
    const second = current(dir)
    const linked = shared(first, second)
    expect(linked.filter((f) => f.startsWith('vertex-rag/corpus-')).sort()).toEqual(files('vertex-rag/corpus-'))
    expect(linked.filter((f) => f.startsWith('memory-bank/engine-'))).toEqual([])
    // One file uploaded to corpus B: A is linked again (from the generation the last save committed), B written.
    const up = await rag.uploadRagFile({ parent: corpora[1] as string, ragFile: { displayName: 'more.txt' } }, 'More words about the desert wind.')
    if (!up.ok) throw new Error('uploadRagFile')
    await data.save()
    const third = current(dir)
    const again = shared(second, third)
    expect(again.filter((f) => f.startsWith('vertex-rag/corpus-0/')).sort()).toEqual(files('vertex-rag/corpus-0/'))
    expect(again.filter((f) => f.startsWith('vertex-rag/corpus-1/'))).toEqual([])
    expect(again.filter((f) => f.startsWith('memory-bank/engine-')).sort()).toEqual([...second.keys()].filter((f) => f.startsWith('memory-bank/engine-') && f.includes('/snapshot-')).sort())
    const expected = await observeAll(engines)
    data.close()
    // A fresh start reads the folder back as it was, and its first checkpoint links everything it read.
    const fresh = { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }
    const reopened = new DataDir(dir, fresh)
    expect(reopened.load()).toBe(true)
    expect(await observeAll(fresh)).toEqual(expected)
    await reopened.save()
    const fourth = current(dir)
    const indexFiles = [...third.keys()].filter((f) => /\/(corpus|engine)-\d+\/snapshot-/.test(f)).sort()
    expect(indexFiles.length).toBeGreaterThan(20)
    expect(shared(third, fourth).filter((f) => /\/(corpus|engine)-\d+\//.test(f)).sort()).toEqual(indexFiles)
    reopened.close()
    const last = { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }
    const final = new DataDir(dir, last)
    expect(final.load()).toBe(true)
    expect(await observeAll(last)).toEqual(expected)
    final.close()
  })
})

/** Every page of a list call: its items under `key`. */
async function everyPage<T>(list: (pageToken: string | undefined) => Promise<{ ok: boolean; response?: unknown }>, key: string): Promise<T[]> {
  const items: T[] = []
  let token: string | undefined
  do {
    const page = await list(token)
    if (!page.ok) throw new Error(`list ${key} failed`)
    const response = page.response as Record<string, unknown>
    items.push(...((response[key] as T[] | undefined) ?? []))
    token = response['nextPageToken'] as string | undefined
  } while (token !== undefined)
  return items
}

/** All a Semantic Retriever holds, as its API lists it (every corpus, document and chunk, every field), and a query per corpus (ids, order, scores). */
async function retrieverContents(sr: SemanticRetriever): Promise<unknown> {
  const out: unknown[] = []
  for (const corpus of await everyPage<{ name: string }>((pageToken) => sr.listCorpora({ pageSize: 20, pageToken }), 'corpora')) {
    const documents = await everyPage<{ name: string }>((pageToken) => sr.listDocuments({ parent: corpus.name, pageSize: 20, pageToken }), 'documents')
    const chunks = await Promise.all(documents.map((d) => everyPage((pageToken) => sr.listChunks({ parent: d.name, pageSize: 100, pageToken }), 'chunks')))
    out.push({ corpus, documents, chunks, query: await sr.queryCorpus({ name: corpus.name, query: 'desert storm', resultsCount: 10 }) })
  }
  return out
}

describe('a LinkableFile', () => {
  it('links the copy committed while unchanged; writes it when changed, when written in place since, and after a failed generation links the copy before', () => {
    const dir = scratch()
    const format: GenerationFormat = { format: 'quarry-test', version: 1, kind: 'test folder', remedy: 'Remove it.' }
    const kept = new LinkableFile()
    const save = (text: string, fail = false): void => {
      writeGeneration(dir, format, function* (out) {
        yield* kept.save(out, 'kept.json', function* (file) {
          file.text(text)
        })
        if (fail) throw new Error('the generation fails after the file')
      })
    }
    const path = (): string => join(dir, readFileSync(join(dir, 'CURRENT'), 'latin1').trim(), 'kept.json')
    save('one')
    const first = statSync(path()).ino
    // Unchanged: linked, whatever the writer would have written.
    save('not written')
    expect([statSync(path()).ino, readFileSync(path(), 'utf8')]).toEqual([first, 'one'])
    kept.changed()
    save('two')
    expect(statSync(path()).ino).not.toBe(first)
    expect(readFileSync(path(), 'utf8')).toBe('two')
    // Written in place since it was committed (its modification time moved): written again, not carried over.
    utimesSync(path(), new Date(), new Date(Date.now() - 60_000))
    const touched = statSync(path()).ino
    save('three')
    expect(statSync(path()).ino).not.toBe(touched)
    expect(readFileSync(path(), 'utf8')).toBe('three')
    const third = statSync(path()).ino
    expect(() => save('not written', true)).toThrowError('the generation fails after the file')
    save('not written either')
    expect([statSync(path()).ino, readFileSync(path(), 'utf8')]).toEqual([third, 'three'])
  })
})

describe("a Semantic Retriever corpus's documents file", () => {
  const fresh = (): { semanticRetriever: SemanticRetriever; vertexRag: VertexRagEngine; memoryBank: MemoryBank } => ({ semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) })
  const file = (i: number): string => `semantic-retriever/corpus-${i}.json`
  const ok = async (call: Promise<{ ok: boolean }>): Promise<void> => expect((await call).ok).toBe(true)

  it('is linked into a checkpoint while no write touched its corpus, written after every kind of write to it', async () => {
    const dir = scratch()
    const engines = fresh()
    const sr = engines.semanticRetriever
    for (const c of ['a', 'b']) {
      await ok(sr.createCorpus({ corpus: { name: `corpora/${c}` } }))
      await ok(sr.createDocument({ parent: `corpora/${c}`, document: { name: `corpora/${c}/documents/d` } }))
      await ok(sr.batchCreateChunks({ parent: `corpora/${c}/documents/d`, requests: ['desert wind', 'ocean storm', 'garden rose'].map((t, i) => ({ chunk: { name: `corpora/${c}/documents/d/chunks/k${i}`, data: { stringValue: `${c} ${t}` } } })) }))
    }
    const data = new DataDir(dir, engines)
    await data.save()
    let last = current(dir)
    // Each write to corpus b: the next checkpoint writes b's file and links a's (and a's index).
    const writes: (() => Promise<{ ok: boolean }>)[] = [
      () => sr.createDocument({ parent: 'corpora/b', document: { name: 'corpora/b/documents/e', displayName: 'E' } }),
      () => sr.updateDocument({ document: { name: 'corpora/b/documents/e', displayName: 'E2' }, updateMask: 'displayName' }),
      () => sr.updateDocument({ document: { name: 'corpora/b/documents/d', customMetadata: [{ key: 'year', numericValue: 2001 }] }, updateMask: 'customMetadata' }),
      () => sr.createChunk({ parent: 'corpora/b/documents/e', chunk: { name: 'corpora/b/documents/e/chunks/x', data: { stringValue: 'storm over the desert' } } }),
      () => sr.updateChunk({ chunk: { name: 'corpora/b/documents/e/chunks/x', data: { stringValue: 'calm over the desert' } }, updateMask: 'data' }),
      () => sr.batchUpdateChunks({ parent: 'corpora/b/documents/d', requests: [{ chunk: { name: 'corpora/b/documents/d/chunks/k0', customMetadata: [{ key: 'tag', stringValue: 't' }] }, updateMask: 'customMetadata' }] }),
      () => sr.deleteChunk({ name: 'corpora/b/documents/e/chunks/x' }),
      () => sr.batchDeleteChunks({ parent: 'corpora/b/documents/d', requests: [{ name: 'corpora/b/documents/d/chunks/k1' }] }),
      () => sr.deleteDocument({ name: 'corpora/b/documents/e' }),
      () => sr.deleteDocument({ name: 'corpora/b/documents/d', force: true }),
    ]
    for (const write of writes) {
      await ok(write())
      await data.save()
      const now = current(dir)
      expect(now.get(file(0))).toBeDefined()
      expect(now.get(file(0))?.ino).toBe(last.get(file(0))?.ino)
      expect(now.get(file(1))?.ino).not.toBe(last.get(file(1))?.ino)
      last = now
    }
    // A save into another folder (a backup) writes a copy there that shares no file; the next
    // checkpoint writes its own again (never a link to the backup), and the one after links that.
    const backup = scratch()
    sr.saveTo(backup)
    const copied = current(backup)
    await data.save()
    const rewritten = current(dir)
    for (const i of [0, 1]) {
      expect(copied.get(`corpus-${i}.json`)?.sha256).toBe(last.get(file(i))?.sha256)
      expect([copied.get(`corpus-${i}.json`)?.ino, last.get(file(i))?.ino]).not.toContain(rewritten.get(file(i))?.ino)
    }
    last = rewritten
    // Nothing written (a corpus renamed is in state.json): both linked. A failing write changes nothing: linked too.
    await ok(sr.updateCorpus({ corpus: { name: 'corpora/b', displayName: 'B' }, updateMask: 'displayName' }))
    expect((await sr.deleteChunk({ name: 'corpora/b/documents/d/chunks/k9' })).ok).toBe(false)
    await data.save()
    const now = current(dir)
    expect(shared(last, now).filter((f) => /^semantic-retriever\/corpus-\d+\.json$/.test(f)).sort()).toEqual([file(0), file(1)])
    const expected = await retrieverContents(sr)
    data.close()
    // A restart reads the files back, and its first checkpoint links them.
    const again = fresh()
    const reopened = new DataDir(dir, again)
    expect(reopened.load()).toBe(true)
    expect(await retrieverContents(again.semanticRetriever)).toEqual(expected)
    await reopened.save()
    expect(shared(now, current(dir)).filter((f) => /^semantic-retriever\/corpus-\d+\.json$/.test(f)).sort()).toEqual([file(0), file(1)])
    reopened.close()
  })

  it('random writes, checkpoints and restarts: every restart reads back what was written, and a file is linked exactly when no write touched its corpus', async () => {
    type Op =
      | { kind: 'corpus'; c: number; op: 'create' | 'rename' | 'delete' }
      | { kind: 'document'; c: number; d: number; op: 'create' | 'update' | 'delete' }
      | { kind: 'chunk'; c: number; d: number; k: number; op: 'create' | 'update' | 'delete'; word: string }
      | { kind: 'checkpoint' }
      | { kind: 'restart' }
    const small = (max: number): fc.Arbitrary<number> => fc.integer({ min: 0, max })
    // Few names, so that most writes find what they name (every kind is counted below).
    const op: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('corpus' as const), c: small(1), op: fc.constantFrom('create' as const, 'rename' as const, 'delete' as const) }), weight: 1 },
      { arbitrary: fc.record({ kind: fc.constant('document' as const), c: small(1), d: small(1), op: fc.constantFrom('create' as const, 'update' as const, 'delete' as const) }), weight: 2 },
      { arbitrary: fc.record({ kind: fc.constant('chunk' as const), c: small(1), d: small(1), k: small(1), op: fc.constantFrom('create' as const, 'update' as const, 'delete' as const), word: fc.constantFrom('desert', 'storm', 'rose') }), weight: 5 },
      { arbitrary: fc.constant({ kind: 'checkpoint' as const }), weight: 2 },
      { arbitrary: fc.constant({ kind: 'restart' as const }), weight: 1 },
    )
    const numRuns = runs(20)
    const done = new Map<string, number>()
    const count = (what: string): void => void done.set(what, (done.get(what) ?? 0) + 1)
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 15, maxLength: 30 }), async (ops) => {
        const dir = scratch()
        let engines = fresh()
        let data = new DataDir(dir, engines)
        // The corpora whose documents changed since the last checkpoint; each corpus's file then (by corpus name: its place may move), and all it held.
        const touched = new Set<string>()
        let files = new Map<string, number>()
        let checkpointed: unknown = []
        const corpusName = (c: number): string => `corpora/c${c}`
        const documentName = (c: number, d: number): string => `${corpusName(c)}/documents/d${d}`
        try {
          const start: Op[] = [0, 1].flatMap((c) => [{ kind: 'corpus', c, op: 'create' } as Op, { kind: 'document', c, d: 0, op: 'create' } as Op, { kind: 'chunk', c, d: 0, k: 0, op: 'create', word: 'desert' } as Op])
          for (const o of [...start, { kind: 'checkpoint' } as Op, ...ops, { kind: 'checkpoint' } as Op, { kind: 'restart' } as Op]) {
            const sr = engines.semanticRetriever
            if (o.kind === 'checkpoint') {
              await data.save()
              const now = current(dir)
              const names = (await everyPage<{ name: string }>((pageToken) => sr.listCorpora({ pageSize: 20, pageToken }), 'corpora')).map((c) => c.name)
              const next = new Map<string, number>()
              for (const [i, name] of names.entries()) {
                const ino = now.get(file(i))?.ino as number
                expect(ino).toBeDefined()
                const before = files.get(name)
                if (before !== undefined && !touched.has(name)) expect(ino).toBe(before)
                else expect(ino).not.toBe(before)
                next.set(name, ino)
              }
              files = next
              touched.clear()
              checkpointed = await retrieverContents(sr)
            } else if (o.kind === 'restart') {
              data.close()
              engines = fresh()
              data = new DataDir(dir, engines)
              data.load()
              // Exactly what the last checkpoint held (the writes since are gone: no log here).
              expect(await retrieverContents(engines.semanticRetriever)).toEqual(checkpointed)
              touched.clear()
            } else if (o.kind === 'corpus') {
              const name = corpusName(o.c)
              if (o.op === 'create' && (await sr.createCorpus({ corpus: { name } })).ok) touched.add(name)
              if (o.op === 'rename') await sr.updateCorpus({ corpus: { name, displayName: `renamed ${o.c}` }, updateMask: 'displayName' })
              if (o.op === 'delete' && (await sr.deleteCorpus({ name, force: true })).ok) touched.delete(name)
            } else if (o.kind === 'document') {
              const name = documentName(o.c, o.d)
              const result =
                o.op === 'create'
                  ? await sr.createDocument({ parent: corpusName(o.c), document: { name, customMetadata: [{ key: 'd', numericValue: o.d }] } })
                  : o.op === 'update'
                    ? await sr.updateDocument({ document: { name, displayName: `doc ${o.d}`, customMetadata: [{ key: 'd', numericValue: o.d + 10 }] }, updateMask: 'displayName,customMetadata' })
                    : await sr.deleteDocument({ name, force: true })
              if (result.ok) {
                touched.add(corpusName(o.c))
                count(`document ${o.op}`)
              }
            } else {
              const name = `${documentName(o.c, o.d)}/chunks/k${o.k}`
              const text = `${o.word} and the ${o.word} again`
              const result =
                o.op === 'create'
                  ? await sr.createChunk({ parent: documentName(o.c, o.d), chunk: { name, data: { stringValue: text } } })
                  : o.op === 'update'
                    ? await sr.updateChunk({ chunk: { name, data: { stringValue: text } }, updateMask: 'data' })
                    : await sr.deleteChunk({ name })
              if (result.ok) {
                touched.add(corpusName(o.c))
                count(`chunk ${o.op}`)
              }
            }
          }
        } finally {
          data.close()
        }
      }),
      { numRuns },
    )
    // Every kind of write to documents and chunks succeeded in some run (the ones a missing
    // `changed()` would make stale); the quick tier's few runs may miss one.
    if (numRuns >= 20) for (const what of ['document create', 'document update', 'document delete', 'chunk create', 'chunk update', 'chunk delete']) expect(done.get(what) ?? 0, what).toBeGreaterThan(0)
  })

  it('reads a folder version 1 wrote (every corpus\'s documents inside state.json) as the same state, and writes version 2 from it', async () => {
    // test/support/retriever-v1/: the scenario saved by the commit before version 2 (its own writer).
    const old = scratch()
    cpSync(fileURLToPath(new URL('../support/retriever-v1', import.meta.url)), old, { recursive: true })
    expect((JSON.parse(readFileSync(join(old, 'snapshot-000001', 'state.json'), 'utf8')) as { version: number }).version).toBe(1)
    const read = new SemanticRetriever({ embedder })
    read.loadFrom(old)
    const today = new SemanticRetriever({ embedder, clock: tickingClock() })
    await runRetrieverScenario(today)
    const expected = await retrieverContents(today)
    expect(JSON.stringify(expected)).toContain('a calm sea at dawn')
    // Everything but the times first, then the times: a change to how often the engine reads its
    // clock moves them all (then run the scenario on cf058ce again to remake the fixture).
    const timeless = (contents: unknown): unknown => JSON.parse(JSON.stringify(contents, (key, value: unknown) => (key === 'createTime' || key === 'updateTime' ? undefined : value)))
    const loaded = await retrieverContents(read)
    expect(timeless(loaded)).toEqual(timeless(expected))
    expect(loaded, 'createTime / updateTime differ: see above').toEqual(expected)
    // Custom metadata loaded is the engine's own, as when it was stored: a caller cannot change the state through a response.
    const document = await read.getDocument({ name: 'corpora/alpha/documents/d1' })
    const chunk = await read.getChunk({ name: 'corpora/alpha/documents/d1/chunks/k0' })
    if (!document.ok || !chunk.ok) throw new Error('getDocument / getChunk')
    ;(document.response.customMetadata?.[0] as { numericValue: number }).numericValue = 1999
    ;(document.response.customMetadata?.[1] as unknown as { stringListValue: { values: string[] } }).stringListValue.values.push('x')
    ;(chunk.response.customMetadata as unknown[]).pop()
    expect(await retrieverContents(read)).toEqual(expected)
    // Saved again: version 2, read back the same.
    const again = scratch()
    read.saveTo(again)
    expect((JSON.parse(readFileSync(join(again, 'snapshot-000001', 'state.json'), 'utf8')) as { version: number }).version).toBe(2)
    const reread = new SemanticRetriever({ embedder })
    reread.loadFrom(again)
    expect(await retrieverContents(reread)).toEqual(expected)
  })
})
