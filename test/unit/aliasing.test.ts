import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { copyData } from '../../packages/adapters/src/rpc/copy-data.js'
import type { GenerativeModel } from '../../packages/adapters/src/generative/model.js'
import { predictionSurfaces } from '../../packages/adapters/src/generative/service.js'
import { scratchFolders } from '../support/scratch.js'

/**
 * A caller in this process shares no object with an engine's state (rpc/methods.ts `copying`): it
 * changes an object it got in a response (a) or passed in a request (b), then reads the state back
 * through the API, which must be unchanged. Each case is a path that shared the stored object
 * before (operations, events' JSON, configs, topics, metadata, session state, a PDF chunk's
 * page span, ...); the `control:` cases were built per call or frozen already.
 */
const embedder = createHashingEmbedder({ dimensions: 16 })
const E = 'projects/p/locations/l/reasoningEngines/1'
const L = 'projects/p/locations/l'
const tmp = scratchFolders('quarry-alias')
function ok<T>(o: Outcome<T>): any {
  if (!o.ok) throw new Error(`call failed: ${JSON.stringify(o.status)}`)
  return o.response as any
}
/** Tries a mutation: a frozen object throws in strict mode (ESM), which is "no change" too. */
const attempt = (fn: () => void): void => {
  try {
    fn()
  } catch (error) {
    if (!(error instanceof TypeError)) throw error
  }
}

