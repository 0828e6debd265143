import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { QuarryError, createHashingEmbedder } from '@quarry/core'
import { VertexRagEngine, seededRandomId, steppingClock } from '@quarry/adapters'
import { scratchDir } from '../support/engine-state.js'

/**
 * RAG Engine's saved state, version 2 (chunks without their text: it is read from the corpus
 * index) against version 1 (every chunk's text in state.json). The fixture is a version 1 save
 * written by the code before version 2 (fixtures/vertex-rag-state-v1/make-v1.mts.txt, run on that
 * tree): a KNN and an ANN corpus, two uploads and an imported PDF each (page spans), with the
 * answers that code gave (listRagFiles, retrieveContexts). Loaded today, and loaded again after a
 * version 2 save, the engine gives the same answers: file names, chunk ids and texts, pages, order
 * and scores.
 */
const FIXTURE = join(import.meta.dirname, 'fixtures', 'vertex-rag-state-v1')
const L = 'projects/p/locations/l'
const QUERIES = ['desert wind spice', 'harbor storm ocean', 'Arrakis']
const root = scratchDir('quarry-rag-v1-')
afterAll(() => rmSync(root, { recursive: true, force: true }))

type Answers = Record<string, { corpus: string; files: unknown; answers: unknown[] }>
const expected = JSON.parse(readFileSync(join(FIXTURE, 'answers.json'), 'utf8')) as Answers

const engine = (): VertexRagEngine =>
  new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 32 }), clock: steppingClock('2026-02-01T00:00:00Z'), randomId: seededRandomId(11) })

async function answers(rag: VertexRagEngine): Promise<Answers> {
  const s = rag.v1beta1
  const out: Answers = {}
  for (const [name, { corpus }] of Object.entries(expected)) {
    out[name] = {
      corpus,
      files: await s.listRagFiles({ parent: corpus }),
      answers: await Promise.all(QUERIES.map((text) => s.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text, ragRetrievalConfig: { topK: 6 } } }))),
    }
  }
  return out
}

let n = 0
function copyOfFixture(): string {
  const dir = join(root, `v1-${n++}`)
  cpSync(join(FIXTURE, 'save'), dir, { recursive: true })
  return dir
}

describe('RAG Engine state: version 2 and the version 1 reader', () => {
  it('the fixture holds what the test expects (chunk texts in a version 1 state.json, pages)', () => {
    const state = readFileSync(join(FIXTURE, 'save', 'snapshot-000001', 'state.json'), 'utf8')
    expect(JSON.parse(state)).toMatchObject({ format: 'quarry-vertex-rag', version: 1 })
    expect(state).toContain('"text":"The desert wind erases tracks')
    expect(state).toContain('"pageSpan":{"firstPage":1,"lastPage":2}')
    expect(JSON.stringify(expected)).toContain('"pageSpan"')
  })

  it('a version 1 save loads and answers as the code that wrote it did', async () => {
    const rag = engine()
    rag.loadFrom(copyOfFixture())
    expect(await answers(rag)).toEqual(expected)
  })

  it('saved again it is version 2 without chunk texts, and loads to the same answers', async () => {
    const rag = engine()
    rag.loadFrom(copyOfFixture())
    const dir = join(root, `v2-${n++}`)
    mkdirSync(dir)
    rag.saveTo(dir)
    const state = readFileSync(join(dir, 'snapshot-000001', 'state.json'), 'utf8')
    expect(JSON.parse(state)).toMatchObject({ format: 'quarry-vertex-rag', version: 2 })
    expect(state).not.toContain('The desert wind erases tracks')
    expect(state).not.toContain('"text"')
    const again = engine()
    again.loadFrom(dir)
    expect(await answers(again)).toEqual(expected)
  })

  it('a loaded file can be deleted: its chunks leave the index, the other contexts keep their order and scores', async () => {
    const rag = engine()
    rag.loadFrom(copyOfFixture())
    const { corpus } = expected['knn'] as Answers[string]
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

  it('a chunk list of another shape, or a version it does not know, is INVALID_SNAPSHOT saying what to do', () => {
    const rag = engine()
    rag.loadFrom(copyOfFixture())
    const dir = join(root, `v2-${n++}`)
    mkdirSync(dir)
    rag.saveTo(dir)
    const folder = join(dir, 'snapshot-000001')
    const path = join(folder, 'state.json')
    const state = JSON.parse(readFileSync(path, 'utf8')) as { version: number; corpora: { files: { chunks: unknown }[] }[] }
    const file = state.corpora[0]?.files[0] as { chunks: unknown }
    const count = file.chunks
    expect(typeof count).toBe('number')
    file.chunks = 'many'
    writeFileSync(path, JSON.stringify(state))
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
    expect(refused()).toBeInstanceOf(QuarryError)
    expect(refused()).toMatchObject({ code: 'INVALID_SNAPSHOT', message: expect.stringContaining('Restore the folder from a backup') as unknown })
    file.chunks = -1
    writeFileSync(path, JSON.stringify(state))
    expect(refused()).toMatchObject({ code: 'INVALID_SNAPSHOT' })
    file.chunks = count
    state.version = 3
    writeFileSync(path, JSON.stringify(state))
    expect(refused()).toMatchObject({ code: 'INVALID_SNAPSHOT', message: expect.stringContaining('version 3 is not supported by this Quarry (reads version 1, 2)') as unknown })
    state.version = 2
    writeFileSync(path, JSON.stringify(state))
    expect(refused()).toBeUndefined()
    expect(fresh.corpora().size).toBe(2)
  })
})
