import { createRequire } from 'node:module'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import {
  ApiError,
  MemoryBankServiceClient,
  RetrieverServiceClient,
  VertexRagEngine,
  createServer,
  defaultEmbedder,
  defaultEngines,
  resetDefaultEngines,
  v1,
  v1beta1,
  type QuarryServer,
} from '@quarry/adapters'
import { aiplatform, localAuth } from './google-gax.js'

/**
 * Drop-in behaviour in process (issue 15 §2): every method of Google's clients exists on ours
 * (enumerated from their prototypes), the RPCs Quarry does not serve answer UNIMPLEMENTED (in
 * process and, through Google's own REST clients, 501), path helpers agree with Google's,
 * clients made without an engine share one per API, and the default embedder matches meaning.
 */
const require = createRequire(import.meta.url)
const { v1beta } = require('@google-ai/generativelanguage') as typeof import('@google-ai/generativelanguage')

const embedder = createHashingEmbedder({ dimensions: 32 })
type Named = Record<string, unknown>

/** Every own member of a class's prototype but the constructor: RPCs, list variants, LRO checks, path helpers, mixins, getters. */
function members(cls: { prototype: object }): string[] {
  return Object.getOwnPropertyNames(cls.prototype)
    .filter((n) => n !== 'constructor')
    .sort()
}

/** The members of one of our clients: its own (table) methods and everything up its prototype chain. */
function ours(client: object): Set<string> {
  const names = new Set(Object.keys(client))
  for (let p: object | null = Object.getPrototypeOf(client) as object | null; p && p !== Object.prototype; p = Object.getPrototypeOf(p) as object | null) {
    for (const n of Object.getOwnPropertyNames(p)) if (n !== 'constructor') names.add(n)
  }
  return names
}

const PAIRS = [
  { name: 'aiplatform v1 VertexRagServiceClient', google: aiplatform.v1.VertexRagServiceClient, make: () => new v1.VertexRagServiceClient({ embedder }), count: 281 },
  { name: 'aiplatform v1 VertexRagDataServiceClient', google: aiplatform.v1.VertexRagDataServiceClient, make: () => new v1.VertexRagDataServiceClient({ embedder }), count: 297 },
  { name: 'aiplatform v1beta1 VertexRagServiceClient', google: aiplatform.v1beta1.VertexRagServiceClient, make: () => new v1beta1.VertexRagServiceClient({ embedder }), count: 334 },
  { name: 'aiplatform v1beta1 VertexRagDataServiceClient', google: aiplatform.v1beta1.VertexRagDataServiceClient, make: () => new v1beta1.VertexRagDataServiceClient({ embedder }), count: 371 },
  { name: 'aiplatform v1beta1 MemoryBankServiceClient', google: aiplatform.v1beta1.MemoryBankServiceClient, make: () => new v1beta1.MemoryBankServiceClient({ embedder }), count: 338 },
  { name: 'aiplatform v1beta1 ReasoningEngineServiceClient', google: aiplatform.v1beta1.ReasoningEngineServiceClient, make: () => new v1beta1.ReasoningEngineServiceClient({ embedder }), count: 338 },
  { name: 'aiplatform v1 ReasoningEngineServiceClient', google: aiplatform.v1.ReasoningEngineServiceClient, make: () => new v1.ReasoningEngineServiceClient({ embedder }), count: 285 },
  { name: 'generativelanguage v1beta RetrieverServiceClient', google: v1beta.RetrieverServiceClient, make: () => new RetrieverServiceClient({ embedder }), count: 54 },
] as const

describe("every method of Google's clients exists on ours", () => {
  for (const pair of PAIRS) {
    it(pair.name, () => {
      const expected = members(pair.google)
      // The pinned client versions: a new client version shows up here first.
      expect(expected.length).toBe(pair.count)
      const client = pair.make()
      const have = ours(client)
      expect(expected.filter((n) => !have.has(n))).toEqual([])
      for (const n of expected) {
        const kind = Object.getOwnPropertyDescriptor(pair.google.prototype, n)?.get ? 'string' : 'function'
        expect(typeof (client as unknown as Named)[n], n).toBe(kind)
      }
    })
  }
})

