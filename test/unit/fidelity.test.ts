import { describe, expect, it } from 'vitest'
import { createHashingEmbedder, type Embedder } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine, type Outcome } from '@quarry/adapters'
import { enumOf, float, float32, int32, message, optional, readMessage, string } from '../../packages/adapters/src/rpc/proto-json.js'
import { omitUndefined, omitUnset } from '../../packages/adapters/src/rpc/omit.js'
import { sparseDistanceOf } from '../../packages/adapters/src/vertex-rag/metric.js'
import { unitDistance } from '../../packages/adapters/src/memory-bank/retrieve.js'

/**
 * Fidelity to Google's documentation (issue 15 §3): each test quotes what it follows.
 */
const embedder = createHashingEmbedder({ dimensions: 64 })
const E = 'projects/p/locations/l/reasoningEngines/1'
const L = 'projects/p/locations/l'

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.status.message}`)
  return outcome.response
}

function failed(outcome: Outcome<unknown>): { code: number; message: string } {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.response)}`)
  return { code: outcome.status.code, message: outcome.status.message }
}

/** Twelve chunks in one corpus of the Semantic Retriever. */
async function retriever(e: Embedder = embedder): Promise<{ sr: SemanticRetriever; corpus: string; document: string }> {
  const sr = new SemanticRetriever({ embedder: e })
  const corpus = ok(await sr.createCorpus({ corpus: { name: 'corpora/c' } })).name
  const document = ok(await sr.createDocument({ parent: corpus, document: { name: `${corpus}/documents/d` } })).name
  const requests = Array.from({ length: 12 }, (_, i) => ({ parent: document, chunk: { data: { stringValue: `desert spice note number ${i}` } } }))
  ok(await sr.batchCreateChunks({ parent: document, requests }))
  return { sr, corpus, document }
}

/** A RAG corpus of one uploaded file cut into 4-token chunks overlapping by 3 (one word apart). */
async function rag(): Promise<{ engine: VertexRagEngine; corpus: string }> {
  const engine = new VertexRagEngine({ embedder })
  const op = ok(await engine.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } }))
  const corpus = String(op.response.name)
  const words = Array.from({ length: 64 }, (_, i) => (i === 0 || i === 32 ? 'sandworm' : `word${i}`)).join(' ')
  const config = { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 4, chunkOverlap: 3 } } } }
  ok(await engine.v1beta1.uploadRagFile({ parent: corpus, ragFile: { displayName: 'a.txt' }, uploadRagFileConfig: config }, words))
  return { engine, corpus }
}

async function bank(facts: readonly string[]): Promise<MemoryBank> {
  const b = new MemoryBank({ embedder })
  for (const fact of facts) ok(await b.createMemory({ parent: E, memory: { fact, scope: { user_id: 'u1' } } }))
  return b
}