describe('Memory Bank', () => {
  const bank = (): MemoryBank => new MemoryBank({ embedder })

  it('(a) createMemory operation: op.response mutated, getOperation / listOperations return the mutation', async () => {
    const b = bank()
    const op = ok(await b.createMemory({ parent: E, memory: { fact: 'I like tea', scope: { u: '1' } } }))
    op.response.fact = 'TAMPERED'
    op.metadata.genericMetadata.createTime = '1970-01-01T00:00:00Z'
    const again = ok(await b.getOperation({ name: op.name }))
    const listed = ok(await b.listOperations({ name: op.response.name }))
    expect(again.response.fact).toBe('I like tea')
    expect(listed.operations[0].metadata.genericMetadata.createTime).not.toBe('1970-01-01T00:00:00Z')
  })

  it('(a) getOperation result mutated: the next getOperation returns the mutation', async () => {
    const b = bank()
    const { name } = ok(await b.createMemory({ parent: E, memory: { fact: 'I like tea', scope: { u: '1' } } }))
    const got = ok(await b.getOperation({ name }))
    got.done = false
    got.name = 'x'
    expect(ok(await b.getOperation({ name }))).toMatchObject({ done: true, name })
  })

  it('(a) memory topics: frozen list, unfrozen elements (getMemory → topics[0].customMemoryTopicLabel)', async () => {
    const b = bank()
    const { response: m } = ok(await b.createMemory({ parent: E, memory: { fact: 'I like tea', scope: { u: '1' }, topics: [{ customMemoryTopicLabel: 'drinks' }] } }))
    const got = ok(await b.getMemory({ name: m.name }))
    attempt(() => (got.topics[0].customMemoryTopicLabel = 'TAMPERED'))
    expect(ok(await b.getMemory({ name: m.name })).topics).toEqual([{ customMemoryTopicLabel: 'drinks' }])
  })

  it('(a) memory metadata: frozen map, unfrozen values (retrieveMemories → metadata.k.stringValue)', async () => {
    const b = bank()
    const { response: m } = ok(await b.createMemory({ parent: E, memory: { fact: 'I like tea', scope: { u: '1' }, metadata: { k: { stringValue: 'v' } } } }))
    const r = ok(await b.retrieveMemories({ parent: E, scope: { u: '1' }, simpleRetrievalParams: {} }))
    attempt(() => (r.retrievedMemories[0].memory.metadata.k.stringValue = 'TAMPERED'))
    expect(ok(await b.getMemory({ name: m.name })).metadata).toEqual({ k: { stringValue: 'v' } })
  })

  it('control: memory scope is frozen (values are strings: deep) before any load', async () => {
    const b = bank()
    const { response: m } = ok(await b.createMemory({ parent: E, memory: { fact: 'I like tea', scope: { u: '1' } } }))
    const got = ok(await b.getMemory({ name: m.name }))
    attempt(() => (got.scope.u = 'TAMPERED'))
    expect(ok(await b.getMemory({ name: m.name })).scope).toEqual({ u: '1' })
  })

  it('(a) after saveTo/loadFrom nothing is frozen any more: scope, topics list, revision labels, session labels', async () => {
    const b = bank()
    const { response: m } = ok(await b.createMemory({ parent: E, memory: { fact: 'I like tea', scope: { u: '1' }, topics: [{ customMemoryTopicLabel: 'drinks' }], revisionLabels: { who: 'me' } } }))
    const { response: s } = ok(await b.sessions.createSession({ parent: E, session: { userId: 'u', labels: { a: 'b' } } }))
    const dir = tmp()
    b.saveTo(dir)
    const c = bank()
    c.loadFrom(dir)
    const got = ok(await c.getMemory({ name: m.name }))
    attempt(() => (got.scope.u = 'TAMPERED'))
    attempt(() => got.topics.push({ customMemoryTopicLabel: 'TAMPERED' }))
    const revs = ok(await c.listMemoryRevisions({ parent: m.name }))
    attempt(() => (revs.memoryRevisions[0].labels.who = 'TAMPERED'))
    const sess = ok(await c.sessions.getSession({ name: s.name }))
    attempt(() => (sess.labels.a = 'TAMPERED'))
    const after = ok(await c.getMemory({ name: m.name }))
    expect({
      scope: after.scope,
      topics: after.topics,
      revisionLabels: ok(await c.listMemoryRevisions({ parent: m.name })).memoryRevisions[0].labels,
      sessionLabels: ok(await c.sessions.getSession({ name: s.name })).labels,
    }).toEqual({ scope: { u: '1' }, topics: [{ customMemoryTopicLabel: 'drinks' }], revisionLabels: { who: 'me' }, sessionLabels: { a: 'b' } })
  })

  it('control: revision labels and session labels are frozen (strings: deep) before any load', async () => {
    const b = bank()
    const { response: m } = ok(await b.createMemory({ parent: E, memory: { fact: 'I like tea', scope: { u: '1' }, revisionLabels: { who: 'me' } } }))
    const revs = ok(await b.listMemoryRevisions({ parent: m.name }))
    attempt(() => (revs.memoryRevisions[0].labels.who = 'TAMPERED'))
    const { response: s } = ok(await b.sessions.createSession({ parent: E, session: { userId: 'u', labels: { a: 'b' } } }))
    const sess = ok(await b.sessions.getSession({ name: s.name }))
    attempt(() => (sess.labels.a = 'TAMPERED'))
    expect(ok(await b.listMemoryRevisions({ parent: m.name })).memoryRevisions[0].labels).toEqual({ who: 'me' })
    expect(ok(await b.sessions.getSession({ name: s.name })).labels).toEqual({ a: 'b' })
  })

  it('(a) session sessionState: getSession result mutated (top level, not frozen)', async () => {
    const b = bank()
    const { response: s } = ok(await b.sessions.createSession({ parent: E, session: { userId: 'u', sessionState: { step: 1 } } }))
    const got = ok(await b.sessions.getSession({ name: s.name }))
    got.sessionState.step = 99
    expect(ok(await b.sessions.getSession({ name: s.name })).sessionState).toEqual({ step: 1 })
  })

  it('(b) session sessionState: nested values of the request are kept by reference (structOf copies one level)', async () => {
    const b = bank()
    const state = { prefs: { color: 'red' } }
    const { response: s } = ok(await b.sessions.createSession({ parent: E, session: { userId: 'u', sessionState: state } }))
    state.prefs.color = 'TAMPERED'
    expect(ok(await b.sessions.getSession({ name: s.name })).sessionState).toEqual({ prefs: { color: 'red' } })
  })

  it('(a) listEvents returns the stored event JSON itself (known)', async () => {
    const b = bank()
    const { response: s } = ok(await b.sessions.createSession({ parent: E, session: { userId: 'u' } }))
    ok(await b.sessions.appendEvent({ name: s.name, event: { author: 'user', invocationId: 'i', timestamp: '2026-01-01T00:00:00Z', content: { parts: [{ text: 'hi' }] } } }))
    const ev = ok(await b.sessions.listEvents({ parent: s.name })).sessionEvents[0]
    ev.author = 'TAMPERED'
    ev.content.parts[0].text = 'TAMPERED'
    const again = ok(await b.sessions.listEvents({ parent: s.name })).sessionEvents[0]
    expect({ author: again.author, text: again.content.parts[0].text }).toEqual({ author: 'user', text: 'hi' })
  })

  it('(b) appendEvent keeps content / actions / eventMetadata / rawEvent of the request by reference (known)', async () => {
    const b = bank()
    const { response: s } = ok(await b.sessions.createSession({ parent: E, session: { userId: 'u' } }))
    const event = { author: 'user', invocationId: 'i', timestamp: '2026-01-01T00:00:00Z', content: { parts: [{ text: 'hi' }] }, eventMetadata: { partial: false }, rawEvent: { x: 1 } }
    ok(await b.sessions.appendEvent({ name: s.name, event }))
    event.content.parts[0]!.text = 'TAMPERED'
    event.eventMetadata.partial = true
    event.rawEvent.x = 2
    const again = ok(await b.sessions.listEvents({ parent: s.name })).sessionEvents[0]
    expect({ content: again.content, eventMetadata: again.eventMetadata, rawEvent: again.rawEvent }).toEqual({ content: { parts: [{ text: 'hi' }] }, eventMetadata: { partial: false }, rawEvent: { x: 1 } })
  })

  it('(b)+(a) actions.stateDelta values go into sessionState by reference: the request, the event JSON and the session share them', async () => {
    const b = bank()
    const { response: s } = ok(await b.sessions.createSession({ parent: E, session: { userId: 'u' } }))
    const actions = { stateDelta: { prefs: { color: 'red' } } }
    ok(await b.sessions.appendEvent({ name: s.name, event: { author: 'user', invocationId: 'i', timestamp: '2026-01-01T00:00:00Z', actions } }))
    actions.stateDelta.prefs.color = 'TAMPERED-BY-REQUEST'
    expect(ok(await b.sessions.getSession({ name: s.name })).sessionState).toEqual({ prefs: { color: 'red' } })
    // and through a response: the listed event's actions mutate the session's state
    const ev = ok(await b.sessions.listEvents({ parent: s.name })).sessionEvents[0]
    ev.actions.stateDelta.prefs.size = 'TAMPERED-BY-EVENT'
    expect(ok(await b.sessions.getSession({ name: s.name })).sessionState.prefs.size).toBeUndefined()
  })

  it('(b) createReasoningEngine keeps spec / encryptionSpec / trafficConfig / customizationConfigs[i] of the request by reference', async () => {
    const b = bank()
    const spec = { agentFramework: 'adk' }
    const encryptionSpec = { kmsKeyName: 'k1' }
    const trafficConfig = { split: 1 }
    const custom = { memoryTopics: [{ customMemoryTopic: { label: 'drinks' } }] }
    const op = ok(await b.reasoningEngines.createReasoningEngine({ parent: L, reasoningEngine: { displayName: 'e', spec, encryptionSpec, trafficConfig, contextSpec: { memoryBankConfig: { customizationConfigs: [custom] } } } }))
    spec.agentFramework = 'TAMPERED'
    encryptionSpec.kmsKeyName = 'TAMPERED'
    trafficConfig.split = 0
    custom.memoryTopics[0]!.customMemoryTopic.label = 'TAMPERED'
    const got = ok(await b.reasoningEngines.getReasoningEngine({ name: op.response.name }))
    expect({ spec: got.spec, enc: got.encryptionSpec, traffic: got.trafficConfig, custom: got.contextSpec.memoryBankConfig.customizationConfigs }).toEqual({
      spec: { agentFramework: 'adk' },
      enc: { kmsKeyName: 'k1' },
      traffic: { split: 1 },
      custom: [{ memoryTopics: [{ customMemoryTopic: { label: 'drinks' } }] }],
    })
  })

  it('(a) getReasoningEngine result mutated: labels (also what list filters read), spec, contextSpec.generationConfig', async () => {
    const b = bank()
    const op = ok(await b.reasoningEngines.createReasoningEngine({ parent: L, reasoningEngine: { displayName: 'e', labels: { team: 'a' }, spec: { x: 1 }, contextSpec: { memoryBankConfig: { generationConfig: { model: 'm1' } } } } }))
    const name = op.response.name
    const got = ok(await b.reasoningEngines.getReasoningEngine({ name }))
    got.labels.team = 'TAMPERED'
    got.spec.x = 2
    got.contextSpec.memoryBankConfig.generationConfig.model = 'TAMPERED'
    const again = ok(await b.reasoningEngines.getReasoningEngine({ name }))
    const filtered = ok(await b.reasoningEngines.listReasoningEngines({ parent: L, filter: 'labels.team = "TAMPERED"' }))
    expect({ labels: again.labels, spec: again.spec, model: again.contextSpec.memoryBankConfig.generationConfig.model, listedByTamperedLabel: filtered.reasoningEngines?.length ?? 0 }).toEqual({
      labels: { team: 'a' },
      spec: { x: 1 },
      model: 'm1',
      listedByTamperedLabel: 0,
    })
  })

  it('(a) the createReasoningEngine operation response shares the stored resource objects', async () => {
    const b = bank()
    const op = ok(await b.reasoningEngines.createReasoningEngine({ parent: L, reasoningEngine: { displayName: 'e', labels: { team: 'a' } } }))
    op.response.labels.team = 'TAMPERED'
    expect(ok(await b.reasoningEngines.getReasoningEngine({ name: op.response.name })).labels).toEqual({ team: 'a' })
  })

  it('(b) updateReasoningEngine keeps the request spec by reference too', async () => {
    const b = bank()
    const op = ok(await b.reasoningEngines.createReasoningEngine({ parent: L, reasoningEngine: { displayName: 'e' } }))
    const spec = { x: 1 }
    ok(await b.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name: op.response.name, spec }, updateMask: { paths: ['spec'] } }))
    spec.x = 2
    expect(ok(await b.reasoningEngines.getReasoningEngine({ name: op.response.name })).spec).toEqual({ x: 1 })
  })
})

