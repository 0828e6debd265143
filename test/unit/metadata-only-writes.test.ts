import { afterEach, describe, expect, it, vi, type MockInstance } from 'vitest'
import { QuarryIndex, createHashingEmbedder, type Metadata } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { recording, replaying, type Trace } from '../../packages/adapters/src/rpc/replay.js'
import { engineState } from '../support/engine-state.js'
import { HnswGraph } from '../../packages/core/src/dense/hnsw.js'
import { VectorStore } from '../../packages/core/src/dense/vector-store.js'
import { PostingList } from '../../packages/core/src/sparse/postings.js'
import { SparseIndex } from '../../packages/core/src/sparse/sparse-index.js'

/**
 * A change of metadata alone (a Semantic Retriever document's customMetadata, a RAG file's
 * RagMetadata) gives its chunks the new metadata and touches nothing else: no vector written, no
 * point re-linked in the graph, no text analyzed again. The oracle is the behaviour it replaces, an
 * upsert of each chunk with its own vector and text: a twin engine whose `replaceMetadata` does
 * that answers every query, filtered or not, exactly the same. Removing a file's chunks compacts
 * each posting list once, instead of a scan per chunk. Each write, recorded as the server's log
 * records it, replays onto a copy of the engine before it to the same saved state, graph included.
 */

afterEach(() => {
  vi.restoreAllMocks()
})

