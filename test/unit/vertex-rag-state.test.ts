import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { QuarryError, createHashingEmbedder } from '@quarry/core'
import { VertexRagEngine, seededRandomId, steppingClock } from '@quarry/adapters'
import { scratchDir } from '../support/engine-state.js'

/**
 * RAG Engine's saved state (version 2: chunks without their text, which is read from the corpus
 * index). A KNN and an ANN corpus, two uploads and an imported PDF each (page spans), answered
 * before a save (listRagFiles, retrieveContexts) are the oracle: loaded again, the engine gives the
 * same file names, chunk ids and texts, pages, order and scores.
 */
const L = 'projects/p/locations/l'
const QUERIES = ['desert wind spice', 'harbor storm ocean', 'Arrakis']
const root = scratchDir('quarry-rag-state-')
afterAll(() => rmSync(root, { recursive: true, force: true }))

type Answers = Record<string, { corpus: string; files: unknown; answers: unknown[] }>

const engine = (): VertexRagEngine =>
  new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 32 }), clock: steppingClock('2026-02-01T00:00:00Z'), randomId: seededRandomId(11), gcsRoot: 'test/contract/fixtures/gcs' })

async function answers(rag: VertexRagEngine, corpora: Readonly<Record<string, string>>): Promise<Answers> {
  const s = rag.v1beta1
  const out: Answers = {}
  for (const [name, corpus] of Object.entries(corpora)) {
    out[name] = {
      corpus,
      files: await s.listRagFiles({ parent: corpus }),
      answers: await Promise.all(QUERIES.map((text) => s.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text, ragRetrievalConfig: { topK: 6 } } }))),
    }
  }
  return out
}

let built: VertexRagEngine
const corpora: Record<string, string> = {}
let expected: Answers
let saved: string

beforeAll(async () => {
  built = engine()
  const s = built.v1beta1
  for (const [name, db] of [['knn', { ragManagedDb: { knn: {} } }], ['ann', { ragManagedDb: { ann: { treeDepth: 2, leafCount: 10 } } }]] as const) {
    const created = await s.createRagCorpus({ parent: L, ragCorpus: { displayName: name, vectorDbConfig: db } })
    if (!created.ok) throw new Error(created.status.message)
    const corpus = created.response.response?.name as string
    corpora[name] = corpus
    const chunking = { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 8, chunkOverlap: 2 } } } }
    const texts = ['The desert wind erases tracks in the spice sand; the harbor sleeps. '.repeat(3), 'A storm over the ocean, ships in the harbor, wind and rain and the lighthouse keeper. '.repeat(2)]
    for (const [i, text] of texts.entries()) {
      const up = await s.uploadRagFile({ parent: corpus, ragFile: { displayName: `f${i}.txt` }, uploadRagFileConfig: chunking }, text)
      if (!up.ok) throw new Error(up.status.message)
    }
    const imported = await s.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://library/dune-pages.pdf'] }, ...chunking } })
    if (!imported.ok) throw new Error(imported.status.message)
  }
  expected = await answers(built, corpora)
  saved = join(root, 'saved')
  mkdirSync(saved)
  built.saveTo(saved)
})