/** Google's client instance, made offline with local fake credentials (no call is made: only its path helpers run). */
function googleClient(cls: new (options: object) => object): Named {
  return new cls({ fallback: true, apiEndpoint: '127.0.0.1', authClient: localAuth() }) as Named
}

describe("path helpers render and match as Google's", () => {
  for (const pair of PAIRS) {
    it(pair.name, async () => {
      const google = googleClient(pair.google as unknown as new (options: object) => object)
      const client = pair.make() as unknown as Named
      const paths = members(pair.google).filter((n) => n.endsWith('Path'))
      expect(paths.length).toBeGreaterThan(0)
      let matched = 0
      for (const path of paths) {
        const g = google[path] as (...ids: string[]) => string
        const q = client[path] as (...ids: string[]) => string
        const ids = Array.from({ length: g.length }, (_, i) => `id${i}-${path.length}`)
        const name = g.apply(google, ids)
        expect(q(...ids), path).toBe(name)
        expect(() => q(...ids.slice(1))).toThrow(TypeError)
        const resource = path.slice(0, -'Path'.length)
        const matchers = members(pair.google).filter((n) => n.startsWith('match') && n.endsWith(`From${resource.charAt(0).toUpperCase()}${resource.slice(1)}Name`))
        for (const m of matchers) {
          expect((client[m] as (n: string) => string)(name), m).toBe((google[m] as (n: string) => string).call(google, name))
          expect(() => (google[m] as (n: string) => string).call(google, `x/${name}`)).toThrow(TypeError)
          expect(() => (client[m] as (n: string) => string)(`x/${name}`)).toThrow(TypeError)
          matched++
        }
      }
      expect(matched).toBe(members(pair.google).filter((n) => n.startsWith('match')).length)
      await (google['close'] as () => Promise<void>).call(google)
    })
  }
})

/** What an in-process call rejects with. */
async function rejection(call: () => unknown): Promise<ApiError> {
  try {
    const result = call()
    if (result && typeof result === 'object' && Symbol.asyncIterator in result) {
      for await (const _ of result as AsyncIterable<unknown>) break
    } else await result
  } catch (error) {
    if (error instanceof ApiError) return error
    throw error
  }
  throw new Error('the call succeeded')
}