describe('proto3 presence: a zero in a field without presence means unset', () => {
  // https://protobuf.dev/programming-guides/field_presence: "Under the implicit presence
  // discipline, the default value is synonymous with "not present" for purposes of
  // serialization." and "When serializing, fields with implicit presence are not serialized if
  // they contain their default value. For numeric types, the default is 0. For enums, the
  // default is the zero-valued enumerator. For strings, bytes, and repeated fields, the default
  // is the zero-length value." gRPC clients therefore cannot send a 0 resultsCount at all.
  it('reads zeros of plain scalars as unset and keeps those of optional fields and oneof members', () => {
    const M = message(
      'test.M',
      { count: int32, name: string, kind: enumOf('test.Kind', { KIND_UNSPECIFIED: 0, RED: 1 }), alpha: optional(float), a: float, b: string },
      [['a', 'b']],
    )
    expect(readMessage(M, { count: 0, name: '', kind: 'KIND_UNSPECIFIED', alpha: 0, a: 0 })).toEqual({ alpha: 0, a: 0 })
    expect(readMessage(M, { count: '0', kind: 0, b: '' })).toEqual({ b: '' })
    expect(readMessage(M, { count: 2, name: 'x', kind: 1 })).toEqual({ count: 2, name: 'x', kind: 'RED' })
  })

  // corpora.query (https://ai.google.dev/api/semantic-retrieval/corpora#method:-corpora.query):
  // resultsCount — "If unspecified, at most 10 Chunks will be returned. The maximum specified
  // result count is 100." (an int32 without `optional`: 0 is "unspecified").
  it('Semantic Retriever: resultsCount 0 is the default 10, on corpora and documents', async () => {
    const { sr, corpus, document } = await retriever()
    const unset = ok(await sr.queryCorpus({ name: corpus, query: 'desert spice' }))
    const zero = ok(await sr.queryCorpus({ name: corpus, query: 'desert spice', resultsCount: 0 }))
    expect(zero.relevantChunks).toHaveLength(10)
    expect(zero).toEqual(unset)
    expect(ok(await sr.queryDocument({ name: document, query: 'desert spice', resultsCount: 0 })).relevantChunks).toHaveLength(10)
    expect(failed(await sr.queryCorpus({ name: corpus, query: 'desert spice', resultsCount: -1 })).code).toBe(3)
    // pageSize is an int32 without presence too: 0 is the list's default.
    expect(ok(await sr.listChunks({ parent: document, pageSize: 0 })).chunks).toHaveLength(10)
  })

  // retrieveContexts (https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/RagRetrievalConfig):
  // `int32 top_k = 1` "Optional. The number of contexts to retrieve." and the deprecated
  // `int32 similarity_top_k = 2`: neither is `optional`, so 0 is unset (Quarry's default, 10).
  // `optional float alpha = 1`: "The range is [0, 1], while 0 means sparse vector search only".
  // `optional double vector_distance_threshold`: "Only return contexts with vector distance
  // smaller than the threshold." — a 0 given is a threshold.
  it('RAG Engine: topK / similarityTopK 0 are the default; alpha 0 and a 0 threshold are values', async () => {
    const { engine, corpus } = await rag()
    const s = engine.v1beta1
    const store = { ragResources: [{ ragCorpus: corpus }] }
    const unset = ok(await s.retrieveContexts({ parent: L, vertexRagStore: store, query: { text: 'sandworm' } }))
    expect(unset.contexts.contexts).toHaveLength(10)
    expect(ok(await s.retrieveContexts({ parent: L, vertexRagStore: store, query: { text: 'sandworm', ragRetrievalConfig: { topK: 0 } } }))).toEqual(unset)
    expect(ok(await s.retrieveContexts({ parent: L, vertexRagStore: store, query: { text: 'sandworm', similarityTopK: 0 } }))).toEqual(unset)
    // alpha 0: BM25 only — the five chunks holding "sandworm", not the default hybrid's ten.
    const sparse = ok(await s.retrieveContexts({ parent: L, vertexRagStore: store, query: { text: 'sandworm', ragRetrievalConfig: { hybridSearch: { alpha: 0 } } } }))
    expect(sparse.contexts.contexts).toHaveLength(5)
    for (const c of sparse.contexts.contexts ?? []) expect(c.text).toContain('sandworm')
    const deprecated = ok(await s.retrieveContexts({ parent: L, vertexRagStore: store, query: { text: 'sandworm', ranking: { alpha: 0 } } }))
    expect(deprecated).toEqual(sparse)
    // A cosine distance is never below 0: nothing passes a 0 threshold.
    expect(ok(await s.retrieveContexts({ parent: L, vertexRagStore: { ...store, vectorDistanceThreshold: 0 }, query: { text: 'sandworm' } }))).toEqual({ contexts: {} })
    // The thresholds are strict: nothing is below the lowest double, nor above the highest.
    expect(ok(await s.retrieveContexts({ parent: L, vertexRagStore: { ...store, vectorDistanceThreshold: -Number.MAX_VALUE }, query: { text: 'sandworm' } }))).toEqual({ contexts: {} })
    expect(ok(await s.retrieveContexts({ parent: L, vertexRagStore: store, query: { text: 'sandworm', ragRetrievalConfig: { filter: { vectorSimilarityThreshold: Number.MAX_VALUE } } } }))).toEqual({ contexts: {} })
  })

  // memories.retrieve (https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/projects.locations.reasoningEngines.memories/retrieve):
  // topK and pageSize — "If unspecified, at most 3 memories will be returned. The maximum value
  // is 100; values above 100 will be coerced to 100." (both `int32` without `optional`).
  it('Memory Bank: topK and pageSize 0 are the default 3', async () => {
    const b = await bank(['likes tea', 'likes green tea', 'likes coffee', 'lives in Paris', 'has a cat'])
    const similar = ok(await b.retrieveMemories({ parent: E, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'tea', topK: 0 } }))
    expect(similar.retrievedMemories).toHaveLength(3)
    const simple = ok(await b.retrieveMemories({ parent: E, scope: { user_id: 'u1' }, simpleRetrievalParams: { pageSize: 0 } }))
    expect(simple.retrievedMemories).toHaveLength(3)
    expect(simple.nextPageToken).toBeDefined()
    expect(failed(await b.retrieveMemories({ parent: E, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'tea', topK: -1 } })).code).toBe(3)
  })

  // RagFileChunkingConfig.FixedLengthChunking: `int32 chunk_size = 1; int32 chunk_overlap = 2;`
  // ("The size of the chunks." / "The overlap between chunks."), neither optional; the RAG Engine
  // guide gives defaults of 1,024 and 200 tokens. Google's Python SDK sends both (its own defaults
  // 1024 and 200), so a chunk_overlap of 0, which proto3 never puts on the wire, means none.
  it('RAG Engine: chunkOverlap 0 or unset with a chunkSize is no overlap; neither given is 1024 / 200', async () => {
    const engine = new VertexRagEngine({ embedder })
    const corpus = String(ok(await engine.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response.name)
    const words = Array.from({ length: 1000 }, (_, i) => `w${i}`)
    const chunksOf = async (fixedLengthChunking: Record<string, number>): Promise<string[]> => {
      const config = { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking } } }
      const up = ok(await engine.v1beta1.uploadRagFile({ parent: corpus, ragFile: { displayName: 'a.txt' }, uploadRagFileConfig: config }, words.join(' ')))
      const read = await engine.readFile(up.ragFile?.name)
      if (!read.ok) throw new Error(read.status.message)
      ok(await engine.v1beta1.deleteRagFile({ name: up.ragFile?.name }))
      return read.response.file.chunks.map((c) => c.text)
    }
    const apart = (size: number, stride: number): string[] => Array.from({ length: Math.ceil((words.length - size) / stride) + 1 }, (_, i) => words.slice(i * stride, i * stride + size).join(' '))
    // Ten chunks of 100 words, one after the other: not 901 chunks a word apart.
    expect(await chunksOf({ chunkSize: 100, chunkOverlap: 0 })).toEqual(apart(100, 100))
    expect(await chunksOf({ chunkSize: 100 })).toEqual(apart(100, 100))
    expect(await chunksOf({ chunkSize: 50 })).toEqual(apart(50, 50))
    expect(await chunksOf({ chunkSize: 100, chunkOverlap: 20 })).toEqual(apart(100, 80))
    // Neither: 1024 with 200; an overlap alone keeps the default size.
    expect(await chunksOf({})).toEqual([words.join(' ')])
    expect(await chunksOf({ chunkSize: 0, chunkOverlap: 0 })).toEqual([words.join(' ')])
    expect(failed(await engine.v1beta1.uploadRagFile({ parent: corpus, ragFile: { displayName: 'b.txt' }, uploadRagFileConfig: { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 10, chunkOverlap: 10 } } } } }, 'x')).code).toBe(3)
  })

  // RagEmbeddingModelConfig.SparseEmbeddingConfig.Bm25: `optional float k1 = 2`, `optional float
  // b = 3` — a 0 given is a value: b = 0 is in [0, 1]; k1 = 0 is outside [1.2, 3].
  it('RAG Engine: BM25 k1 and b are optional, so 0 is a value', async () => {
    const engine = new VertexRagEngine({ embedder })
    const bm25 = (k1: number | undefined, b: number): unknown => ({ displayName: 'c', ragEmbeddingModelConfig: { hybridSearchConfig: { sparseEmbeddingConfig: { bm25: { ...omitUndefined({ k1 }), b } } } } })
    ok(await engine.v1beta1.createRagCorpus({ parent: L, ragCorpus: bm25(undefined, 0) }))
    expect(failed(await engine.v1beta1.createRagCorpus({ parent: L, ragCorpus: bm25(0, 0.75) })).code).toBe(3)
  })
})

