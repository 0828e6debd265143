import { afterEach, describe, expect, it, vi } from 'vitest'
import { QuarryIndex, createHashingEmbedder, createIndex } from '@quarry/core'
import { VertexRagEngine, seededRandomId } from '@quarry/adapters'

/**
 * retrieveContexts asks core once and takes what the hits carry: no `get` per hit (the vector is
 * not fetched again), the file from the hit's metadata and the chunk by record id.
 */
const L = 'projects/p/locations/l'

afterEach(() => {
  vi.restoreAllMocks()
})

describe('retrieveContexts reads its hits', () => {
  it('without a get per hit, at every alpha, with the same contexts', async () => {
    const engine = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 16 }), randomId: seededRandomId(5) })
    const s = engine.v1beta1
    const created = await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })
    if (!created.ok) throw new Error('create failed')
    const corpus = created.response.response?.name as string
    const chunking = { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 3, chunkOverlap: 1 } } } }
    const texts = ['desert spice worm sand dune wind', 'ocean ship storm wave', 'garden rose spice thorn']
    const ids: string[] = []
    for (const [i, text] of texts.entries()) {
      const up = await s.uploadRagFile({ parent: corpus, ragFile: { displayName: `f${i}.txt` }, uploadRagFileConfig: chunking }, text)
      if (!up.ok || !up.response.ragFile) throw new Error('upload failed')
      ids.push(up.response.ragFile.name.split('/').pop() as string)
    }
    const get = vi.spyOn(QuarryIndex.prototype, 'get')
    for (const alpha of [0, 0.5, 1]) {
      const got = await s.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'spice storm', ragRetrievalConfig: { topK: 20, hybridSearch: { alpha } } } })
      if (!got.ok) throw new Error(got.status.message)
      const contexts = got.response.contexts.contexts ?? []
      expect(contexts.length).toBeGreaterThan(0)
      for (const c of contexts) {
        const file = ids.indexOf(c.chunk.fileId as string)
        expect(file).toBeGreaterThanOrEqual(0)
        expect(c.sourceDisplayName).toBe(`f${file}.txt`)
        expect(c.chunk.chunkId?.startsWith(`${c.chunk.fileId}-`)).toBe(true)
        expect(texts[file]).toContain(c.text)
      }
    }
    expect(get).not.toHaveBeenCalled()
  })
})

describe('QuarryIndex.text', () => {
  it('is the stored text get gives, without the vector', () => {
    const index = createIndex({ dimensions: 2, text: { fields: { title: { boost: 2 }, body: {} } } })
    index.add({ id: 'a', vector: [1, 0], text: 'plain words' })
    index.add({ id: 'b', vector: [0, 1], text: { title: 'T', body: 'B' } })
    index.add({ id: 'c', vector: [1, 1] })
    for (const id of ['a', 'b', 'c', 'missing']) expect(index.text(id)).toEqual(index.get(id)?.text)
    expect(index.text('b')).toEqual({ title: 'T', body: 'B' })
    expect(() => index.text('')).toThrowError(expect.objectContaining({ code: 'INVALID_ID' }) as Error)
  })
})
