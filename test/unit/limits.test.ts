import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { QuarryError, createHashingEmbedder, createIndex, type Filter } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine, type Outcome } from '@quarry/adapters'
import { DEFAULT_LIMITS, characterCount } from '../../packages/adapters/src/rpc/limits.js'
import { mapOf, message, opaque, readMessage, repeated, string } from '../../packages/adapters/src/rpc/proto-json.js'
import { setPath } from '../../packages/adapters/src/http/template.js'
import { MAX_FILTER_DEPTH as CORE_FILTER_DEPTH } from '../../packages/core/src/filter/ast.js'
import { failed, violation } from '../support/rpc-failure.js'

/**
 * Every limited request field: at its limit the call succeeds, one past it the call is
 * INVALID_ARGUMENT naming the field and the limit (and Google's page where the limit is Google's),
 * through the in-process services. Lengths are Unicode code points.
 */
const embedder = createHashingEmbedder({ dimensions: 16 })
const E = 'projects/p/locations/l/reasoningEngines/1'
const L = 'projects/p/locations/l'

// Google's pages stating the limits (also in the protos' comments).
const SR_CORPORA = 'https://ai.google.dev/api/semantic-retrieval/corpora'
const SR_DOCUMENTS = 'https://ai.google.dev/api/semantic-retrieval/documents'
const SR_CHUNKS = 'https://ai.google.dev/api/semantic-retrieval/chunks'
const RAG = 'https://cloud.google.com/vertex-ai/docs/reference/rest'
const MB_GENERATE = 'https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/projects.locations.reasoningEngines.memories/generate'

const QUARRY = "Quarry's cap; Google documents none"