const UNSERVED = [
  // Served through the generativeModel hook; without it, UNIMPLEMENTED saying how to pass one.
  ['rag', 'corroborateContent', 'VertexRagService.CorroborateContent', /without a generative model .*generativeModel: \{ corroborate/],
  ['rag', 'askContexts', 'VertexRagService.AskContexts', /without a generative model .*generativeModel: \{ generate/],
  ['data', 'getLocation', 'Locations.GetLocation', /no regions/],
  ['rag', 'listLocationsAsync', 'Locations.ListLocations', /no regions/],
  ['memory', 'getIamPolicy', 'IAMPolicy.GetIamPolicy', /access policies/],
  ['memory', 'setIamPolicy', 'IAMPolicy.SetIamPolicy', /access policies/],
  ['data', 'testIamPermissions', 'IAMPolicy.TestIamPermissions', /access policies/],
] as const

describe('RPCs Quarry does not serve', () => {
  it('answer UNIMPLEMENTED in process (code 12), naming the method and why, on v1 and v1beta1', async () => {
    for (const ns of [v1, v1beta1]) {
      const engine = new VertexRagEngine({ embedder })
      const clients: Record<string, unknown> = {
        rag: new ns.VertexRagServiceClient({ engine }),
        data: new ns.VertexRagDataServiceClient({ engine }),
        memory: new v1beta1.MemoryBankServiceClient({ embedder }),
      }
      for (const [which, method, rpc, why] of UNSERVED) {
        const client = clients[which] as Record<string, (request: object) => unknown>
        // The RAG Engine RPCs read their request first (a name is not one of their fields).
        const request = which === 'rag' && !/Locations/.test(rpc) ? { parent: 'projects/p/locations/l' } : { parent: 'projects/p/locations/l', name: 'projects/p/locations/l/ragEngineConfig' }
        const error = await rejection(() => client[method]?.(request))
        expect({ method, code: error.code, status: error.status }).toEqual({ method, code: 12, status: 'UNIMPLEMENTED' })
        expect(error.message).toContain(rpc)
        expect(error.message).toMatch(why)
      }
    }
  })
})

describe('operations in process: check, list, cancel, delete', () => {
  it('reads back, lists, cancels (no effect: done) and deletes the operations of one engine', async () => {
    const data = new v1beta1.VertexRagDataServiceClient({ embedder })
    const [op] = await data.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'Ops' } })
    const [corpus] = await op.promise()
    const checked = await data.checkCreateRagCorpusProgress(op.name)
    expect({ done: checked.done, name: checked.name, result: checked.result?.name }).toEqual({ done: true, name: op.name, result: corpus.name })
    const [updateOp] = await data.updateRagCorpus({ ragCorpus: { name: corpus.name, displayName: 'Ops 2' } })
    const [listed] = await data.listOperations({ name: corpus.name })
    expect(listed.map((o) => o.name)).toEqual([op.name, updateOp.name])
    const [firstPage, next] = await data.listOperations({ name: corpus.name, pageSize: 1 }, { autoPaginate: false })
    expect(firstPage.map((o) => o.name)).toEqual([op.name])
    expect((await data.listOperations(next ?? {}, { autoPaginate: false }))[0].map((o) => o.name)).toEqual([updateOp.name])
    expect(await data.cancelOperation({ name: op.name })).toEqual([{}])
    expect(await data.deleteOperation({ name: op.name })).toEqual([{}])
    expect((await rejection(() => data.checkCreateRagCorpusProgress(op.name))).code).toBe(5)
    const streamed: string[] = []
    await new Promise((done, fail) => data.listRagCorporaStream({ parent: 'projects/p/locations/l' }).on('data', (c: { name: string }) => streamed.push(c.name)).on('end', done).on('error', fail))
    expect(streamed).toEqual([corpus.name])
    expect(await data.getProjectId()).toBeTypeOf('string')
    expect(await data.initialize()).toBe(data)
    await data.close()
  })
})