describe('requests of callers in this process', () => {
  it('(b) a write waiting for its turn works on the request as it was at the call', async () => {
    const b = new MemoryBank({ embedder })
    const first = b.createMemory({ parent: E, memory: { fact: 'I like tea', scope: { u: '1' } } })
    const request = { parent: E, memory: { fact: 'I like coffee', scope: { u: '1' } } }
    const second = b.createMemory(request)
    request.memory.fact = 'TAMPERED'
    request.memory.scope.u = '2'
    const created = ok(await second).response
    await first
    expect(ok(await b.getMemory({ name: created.name }))).toMatchObject({ fact: 'I like coffee', scope: { u: '1' } })
  })

  it('copyData copies plain data as JSON would, as deep and as long as it is bounded to, and keeps the rest as it is', () => {
    let deep: Record<string, unknown> = { end: true }
    for (let i = 0; i < 300; i++) deep = { k: deep }
    const shared = { s: 1 }
    const cyclic: Record<string, unknown> = { a: [1, 'two', null, true] }
    cyclic['self'] = cyclic
    const parsed = JSON.parse('{"__proto__": {"x": 1}, "y": [2]}') as Record<string, unknown>
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { n: { m: 1 } })
    const foreign = runInNewContext('({ nested: { value: 1 } })') as { nested: { value: number } }
    const sparse: unknown[] = []
    sparse.length = 30_000_000
    const fn = (): void => undefined
    const date = new Date(0)
    class Point {
      x = 1
    }
    const point = new Point()
    const value = { deep, pair: [shared, shared], cyclic, parsed, bare, foreign, sparse, fn, date, point }
    const copy = copyData(value, { depth: 101, entries: 10_000 })
    expect(copy === value).toBe(false)
    // Levels 1 to 101 are copies (the value itself is level 1), the rest the original's.
    let a: unknown = deep
    let b: unknown = copy.deep
    for (let level = 2; level <= 301; level++) {
      expect(b === a, `level ${level}`).toBe(level > 101)
      a = (a as { k?: unknown }).k ?? a
      b = (b as { k?: unknown }).k ?? b
    }
    // What is met twice is copied once, a cycle as a cycle: the copy has the original's shape.
    expect(copy.pair[0]).toEqual(shared)
    expect(copy.pair[0]).toBe(copy.pair[1])
    expect(copy.pair[0] === shared).toBe(false)
    expect(copy.cyclic['self']).toBe(copy.cyclic)
    expect(copy.cyclic === cyclic).toBe(false)
    expect(copy.cyclic['a']).toEqual([1, 'two', null, true])
    expect(Object.getPrototypeOf(copy.parsed)).toBe(Object.prototype)
    expect(Object.keys(copy.parsed)).toEqual(['__proto__', 'y'])
    expect(copy.parsed['__proto__']).toEqual({ x: 1 })
    expect(Object.getPrototypeOf(copy.bare)).toBeNull()
    expect(copy.bare['n'] === bare['n']).toBe(false)
    expect(copy.foreign === foreign || copy.foreign.nested === foreign.nested).toBe(false)
    expect(copy.foreign).toEqual({ nested: { value: 1 } })
    // Longer than the bound: kept, never walked. Not data: kept.
    expect(copy.sparse).toBe(sparse)
    expect([copy.fn, copy.date, copy.point]).toEqual([fn, date, point])
    expect(copy.point).toBe(point)
  })

  it('an object reached by many paths is copied once, and counted once per path: 2^60 paths are refused at once, without being walked', async () => {
    let shared: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 60; i++) shared = { l: shared, r: shared }
    const many = 'The request holds more than 1,000,000 values, counting an object once for each place it appears'
    const rag = new VertexRagEngine({ embedder })
    // Anywhere in a request: an unknown field, an opaque field, a list of parts that share one part.
    const part = { text: 'desert spice '.repeat(5), inlineData: { mimeType: 'text/plain', data: 'eA==' } }
    const contents = Array.from({ length: 2_000 }, () => ({ role: 'user', parts: Array<unknown>(2_000).fill(part) }))
    for (const outcome of [
      await rag.v1beta1.getRagCorpus({ name: `${L}/ragCorpora/1`, junk: shared }),
      await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c', encryptionSpec: shared } }),
      await rag.v1beta1.augmentPrompt({ parent: L, contents, vertexRagStore: { ragResources: [{ ragCorpus: `${L}/ragCorpora/1` }] } }),
    ]) {
      expect(outcome).toMatchObject({ ok: false, status: { code: 3, message: expect.stringContaining(many) } })
    }
    // A loop is met once per level until the depth bound: within the count, and refused by the reader.
    const loop: Record<string, unknown> = {}
    loop['l'] = loop
    loop['r'] = loop
    expect(await rag.v1beta1.getRagCorpus({ name: `${L}/ragCorpora/1`, junk: loop })).toMatchObject({ ok: false, status: { code: 3, message: expect.stringContaining('Unknown name "junk"') } })
    expect(await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c', encryptionSpec: loop } })).toMatchObject({ ok: false, status: { code: 3, message: expect.stringContaining('nests deeper than 100 levels') } })
    // Counted as JSON would write it: the root, the list, and each label with its 3 values, twice (10).
    const label = { key: 'k', value: { strValue: 'v' } }
    expect(copyData({ a: [label, label] }, { depth: 10, values: 10 })).toEqual({ a: [label, label] })
    expect(() => copyData({ a: [label, label] }, { depth: 10, values: 9 })).toThrow('The request holds more than 9 values')
  })

  it('a request that loops back on itself is refused at the depth limit, not copied without end', async () => {
    const config: Record<string, unknown> = {}
    config['k'] = config
    const failed = await new VertexRagEngine({ embedder }).v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c', encryptionSpec: config } })
    expect(failed.ok).toBe(false)
    if (!failed.ok) expect(failed.status.message).toMatch(/nests deeper than 100 levels/)
  })

  it('a list far longer than any request may hold is refused at once, however sparse', async () => {
    const list: string[] = []
    list.length = 30_000_000
    list[0] = 'file:///nowhere'
    // Every entry read is counted: walking 30 million of them (a copy) would take seconds.
    let read = 0
    const uris = new Proxy(list, {
      get: (target, key, receiver) => {
        if (typeof key === 'string' && /^\d+$/.test(key)) read++
        return Reflect.get(target, key, receiver) as unknown
      },
    })
    const rag = new VertexRagEngine({ embedder })
    const corpus = ok(await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response.name
    const failed = await rag.v1beta1.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris } } })
    expect(failed.ok).toBe(false)
    if (!failed.ok) expect(failed.status).toMatchObject({ code: 3, message: expect.stringMatching(/10000|10,000/) })
    expect(read).toBe(0)
  })

  it('a request whose reading throws (a getter) is answered INTERNAL, never thrown', async () => {
    const internal: unknown[] = []
    const rag = new VertexRagEngine({ embedder, onInternalError: (error) => internal.push(error) })
    const request = {
      get name(): string {
        throw new Error('boom')
      },
    }
    const outcome = await rag.v1beta1.getRagCorpus(request)
    expect(outcome).toEqual({ ok: false, status: expect.objectContaining({ code: 13, message: 'Internal error encountered.' }) })
    expect(internal).toHaveLength(1)
  })

  it("(b) an upload's bytes changed while it waits for its turn are read as they were at the call", async () => {
    const rag = new VertexRagEngine({ embedder })
    const s = rag.v1beta1
    const parent = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response.name
    const first = s.uploadRagFile({ parent, ragFile: { displayName: 'a.txt' } }, new TextEncoder().encode('desert wind '.repeat(2000)))
    const bytes = new TextEncoder().encode('river stone harbor')
    const second = s.uploadRagFile({ parent, ragFile: { displayName: 'b.txt' } }, bytes)
    bytes.set(new TextEncoder().encode('TAMPERED!'), 0)
    const file = ok(await second).ragFile
    await first
    const found = ok(await s.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: parent, ragFileIds: [file.name.split('/').pop()] }] }, query: { text: 'river stone harbor', ragRetrievalConfig: { topK: 1 } } }))
    expect(found.contexts.contexts.map((c: { text: string }) => c.text)).toEqual(['river stone harbor'])
  })
})

