import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder, type Embedder } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine } from '@quarry/adapters'
import { scratchFolders } from '../support/scratch.js'
import { failed } from '../support/rpc-failure.js'

/** Edge cases found in review: out-of-range times, list members, failing loads, failing embedders, unknown engines. */
const tmp = scratchFolders('quarry-edge')
const embedder = createHashingEmbedder({ dimensions: 16 })
const E = 'projects/p/locations/l/reasoningEngines/1'

describe('adapter edge cases', () => {
  it('refuses times outside 0001–9999 as INVALID_ARGUMENT, writing nothing', async () => {
    const bank = new MemoryBank({ embedder })
    expect(failed(await bank.createMemory({ parent: E, memory: { fact: 'x', scope: { u: '1' }, ttl: '9999999999999s' } }))).toMatchObject({ code: 3, field: 'memory.ttl' })
    expect(failed(await bank.createMemory({ parent: E, memory: { fact: 'x', scope: { u: '1' }, expireTime: { seconds: 1e15 } } }))).toMatchObject({ code: 3, field: 'memory.expireTime' })
    const sr = new SemanticRetriever({ embedder })
    expect(failed(await sr.createCorpus({ corpus: { name: 'corpora/c', createTime: { seconds: 1e15 } } }))).toMatchObject({ code: 3, field: 'corpus.createTime' })
    const listed = await bank.listMemories({ parent: E })
    expect(listed).toEqual({ ok: true, response: {} })
  })

  it('refuses an expireTime or a RAG datetimeValue naming a day or hour that does not exist, writing nothing', async () => {
    const bank = new MemoryBank({ embedder })
    // Date.parse read these as 2030-03-02 and 2030-01-02: stored as another instant than the one sent.
    for (const expireTime of ['2030-02-30T00:00:00Z', '2030-01-01T24:00:00Z']) {
      expect(failed(await bank.createMemory({ parent: E, memory: { fact: 'x', scope: { u: '1' }, expireTime } }))).toMatchObject({ code: 3, field: 'memory.expireTime' })
    }
    expect(await bank.listMemories({ parent: E })).toEqual({ ok: true, response: {} })
    const rag = new VertexRagEngine({ embedder })
    const created = await rag.v1beta1.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'c' } })
    if (!created.ok) throw new Error('create')
    const up = await rag.v1beta1.uploadRagFile({ parent: created.response.response?.name as string, ragFile: { displayName: 'a.txt' } }, 'some text')
    if (!up.ok || !up.response.ragFile) throw new Error('upload')
    const file = up.response.ragFile.name
    expect(failed(await rag.v1beta1.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key: 'd', value: { datetimeValue: '2030-02-30T00:00:00Z' } } } }))).toMatchObject({ code: 3, field: 'ragMetadata.userSpecifiedMetadata.value.datetimeValue' })
    expect(await rag.v1beta1.listRagMetadata({ parent: file })).toEqual({ ok: true, response: {} })
  })

  it('reads of an unknown reasoning engine answer empty and create nothing', async () => {
    const bank = new MemoryBank({ embedder })
    for (let i = 0; i < 50; i++) {
      expect(await bank.listMemories({ parent: `${E}${i}` })).toEqual({ ok: true, response: {} })
      expect(await bank.retrieveMemories({ parent: `${E}${i}`, scope: { u: '1' } })).toEqual({ ok: true, response: {} })
      expect(failed(await bank.getMemory({ name: `${E}${i}/memories/m` })).code).toBe(5)
    }
    const dir = tmp()
    bank.saveTo(dir)
    expect((JSON.parse(readFileSync(join(dir, 'snapshot-000001', 'state.json'), 'utf8')) as { engines: unknown[] }).engines).toEqual([])
    expect(failed(await bank.retrieveMemories({ parent: E, scope: { u: '1' }, similaritySearchParams: { searchQuery: 'x', topK: -1 } })).code).toBe(3)
  })

  it('reads every RAG list member as a scalar MetadataValue (snake_case too) and refuses bad ones', async () => {
    const rag = new VertexRagEngine({ embedder })
    const s = rag.v1beta1
    const created = await s.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'c' } })
    if (!created.ok) throw new Error('create')
    const corpus = created.response.response?.name as string
    const up = await s.uploadRagFile({ parent: corpus, ragFile: { displayName: 'a.txt' } }, 'some text')
    if (!up.ok || !up.response.ragFile) throw new Error('upload')
    const file = up.response.ragFile.name
    const ok = await s.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key: 'tags', value: { listValue: { values: [{ str_value: 'a' }, { intValue: '5' }] } } } } })
    expect(ok.ok && ok.response.userSpecifiedMetadata.value).toEqual({ listValue: { values: [{ strValue: 'a' }, { intValue: '5' }] } })
    expect(failed(await s.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key: 'k', value: { listValue: { values: [{ intValue: 'abc' }] } } } } }))).toMatchObject({ code: 3, field: 'ragMetadata.userSpecifiedMetadata.value.listValue.values[0].intValue' })
    expect(failed(await s.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key: 'k', value: { listValue: { values: [{ intValue: 1, strValue: 'a' }] } } } } })).code).toBe(3)
    expect(failed(await s.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key: 'k', value: { listValue: { values: [{ listValue: {} }] } } } } })).code).toBe(3)
  })

  it('imports the other files when the embedder fails on one, reporting it', async () => {
    // The embedder refuses b.txt's text: in a batch with the others too (the import batches across files).
    const flaky: Embedder = { name: embedder.name, dimensions: embedder.dimensions, embed: async (texts) => (texts.some((t) => t.includes('b.txt')) ? Promise.reject(new Error('model down')) : embedder.embed(texts)) }
    const root = tmp()
    mkdirSync(join(root, 'b'))
    for (const f of ['a.txt', 'b.txt', 'c.txt']) writeFileSync(join(root, 'b', f), `text of ${f}`)
    const rag = new VertexRagEngine({ embedder: flaky, gcsRoot: root, onInternalError: () => undefined })
    const created = await rag.v1beta1.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'c' } })
    if (!created.ok) throw new Error('create')
    const corpus = created.response.response?.name as string
    const op = await rag.v1beta1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://b'] } } })
    if (!op.ok) throw new Error(op.status.message)
    expect(op.response.response).toMatchObject({ importedRagFilesCount: '2', failedRagFilesCount: '1' })
    expect(JSON.stringify(op.response.metadata)).toContain('gs://b/b.txt: The embedder')
    const files = await rag.v1beta1.listRagFiles({ parent: corpus })
    expect(files.ok && files.response.ragFiles?.map((f) => f.displayName)).toEqual(['a.txt', 'c.txt'])
  })

  it('keeps the current state when a load fails', async () => {
    const dir = tmp()
    const saved = new SemanticRetriever({ embedder })
    await saved.createCorpus({ corpus: { name: 'corpora/saved' } })
    saved.saveTo(dir)
    const other = new SemanticRetriever({ embedder: createHashingEmbedder({ dimensions: 8 }) })
    await other.createCorpus({ corpus: { name: 'corpora/keep' } })
    expect(() => other.loadFrom(dir)).toThrow(/embedder/i)
    const list = await other.listCorpora({})
    expect(list.ok && list.response.corpora?.map((c) => c.name)).toEqual(['corpora/keep'])
  })

  it('accepts a RagCorpus echoed back on update (any key order) and refuses a changed vector DB', async () => {
    const rag = new VertexRagEngine({ embedder })
    const created = await rag.v1beta1.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'c', vectorDbConfig: { ragManagedDb: { ann: { leafCount: 5, treeDepth: 2 } } } } })
    if (!created.ok) throw new Error('create')
    const corpus = { name: created.response.response?.name as string }
    const echoed = await rag.v1beta1.updateRagCorpus({ ragCorpus: { name: corpus.name, displayName: 'renamed', vectorDbConfig: { ragManagedDb: { ann: { treeDepth: 2, leafCount: 5 } } } } })
    expect(echoed.ok && echoed.response.response?.displayName).toBe('renamed')
    expect(failed(await rag.v1beta1.updateRagCorpus({ ragCorpus: { name: corpus.name, vectorDbConfig: { ragManagedDb: { knn: {} } } } }))).toMatchObject({ code: 9, field: 'ragCorpus.vectorDbConfig' })
  })

  it('compares a number literal as text on a scope key (scope values are strings)', async () => {
    const bank = new MemoryBank({ embedder })
    await bank.createMemory({ parent: E, memory: { fact: 'x', scope: { user_id: '123' } } })
    const listed = await bank.listMemories({ parent: E, filter: 'scope.user_id = 123' })
    expect(listed.ok && listed.response.memories?.map((m) => m.scope)).toEqual([{ user_id: '123' }])
  })
})