describe('Memory Bank filters: the documented forms', () => {
  // memories.retrieve, `filter`: "Supported fields: * fact * createTime * updateTime * topics
  // (i.e. topics.custom_memory_topic_label: "example topic" OR topics.managed_memory_topic:
  // USER_PREFERENCES)"; memories.list, `filter`: "Supported fields: * scope (as a JSON string
  // with equality match only) * topics (i.e. topics.custom_memory_topic_label: "example topic" OR
  // topics.managed_memory_topic: USER_PREFERENCES)"
  // (https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/projects.locations.reasoningEngines.memories/list).
  it('reads topics.custom_memory_topic_label, topics.managed_memory_topic, createTime and scope as JSON', async () => {
    const b = new MemoryBank({ embedder })
    const create = async (fact: string, topics: unknown[], user = 'u1'): Promise<void> => {
      ok(await b.createMemory({ parent: E, memory: { fact, scope: { user_id: user }, topics } }))
    }
    await create('flies to Rome in May', [{ customMemoryTopicLabel: 'travel' }])
    await create('prefers window seats', [{ managedMemoryTopic: 'USER_PREFERENCES' }, { customMemoryTopicLabel: 'travel' }])
    await create('likes dark mode', [{ managedMemoryTopic: 'USER_PREFERENCES' }])
    await create('has a cat', [])
    await create('flies to Oslo', [{ customMemoryTopicLabel: 'travel' }], 'u2')
    const facts = async (filter: string, scope?: Record<string, string>): Promise<string[]> => {
      const response = scope
        ? ok(await b.retrieveMemories({ parent: E, scope, filter, simpleRetrievalParams: { pageSize: 100 } })).retrievedMemories?.map((r) => r.memory)
        : ok(await b.listMemories({ parent: E, filter })).memories
      return (response ?? []).map((m) => m.fact).sort()
    }
    expect(await facts('topics.custom_memory_topic_label: "travel"')).toEqual(['flies to Oslo', 'flies to Rome in May', 'prefers window seats'])
    expect(await facts('topics.managed_memory_topic: USER_PREFERENCES')).toEqual(['likes dark mode', 'prefers window seats'])
    expect(await facts('topics.custom_memory_topic_label: "travel" OR topics.managed_memory_topic: USER_PREFERENCES', { user_id: 'u1' })).toEqual([
      'flies to Rome in May',
      'likes dark mode',
      'prefers window seats',
    ])
    // A custom label is not a managed topic, and the other way round.
    // A managed topic is an enum value: a name that is none of them (a misspelling) is refused, not matched against nothing.
    expect(failed(await b.listMemories({ parent: E, filter: 'topics.managed_memory_topic: travel' }))).toMatchObject({ code: 3, message: expect.stringContaining('topics.managed_memory_topic is one of USER_PERSONAL_INFO, USER_PREFERENCES, KEY_CONVERSATION_DETAILS, EXPLICIT_INSTRUCTIONS; received "travel".') as string })
    expect(await facts('topics.custom_memory_topic_label: "USER_PREFERENCES"')).toEqual([])
    expect(await facts('scope = "{\\"user_id\\": \\"u2\\"}"')).toEqual(['flies to Oslo'])
    expect(await facts('createTime >= "2000-01-01T00:00:00Z" AND fact:*', { user_id: 'u2' })).toEqual(['flies to Oslo'])
    // A timestamp compares with an RFC 3339 time only: "2025-01-01" or "yesterday" could match nothing, so
    // its NOT would match everything. Refused on every path, the purge included, and nothing is deleted.
    // ":" with a value on a field of one value matches nothing too (it tests a list for a member).
    for (const bad of ['createTime >= "2000-01-01"', 'NOT create_time >= "yesterday"', 'updateTime < 5', 'createTime > "2030-02-30T00:00:00Z"', 'NOT scope.user_id:"u1"', 'NOT fact:"has a cat"', 'NOT update_time:"2026-01-01T00:00:00Z"']) {
      for (const call of [() => b.listMemories({ parent: E, filter: bad }), () => b.retrieveMemories({ parent: E, scope: { user_id: 'u1' }, filter: bad }), () => b.purgeMemories({ parent: E, filter: bad, force: true })]) {
        const status = failed(await call())
        expect(status.code, bad).toBe(3)
        expect(status.message, bad).toMatch(/^filter: /)
      }
    }
    expect(failed(await b.listMemories({ parent: E, filter: 'NOT create_time >= "yesterday"' })).message).toBe('filter: create_time is a timestamp: compare it with a quoted RFC 3339 time, like create_time >= "2025-01-31T00:00:00Z" (a date, a time and a zone); received "yesterday".')
    expect(failed(await b.listMemories({ parent: E, filter: 'NOT fact:"has a cat"' })).message).toBe('filter: fact holds one value: compare it with = (fact = "has a cat"); ":" tests a list for a member, and ":*" for presence.')
    expect(await facts('')).toHaveLength(5)
    expect(failed(await b.listMemories({ parent: E, filter: 'scope = "u1"' })).code).toBe(3)
    expect(failed(await b.listMemories({ parent: E, filter: 'scope != "{\\"user_id\\": \\"u2\\"}"' })).code).toBe(3)
    expect(failed(await b.listMemories({ parent: E, filter: 'topics.other: "x"' })).code).toBe(3)
    // `topics:*`: a repeated field is present when it has an element (proto3 has no presence for
    // one; AIP-160 `:*` tests presence), on every path: list, simple and similarity retrieval.
    const withTopics = ['flies to Oslo', 'flies to Rome in May', 'likes dark mode', 'prefers window seats']
    expect(await facts('topics:*')).toEqual(withTopics)
    expect(await facts('NOT topics:*')).toEqual(['has a cat'])
    expect(await facts('-topics.managed_memory_topic:*', { user_id: 'u1' })).toEqual(['flies to Rome in May', 'has a cat'])
    const similar = async (filter: string): Promise<string[]> =>
      (ok(await b.retrieveMemories({ parent: E, scope: { user_id: 'u1' }, filter, similaritySearchParams: { searchQuery: 'cat window flight', topK: 10 } })).retrievedMemories ?? []).map((r) => r.memory?.fact ?? '').sort()
    expect(await similar('topics:*')).toEqual(['flies to Rome in May', 'likes dark mode', 'prefers window seats'])
    expect(await similar('NOT topics:*')).toEqual(['has a cat'])
    // A topic list is tested with ":"; "=" is refused, saying so (it would compare the list as one value).
    const refused = failed(await b.listMemories({ parent: E, filter: 'topics.custom_memory_topic_label = "travel"' }))
    expect(refused.code).toBe(3)
    expect(refused.message).toContain('test it for one with topics.custom_memory_topic_label:"travel"')
  })
})