describe('Vertex RAG Engine', () => {
  const rag = (): VertexRagEngine =>
    new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 32 }), clock: steppingClock('2026-02-01T00:00:00Z'), randomId: seededRandomId(11), gcsRoot: 'test/contract/fixtures/gcs' })

  it('(a) operations are stored and returned by reference (createRagCorpus → getOperation / listOperations)', async () => {
    const s = rag().v1beta1
    const op = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } }))
    op.response.displayName = 'TAMPERED'
    const got = ok(await s.getOperation({ name: op.name }))
    const listed = ok(await s.listOperations({ name: op.response.name }))
    expect(got.response.displayName).toBe('c')
    expect(listed.operations[0].response.displayName).toBe('c')
  })

  it('(a) corpus vectorDbConfig / ragEmbeddingModelConfig are returned by reference (getRagCorpus, createRagCorpus op)', async () => {
    const s = rag().v1beta1
    const op = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c', ragEmbeddingModelConfig: { vertexPredictionEndpoint: { endpoint: 'e1' } } } }))
    const name = op.response.name
    const got = ok(await s.getRagCorpus({ name }))
    got.vectorDbConfig.ragManagedDb = { ann: {} }
    op.response.ragEmbeddingModelConfig.vertexPredictionEndpoint.endpoint = 'TAMPERED'
    const again = ok(await s.getRagCorpus({ name }))
    expect({ db: again.vectorDbConfig, emb: again.ragEmbeddingModelConfig }).toEqual({ db: { ragManagedDb: { knn: {} } }, emb: { vertexPredictionEndpoint: { endpoint: 'e1' } } })
  })

  it('(b) createRagCorpus keeps vectorDbConfig.apiAuth (opaque) of the request by reference', async () => {
    const s = rag().v1beta1
    const apiAuth = { apiKeyConfig: { apiKeySecretVersion: 'v1' } }
    const op = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c', vectorDbConfig: { ragManagedDb: { knn: {} }, apiAuth } } }))
    apiAuth.apiKeyConfig.apiKeySecretVersion = 'TAMPERED'
    expect(ok(await s.getRagCorpus({ name: op.response.name })).vectorDbConfig.apiAuth).toEqual({ apiKeyConfig: { apiKeySecretVersion: 'v1' } })
  })

  it('(a)+(b) RagDataSchema schemaDetails returned by reference; listConfig.valueSchema (opaque) kept from the request', async () => {
    const s = rag().v1beta1
    const corpus = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response.name
    const created = ok(await s.createRagDataSchema({ parent: corpus, ragDataSchema: { key: 'k', schemaDetails: { type: 'STRING' } } }))
    created.schemaDetails.type = 'INTEGER'
    expect(ok(await s.getRagDataSchema({ name: created.name })).schemaDetails).toEqual({ type: 'STRING' })
    const valueSchema = { type: 'STRING' }
    const list = ok(await s.createRagDataSchema({ parent: corpus, ragDataSchema: { key: 'tags', schemaDetails: { type: 'LIST', listConfig: { valueSchema } } } }))
    valueSchema.type = 'TAMPERED'
    expect(ok(await s.getRagDataSchema({ name: list.name })).schemaDetails.listConfig.valueSchema).toEqual({ type: 'STRING' })
  })

  it('(a) RagMetadata value returned by reference (createRagMetadata / getRagMetadata → userSpecifiedMetadata.value)', async () => {
    const s = rag().v1beta1
    const corpus = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response.name
    const file = ok(await s.uploadRagFile({ parent: corpus, ragFile: { displayName: 'a.txt' } }, 'desert wind and spice')).ragFile.name
    const m = ok(await s.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key: 'k', value: { strValue: 'a' } } } }))
    m.userSpecifiedMetadata.value.strValue = 'TAMPERED'
    expect(ok(await s.getRagMetadata({ name: m.name })).userSpecifiedMetadata.value).toEqual({ strValue: 'a' })
  })

  it('(a) a PDF chunk pageSpan is returned by reference (retrieveContexts → contexts[i].chunk.pageSpan)', async () => {
    const s = rag().v1beta1
    const corpus = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response.name
    ok(await s.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://library/dune-pages.pdf'] } } }))
    const q = { parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'desert spice', ragRetrievalConfig: { topK: 1 } } }
    const first = ok(await s.retrieveContexts(q)).contexts.contexts[0]
    const before = { ...first.chunk.pageSpan }
    first.chunk.pageSpan.firstPage = 999
    expect(ok(await s.retrieveContexts(q)).contexts.contexts[0].chunk.pageSpan).toEqual(before)
  })

  it("(a) generateContent's model hook gets copies of the contexts it grounds on: changing them changes no corpus", async () => {
    const rag = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 32 }), gcsRoot: 'test/contract/fixtures/gcs' })
    const s = rag.v1beta1
    const corpus = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response.name
    ok(await s.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://library/dune-pages.pdf'] } } }))
    const q = { parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'desert spice', ragRetrievalConfig: { topK: 1 } } }
    const before = ok(await s.retrieveContexts(q)).contexts.contexts[0].chunk.pageSpan
    let changed = 0
    const model: GenerativeModel = async (request) => {
      const span = (request.retrieval?.contexts[0] as { chunk?: { pageSpan?: { firstPage: number } } } | undefined)?.chunk?.pageSpan
      if (span) {
        span.firstPage = 999
        changed++
      }
      return { parts: [{ text: 'ok' }] }
    }
    const models = predictionSurfaces({ v1: rag.v1, v1beta1: rag.v1beta1 }, { model })
    ok(await models.v1beta1.generateContent({ model: `${L}/publishers/google/models/gemini-2.5-flash`, contents: [{ role: 'user', parts: [{ text: 'desert spice' }] }], tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }], ragRetrievalConfig: { topK: 1 } } } }] }))
    expect(changed).toBe(1)
    expect(ok(await s.retrieveContexts(q)).contexts.contexts[0].chunk.pageSpan).toEqual(before)
  })

  it('(b) an opaque field holds JSON data only: a Date, a class instance, a function (toJSON too) or a bigint is refused with its path', async () => {
    const s = rag().v1beta1
    class Key {
      name = 'k'
    }
    const cases: [unknown, string][] = [
      [{ at: new Date(0) }, "'ragCorpus.encryptionSpec.at' (type.googleapis.com/google.cloud.aiplatform.v1beta1.EncryptionSpec): an instance of Date is not JSON data"],
      [{ key: new Key() }, "'ragCorpus.encryptionSpec.key' (type.googleapis.com/google.cloud.aiplatform.v1beta1.EncryptionSpec): an instance of Key is not JSON data"],
      [{ toJSON: () => 'x'.repeat(5_000_000) }, "'ragCorpus.encryptionSpec.toJSON' (type.googleapis.com/google.cloud.aiplatform.v1beta1.EncryptionSpec): a function is not JSON data"],
      [{ n: [1n] }, "'ragCorpus.encryptionSpec.n[0]' (type.googleapis.com/google.cloud.aiplatform.v1beta1.EncryptionSpec): a bigint is not JSON data"],
      // JSON writes an undefined list element, or a hole, as null: the stored value would change at a restart.
      [{ n: [1, undefined] }, "'ragCorpus.encryptionSpec.n[1]' (type.googleapis.com/google.cloud.aiplatform.v1beta1.EncryptionSpec): undefined (a list element, or a hole in the list) is not JSON data"],
      // eslint-disable-next-line no-sparse-arrays
      [{ n: [[1, , 3]] }, "'ragCorpus.encryptionSpec.n[0][1]' (type.googleapis.com/google.cloud.aiplatform.v1beta1.EncryptionSpec): undefined (a list element, or a hole in the list) is not JSON data"],
    ]
    for (const [encryptionSpec, message] of cases) {
      const refused = await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c', encryptionSpec } })
      expect(refused).toMatchObject({ ok: false, status: { code: 3, message: expect.stringContaining(message) } })
    }
    expect(ok(await s.listRagCorpora({ parent: L })).ragCorpora ?? []).toEqual([])
    // Plain data of another realm, or without a prototype, is JSON data; so is a key whose value
    // is undefined (absent in JSON as in memory).
    const foreign = runInNewContext('({ kmsKeyName: "k1" })') as object
    const created = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c', encryptionSpec: foreign } }))
    expect(created.done).toBe(true)
    const absent = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'd', encryptionSpec: { kmsKeyName: 'k2', extra: undefined } } }))
    expect(absent.done).toBe(true)
    expect(ok(await s.listRagCorpora({ parent: L })).ragCorpora.map((c: { displayName: string }) => c.displayName)).toEqual(['c', 'd'])
  })

  it('control: RagFile, RagEngineConfig and contexts (besides pageSpan) are built per call', async () => {
    const s = rag().v1beta1
    const corpus = ok(await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'c' } })).response.name
    const f = ok(await s.uploadRagFile({ parent: corpus, ragFile: { displayName: 'a.txt' } }, 'desert wind and spice')).ragFile
    f.displayName = 'TAMPERED'
    const cfg = ok(await s.getRagEngineConfig({ name: `${L}/ragEngineConfig` }))
    cfg.ragManagedDbConfig.unprovisioned = {}
    expect(ok(await s.getRagFile({ name: f.name })).displayName).toBe('a.txt')
    expect(ok(await s.getRagEngineConfig({ name: `${L}/ragEngineConfig` })).ragManagedDbConfig).toEqual({ basic: {} })
  })
})