describe('clients made without an engine share one per API', () => {
  beforeEach(() => resetDefaultEngines())

  it('a corpus created through the data client is retrieved through the retrieval client, v1 and v1beta1 alike', async () => {
    const data = new v1beta1.VertexRagDataServiceClient({ apiEndpoint: 'us-central1-aiplatform.googleapis.com' }) // Google's options: still the shared engine
    const [op] = await data.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'Shared' } })
    const [corpus] = await op.promise()
    for (const client of [new v1.VertexRagDataServiceClient(), new v1beta1.VertexRagDataServiceClient()]) {
      expect((await client.getRagCorpus({ name: corpus.name }))[0].displayName).toBe('Shared')
    }
    expect(new v1.VertexRagServiceClient().engine).toBe(data.engine)
    expect(new v1beta1.VertexRagServiceClient().engine).toBe(defaultEngines().vertexRag)
    // Retrieval on an empty corpus through the shared engine: found (not NOT_FOUND), nothing to return.
    const [answer] = await new v1.VertexRagServiceClient().retrieveContexts({ parent: 'projects/p/locations/l', vertexRagStore: { ragResources: [{ ragCorpus: corpus.name }] }, query: { text: 'anything' } })
    expect(answer.contexts?.contexts ?? []).toEqual([])
    // An explicit engine, or engine options, give a private engine.
    expect((await rejection(() => new v1.VertexRagDataServiceClient({ engine: new VertexRagEngine({ embedder }) }).getRagCorpus({ name: corpus.name }))).code).toBe(5)
    const own = new v1beta1.VertexRagDataServiceClient({ embedder })
    expect(own.engine).not.toBe(data.engine)
    expect((await rejection(() => own.getRagCorpus({ name: corpus.name }))).code).toBe(5)
    // The reset starts the next clients from empty engines; clients made before keep theirs.
    resetDefaultEngines()
    expect((await rejection(() => new v1.VertexRagDataServiceClient().getRagCorpus({ name: corpus.name }))).code).toBe(5)
    expect((await data.getRagCorpus({ name: corpus.name }))[0].name).toBe(corpus.name)
  })

  it('the Semantic Retriever and Memory Bank clients too', async () => {
    const [corpus] = await new RetrieverServiceClient().createCorpus({ corpus: { displayName: 'Shared' } })
    expect((await new RetrieverServiceClient().getCorpus({ name: corpus.name }))[0].displayName).toBe('Shared')
    expect(new RetrieverServiceClient({ embedder }).retriever).not.toBe(defaultEngines().semanticRetriever)
    const parent = 'projects/p/locations/l/reasoningEngines/1'
    const [op] = await new MemoryBankServiceClient().createMemory({ parent, memory: { fact: 'I cycle to work.', scope: { user: 'u' } } })
    const [memory] = await op.promise()
    expect((await new v1beta1.MemoryBankServiceClient().getMemory({ name: memory.name }))[0].fact).toBe('I cycle to work.')
    expect(new MemoryBankServiceClient().memoryBank).toBe(defaultEngines().memoryBank)
  })
})

describe('the default embedder is GloVe SIF, as quarry serve', () => {
  beforeEach(() => resetDefaultEngines())

  it('ranks "I am allergic to peanuts." first for "food allergy"', { timeout: 120_000 }, async () => {
    const memories = new MemoryBankServiceClient()
    const parent = 'projects/p/locations/l/reasoningEngines/1'
    for (const fact of ['My favourite city is Lisbon.', 'I am allergic to peanuts.']) {
      const [op] = await memories.createMemory({ parent, memory: { fact, scope: { user_id: 'u1' } } })
      await op.promise()
    }
    const [{ retrievedMemories = [] }] = await memories.retrieveMemories({ parent, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'food allergy' } })
    expect(retrievedMemories.map((r) => r.memory?.fact)).toEqual(['I am allergic to peanuts.', 'My favourite city is Lisbon.'])
    const [near, far] = retrievedMemories.map((r) => r.distance ?? Number.NaN)
    expect(far as number).toBeGreaterThan((near as number) + 0.2)
    // One embedder object for every engine that names none: the vectors load once per process.
    expect(defaultEmbedder()).toBe(defaultEmbedder())
    expect(defaultEmbedder()).toMatchObject({ name: 'glove-6b-100d-sif(a=0.00002,vocabulary=100000)', dimensions: 100 })
    // The hashing embedder stays available by option: it sees no shared word here.
    const hashing = new MemoryBankServiceClient({ embedder: createHashingEmbedder() })
    for (const fact of ['My favourite city is Lisbon.', 'I am allergic to peanuts.']) await (await hashing.createMemory({ parent, memory: { fact, scope: { user_id: 'u1' } } }))[0].promise()
    const [byWords] = await hashing.retrieveMemories({ parent, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'food allergy' } })
    expect(byWords.retrievedMemories?.length).toBe(2)
  })
})