describe('float fields hold 32-bit floats', () => {
  // CustomMetadata.numeric_value and Condition.numeric_value are `float` (retriever.proto), as is
  // RelevantChunk.chunk_relevance_score: Google holds a float32 and proto3 JSON prints the shortest
  // decimal that reads back as it. Over gRPC a client sends the float's bits, which protobuf.js
  // reads as 0.10000000149011612 for 0.1: the same value either way, so filters agree.
  it('stores a float field as the float32 it is, written shortest, whichever form it came in', async () => {
    const sr = new SemanticRetriever({ embedder })
    const corpus = ok(await sr.createCorpus({ corpus: { name: 'corpora/f' } })).name
    const json = ok(await sr.createDocument({ parent: corpus, document: { name: `${corpus}/documents/json`, customMetadata: [{ key: 'x', numericValue: 0.1 }] } }))
    const bits = ok(await sr.createDocument({ parent: corpus, document: { name: `${corpus}/documents/bits`, customMetadata: [{ key: 'x', numericValue: Math.fround(0.1) }, { key: 'y', numericValue: 0.123456789 }] } }))
    expect(json.customMetadata).toEqual([{ key: 'x', numericValue: 0.1 }])
    expect(bits.customMetadata).toEqual([{ key: 'x', numericValue: 0.1 }, { key: 'y', numericValue: 0.12345679 }])
    for (const doc of ['json', 'bits']) ok(await sr.createChunk({ parent: `${corpus}/documents/${doc}`, chunk: { data: { stringValue: 'desert spice' } } }))
    for (const value of [0.1, Math.fround(0.1)]) {
      const found = ok(await sr.queryCorpus({ name: corpus, query: 'desert spice', metadataFilters: [{ key: 'document.custom_metadata.x', conditions: [{ operation: 'EQUAL', numericValue: value }] }] }))
      expect((found.relevantChunks ?? []).map((c) => c.chunk.name.split('/')[3]).sort()).toEqual(['bits', 'json'])
      // The score as a float32 prints: at most 9 significant digits, the shortest that reads back.
      for (const c of found.relevantChunks ?? []) {
        const score = c.chunkRelevanceScore ?? 0
        expect([float32(score), String(score).replace(/^0\.0*|\./g, '').length <= 9]).toEqual([score, true])
      }
    }
    // Beyond the float range: refused, as Google's JSON parser refuses it, not stored as Infinity for gRPC's clients.
    expect(failed(await sr.createDocument({ parent: corpus, document: { customMetadata: [{ key: 'x', numericValue: 1e300 }] } }))).toMatchObject({ code: 3, message: expect.stringContaining("Invalid value at 'document.customMetadata[0].numericValue' (TYPE_FLOAT), 1e+300") as string })
  })

  it('says what was sent for a number past the largest double (JSON reads 1e400 as Infinity), not the null JSON would write', async () => {
    const sr = new SemanticRetriever({ embedder })
    const mb = new MemoryBank({ embedder })
    const corpus = ok(await sr.createCorpus({ corpus: { name: 'corpora/f' } })).name
    const past = (sign: string, value: string): string => `a ${sign}number past the largest double (about 1.8e308 in magnitude; read as ${value})`
    expect(failed(await mb.createMemory({ parent: E, memory: { fact: 'x', scope: { user_id: 'u' }, metadata: { n: { doubleValue: Infinity } } } })).message).toBe(
      `Invalid value at 'memory.metadata.n.doubleValue' (TYPE_DOUBLE), ${past('', 'Infinity')}: a double holds at most about 1.8e308 in magnitude.`,
    )
    expect(failed(await sr.createDocument({ parent: corpus, document: { customMetadata: [{ key: 'x', numericValue: -Infinity }] } })).message).toBe(
      `Invalid value at 'document.customMetadata[0].numericValue' (TYPE_FLOAT), ${past('negative ', '-Infinity')}: a float holds at most about 3.4e38 in magnitude.`,
    )
    expect(failed(await mb.listMemories({ parent: E, pageSize: Infinity })).message).toBe(`Invalid value at 'pageSize' (TYPE_INT32), ${past('', 'Infinity')}: an int32 is a whole number.`)
    // In process only: NaN.
    expect(failed(await mb.createMemory({ parent: E, memory: { fact: 'x', scope: { user_id: 'u' }, metadata: { n: { doubleValue: NaN } } } })).message).toBe(
      "Invalid value at 'memory.metadata.n.doubleValue' (TYPE_DOUBLE), NaN: a double holds at most about 1.8e308 in magnitude.",
    )
  })
})