describe('RAG Engine state (version 2)', () => {
  it('the oracle holds what the test expects: chunk texts and page spans in the answers', () => {
    const text = JSON.stringify(expected)
    expect(text).toContain('The desert wind erases tracks')
    expect(text).toContain('"pageSpan"')
  })

  it('is saved without chunk texts and loads to the same answers', async () => {
    const state = readFileSync(join(saved, 'snapshot-000001', 'state.json'), 'utf8')
    expect(JSON.parse(state)).toMatchObject({ format: 'quarry-vertex-rag', version: 2 })
    expect(state).not.toContain('The desert wind erases tracks')
    expect(state).not.toContain('"text"')
    const again = engine()
    again.loadFrom(saved)
    expect(await answers(again, corpora)).toEqual(expected)
  })

  it('a loaded engine answers, and saves again to the same state, whether or not a file\'s chunk list was made', async () => {
    const original = JSON.parse(readFileSync(join(saved, 'snapshot-000001', 'state.json'), 'utf8')) as unknown
    const rag = engine()
    rag.loadFrom(saved)
    // Queries find their hits' chunks one by one; a save writes the saved counts and pages back.
    expect(await answers(rag, corpora)).toEqual(expected)
    const untouched = join(root, 'untouched')
    mkdirSync(untouched)
    rag.saveTo(untouched)
    expect(JSON.parse(readFileSync(join(untouched, 'snapshot-000001', 'state.json'), 'utf8'))).toEqual(original)
    // Every file's list made (what a write to it does first): the same state, the same answers.
    for (const corpus of rag.corpora().values()) for (const file of corpus.files.values()) expect(file.chunks.length).toBeGreaterThan(0)
    expect(await answers(rag, corpora)).toEqual(expected)
    const made = join(root, 'made')
    mkdirSync(made)
    rag.saveTo(made)
    expect(JSON.parse(readFileSync(join(made, 'snapshot-000001', 'state.json'), 'utf8'))).toEqual(original)
  })

  it('a loaded file can be deleted: its chunks leave the index, the other contexts keep their order and scores', async () => {
    const rag = engine()
    rag.loadFrom(saved)
    const corpus = corpora['knn'] as string
    // Dense only (alpha 1): BM25's statistics, and so hybrid scores, change when a file goes; exact dense scores do not.
    type Context = { sourceDisplayName: string }
    const dense = async (text: string): Promise<readonly Context[]> => {
      const r = await rag.v1beta1.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text, ragRetrievalConfig: { topK: 6, hybridSearch: { alpha: 1 } } } })
      return (r as { response: { contexts: { contexts?: readonly Context[] } } }).response.contexts.contexts ?? []
    }
    const before = await Promise.all(QUERIES.map(dense))
    expect(before.flat().some((c) => c.sourceDisplayName === 'f0.txt')).toBe(true)
    const files = (expected['knn']?.files as { response: { ragFiles: { name: string; displayName: string }[] } }).response.ragFiles
    const f0 = files.find((f) => f.displayName === 'f0.txt') as { name: string }
    const deleted = await rag.v1beta1.deleteRagFile({ name: f0.name })
    expect(deleted.ok).toBe(true)
    const index = rag.corpora().get(corpus)?.index
    expect([...(index?.ids() ?? [])].filter((id) => id.startsWith(`${f0.name.split('/').pop() as string}-`))).toEqual([])
    for (const [q, text] of QUERIES.entries()) {
      const got = await dense(text)
      const kept = (before[q] ?? []).filter((c) => c.sourceDisplayName !== 'f0.txt')
      expect(got.some((c) => c.sourceDisplayName === 'f0.txt')).toBe(false)
      expect(got.slice(0, kept.length)).toEqual(kept)
    }
  })

  it('a chunk list of another shape, or another version (1 was never published), is INVALID_SNAPSHOT saying what to do', () => {
    const dir = join(root, 'edited')
    mkdirSync(dir)
    built.saveTo(dir)
    const folder = join(dir, 'snapshot-000001')
    const path = join(folder, 'state.json')
    const state = JSON.parse(readFileSync(path, 'utf8')) as { version: number; corpora: { files: { chunks: unknown }[] }[] }
    const file = state.corpora[0]?.files[0] as { chunks: unknown }
    const count = file.chunks
    expect(typeof count).toBe('number')
    // loadFolder reads a folder its caller has checked (a data folder's generation): state.json alone is read here.
    const fresh = engine()
    const refused = (): unknown => {
      try {
        fresh.loadFolder(folder)
      } catch (error) {
        return error
      }
      return undefined
    }
    for (const chunks of ['many', -1, [{ id: 'c-0', text: 'The desert wind' }]]) {
      file.chunks = chunks
      writeFileSync(path, JSON.stringify(state))
      expect(refused()).toBeInstanceOf(QuarryError)
      expect(refused()).toMatchObject({ code: 'INVALID_SNAPSHOT', message: expect.stringContaining('Restore the folder from a backup') as unknown })
    }
    file.chunks = count
    for (const version of [1, 3]) {
      state.version = version
      writeFileSync(path, JSON.stringify(state))
      expect(refused()).toMatchObject({ code: 'INVALID_SNAPSHOT', message: expect.stringContaining(`version ${version} is not supported by this Quarry (reads version 2)`) as unknown })
    }
    expect(fresh.corpora().size).toBe(0)
    state.version = 2
    writeFileSync(path, JSON.stringify(state))
    expect(refused()).toBeUndefined()
    expect([...fresh.corpora().keys()].sort()).toEqual(Object.values(corpora).sort())
  })
})