function succeeded<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.status.message.slice(0, 300)}`)
  return outcome.response
}

const n = (x: number): string => x.toLocaleString('en-US')

/** The failure one past a limit: INVALID_ARGUMENT at `field`, naming the count, the limit and its source. */
function expectOver(outcome: Outcome<unknown>, field: string, received: number, max: number, source: string, unit: 'characters' | 'entries' = 'characters'): void {
  const f = failed(outcome)
  expect(f.code).toBe(3)
  expect(f.field).toBe(field)
  const measured = unit === 'characters' ? `is ${n(received)} characters` : `has ${n(received)} entries`
  expect(f.message).toBe(`'${field}' ${measured}; at most ${n(max)} (${source === QUARRY ? QUARRY : `Google's documented limit, ${source}`}).`)
}

const s = (length: number, c = 'a'): string => c.repeat(length)
/** Text of `length` characters in words, so a chunk's token count stays small. */
const words = (length: number): string => Array.from({ length: Math.ceil(length / 50) }, () => `${'w'.repeat(49)} `).join('').slice(0, length)
const list = <T>(length: number, item: (i: number) => T): T[] => Array.from({ length }, (_, i) => item(i))

describe('Semantic Retriever field limits', () => {
  async function corpusWithDocument(): Promise<SemanticRetriever> {
    const sr = new SemanticRetriever({ embedder })
    succeeded(await sr.createCorpus({ corpus: { name: 'corpora/c' } }))
    succeeded(await sr.createDocument({ parent: 'corpora/c', document: { name: 'corpora/c/documents/d' } }))
    return sr
  }
  const D = 'corpora/c/documents/d'

  it('displayName: 512 characters (Google), counted in code points', async () => {
    const sr = new SemanticRetriever({ embedder })
    // https://ai.google.dev/api/semantic-retrieval/corpora: "no more than 512 characters in length, including spaces"
    succeeded(await sr.createCorpus({ corpus: { name: 'corpora/a', displayName: s(512) } }))
    expectOver(await sr.createCorpus({ corpus: { name: 'corpora/b', displayName: s(513) } }), 'corpus.displayName', 513, 512, SR_CORPORA)
    // 512 emoji are 1,024 UTF-16 code units and still 512 characters.
    succeeded(await sr.createCorpus({ corpus: { name: 'corpora/e', displayName: '😀'.repeat(512) } }))
    expectOver(await sr.createCorpus({ corpus: { name: 'corpora/f', displayName: '😀'.repeat(513) } }), 'corpus.displayName', 513, 512, SR_CORPORA)
    // https://ai.google.dev/api/semantic-retrieval/documents: the same 512 for a Document
    succeeded(await sr.createDocument({ parent: 'corpora/a', document: { displayName: s(512) } }))
    expectOver(await sr.createDocument({ parent: 'corpora/a', document: { displayName: s(513) } }), 'document.displayName', 513, 512, SR_DOCUMENTS)
  })

  it('customMetadata: 20 entries per document and per chunk (Google); keys, values and lists (Quarry)', async () => {
    const sr = await corpusWithDocument()
    const meta = (count: number) => list(count, (i) => ({ key: `k${i}`, numericValue: i }))
    // https://ai.google.dev/api/semantic-retrieval/documents: "A Document can have a maximum of 20 CustomMetadata."
    succeeded(await sr.createDocument({ parent: 'corpora/c', document: { customMetadata: meta(20) } }))
    expectOver(await sr.createDocument({ parent: 'corpora/c', document: { customMetadata: meta(21) } }), 'document.customMetadata', 21, 20, SR_DOCUMENTS, 'entries')
    // https://ai.google.dev/api/semantic-retrieval/chunks: "The maximum number of CustomMetadata per chunk is 20."
    succeeded(await sr.createChunk({ parent: D, chunk: { data: { stringValue: 'x' }, customMetadata: meta(20) } }))
    expectOver(await sr.createChunk({ parent: D, chunk: { data: { stringValue: 'x' }, customMetadata: meta(21) } }), 'chunk.customMetadata', 21, 20, SR_CHUNKS, 'entries')

    const chunk = (m: object) => sr.createChunk({ parent: D, chunk: { data: { stringValue: 'x' }, customMetadata: [m] } })
    succeeded(await chunk({ key: s(256), stringValue: s(10_000) }))
    expectOver(await chunk({ key: s(257), stringValue: 'v' }), 'chunk.customMetadata[0].key', 257, 256, QUARRY)
    expectOver(await chunk({ key: 'k', stringValue: s(10_001) }), 'chunk.customMetadata[0].stringValue', 10_001, 10_000, QUARRY)
    succeeded(await chunk({ key: 'tags', stringListValue: { values: list(1_000, (i) => `t${i}`) } }))
    expectOver(await chunk({ key: 'tags', stringListValue: { values: list(1_001, (i) => `t${i}`) } }), 'chunk.customMetadata[0].stringListValue.values', 1_001, 1_000, QUARRY, 'entries')
    succeeded(await chunk({ key: 'tags', stringListValue: { values: [s(1_024)] } }))
    expectOver(await chunk({ key: 'tags', stringListValue: { values: [s(1_025)] } }), 'chunk.customMetadata[0].stringListValue.values[0]', 1_025, 1_024, QUARRY)
  })

  it('chunk text: 100,000 characters before its 2,043 tokens (Google) are counted', async () => {
    const sr = await corpusWithDocument()
    succeeded(await sr.createChunk({ parent: D, chunk: { data: { stringValue: words(100_000) } } }))
    expectOver(await sr.createChunk({ parent: D, chunk: { data: { stringValue: words(100_001) } } }), 'chunk.data.stringValue', 100_001, 100_000, QUARRY)
    // Google's own limit, in tokens, is still checked after (https://ai.google.dev/api/semantic-retrieval/chunks).
    const tokens = failed(await sr.createChunk({ parent: D, chunk: { data: { stringValue: 'w '.repeat(2044) } } }))
    expect(tokens).toMatchObject({ code: 3, field: 'chunk.data.stringValue' })
    expect(tokens.message).toContain('at most 2043 tokens')
  })

  it('batches: 100 requests (Google for create and update; Quarry holds delete to the same)', async () => {
    const sr = await corpusWithDocument()
    // https://ai.google.dev/api/semantic-retrieval/chunks: "A maximum of 100 Chunks can be created in a batch."
    const created = succeeded(await sr.batchCreateChunks({ parent: D, requests: list(100, (i) => ({ chunk: { name: `${D}/chunks/c${i}`, data: { stringValue: `text ${i}` } } })) }))
    expect(created.chunks).toHaveLength(100)
    expectOver(await sr.batchCreateChunks({ parent: D, requests: list(101, () => ({ chunk: { data: { stringValue: 'x' } } })) }), 'requests', 101, 100, SR_CHUNKS, 'entries')
    // "A maximum of 100 Chunks can be updated in a batch."
    const update = (count: number) => list(count, (i) => ({ chunk: { name: `${D}/chunks/c${i}`, data: { stringValue: `new ${i}` } }, updateMask: 'data' }))
    succeeded(await sr.batchUpdateChunks({ parent: D, requests: update(100) }))
    expectOver(await sr.batchUpdateChunks({ parent: D, requests: update(101) }), 'requests', 101, 100, SR_CHUNKS, 'entries')
    const remove = (count: number) => list(count, (i) => ({ name: `${D}/chunks/c${i}` }))
    expectOver(await sr.batchDeleteChunks({ parent: D, requests: remove(101) }), 'requests', 101, 100, QUARRY, 'entries')
    succeeded(await sr.batchDeleteChunks({ parent: D, requests: remove(100) }))
  })

  it('engine options lower the documented limits, never raise them', async () => {
    expect(() => new SemanticRetriever({ embedder, limits: { customMetadata: 21 } })).toThrow(/lower Google's documented limit of 20/)
    expect(() => new SemanticRetriever({ embedder, limits: { batchSize: 101 } })).toThrow(QuarryError)
    const sr = new SemanticRetriever({ embedder, limits: { displayName: 10 } })
    succeeded(await sr.createCorpus({ corpus: { name: 'corpora/a', displayName: '😀'.repeat(10) } }))
    const f = failed(await sr.createCorpus({ corpus: { name: 'corpora/b', displayName: s(11) } }))
    expect(f).toEqual({ code: 3, field: 'corpus.displayName', message: "'corpus.displayName' is 11 characters; at most 10 (this engine's limits.displayName)." })
  })

  it('queries: text, filters and conditions', async () => {
    const sr = await corpusWithDocument()
    succeeded(await sr.createChunk({ parent: D, chunk: { data: { stringValue: 'some text' }, customMetadata: [{ key: 'year', numericValue: 2020 }] } }))
    const query = (request: object) => sr.queryCorpus({ name: 'corpora/c', query: 'text', ...request })
    succeeded(await query({ query: words(10_000) }))
    expectOver(await query({ query: words(10_001) }), 'query', 10_001, 10_000, QUARRY)
    const ranges = (count: number) => list(count, () => ({ key: 'chunk.custom_metadata.year', conditions: [{ operation: 'GREATER', numericValue: 2000 }] }))
    expect(succeeded(await query({ metadataFilters: ranges(100) })).relevantChunks).toHaveLength(1)
    expectOver(await query({ metadataFilters: ranges(101) }), 'metadataFilters', 101, 100, QUARRY, 'entries')
    const anyOf = (count: number) => [{ key: 'chunk.custom_metadata.year', conditions: list(count, (i) => ({ operation: 'EQUAL', numericValue: 2020 - i })) }]
    expect(succeeded(await query({ metadataFilters: anyOf(1_000) })).relevantChunks).toHaveLength(1)
    expectOver(await query({ metadataFilters: anyOf(1_001) }), 'metadataFilters[0].conditions', 1_001, 1_000, QUARRY, 'entries')
    const keyed = (length: number) => [{ key: `chunk.custom_metadata.${s(length - 22)}`, conditions: [{ operation: 'EQUAL', stringValue: s(10_000) }] }]
    expect(succeeded(await query({ metadataFilters: keyed(281) }))).toEqual({})
    expectOver(await query({ metadataFilters: keyed(282) }), 'metadataFilters[0].key', 282, 281, QUARRY)
    const valued = [{ key: 'chunk.custom_metadata.k', conditions: [{ operation: 'EQUAL', stringValue: s(10_001) }] }]
    expectOver(await query({ metadataFilters: valued }), 'metadataFilters[0].conditions[0].stringValue', 10_001, 10_000, QUARRY)
  })
})

describe('Vertex AI RAG Engine field limits', () => {
  async function corpus(): Promise<{ rag: VertexRagEngine; name: string }> {
    const rag = new VertexRagEngine({ embedder })
    const op = succeeded(await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } }))
    return { rag, name: op.response?.name as string }
  }

  it('RagCorpus displayName: 128 characters (Google); description (Quarry)', async () => {
    const rag = new VertexRagEngine({ embedder })
    for (const v of [rag.v1, rag.v1beta1]) {
      // https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.ragCorpora: "up to 128 characters long"
      succeeded(await v.createRagCorpus({ parent: L, ragCorpus: { displayName: s(128), description: s(10_000) } }))
      expectOver(await v.createRagCorpus({ parent: L, ragCorpus: { displayName: s(129) } }), 'ragCorpus.displayName', 129, 128, `${RAG}/v1/projects.locations.ragCorpora`)
      expectOver(await v.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c', description: s(10_001) } }), 'ragCorpus.description', 10_001, 10_000, QUARRY)
    }
  })

  it('RagFile displayName: 128 characters (Google); description (Quarry)', async () => {
    const { rag, name } = await corpus()
    // https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.ragCorpora.ragFiles: "up to 128 characters long"
    succeeded(await rag.v1beta1.uploadRagFile({ parent: name, ragFile: { displayName: `${s(124)}.txt`, description: s(10_000) } }, 'some text'))
    expectOver(await rag.v1beta1.uploadRagFile({ parent: name, ragFile: { displayName: `${s(125)}.txt` } }, 'some text'), 'ragFile.displayName', 129, 128, `${RAG}/v1/projects.locations.ragCorpora.ragFiles`)
    expectOver(await rag.v1beta1.uploadRagFile({ parent: name, ragFile: { displayName: 'a.txt', description: s(10_001) } }, 'some text'), 'ragFile.description', 10_001, 10_000, QUARRY)
  })

  it('import URIs: 2,048 characters each (Quarry)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'quarry-limits-'))
    try {
      const rag = new VertexRagEngine({ embedder, gcsRoot: root })
      const op = succeeded(await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } }))
      const corpusName = op.response?.name as string
      const uri = (length: number) => `gs://b/${'d'.repeat(length - 7)}`
      const atLimit = await rag.v1beta1.importRagFiles({ parent: corpusName, importRagFilesConfig: { gcsSource: { uris: [uri(2_048)] } } })
      // The URI names nothing under the root; what matters is that it was read, not refused for its length.
      if (!atLimit.ok) expect(atLimit.status.message).not.toMatch(/characters; at most/)
      expectOver(await rag.v1beta1.importRagFiles({ parent: corpusName, importRagFilesConfig: { gcsSource: { uris: [uri(2_049)] } } }), 'importRagFilesConfig.gcsSource.uris[0]', 2_049, 2_048, QUARRY)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })

  it('retrieveContexts: query text (Quarry) and the default of 10,000 ragFileIds', async () => {
    const { rag, name } = await corpus()
    succeeded(await rag.v1beta1.uploadRagFile({ parent: name, ragFile: { displayName: 'a.txt' } }, 'some text'))
    const retrieve = (query: object, ragFileIds: string[] = []) => rag.v1beta1.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: name, ragFileIds }] }, query })
    succeeded(await retrieve({ text: words(10_000) }))
    expectOver(await retrieve({ text: words(10_001) }), 'query.text', 10_001, 10_000, QUARRY)
    // 10,000 ids are read; the operation then looks them up (and finds none of these).
    expect(failed(await retrieve({ text: 'text' }, list(10_000, (i) => `${i}`))).message).toMatch(/^RagFile "0" is not in/)
    expectOver(await retrieve({ text: 'text' }, list(10_001, (i) => `${i}`)), 'vertexRagStore.ragResources[0].ragFileIds', 10_001, 10_000, QUARRY, 'entries')
  })

  it('RagDataSchema key: 63 characters; batches: 500 schemas, 500 metadata (Google)', async () => {
    const { rag, name } = await corpus()
    const v = rag.v1beta1
    // https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/projects.locations.ragCorpora.ragDataSchemas: key "up to 63 characters"
    succeeded(await v.createRagDataSchema({ parent: name, ragDataSchema: { key: s(63), schemaDetails: { type: 'STRING' } } }))
    expectOver(await v.createRagDataSchema({ parent: name, ragDataSchema: { key: s(64), schemaDetails: { type: 'STRING' } } }), 'ragDataSchema.key', 64, 63, `${RAG}/v1beta1/projects.locations.ragCorpora.ragDataSchemas`)
    // .../ragDataSchemas/batchCreate: "A maximum of 500 schemas can be created in a batch."
    const schemas = (count: number) => list(count, (i) => ({ ragDataSchema: { key: `k${i}`, schemaDetails: { type: 'INTEGER' } } }))
    expectOver(await v.batchCreateRagDataSchemas({ parent: name, requests: schemas(501) }), 'requests', 501, 500, `${RAG}/v1beta1/projects.locations.ragCorpora.ragDataSchemas/batchCreate`, 'entries')
    succeeded(await v.batchCreateRagDataSchemas({ parent: name, requests: schemas(500) }))
    const listed = succeeded(await v.listRagDataSchemas({ parent: name, pageSize: 100 }))
    expect(listed.ragDataSchemas).toHaveLength(100)
    // .../ragDataSchemas/batchDelete: "A maximum of 500 schemas can be deleted in a batch."
    expectOver(await v.batchDeleteRagDataSchemas({ parent: name, names: list(501, (i) => `${name}/ragDataSchemas/x${i}`) }), 'names', 501, 500, `${RAG}/v1beta1/projects.locations.ragCorpora.ragDataSchemas/batchDelete`, 'entries')

    const file = succeeded(await v.uploadRagFile({ parent: name, ragFile: { displayName: 'a.txt' } }, 'some text')).ragFile?.name as string
    const metadata = (count: number) => list(count, (i) => ({ ragMetadata: { userSpecifiedMetadata: { key: `m${i}`, value: { intValue: i } } } }))
    // .../ragFiles.ragMetadata/batchCreate and batchDelete: 500 per batch
    expectOver(await v.batchCreateRagMetadata({ parent: file, requests: metadata(501) }), 'requests', 501, 500, `${RAG}/v1beta1/projects.locations.ragCorpora.ragFiles.ragMetadata/batchCreate`, 'entries')
    succeeded(await v.batchCreateRagMetadata({ parent: file, requests: metadata(500) }))
    expectOver(await v.batchDeleteRagMetadata({ parent: file, names: list(501, (i) => `${file}/ragMetadata/x${i}`) }), 'names', 501, 500, `${RAG}/v1beta1/projects.locations.ragCorpora.ragFiles.ragMetadata/batchDelete`, 'entries')
  })

  it('file metadata: key, string value and list (Quarry)', async () => {
    const { rag, name } = await corpus()
    const v = rag.v1beta1
    const file = succeeded(await v.uploadRagFile({ parent: name, ragFile: { displayName: 'a.txt' } }, 'some text')).ragFile?.name as string
    const put = (key: string, value: object) => v.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key, value } } })
    succeeded(await put(s(256), { strValue: s(10_000) }))
    expectOver(await put(s(257), { strValue: 'v' }), 'ragMetadata.userSpecifiedMetadata.key', 257, 256, QUARRY)
    expectOver(await put('k', { strValue: s(10_001) }), 'ragMetadata.userSpecifiedMetadata.value.strValue', 10_001, 10_000, QUARRY)
    succeeded(await put('tags', { listValue: { values: list(1_000, (i) => ({ strValue: `t${i}` })) } }))
    expectOver(await put('tags2', { listValue: { values: list(1_001, (i) => ({ strValue: `t${i}` })) } }), 'ragMetadata.userSpecifiedMetadata.value.listValue.values', 1_001, 1_000, QUARRY, 'entries')
  })
})