describe('paging an engine that holds nothing yet', () => {
  // An engine is made on its first write: before it, a list is empty, but its request is read as
  // on any engine ("Invalid page token" for a token no call returned; pageSize is not negative).
  it('reads page size and token as on an engine with memories and sessions', async () => {
    const b = new MemoryBank({ embedder })
    const empty = 'projects/p/locations/l/reasoningEngines/9'
    const calls = [
      (page: Record<string, unknown>) => b.listMemories({ parent: empty, ...page }),
      (page: Record<string, unknown>) => b.sessions.listSessions({ parent: empty, ...page }),
      (page: Record<string, unknown>) => b.retrieveMemories({ parent: empty, scope: { user_id: 'u1' }, simpleRetrievalParams: page }),
    ]
    for (const call of calls) {
      expect(ok(await call({}))).toEqual({})
      expect(failed(await call({ pageToken: 'garbage' }))).toMatchObject({ code: 3, message: expect.stringContaining('Invalid page token') as string })
      expect(failed(await call({ pageSize: -1 })).code).toBe(3)
    }
    // The same answers as an engine that holds a memory and a session.
    const held = await bank(['likes tea'])
    ok(await held.sessions.createSession({ parent: E, session: { userId: 'u1' } }))
    expect(failed(await held.listMemories({ parent: E, pageToken: 'garbage' })).code).toBe(3)
    expect(failed(await held.sessions.listSessions({ parent: E, pageToken: 'garbage' })).code).toBe(3)
    expect(failed(await held.retrieveMemories({ parent: E, scope: { user_id: 'u1' }, simpleRetrievalParams: { pageToken: 'garbage' } })).code).toBe(3)
  })
})