const embedder = createHashingEmbedder({ dimensions: 32 })
const L = 'projects/p/locations/l'

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.status.message}`)
  return outcome.response
}

/** Makes every `replaceMetadata` of this process do what the adapters did before: an upsert with the record's vector and text. */
function upsertAsBefore(): void {
  vi.spyOn(QuarryIndex.prototype, 'replaceMetadata').mockImplementation(function (this: QuarryIndex, id: string, metadata: Metadata) {
    const stored = this.get(id)
    if (!stored?.vector) throw new Error(`no vector for ${id}`)
    this.upsert({ id, vector: stored.vector, ...(stored.text === undefined ? {} : { text: stored.text }), metadata })
  })
}

/** Spies on every write of a vector, a graph point or a text. */
function vectorGraphTextWrites(): MockInstance[] {
  return [
    vi.spyOn(HnswGraph.prototype, 'set'),
    vi.spyOn(VectorStore.prototype, 'set'),
    vi.spyOn(SparseIndex.prototype, 'set'),
    vi.spyOn(SparseIndex.prototype, 'setPrepared'),
    vi.spyOn(SparseIndex.prototype, 'delete'),
    vi.spyOn(QuarryIndex.prototype, 'upsert'),
  ]
}

const WORDS = ['desert', 'spice', 'worm', 'sand', 'dune', 'wind', 'water', 'storm']

describe('Semantic Retriever: updateDocument with customMetadata alone', () => {
  async function retriever(): Promise<{ sr: SemanticRetriever; corpus: string; documents: string[] }> {
    const sr = new SemanticRetriever({ embedder, randomId: seededRandomId(3), clock: steppingClock('2026-01-01T00:00:00Z') })
    const corpus = ok(await sr.createCorpus({ corpus: { name: 'corpora/c' } })).name
    const documents: string[] = []
    for (const d of ['a', 'b']) {
      const document = ok(await sr.createDocument({ parent: corpus, document: { name: `${corpus}/documents/${d}`, customMetadata: [{ key: 'genre', stringValue: 'news' }] } })).name
      const requests = Array.from({ length: 60 }, (_, i) => ({ parent: document, chunk: { data: { stringValue: `${WORDS[i % 8]} ${WORDS[(i * 3) % 8]} note ${d} ${i}` }, customMetadata: [{ key: 'n', numericValue: i }] } }))
      ok(await sr.batchCreateChunks({ parent: document, requests: requests.slice(0, 30) }))
      ok(await sr.batchCreateChunks({ parent: document, requests: requests.slice(30) }))
      documents.push(document)
    }
    return { sr, corpus, documents }
  }

  async function answers(sr: SemanticRetriever, corpus: string, document: string): Promise<unknown[]> {
    const genre = (value: string): unknown => ({ key: 'document.custom_metadata.genre', conditions: [{ operation: 'EQUAL', stringValue: value }] })
    const year = { key: 'document.custom_metadata.year', conditions: [{ operation: 'GREATER', numericValue: 2000 }] }
    const n = { key: 'chunk.custom_metadata.n', conditions: [{ operation: 'LESS', numericValue: 20 }] }
    return [
      ok(await sr.queryCorpus({ name: corpus, query: 'desert spice storm', resultsCount: 100 })),
      ok(await sr.queryCorpus({ name: corpus, query: 'desert spice storm', resultsCount: 100, metadataFilters: [genre('drama')] })),
      ok(await sr.queryCorpus({ name: corpus, query: 'sand worm', resultsCount: 100, metadataFilters: [genre('news')] })),
      ok(await sr.queryCorpus({ name: corpus, query: 'sand worm', resultsCount: 100, metadataFilters: [year, n] })),
      ok(await sr.queryDocument({ name: document, query: 'wind water', resultsCount: 100, metadataFilters: [n] })),
      ok(await sr.getDocument({ name: document })),
    ]
  }

  it('answers as an upsert of every chunk did, without writing a vector or a graph point', async () => {
    const mask = 'customMetadata'
    const customMetadata = [{ key: 'genre', stringValue: 'drama' }, { key: 'year', numericValue: 2024 }]
    const before = await retriever()
    const writes = vectorGraphTextWrites()
    ok(await before.sr.updateDocument({ document: { name: before.documents[0], customMetadata }, updateMask: mask }))
    for (const spy of writes) expect(spy).not.toHaveBeenCalled()
    const changed = await answers(before.sr, before.corpus, before.documents[0] as string)
    vi.restoreAllMocks()

    upsertAsBefore()
    const oracle = await retriever()
    ok(await oracle.sr.updateDocument({ document: { name: oracle.documents[0], customMetadata }, updateMask: mask }))
    expect(QuarryIndex.prototype.replaceMetadata).toHaveBeenCalledTimes(60)
    expect(changed).toEqual(await answers(oracle.sr, oracle.corpus, oracle.documents[0] as string))
    // The filters see the new metadata: drama is document a's 60 chunks, news document b's.
    const [, drama, news] = changed as { relevantChunks?: { chunk: { name: string } }[] }[]
    expect(drama?.relevantChunks?.map((c) => c.chunk.name.split('/')[3])).toEqual(Array(60).fill('a'))
    expect(news?.relevantChunks?.map((c) => c.chunk.name.split('/')[3])).toEqual(Array(60).fill('b'))
  })

  it('replays from the log to the same state', async () => {
    const customMetadata = [{ key: 'genre', stringValue: 'drama' }]
    const update = (sr: SemanticRetriever, document: string): Promise<Outcome<unknown>> => sr.updateDocument({ document: { name: document, customMetadata }, updateMask: 'customMetadata' })
    const live = await retriever()
    const { result, trace } = await recording(() => update(live.sr, live.documents[0] as string))
    const replica = await retriever()
    expect(await replaying(trace as Trace, () => update(replica.sr, replica.documents[0] as string))).toEqual(result)
    const stateOf = (sr: SemanticRetriever): unknown => engineState({ semanticRetriever: sr, vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) })
    expect(stateOf(replica.sr)).toEqual(stateOf(live.sr))
  })
})

describe('RAG Engine: RagMetadata writes and file deletion', () => {
  async function rag(): Promise<{ engine: VertexRagEngine; corpus: string; files: string[] }> {
    const engine = new VertexRagEngine({ embedder, randomId: seededRandomId(7), clock: steppingClock('2026-01-01T00:00:00Z') })
    const s = engine.v1beta1
    const corpus = String(ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response?.name)
    ok(await s.createRagDataSchema({ parent: corpus, ragDataSchema: { key: 'year', schemaDetails: { type: 'INTEGER' } } }))
    const config = { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 6, chunkOverlap: 2 } } } }
    const files: string[] = []
    for (let f = 0; f < 3; f++) {
      const text = Array.from({ length: 200 }, (_, i) => `${WORDS[(i * (f + 1)) % 8]} w${i % 17}`).join(' ')
      const up = ok(await s.uploadRagFile({ parent: corpus, ragFile: { displayName: `f${f}.txt` }, uploadRagFileConfig: config }, text))
      files.push(up.ragFile?.name as string)
    }
    return { engine, corpus, files }
  }

  async function answers(engine: VertexRagEngine, corpus: string): Promise<unknown[]> {
    const store = { ragResources: [{ ragCorpus: corpus }] }
    const out: unknown[] = []
    for (const metadataFilter of [undefined, 'year >= 2020', 'year < 2020', 'NOT year = 2024']) {
      for (const alpha of [0, 0.5, 1]) {
        const filter = metadataFilter === undefined ? {} : { filter: { metadataFilter } }
        out.push(ok(await engine.v1beta1.retrieveContexts({ parent: L, vertexRagStore: store, query: { text: 'desert storm w3', ragRetrievalConfig: { topK: 40, hybridSearch: { alpha }, ...filter } } })))
      }
    }
    return out
  }

  async function changeMetadata(engine: VertexRagEngine, files: readonly string[]): Promise<void> {
    const s = engine.v1beta1
    const made = ok(await s.createRagMetadata({ parent: files[0] as string, ragMetadata: { userSpecifiedMetadata: { key: 'year', value: { intValue: 2024 } } } }))
    ok(await s.createRagMetadata({ parent: files[1] as string, ragMetadata: { userSpecifiedMetadata: { key: 'year', value: { intValue: 1999 } } } }))
    ok(await s.updateRagMetadata({ ragMetadata: { name: made.name, userSpecifiedMetadata: { key: 'year', value: { intValue: 2021 } } } }))
  }

  it('a metadata change answers as an upsert of every chunk did, without writing a vector, a graph point or a text', async () => {
    const before = await rag()
    const writes = vectorGraphTextWrites()
    await changeMetadata(before.engine, before.files)
    for (const spy of writes) expect(spy).not.toHaveBeenCalled()
    const changed = await answers(before.engine, before.corpus)
    vi.restoreAllMocks()

    upsertAsBefore()
    const oracle = await rag()
    await changeMetadata(oracle.engine, oracle.files)
    expect(QuarryIndex.prototype.replaceMetadata).toHaveBeenCalled()
    expect(changed).toEqual(await answers(oracle.engine, oracle.corpus))
    // The filters see the new values: 'year >= 2020' finds file 0's chunks alone.
    const recent = changed[3] as { contexts: { contexts?: { sourceDisplayName: string }[] } }
    expect(new Set(recent.contexts.contexts?.map((c) => c.sourceDisplayName))).toEqual(new Set(['f0.txt']))
  })

  it('deleting a file drops its chunks with one pass per posting list, and answers as before', async () => {
    const { engine, corpus, files } = await rag()
    const one = vi.spyOn(PostingList.prototype, 'remove')
    const all = vi.spyOn(PostingList.prototype, 'removeAll')
    ok(await engine.v1beta1.deleteRagFile({ name: files[1] as string }))
    expect(one).not.toHaveBeenCalled()
    // One call per distinct term of the file (its 4 words and w0 to w16), each list compacted once.
    expect(all).toHaveBeenCalledTimes(4 + 17)
    vi.restoreAllMocks()
    const twin = await rag()
    // The oracle: remove() chunk by chunk.
    vi.spyOn(QuarryIndex.prototype, 'removeMany').mockImplementation(function (this: QuarryIndex, ids: readonly string[]) {
      return ids.filter((id) => this.remove(id)).length
    })
    ok(await twin.engine.v1beta1.deleteRagFile({ name: twin.files[1] as string }))
    expect(await answers(engine, corpus)).toEqual(await answers(twin.engine, twin.corpus))
  })

  it('metadata writes and a deletion replay from the log to the same state', async () => {
    const writes = async (engine: VertexRagEngine, files: readonly string[]): Promise<void> => {
      await changeMetadata(engine, files)
      ok(await engine.v1beta1.deleteRagFile({ name: files[2] as string }))
    }
    const live = await rag()
    const { trace } = await recording(() => writes(live.engine, live.files))
    const replica = await rag()
    await replaying(trace as Trace, () => writes(replica.engine, replica.files))
    const stateOf = (engine: VertexRagEngine): unknown => engineState({ semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: engine, memoryBank: new MemoryBank({ embedder }) })
    expect(stateOf(replica.engine)).toEqual(stateOf(live.engine))
  })
})