describe('Memory Bank field limits (Google documents one: 5 direct memories)', () => {
  const create = (bank: MemoryBank, memory: object) => bank.createMemory({ parent: E, memory: { fact: 'f', scope: { u: '1' }, ...memory } })

  it('fact, displayName, description', async () => {
    const bank = new MemoryBank({ embedder })
    succeeded(await create(bank, { fact: words(10_000), displayName: s(1_024), description: s(10_000) }))
    expectOver(await create(bank, { fact: words(10_001) }), 'memory.fact', 10_001, 10_000, QUARRY)
    expectOver(await create(bank, { displayName: s(1_025) }), 'memory.displayName', 1_025, 1_024, QUARRY)
    expectOver(await create(bank, { description: s(10_001) }), 'memory.description', 10_001, 10_000, QUARRY)
    // The finding of issue 13: twelve million characters of fact are refused before any work.
    const started = performance.now()
    expectOver(await create(bank, { fact: s(12_000_000) }), 'memory.fact', 12_000_000, 10_000, QUARRY)
    expect(performance.now() - started).toBeLessThan(1_000)
  })

  it('scope: 32 entries, keys 256, values 1,024 characters', async () => {
    const bank = new MemoryBank({ embedder })
    const scope = (count: number) => Object.fromEntries(list(count, (i) => [`k${i}`, `v${i}`]))
    succeeded(await create(bank, { scope: scope(32) }))
    expectOver(await create(bank, { scope: scope(33) }), 'memory.scope', 33, 32, QUARRY, 'entries')
    succeeded(await create(bank, { scope: { [s(256)]: s(1_024) } }))
    const key = failed(await create(bank, { scope: { [s(257)]: 'v' } }))
    expect(key).toEqual({ code: 3, field: 'memory.scope', message: `a key of 'memory.scope' is 257 characters; at most 256 (${QUARRY}).` })
    expectOver(await create(bank, { scope: { u: s(1_025) } }), 'memory.scope.u', 1_025, 1_024, QUARRY)
    expectOver(await bank.retrieveMemories({ parent: E, scope: scope(33) }), 'scope', 33, 32, QUARRY, 'entries')
    expectOver(await bank.generateMemories({ parent: E, scope: scope(33), directMemoriesSource: { directMemories: [{ fact: 'x' }] } }), 'scope', 33, 32, QUARRY, 'entries')
  })

  it('topics and metadata', async () => {
    const bank = new MemoryBank({ embedder })
    const topics = (count: number) => list(count, (i) => ({ customMemoryTopicLabel: `t${i}` }))
    succeeded(await create(bank, { topics: topics(100) }))
    expectOver(await create(bank, { topics: topics(101) }), 'memory.topics', 101, 100, QUARRY, 'entries')
    succeeded(await create(bank, { topics: [{ customMemoryTopicLabel: s(1_024) }] }))
    expectOver(await create(bank, { topics: [{ customMemoryTopicLabel: s(1_025) }] }), 'memory.topics[0].customMemoryTopicLabel', 1_025, 1_024, QUARRY)
    const metadata = (count: number) => Object.fromEntries(list(count, (i) => [`m${i}`, { doubleValue: i }]))
    succeeded(await create(bank, { metadata: metadata(100) }))
    expectOver(await create(bank, { metadata: metadata(101) }), 'memory.metadata', 101, 100, QUARRY, 'entries')
    succeeded(await create(bank, { metadata: { [s(256)]: { stringValue: s(10_000) } } }))
    expect(failed(await create(bank, { metadata: { [s(257)]: { boolValue: true } } }))).toMatchObject({ code: 3, field: 'memory.metadata' })
    expectOver(await create(bank, { metadata: { m: { stringValue: s(10_001) } } }), 'memory.metadata.m.stringValue', 10_001, 10_000, QUARRY)
  })

  it('retrieval: search query, filter groups', async () => {
    const bank = new MemoryBank({ embedder })
    succeeded(await create(bank, { metadata: { rank: { doubleValue: 1 } } }))
    const retrieve = (request: object) => bank.retrieveMemories({ parent: E, scope: { u: '1' }, ...request })
    succeeded(await retrieve({ similaritySearchParams: { searchQuery: words(10_000) } }))
    expectOver(await retrieve({ similaritySearchParams: { searchQuery: words(10_001) } }), 'similaritySearchParams.searchQuery', 10_001, 10_000, QUARRY)
    const group = (filters: number) => ({ filters: list(filters, () => ({ key: 'rank', op: 'EQUAL', value: { doubleValue: 1 } })) })
    expect(succeeded(await retrieve({ filterGroups: list(100, () => group(100)) })).retrievedMemories).toHaveLength(1)
    expectOver(await retrieve({ filterGroups: list(101, () => group(1)) }), 'filterGroups', 101, 100, QUARRY, 'entries')
    expectOver(await retrieve({ filterGroups: [group(101)] }), 'filterGroups[0].filters', 101, 100, QUARRY, 'entries')
    expectOver(await retrieve({ filterGroups: [{ filters: [{ key: s(257), op: 'EQUAL', value: { doubleValue: 1 } }] }] }), 'filterGroups[0].filters[0].key', 257, 256, QUARRY)
  })

  it('generateMemories: 5 direct memories (Google), each fact 10,000 characters', async () => {
    const bank = new MemoryBank({ embedder })
    const generate = (facts: string[]) => bank.generateMemories({ parent: E, scope: { u: '1' }, directMemoriesSource: { directMemories: facts.map((fact) => ({ fact })) } })
    // https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/projects.locations.reasoningEngines.memories/generate: "At most 5 direct memories are allowed per request."
    succeeded(await generate(list(5, (i) => `fact number ${i} ${'x'.repeat(i)}`)))
    expectOver(await generate(list(6, (i) => `f${i}`)), 'directMemoriesSource.directMemories', 6, 5, MB_GENERATE, 'entries')
    succeeded(await generate([words(10_000)]))
    expectOver(await generate([words(10_001)]), 'directMemoriesSource.directMemories[0].fact', 10_001, 10_000, QUARRY)
  })
})