/** Google's own REST clients against the local server: the unserved RPCs answer 501 UNIMPLEMENTED, operations are served. */
describe("through Google's REST clients", () => {
  let server: QuarryServer
  type ClientOptions = NonNullable<ConstructorParameters<typeof aiplatform.v1beta1.VertexRagServiceClient>[0]>
  let opts: ClientOptions

  beforeAll(async () => {
    server = createServer({ embedder })
    const { port } = await server.listen({ port: 0, host: '127.0.0.1' })
    opts = { apiEndpoint: '127.0.0.1', port, protocol: 'http', fallback: true, authClient: localAuth() }
  })
  afterAll(async () => {
    await server.close()
  })

  /** A REST failure as Google's client surfaces it: the HTTP status and the `{"error": ...}` body. */
  async function failureOf(call: Promise<unknown>): Promise<{ http: number; status: string; message: string }> {
    const error = (await call.then(() => undefined, (e: unknown) => e)) as { message?: string } | undefined
    if (!error) throw new Error('the call succeeded')
    const body = JSON.parse(error.message ?? '') as { error: { code: number; status: string; message: string } }
    return { http: body.error.code, status: body.error.status, message: body.error.message }
  }

  for (const version of ['v1', 'v1beta1'] as const) {
    it(`${version}: corroborateContent and askContexts without a model, getLocation → 501`, async () => {
      // One type for both versions (their request types differ only in v1beta1's additions).
      const rag = new aiplatform[version].VertexRagServiceClient(opts) as unknown as InstanceType<typeof aiplatform.v1beta1.VertexRagServiceClient>
      const data = new aiplatform[version].VertexRagDataServiceClient(opts) as unknown as InstanceType<typeof aiplatform.v1beta1.VertexRagDataServiceClient>
      const parent = 'projects/p/locations/l'
      const calls: [string, () => Promise<unknown>][] = [
        ['CorroborateContent', () => rag.corroborateContent({ parent, content: { parts: [{ text: 'hi' }] } })],
        ['AskContexts', () => rag.askContexts({ parent, query: { text: 'hi' } })],
        ['GetLocation', () => data.getLocation({ name: parent })],
      ]
      for (const [rpc, call] of calls) {
        const failed = await failureOf(call())
        expect({ rpc, http: failed.http, status: failed.status }).toEqual({ rpc, http: 501, status: 'UNIMPLEMENTED' })
        expect(failed.message).toContain(rpc)
      }
      await Promise.all([rag.close(), data.close()])
    })
  }

  it('operations: checkXProgress, listOperationsAsync, cancelOperation, deleteOperation', async () => {
    // google-gax types these requests as protobuf.js message classes; plain objects are what it takes.
    const request = (fields: { name: string }): never => fields as never
    const data = new aiplatform.v1beta1.VertexRagDataServiceClient(opts)
    const [op] = await data.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'Ops' } })
    const [corpus] = await op.promise()
    const checked = await data.checkCreateRagCorpusProgress(op.name as string)
    expect(checked.done).toBe(true)
    const names: string[] = []
    for await (const o of data.listOperationsAsync(request({ name: corpus.name as string }))) names.push(o.name as string)
    expect(names).toEqual([op.name])
    await data.cancelOperation(request({ name: op.name as string }))
    await data.deleteOperation(request({ name: op.name as string }))
    expect((await failureOf(data.checkCreateRagCorpusProgress(op.name as string).then((o) => o))).http).toBe(404)
    const memories = new aiplatform.v1beta1.MemoryBankServiceClient(opts)
    const parent = 'projects/p/locations/l/reasoningEngines/7'
    const [mop] = await memories.createMemory({ parent, memory: { fact: 'I cycle.', scope: { user_id: 'u' } } })
    expect((await memories.checkCreateMemoryProgress(mop.name as string)).done).toBe(true)
    const listed: string[] = []
    for await (const o of memories.listOperationsAsync(request({ name: (mop.name as string).replace(/\/operations\/.*$/, '') }))) listed.push(o.name as string)
    expect(listed).toEqual([mop.name])
    await Promise.all([data.close(), memories.close()])
  })
})