describe('Semantic Retriever', () => {
  it('control: custom metadata (document and chunk, stringListValue.values too) cannot be changed through a response, also after saveTo/loadFrom', async () => {
    const sr = new SemanticRetriever({ embedder })
    ok(await sr.createCorpus({ corpus: { name: 'corpora/c' } }))
    const doc = ok(await sr.createDocument({ parent: 'corpora/c', document: { name: 'corpora/c/documents/d', customMetadata: [{ key: 'tags', stringListValue: { values: ['a'] } }] } }))
    const chunk = ok(await sr.createChunk({ parent: doc.name, chunk: { data: { stringValue: 'desert wind' }, customMetadata: [{ key: 'k', stringValue: 'v' }] } }))
    const dir = tmp()
    sr.saveTo(dir)
    const loaded = new SemanticRetriever({ embedder })
    loaded.loadFrom(dir)
    for (const engine of [sr, loaded]) {
      const d = ok(await engine.getDocument({ name: doc.name }))
      const c = ok(await engine.getChunk({ name: chunk.name }))
      attempt(() => d.customMetadata[0].stringListValue.values.push('x'))
      attempt(() => (c.customMetadata[0].stringValue = 'x'))
      attempt(() => d.customMetadata.push({ key: 'x', stringValue: 'y' }))
      expect(ok(await engine.getDocument({ name: doc.name })).customMetadata).toEqual([{ key: 'tags', stringListValue: { values: ['a'] } }])
      expect(ok(await engine.getChunk({ name: chunk.name })).customMetadata).toEqual([{ key: 'k', stringValue: 'v' }])
    }
  })
})