describe('limits of fields no schema limits, and of values in opaque messages', () => {
  const Req = message('test.Request', { name: string, items: repeated(string), labels: mapOf(string), config: opaque('test.Config') })

  it('strings 1 MiB characters, lists and maps 10,000 entries, map keys 256 characters', () => {
    const { string: str, entries, key } = DEFAULT_LIMITS
    expect(readMessage(Req, { name: s(str.max), items: list(entries.max, () => 'x'), labels: { [s(key.max)]: 'v' } }).name).toHaveLength(1_048_576)
    expect(violation(() => readMessage(Req, { name: s(str.max + 1) }))).toEqual({ code: 3, field: 'name', message: `'name' is 1,048,577 characters; at most 1,048,576 (${QUARRY}).` })
    expect(violation(() => readMessage(Req, { items: list(entries.max + 1, () => 'x') }))).toMatchObject({ field: 'items', message: `'items' has 10,001 entries; at most 10,000 (${QUARRY}).` })
    expect(violation(() => readMessage(Req, { labels: Object.fromEntries(list(entries.max + 1, (i) => [`k${i}`, 'v'])) })).field).toBe('labels')
    expect(violation(() => readMessage(Req, { labels: { [s(key.max + 1)]: 'v' } }))).toMatchObject({ field: 'labels', message: `a key of 'labels' is 257 characters; at most 256 (${QUARRY}).` })
    expect(violation(() => readMessage(Req, { updateMask: 'x' })).code).toBe(3)
  })

  it('counts characters as code points', () => {
    expect(characterCount('a😀b')).toBe(3)
    expect(characterCount('\ud83d')).toBe(1)
    expect(characterCount('\ude00\ud83d')).toBe(2)
  })

  it('bounds what an opaque message holds: nesting, values, strings, keys — cycles included', () => {
    const deep = (depth: number): Record<string, unknown> => {
      let v: Record<string, unknown> = { leaf: 'x' }
      for (let i = 0; i < depth; i++) v = { a: v }
      return v
    }
    // config is at depth 1, its members at 2: 98 more levels reach the limit of 100 with the leaf.
    expect(readMessage(Req, { config: deep(98) }).config).toBeDefined()
    const tooDeep = violation(() => readMessage(Req, { config: deep(99) }))
    expect(tooDeep.field).toBe(`config${'.a'.repeat(99)}.leaf`)
    expect(tooDeep.message).toMatch(/nests deeper than 100 levels; at most 100 \(Quarry's cap/)
    expect(violation(() => readMessage(Req, { config: deep(5_000) })).message).toMatch(/nests deeper than 100 levels/)
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(violation(() => readMessage(Req, { config: cycle })).message).toMatch(/nests deeper than 100 levels/)
    // A DAG that would expand to 2^60 values is refused at 10,000.
    let dag: Record<string, unknown> = { x: 1 }
    for (let i = 0; i < 60; i++) dag = { l: dag, r: dag }
    expect(violation(() => readMessage(Req, { config: dag }))).toMatchObject({ field: 'config', message: expect.stringMatching(/has 10,00\d values or more; at most 10,000/) })
    expect(violation(() => readMessage(Req, { config: { s: s(DEFAULT_LIMITS.string.max + 1) } })).field).toBe('config.s')
    expect(violation(() => readMessage(Req, { config: { [s(257)]: 1 } })).message).toMatch(/^a key of 'config' is 257 characters/)
    expect(violation(() => readMessage(Req, { config: { list: [[[s(DEFAULT_LIMITS.string.max + 1)]]] } })).field).toBe('config.list[0][0][0]')
  })

  it('describes a wrongly typed value briefly, however deep or large it is', () => {
    let deep: unknown = 'x'
    for (let i = 0; i < 5_000; i++) deep = { a: [deep] }
    const wrong = violation(() => readMessage(Req, { name: deep }))
    // 60 characters of the value's JSON at most: nine levels and a bit.
    expect(wrong).toEqual({ code: 3, field: 'name', message: `Invalid value at 'name' (TYPE_STRING), ${'{"a":['.repeat(9)}{"a...` })
    const huge = Object.fromEntries(list(100_000, (i) => [`key${i}`, i]))
    expect(violation(() => readMessage(Req, { name: huge })).message.length).toBeLessThan(100)
    expect(violation(() => readMessage(Req, { name: [1n, undefined, () => 1] })).message).toBe(`Invalid value at 'name' (TYPE_STRING), [1,null,null]`)
    expect(violation(() => readMessage(Req, { [s(1_000)]: 1 })).message.length).toBeLessThan(140)
  })

  it('refuses a deep opaque config through the services, over a 5,000-deep nesting', async () => {
    let config: Record<string, unknown> = {}
    for (let i = 0; i < 5_000; i++) config = { k: config }
    const rag = new VertexRagEngine({ embedder })
    const f = failed(await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c', encryptionSpec: config } }))
    expect(f.code).toBe(3)
    expect(f.field).toMatch(/^ragCorpus\.encryptionSpec(\.k)+$/)
    expect(f.message).toMatch(/nests deeper than 100 levels; at most 100/)
    const bank = new MemoryBank({ embedder })
    // A session's state is a google.protobuf.Struct: opaque, bounded only by these limits.
    const g = failed(await bank.sessions.createSession({ parent: E, session: { userId: 'u', sessionState: config } }))
    expect(g).toMatchObject({ code: 3, field: expect.stringMatching(/^session\.sessionState(\.k)+$/) })
    // directContentsSource is a typed message: an unknown field is refused as Google refuses it.
    const h = failed(await bank.generateMemories({ parent: E, scope: { u: '1' }, directContentsSource: config }))
    expect(h).toEqual({ code: 3, field: 'directContentsSource', message: 'Invalid JSON payload received. Unknown name "k" at \'directContentsSource\': Cannot find field.' })
  })

  it('a query parameter 10,000 keys deep builds its value without recursion, and the reader refuses it', async () => {
    // The server binds `?a.b.c=v` with setPath (a loop); an opaque field is the one place such a value could land.
    const request: Record<string, unknown> = { parent: L, ragCorpus: { displayName: 'c' } }
    setPath(request, `ragCorpus.encryptionSpec${'.a'.repeat(10_000)}`, 'x')
    const f = failed(await new VertexRagEngine({ embedder }).v1beta1.createRagCorpus(request))
    expect(f.code).toBe(3)
    expect(f.field).toBe(`ragCorpus.encryptionSpec${'.a'.repeat(99)}`)
    expect(f.message).toMatch(/nests deeper than 100 levels/)
  })
})

describe("core's declarative filters: at most 100 levels of and / or / not", () => {
  const index = createIndex({ dimensions: 2 })
  index.add({ id: 'a', vector: [1, 0], metadata: { genre: 'drama' } })
  index.add({ id: 'b', vector: [0, 1], metadata: { genre: 'scifi' } })
  const nots = (depth: number): Filter => {
    let f: Filter = { op: 'eq', field: 'genre', value: 'drama' }
    for (let i = 1; i < depth; i++) f = { op: 'not', filter: f }
    return f
  }

  it('evaluates a filter at the limit and refuses one deeper with a path', () => {
    // 99 NOTs around a comparison: 100 levels, an odd number of negations.
    expect(CORE_FILTER_DEPTH).toBe(100)
    expect(index.search({ vector: [1, 0], topK: 2, filter: nots(100) }).hits.map((h) => h.id)).toEqual(['b'])
    expect(index.search({ vector: [1, 0], topK: 2, filter: nots(99) }).hits.map((h) => h.id)).toEqual(['a'])
    for (const depth of [101, 10_000]) {
      let error: unknown
      try {
        index.search({ vector: [1, 0], topK: 2, filter: nots(depth) })
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(QuarryError)
      expect((error as QuarryError).code).toBe('INVALID_QUERY')
      expect((error as QuarryError).path).toBe(`filter${'.filter'.repeat(100)}`)
      expect((error as QuarryError).message).toMatch(/nest at most 100 levels/)
    }
    const wide: Filter = { op: 'and', filters: [nots(99), { op: 'or', filters: [nots(101)] }] }
    expect(() => index.search({ vector: [1, 0], topK: 2, filter: wide })).toThrow(/filter\.filters\[1\]\.filters\[0\](\.filter)+: filters nest/)
  })
})