describe('responses are proto3 JSON', () => {
  // https://protobuf.dev/programming-guides/json/#presence: "if a field supports presence,
  // serializers must emit the field value if and only if the corresponding hazzer would return
  // true. If the field doesn't support field presence and has the default value (for example
  // any empty repeated field) serializers should omit it from the output."
  it('omitUnset drops the defaults of fields without presence and keeps the named ones', async () => {
    expect(omitUnset({ a: '', b: 0, c: false, d: [], e: {}, f: undefined, g: 'x', h: 0, i: {} }, ['h', 'i'])).toEqual({ g: 'x', h: 0, i: {} })
    expect(omitUndefined({ a: undefined, b: 0, c: '' })).toEqual({ b: 0, c: '' })
    // Errors too: a violation of the request as a whole (an unknown top-level name) has no field path, so no `field`.
    const unknown = await new SemanticRetriever({ embedder }).queryCorpus({ name: 'corpora/c', query: 'x', nope: 1 })
    expect(!unknown.ok && unknown.status.details).toEqual([
      { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ description: 'Invalid JSON payload received. Unknown name "nope": Cannot find field.' }] },
    ])
  })

  // RetrieveContextsResponse { RagContexts contexts = 1 } and RagContexts { repeated Context
  // contexts = 1 }: the message is set, its empty list omitted.
  it('retrieveContexts with no context is {"contexts": {}}', async () => {
    const engine = new VertexRagEngine({ embedder })
    const op = ok(await engine.v1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'empty' } }))
    const response = ok(await engine.v1.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: String(op.response.name) }] }, query: { text: 'anything' } }))
    expect(JSON.stringify(response)).toBe('{"contexts":{}}')
    // No resource at all names ragResources, the field to fill (the deprecated ragCorpora only when it was used).
    const none = await engine.v1.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [] }, query: { text: 'anything' } })
    expect(!none.ok && none.status.details).toEqual([{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'vertexRagStore.ragResources', description: 'exactly one RagResource is supported; received 0.' }] }])
  })

  // Context: `optional double score = 6` (written even when 0); `double distance = 3` and `double
  // sparse_distance = 4` have no presence. sparseDistance — "The distance between the query sparse
  // embedding vector and the context text vector." — is a distance: smaller is closer. Quarry
  // reports 1 / (1 + BM25), so ascending sparseDistance is descending BM25.
  it('RAG Engine: score 0 is written; sparseDistance is 1 / (1 + BM25), smaller is closer', async () => {
    expect(sparseDistanceOf(0)).toBe(1)
    expect(sparseDistanceOf(3)).toBe(0.25)
    const { engine, corpus } = await rag()
    const response = ok(await engine.v1beta1.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'sandworm word17', ragRetrievalConfig: { hybridSearch: { alpha: 0 } } } }))
    const contexts = response.contexts.contexts ?? []
    expect(contexts.length).toBeGreaterThan(1)
    // BM25 alone, COSINE_DISTANCE: the best context's score is 1 − 1 = 0, and it is written.
    expect(contexts[0]).toHaveProperty('score', 0)
    const sparse = contexts.map((c) => c.sparseDistance ?? Number.NaN)
    for (const d of sparse) expect(d > 0 && d <= 1).toBe(true)
    expect([...sparse].sort((a, b) => a - b)).toEqual(sparse)
  })

  // RetrievedMemory: `double distance = 2` — "The distance between the query and the retrieved
  // Memory. Smaller values indicate more similar memories." Google's Memory Bank guide names the
  // measure (https://documentation.s3ns.fr/gemini-enterprise-agent-platform/scale/memory-bank/fetch-memories?hl=ja):
  // 「返されたメモリは、最も類似している(ユークリッド距離が最も短い)ものから最も類似していない(ユークリッド距離が最も長い)ものの順に並べ替えられます。」
  // ("The returned memories are sorted from the most similar (shortest Euclidean distance) to
  // the least similar (longest Euclidean distance)"; the Korean page, ?hl=ko, says the same).
  it('Memory Bank: distance is Euclidean between unit embeddings, ascending; exactly 0 is omitted', async () => {
    const b = await bank(['likes green tea', 'likes coffee', 'lives in Paris'])
    const response = ok(await b.retrieveMemories({ parent: E, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'likes green tea', topK: 3 } }))
    const retrieved = response.retrievedMemories ?? []
    expect(retrieved.map((r) => r.memory.fact)[0]).toBe('likes green tea')
    // The same text: distance 0, a double without presence, is left out.
    expect(retrieved[0]).not.toHaveProperty('distance')
    const distances = retrieved.map((r) => r.distance ?? 0)
    expect([...distances].sort((x, y) => x - y)).toEqual(distances)
    for (const d of distances) expect(d >= 0 && d <= 2).toBe(true)
    const [q, v] = await embedder.embed(['likes green tea', 'likes coffee'])
    if (!q || !v) throw new Error('embed')
    let dot = 0
    let qq = 0
    let vv = 0
    for (let i = 0; i < q.length; i++) {
      dot += (q[i] ?? 0) * (v[i] ?? 0)
      qq += (q[i] ?? 0) ** 2
      vv += (v[i] ?? 0) ** 2
    }
    expect(unitDistance(q, v)).toBeCloseTo(Math.sqrt(2 - (2 * dot) / Math.sqrt(qq * vv)), 12)
    expect(distances[retrieved.findIndex((r) => r.memory.fact === 'likes coffee')]).toBeCloseTo(unitDistance(q, v), 12)
  })

  // RelevantChunk: `float chunk_relevance_score = 1` has no presence: a score of exactly 0 is left out.
  it('Semantic Retriever: a chunkRelevanceScore of exactly 0 is omitted', async () => {
    const axes: Embedder = {
      name: 'axes',
      dimensions: 2,
      embed: async (texts) => texts.map((t) => Float32Array.from(t.startsWith('north') ? [0, 1] : [1, 0])),
    }
    const sr = new SemanticRetriever({ embedder: axes })
    const corpus = ok(await sr.createCorpus({ corpus: { name: 'corpora/axes' } })).name
    const document = ok(await sr.createDocument({ parent: corpus, document: { name: `${corpus}/documents/d` } })).name
    ok(await sr.batchCreateChunks({ parent: document, requests: [{ chunk: { data: { stringValue: 'north wind' } } }, { chunk: { data: { stringValue: 'east wind' } } }] }))
    const response = ok(await sr.queryCorpus({ name: corpus, query: 'north' }))
    const [best, orthogonal] = response.relevantChunks ?? []
    expect(best?.chunkRelevanceScore).toBeCloseTo(1, 6)
    expect(orthogonal?.chunk.data.stringValue).toBe('east wind')
    expect(orthogonal).not.toHaveProperty('chunkRelevanceScore')
  })
})
