import { createRequire } from 'node:module'
import net from 'node:net'
import { request as httpRequest } from 'node:http'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import {
  MemoryBank,
  MemoryBankServiceClient,
  RetrieverServiceClient,
  SemanticRetriever,
  VertexRagEngine,
  createServer,
  seededRandomId,
  steppingClock,
  v1,
  v1beta1,
  type QuarryServer,
} from '@quarry/adapters'
import { runQuarry } from '../support/run-cli.js'
import { startServe } from '../support/quarry-process.js'
import { createGrpcServer } from '../../packages/adapters/src/grpc/server.js'
import { bindMethods } from '../../packages/adapters/src/transport/bound-methods.js'
import { InFlight } from '../../packages/adapters/src/transport/in-flight.js'
import { Receiving } from '../../packages/adapters/src/transport/receiving.js'
import { aiplatform, clientRequire, grpc, localAuth } from './google-gax.js'

/**
 * Google's own Node clients on their default transport, gRPC (issue 17 §2): @google-cloud/aiplatform
 * 6.11 and @google-ai/generativelanguage 3.7 reach `createServer({ grpcPort })` with an endpoint,
 * a port and insecure channel credentials only — `grpc` is the clients' own (their google-gax's),
 * `universeDomain` stops google-auth-library probing the cloud metadata server. The same lifecycle
 * of all three APIs runs through gRPC, through the same clients over REST, and through Quarry's
 * in-process clients, each on an identical engine (seeded ids, stepping clock): every answer and
 * every error must read the same.
 */
const require = createRequire(import.meta.url)
const { v1beta } = require('@google-ai/generativelanguage') as typeof import('@google-ai/generativelanguage')
/** The clients' proto3 JSON conversion (google-gax's own), to compare messages with in-process JSON. */
const { toProto3JSON } = clientRequire('proto3-json-serializer') as { toProto3JSON: (message: object) => unknown }

// Every socket this process opens: none may leave the machine.
const connections: string[] = []
const connect = net.Socket.prototype.connect
net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
  // net.connect passes its arguments normalized: [[options, callback]].
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0]
  const target = first as { host?: string; port?: number; path?: string } | number
  connections.push(typeof target === 'object' ? (target.path ?? `${target.host ?? 'localhost'}:${target.port ?? ''}`) : `localhost:${String(target)}`)
  return (connect as (...a: unknown[]) => net.Socket).apply(this, args)
} as typeof connect

const GCS = fileURLToPath(new URL('../contract/fixtures/gcs', import.meta.url))
const embedder = createHashingEmbedder({ dimensions: 64 })
/** Identical engines: the same seeds and the same stepping clock. */
function engineOptions() {
  return {
    embedder,
    semanticRetriever: { randomId: seededRandomId(1), clock: steppingClock('2026-01-01T00:00:00Z') },
    vertexRag: { randomId: seededRandomId(2), gcsRoot: GCS, clock: steppingClock('2026-01-01T00:00:00Z') },
    memoryBank: { randomId: seededRandomId(3), clock: steppingClock('2026-01-01T00:00:00Z') },
  }
}

type Json = unknown
/** One answer or failure in a comparable form: proto messages as proto3 JSON, times as epoch ms, numbers at float precision (gRPC's `float` fields are 32-bit). */
function normalize(value: unknown): Json {
  if (Array.isArray(value)) return value.map(normalize)
  if (value !== null && typeof value === 'object') {
    const ctor = (value as { constructor?: { toObject?: unknown } }).constructor
    const plain = (typeof ctor?.toObject === 'function' ? toProto3JSON(value) : value) as Record<string, unknown>
    // A Timestamp some clients give as a plain { seconds, nanos } object.
    if ('seconds' in plain && Object.keys(plain).every((k) => k === 'seconds' || k === 'nanos')) return Number(String(plain['seconds'])) * 1000 + Number(plain['nanos'] ?? 0) / 1e6
    return Object.fromEntries(Object.entries(plain).map(([k, v]) => [k, normalize(v)]))
  }
  if (typeof value === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value)) return Date.parse(value)
  if (typeof value === 'number') return Math.fround(value)
  return value
}

/** A failure as every transport can tell it: numeric code, message, field violations. */
interface Failure {
  readonly code: number
  readonly message: string
  readonly violations: Json
}
const CODES: Readonly<Record<string, number>> = { INVALID_ARGUMENT: 3, NOT_FOUND: 5, ALREADY_EXISTS: 6, FAILED_PRECONDITION: 9, UNIMPLEMENTED: 12 }
function failureOf(error: unknown): Failure {
  const e = error as { code?: unknown; details?: unknown; statusDetails?: readonly { fieldViolations?: unknown }[]; message?: string }
  // REST through google-gax 5: a GaxiosError whose message is the `{"error": ...}` body.
  if (typeof e.details !== 'string') {
    const body = JSON.parse(e.message ?? '') as { error: { status: string; message: string; details?: readonly { fieldViolations?: unknown }[] } }
    return { code: CODES[body.error.status] ?? -1, message: body.error.message, violations: normalize(body.error.details?.[0]?.fieldViolations ?? []) }
  }
  return { code: Number(e.code), message: e.details, violations: normalize(e.statusDetails?.[0]?.fieldViolations ?? []) }
}

interface Clients {
  readonly sr: InstanceType<typeof v1beta.RetrieverServiceClient>
  readonly data: { readonly v1: InstanceType<typeof aiplatform.v1.VertexRagDataServiceClient>; readonly v1beta1: InstanceType<typeof aiplatform.v1beta1.VertexRagDataServiceClient> }
  readonly rag: { readonly v1: InstanceType<typeof aiplatform.v1.VertexRagServiceClient>; readonly v1beta1: InstanceType<typeof aiplatform.v1beta1.VertexRagServiceClient> }
  readonly mb: InstanceType<typeof aiplatform.v1beta1.MemoryBankServiceClient>
}

type ClientOptions = NonNullable<ConstructorParameters<typeof aiplatform.v1beta1.VertexRagServiceClient>[0]>

function googleClients(options: ClientOptions): Clients {
  return {
    sr: new v1beta.RetrieverServiceClient(options),
    data: { v1: new aiplatform.v1.VertexRagDataServiceClient(options), v1beta1: new aiplatform.v1beta1.VertexRagDataServiceClient(options) },
    rag: { v1: new aiplatform.v1.VertexRagServiceClient(options), v1beta1: new aiplatform.v1beta1.VertexRagServiceClient(options) },
    mb: new aiplatform.v1beta1.MemoryBankServiceClient(options),
  }
}

/** Quarry's in-process clients over fresh identical engines: typed like Google's for the scenario. */
function inProcessClients(): Clients {
  const o = engineOptions()
  const vertexRag = new VertexRagEngine({ embedder, ...o.vertexRag })
  const semanticRetriever = new SemanticRetriever({ embedder, ...o.semanticRetriever })
  const memoryBank = new MemoryBank({ embedder, ...o.memoryBank })
  return {
    sr: new RetrieverServiceClient({ retriever: semanticRetriever }),
    data: { v1: new v1.VertexRagDataServiceClient({ engine: vertexRag, version: 'v1' }), v1beta1: new v1beta1.VertexRagDataServiceClient({ engine: vertexRag }) },
    rag: { v1: new v1.VertexRagServiceClient({ engine: vertexRag, version: 'v1' }), v1beta1: new v1beta1.VertexRagServiceClient({ engine: vertexRag }) },
    mb: new MemoryBankServiceClient({ memoryBank }),
  } as unknown as Clients
}

type Log = [string, Json][]

/** The lifecycle of all three APIs, every answer and failure logged in order. */
async function scenario(c: Clients): Promise<Log> {
  const log: Log = []
  const step = async (label: string, call: () => Promise<unknown>): Promise<unknown> => {
    try {
      const value = await call()
      log.push([label, normalize(value)])
      return value
    } catch (error) {
      log.push([label, { failure: failureOf(error) }])
      return undefined
    }
  }
  // Semantic Retriever v1beta.
  await step('sr.createCorpus', async () => (await c.sr.createCorpus({ corpus: { name: 'corpora/books', displayName: 'Books' } }))[0])
  await step('sr.createCorpus (random id)', async () => (await c.sr.createCorpus({ corpus: { displayName: 'Second shelf' } }))[0])
  await step('sr.createDocument', async () => (await c.sr.createDocument({ parent: 'corpora/books', document: { name: 'corpora/books/documents/dune', displayName: 'Dune', customMetadata: [{ key: 'year', numericValue: 1965 }, { key: 'tags', stringListValue: { values: ['sf', 'desert'] } }] } }))[0])
  const texts = ['The spice must flow across the desert.', 'Paul rides a sandworm in the deep desert.', 'Fear is the mind-killer.', 'The desert power of the Fremen.']
  const doc = 'corpora/books/documents/dune'
  await step('sr.batchCreateChunks', async () => (await c.sr.batchCreateChunks({ parent: doc, requests: texts.map((t, i) => ({ parent: doc, chunk: { name: `${doc}/chunks/c${i}`, data: { stringValue: t }, customMetadata: [{ key: 'page', numericValue: i }] } })) }))[0])
  await step('sr.listChunks (pages of 2)', async () => (await c.sr.listChunks({ parent: doc, pageSize: 2 }))[0])
  await step('sr.queryCorpus (resultsCount 0: the default)', async () => (await c.sr.queryCorpus({ name: 'corpora/books', query: 'desert sandworm', resultsCount: 0 }))[0])
  await step('sr.queryCorpus (filter)', async () => (await c.sr.queryCorpus({ name: 'corpora/books', query: 'desert', resultsCount: 2, metadataFilters: [{ key: 'chunk.custom_metadata.page', conditions: [{ operation: 'GREATER_EQUAL', numericValue: 1 }] }] }))[0])
  await step('sr.queryDocument', async () => (await c.sr.queryDocument({ name: doc, query: 'fear', resultsCount: 3 }))[0])
  await step('sr.updateChunk', async () => (await c.sr.updateChunk({ chunk: { name: `${doc}/chunks/c2`, data: { stringValue: 'Fear is the little death.' } }, updateMask: { paths: ['data'] } }))[0])
  await step('sr.getChunk', async () => (await c.sr.getChunk({ name: `${doc}/chunks/c2` }))[0])
  await step('sr.queryCorpus resultsCount 101', async () => (await c.sr.queryCorpus({ name: 'corpora/books', query: 'x', resultsCount: 101 }))[0])
  await step('sr.getCorpus missing', async () => (await c.sr.getCorpus({ name: 'corpora/none' }))[0])
  await step('sr.createCorpus twice', async () => (await c.sr.createCorpus({ corpus: { name: 'corpora/books' } }))[0])
  await step('sr.deleteCorpus without force', async () => (await c.sr.deleteCorpus({ name: 'corpora/books' }))[0])
  await step('sr.deleteCorpus force', async () => (await c.sr.deleteCorpus({ name: 'corpora/books', force: true }))[0])
  await step('sr.listCorpora', async () => (await c.sr.listCorpora({}))[0])

  // Vertex AI RAG Engine, both versions (one engine).
  const parent = 'projects/demo/locations/us-central1'
  for (const version of ['v1beta1', 'v1'] as const) {
    const data = c.data[version]
    const rag = c.rag[version]
    const corpus = (await step(`${version} createRagCorpus`, async () => (await (await data.createRagCorpus({ parent, ragCorpus: { displayName: `Library ${version}` } }))[0].promise())[0])) as { name: string }
    await step(`${version} getRagCorpus`, async () => (await data.getRagCorpus({ name: corpus.name }))[0])
    await step(`${version} importRagFiles`, async () => (await (await data.importRagFiles({ parent: corpus.name, importRagFilesConfig: { gcsSource: { uris: ['gs://library'] }, ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 24, chunkOverlap: 6 } } } } }))[0].promise())[0])
    const files = (await step(`${version} listRagFiles`, async () => (await data.listRagFiles({ parent: corpus.name }))[0])) as { name: string }[]
    await step(`${version} getRagFile`, async () => (await data.getRagFile({ name: files[1]?.name ?? '' }))[0])
    const store = { ragResources: [{ ragCorpus: corpus.name }] }
    await step(`${version} retrieveContexts topK 3`, async () => (await rag.retrieveContexts({ parent, vertexRagStore: store, query: { text: 'sandworms in the desert', ragRetrievalConfig: { topK: 3 } } }))[0])
    await step(`${version} retrieveContexts topK 0 (the default)`, async () => (await rag.retrieveContexts({ parent, vertexRagStore: store, query: { text: 'a proud lady', ragRetrievalConfig: { topK: 0 } } }))[0])
    await step(`${version} retrieveContexts topK 10`, async () => (await rag.retrieveContexts({ parent, vertexRagStore: store, query: { text: 'a proud lady', ragRetrievalConfig: { topK: 10 } } }))[0])
    await step(`${version} retrieveContexts topK 2`, async () => (await rag.retrieveContexts({ parent, vertexRagStore: store, query: { text: 'a proud lady', ragRetrievalConfig: { topK: 2 } } }))[0])
    // hybridSearch is a v1beta1 field (v1's protos do not have it: its clients drop it).
    if (version === 'v1beta1') await step(`${version} retrieveContexts hybrid alpha 0.5`, async () => (await rag.retrieveContexts({ parent, vertexRagStore: store, query: { text: 'spice desert', ragRetrievalConfig: { topK: 4, hybridSearch: { alpha: 0.5 } } } }))[0])
    await step(`${version} retrieveContexts threshold`, async () => (await rag.retrieveContexts({ parent, vertexRagStore: store, query: { text: 'ocean waves', ragRetrievalConfig: { topK: 5, filter: { vectorDistanceThreshold: 0.9 } } } }))[0])
    await step(`${version} retrieveContexts empty query`, async () => (await rag.retrieveContexts({ parent, vertexRagStore: store, query: { text: '' } }))[0])
    // The parts as text: gRPC's decoder gives every Part its empty `thoughtSignature` bytes.
    await step(`${version} augmentPrompt`, async () => {
      const [out] = (await (rag.augmentPrompt as (r: object) => Promise<unknown[]>)({ parent, vertexRagStore: store, contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })) as [{ augmentedPrompt: { role: string; parts: { text: string }[] }[]; facts: unknown }]
      return { augmentedPrompt: out.augmentedPrompt.map((c) => ({ role: c.role, parts: c.parts.map((p) => p.text) })), facts: out.facts }
    })
    await step(`${version} updateRagCorpus`, async () => (await (await data.updateRagCorpus({ ragCorpus: { name: corpus.name, displayName: 'Renamed', description: 'books' } }))[0].promise())[0])
    // The operation as returned (its Any fields stay packed in a client's raw response): its name and state.
    const op = (await step(`${version} deleteRagFile`, async () => {
      const { name, done } = (await data.deleteRagFile({ name: files[0]?.name ?? '' }))[0].latestResponse as { name: string; done: boolean }
      return { name, done }
    })) as { name: string }
    await step(`${version} getOperation`, async () => {
      const [got] = (await (data.getOperation as (r: { name: string }) => Promise<unknown>)({ name: op.name })) as [{ name: string; done: boolean }]
      return { name: got.name, done: got.done }
    })
    await step(`${version} getRagCorpus missing`, async () => (await data.getRagCorpus({ name: `${parent}/ragCorpora/404` }))[0])
    await step(`${version} deleteRagCorpus force`, async () => (await (await data.deleteRagCorpus({ name: corpus.name, force: true }))[0].promise())[0])
    await step(`${version} listRagCorpora`, async () => (await data.listRagCorpora({ parent }))[0])
  }

  // Memory Bank v1beta1.
  const engine = 'projects/demo/locations/us-central1/reasoningEngines/42'
  const memories: { name: string }[] = []
  for (const [fact, user] of [['I like green tea.', 'u1'], ['I live in Lyon.', 'u1'], ['I like coffee.', 'u2']] as const) {
    memories.push((await step(`mb.createMemory ${fact}`, async () => (await (await c.mb.createMemory({ parent: engine, memory: { fact, scope: { user_id: user } } }))[0].promise())[0])) as { name: string })
  }
  await step('mb.getMemory', async () => (await c.mb.getMemory({ name: memories[1]?.name ?? '' }))[0])
  await step('mb.retrieveMemories similarity', async () => (await c.mb.retrieveMemories({ parent: engine, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'which tea do I like', topK: 5 } }))[0])
  await step('mb.retrieveMemories simple page', async () => (await c.mb.retrieveMemories({ parent: engine, scope: { user_id: 'u1' }, simpleRetrievalParams: { pageSize: 1 } }))[0])
  await step('mb.updateMemory', async () => (await (await c.mb.updateMemory({ memory: { name: memories[1]?.name ?? '', fact: 'I moved to Porto.' }, updateMask: { paths: ['fact'] } }))[0].promise())[0])
  await step('mb.generateMemories', async () => (await (await c.mb.generateMemories({ parent: engine, scope: { user_id: 'u1' }, directMemoriesSource: { directMemories: [{ fact: 'I like green tea.' }, { fact: 'I play chess.' }] } }))[0].promise())[0])
  await step('mb.listMemories', async () => (await c.mb.listMemories({ parent: engine }))[0])
  await step('mb.retrieveMemories topK -1', async () => (await c.mb.retrieveMemories({ parent: engine, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'x', topK: -1 } }))[0])
  await step('mb.deleteMemory', async () => (await (await c.mb.deleteMemory({ name: memories[2]?.name ?? '' }))[0].promise())[0])
  await step('mb.getMemory deleted', async () => (await c.mb.getMemory({ name: memories[2]?.name ?? '' }))[0])
  return log
}

let grpcServer: QuarryServer
let restServer: QuarryServer
let grpcPort: number
let grpcLog: Log
let restLog: Log
let localLog: Log

beforeAll(async () => {
  grpcServer = createServer({ ...engineOptions(), grpcPort: 0 })
  const bound = await grpcServer.listen({ port: 0, host: '127.0.0.1' })
  grpcPort = bound.grpcPort as number
  restServer = createServer(engineOptions())
  const { port } = await restServer.listen({ port: 0, host: '127.0.0.1' })
  const grpcClients = googleClients({ apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' })
  const restClients = googleClients({ apiEndpoint: '127.0.0.1', port, protocol: 'http', fallback: true, authClient: localAuth() })
  grpcLog = await scenario(grpcClients)
  restLog = await scenario(restClients)
  localLog = await scenario(inProcessClients())
}, 120_000)

afterAll(async () => {
  await grpcServer.close()
  await restServer.close()
  // No request left the machine: every socket went to this loopback host.
  expect(connections.length).toBeGreaterThan(0)
  for (const c of connections) expect(c).toMatch(/^(127\.0\.0\.1|localhost):\d+$/)
})

describe("Google's clients on gRPC", () => {
  it('run the whole lifecycle of all three APIs', () => {
    const failed = grpcLog.filter(([, v]) => typeof v === 'object' && v !== null && 'failure' in v).map(([label]) => label)
    // Exactly the steps meant to fail failed.
    expect(failed).toEqual([
      'sr.queryCorpus resultsCount 101',
      'sr.getCorpus missing',
      'sr.createCorpus twice',
      'sr.deleteCorpus without force',
      'v1beta1 retrieveContexts empty query',
      'v1beta1 getRagCorpus missing',
      'v1 retrieveContexts empty query',
      'v1 getRagCorpus missing',
      'mb.retrieveMemories topK -1',
      'mb.getMemory deleted',
    ])
  })

  it('answer every call exactly as the same clients over REST', () => {
    expect(grpcLog.map(([label]) => label)).toEqual(restLog.map(([label]) => label))
    for (const [i, [label, value]] of grpcLog.entries()) expect(value, label).toEqual(restLog[i]?.[1])
  })

  it('answer with the ids, order, scores and distances of the in-process engine', () => {
    // In process, responses also carry fields newer than the shipped protos (served over REST
    // only); compare what the protos carry: names, texts, scores, distances, counts, failures.
    const pick = (value: Json): Json => {
      if (Array.isArray(value)) return value.map(pick)
      if (value !== null && typeof value === 'object') {
        const o = value as Record<string, unknown>
        if ('failure' in o) return o
        const keep = ['name', 'displayName', 'fact', 'text', 'sourceUri', 'score', 'distance', 'chunkRelevanceScore', 'importedRagFilesCount', 'failedRagFilesCount', 'stringValue', 'nextPageToken']
        // An empty string or a zero is proto3's unset (some clients fill it in).
        return Object.fromEntries(Object.entries(o).filter(([k, v]) => (keep.includes(k) && v !== '' && v !== 0) || (typeof v === 'object' && v !== null)).map(([k, v]) => [k, pick(v)]))
      }
      return value
    }
    expect(localLog.map(([label]) => label)).toEqual(grpcLog.map(([label]) => label))
    for (const [i, [label, value]] of grpcLog.entries()) {
      expect(pick(value), label).toEqual(pick(localLog[i]?.[1]))
    }
  })

  it('read unset fields as zero, zero as the default (resultsCount 0 → 10, topK 0 → 10)', () => {
    const entry = (label: string): Record<string, unknown> => grpcLog.find(([l]) => l === label)?.[1] as Record<string, unknown>
    expect((entry('sr.queryCorpus (resultsCount 0: the default)')['relevantChunks'] as unknown[]).length).toBe(4)
    for (const version of ['v1', 'v1beta1']) {
      // Every chunk of the corpus (9, fewer than the default 10), the same as asking for 10; 2 when asked.
      const contexts = entry(`${version} retrieveContexts topK 0 (the default)`)['contexts']
      expect((contexts as { contexts: unknown[] }).contexts.length).toBe(9)
      expect(contexts).toEqual(entry(`${version} retrieveContexts topK 10`)['contexts'])
      expect((entry(`${version} retrieveContexts topK 2`)['contexts'] as { contexts: unknown[] }).contexts).toEqual((contexts as { contexts: unknown[] }).contexts.slice(0, 2))
    }
  })

  it('carry the status, its message and BadRequest details as Google does', async () => {
    const client = new v1beta.RetrieverServiceClient({ apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' })
    await client.createCorpus({ corpus: { name: 'corpora/errors' } })
    const error = (await client.queryCorpus({ name: 'corpora/errors', query: 'x', resultsCount: 101 }).catch((e: unknown) => e)) as { code: number; details: string; statusDetails: { fieldViolations: { field: string; description: string }[] }[]; metadata: { get(k: string): unknown[] } }
    expect(error.code).toBe(3)
    expect(error.details).toBe('resultsCount: resultsCount must be between 1 and 100 (0 or unset: the default 10); received 101.')
    expect(error.statusDetails.map((d) => d.constructor.name)).toEqual(['BadRequest'])
    expect(error.statusDetails[0]?.fieldViolations.map((v) => ({ field: v.field, description: v.description }))).toEqual([{ field: 'resultsCount', description: 'resultsCount must be between 1 and 100 (0 or unset: the default 10); received 101.' }])
    expect(error.metadata.get('grpc-status-details-bin').length).toBe(1)
    await client.close()
  })

  it('give real Timestamps, int64s and enums', () => {
    const corpus = grpcLog.find(([l]) => l === 'v1beta1 getRagCorpus')?.[1] as Record<string, unknown>
    expect(corpus['createTime']).toBe(Date.parse('2026-01-01T00:00:00Z'))
    expect(corpus['corpusStatus']).toMatchObject({ state: 'ACTIVE' })
    const imported = grpcLog.find(([l]) => l === 'v1beta1 importRagFiles')?.[1] as Record<string, unknown>
    expect(imported).toMatchObject({ importedRagFilesCount: '6', failedRagFilesCount: '3' })
  })
})

/** A raw gRPC call (bytes in, bytes out) with grpc-js, as a hostile or broken client would make it. */
function rawCall(port: number, path: string, body: Buffer, options: { deadline?: number; authority?: string } = {}): { done: Promise<{ code: number; details: string }>; cancel: () => void } {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), options.authority ? { 'grpc.default_authority': options.authority } : {})
  let cancel = (): void => undefined
  const done = new Promise<{ code: number; details: string }>((resolve) => {
    const call = client.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      body,
      new grpc.Metadata(),
      options.deadline === undefined ? {} : { deadline: options.deadline },
      (error) => {
        client.close()
        resolve(error ? { code: error.code, details: error.details } : { code: 0, details: '' })
      },
    )
    cancel = () => call.cancel()
  })
  return { done, cancel }
}

/** google.ai.generativelanguage.v1beta.CreateCorpusRequest { corpus: { name } } by hand: field 1 (corpus) → field 1 (name). */
function createCorpusBytes(name: string): Buffer {
  const inner = Buffer.concat([Buffer.from([0x0a, name.length]), Buffer.from(name)])
  return Buffer.concat([Buffer.from([0x0a, inner.length]), inner])
}
const CREATE_CORPUS = '/google.ai.generativelanguage.v1beta.RetrieverService/CreateCorpus'
const GET_CORPUS = '/google.ai.generativelanguage.v1beta.RetrieverService/GetCorpus'

describe('the gRPC server against broken and hostile calls', () => {
  it('answers an unknown service or method UNIMPLEMENTED, a malformed message INVALID_ARGUMENT, and keeps serving', async () => {
    expect((await rawCall(grpcPort, '/no.such.Service/Method', Buffer.alloc(0)).done).code).toBe(grpc.status.UNIMPLEMENTED)
    expect((await rawCall(grpcPort, '/google.ai.generativelanguage.v1beta.RetrieverService/NoSuchMethod', Buffer.alloc(0)).done).code).toBe(grpc.status.UNIMPLEMENTED)
    const malformed = await rawCall(grpcPort, CREATE_CORPUS, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f])).done
    expect(malformed.code).toBe(grpc.status.INVALID_ARGUMENT)
    expect(malformed.details).toMatch(/^The request is not a valid google\.ai\.generativelanguage\.v1beta\.CreateCorpusRequest message/)
    expect(malformed.details).not.toMatch(/\/work|node_modules|at /)
    expect(await rawCall(grpcPort, CREATE_CORPUS, createCorpusBytes('corpora/after-garbage')).done).toEqual({ code: 0, details: '' })
  })

  it('answers a message over the size limit RESOURCE_EXHAUSTED', async () => {
    const small = createServer({ embedder, grpcPort: 0, maxBodyBytes: 1024 })
    const { grpcPort: port } = await small.listen()
    const big = createCorpusBytes(`corpora/${'x'.repeat(100)}`)
    const padded = Buffer.concat([big, Buffer.from([0x12, 0xe8, 0x07]), Buffer.alloc(1000, 0x61)])
    expect((await rawCall(port as number, CREATE_CORPUS, padded).done).code).toBe(grpc.status.RESOURCE_EXHAUSTED)
    expect((await rawCall(port as number, CREATE_CORPUS, createCorpusBytes('corpora/small')).done).code).toBe(0)
    await small.close()
  })

  it('refuses a call naming another host (DNS rebinding), and HTTP/1.1 on the gRPC port', async () => {
    const denied = await rawCall(grpcPort, GET_CORPUS, createCorpusBytes('corpora/x').subarray(2), { authority: 'evil.example:443' }).done
    expect(denied.code).toBe(grpc.status.PERMISSION_DENIED)
    const status = await new Promise<number | string>((resolve) => {
      const req = httpRequest({ host: '127.0.0.1', port: grpcPort, path: '/', method: 'GET' }, (res) => resolve(res.statusCode ?? 0))
      req.on('error', (e) => resolve((e as NodeJS.ErrnoException).code ?? 'error'))
      req.end()
    })
    expect(status).not.toBe(200)
  })

  it('does not apply a write whose caller cancelled (gRPC or REST) or whose deadline passed while it waited', async () => {
    // A slow write holds the write lock: its embedder waits until released.
    let release = (): void => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    let calls = 0
    const slow = { name: 'slow', dimensions: 8, embed: async (texts: readonly string[]) => { if (calls++ === 0) await gate; return texts.map(() => new Float32Array(8).fill(1)) } }
    const server = createServer({ embedder: slow, grpcPort: 0 })
    const { grpcPort: port, url } = await server.listen()
    const options = { apiEndpoint: '127.0.0.1', port, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' }
    const client = new v1beta.RetrieverServiceClient(options)
    await client.createCorpus({ corpus: { name: 'corpora/c' } })
    await client.createDocument({ parent: 'corpora/c', document: { name: 'corpora/c/documents/d' } })
    const first = client.createChunk({ parent: 'corpora/c/documents/d', chunk: { name: 'corpora/c/documents/d/chunks/slow', data: { stringValue: 'slow' } } })
    // The slow write holds the lock once its embedder is called (not after a fixed time: a busy machine may take longer).
    while (calls === 0) await new Promise((r) => setTimeout(r, 5))
    const late = rawCall(port as number, CREATE_CORPUS, createCorpusBytes('corpora/late'), { deadline: Date.now() + 300 })
    const cancelled = rawCall(port as number, CREATE_CORPUS, createCorpusBytes('corpora/cancelled'))
    // Over REST the client's closed connection is its cancel.
    const abort = new AbortController()
    const abandoned = fetch(`${url}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"corpora/abandoned"}', signal: abort.signal }).catch((error: unknown) => error)
    await new Promise((r) => setTimeout(r, 100))
    cancelled.cancel()
    abort.abort()
    expect(await abandoned).toMatchObject({ name: 'AbortError' })
    expect((await late.done).code).toBe(grpc.status.DEADLINE_EXCEEDED)
    expect((await cancelled.done).code).toBe(grpc.status.CANCELLED)
    // The server counts the deadline from when the call reached it (grpc-timeout is relative), a
    // little after the client's on a busy machine: let it pass there too before the lock frees.
    await new Promise((r) => setTimeout(r, 400))
    release()
    await first
    await new Promise((r) => setTimeout(r, 100))
    const [corpora] = await client.listCorpora({})
    expect(corpora.map((c) => c.name)).toEqual(['corpora/c'])
    const [chunks] = await client.listChunks({ parent: 'corpora/c/documents/d' })
    expect(chunks.map((c) => c.name)).toEqual(['corpora/c/documents/d/chunks/slow'])
    await client.close()
    await server.close()
  })
})

describe('operations of REST-only methods, read over gRPC', () => {
  it('answer without the metadata and result whose types the shipped protos lack, and every other operation as before', async () => {
    // PurgeMemories is REST-only (newer than the shipped protos): its operation's metadata and
    // result are Anys of types gRPC has no bytes for. Read over gRPC they are left out; the list
    // that holds the operation is answered, not failed INTERNAL.
    const server = createServer({ ...engineOptions(), grpcPort: 0 })
    const { grpcPort: port } = await server.listen()
    const engine = 'projects/p/locations/us-central1/reasoningEngines/purged'
    const memories = server.engines.memoryBank
    const made = await memories.createMemory({ parent: engine, memory: { fact: 'likes tea', scope: { user_id: 'u1' } } })
    expect(made.ok).toBe(true)
    const generated = await memories.generateMemories({ parent: engine, scope: { user_id: 'u1' }, directMemoriesSource: { directMemories: [{ fact: 'likes green tea' }] } })
    if (!generated.ok) throw new Error(generated.status.message)
    const generateName = (generated.response as { name: string }).name
    const purge = await memories.purgeMemories({ parent: engine, filter: 'scope.user_id = "u1"', force: true })
    if (!purge.ok) throw new Error(purge.status.message)
    const purgeName = (purge.response as { name: string }).name
    const client = new aiplatform.v1beta1.MemoryBankServiceClient({ apiEndpoint: '127.0.0.1', port, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' })
    // The mixin's request types are protobuf.js classes: a plain object is what the client sends.
    const [got] = (await (client.getOperation as (r: { name: string }) => Promise<unknown>)({ name: purgeName })) as [{ name?: string; done?: boolean; metadata?: unknown; response?: unknown }]
    expect(got).toMatchObject({ name: purgeName, done: true })
    expect(got.metadata ?? null).toBe(null)
    expect(got.response ?? null).toBe(null)
    // Over REST (in process here) the same operation carries both.
    const rest = await memories.getOperation({ name: purgeName })
    expect(rest.ok && (rest.response as { metadata?: { '@type'?: string } }).metadata?.['@type']).toBe('type.googleapis.com/google.cloud.aiplatform.v1beta1.PurgeMemoriesOperationMetadata')
    // The engine's list holds the generate's operation (a type the protos have: its metadata is kept) and the purge's.
    const listed: { name?: string | null; metadata?: { type_url?: string | null } | null }[] = []
    for await (const op of (client.listOperationsAsync as (r: { name: string }) => AsyncIterable<(typeof listed)[number]>)({ name: engine })) listed.push(op)
    const byName = new Map(listed.map((op) => [op.name, op]))
    expect(byName.get(purgeName)?.metadata ?? null).toBe(null)
    expect(listed.map((op) => op.name).sort()).toEqual([generateName, purgeName].sort())
    expect(byName.get(generateName)?.metadata?.type_url).toBe('type.googleapis.com/google.cloud.aiplatform.v1beta1.GenerateMemoriesOperationMetadata')
    await client.close()
    await server.close()
  })
})

describe('quarry serve --grpc-port', () => {
  it('serves gRPC beside REST on the same state: a corpus made over REST is queried over gRPC', async () => {
    const served = await startServe(['--grpc-port', '0', '--embedder', 'hashing'])
    try {
      const rest = served.port
      const grpcAt = served.grpcPort as number
      expect(grpcAt).not.toBe(rest)
      const created = await fetch(`http://127.0.0.1:${rest}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'corpora/shared', displayName: 'Made over REST' }) })
      expect(created.status).toBe(200)
      const doc = await fetch(`http://127.0.0.1:${rest}/v1beta/corpora/shared/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'corpora/shared/documents/d' }) })
      expect(doc.status).toBe(200)
      const chunks = await fetch(`http://127.0.0.1:${rest}/v1beta/corpora/shared/documents/d/chunks:batchCreate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ requests: [{ chunk: { name: 'corpora/shared/documents/d/chunks/a', data: { stringValue: 'lighthouse keeper' } } }, { chunk: { name: 'corpora/shared/documents/d/chunks/b', data: { stringValue: 'desert sandworm' } } }] }),
      })
      expect(chunks.status).toBe(200)
      const client = new v1beta.RetrieverServiceClient({ apiEndpoint: '127.0.0.1', port: grpcAt, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' })
      const [corpus] = await client.getCorpus({ name: 'corpora/shared' })
      expect(corpus.displayName).toBe('Made over REST')
      const [answer] = await client.queryCorpus({ name: 'corpora/shared', query: 'sandworm' })
      expect(answer.relevantChunks?.map((r) => r.chunk?.name)).toEqual(['corpora/shared/documents/d/chunks/b', 'corpora/shared/documents/d/chunks/a'])
      await client.close()
    } finally {
      await served.kill()
    }
  })

  it('refuses a gRPC port equal to the REST port', async () => {
    const run = await runQuarry(['serve', '--port', '8123', '--grpc-port', '8123'])
    expect(run.code).toBe(2)
    expect(run.err).toMatch(/--grpc-port must differ from --port/)
  })
})

describe('the gRPC services come from the method tables and the shipped protos', () => {
  it('serves every RPC of the protos through a table entry; only what the protos lack is REST-only', () => {
    const engines = { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }
    const server = createGrpcServer(bindMethods(engines), { maxMessageBytes: 1 << 20, access: { allowedHosts: [], corsOrigins: [] }, boundHost: () => undefined, onInternalError: () => undefined, inFlight: new InFlight(8), receiving: new Receiving(5000, 4 << 20), sendIdleMs: 10_000 })
    expect(server.unbound).toEqual([])
    // Memory Bank's purge and revisions are newer than google-proto-files 6.0.1's memory_bank_service.proto,
    // which has no v1 MemoryBankService at all: v1 Memory Bank is served over REST only.
    // IngestEvents and RetrieveProfiles (newer still, answered UNIMPLEMENTED) likewise.
    const newer = ['PurgeMemories', 'RollbackMemory', 'ListMemoryRevisions', 'GetMemoryRevision', 'IngestEvents', 'RetrieveProfiles']
    const v1 = ['CreateMemory', 'GetMemory', 'UpdateMemory', 'ListMemories', 'DeleteMemory', 'GenerateMemories', 'RetrieveMemories', ...newer]
    // Server streams (StreamGenerateContent, StreamQueryReasoningEngine) are served too: their answer is one message.
    expect(server.restOnly).toEqual([...newer.map((rpc) => `google.cloud.aiplatform.v1beta1.MemoryBankService.${rpc}`), ...v1.map((rpc) => `google.cloud.aiplatform.v1.MemoryBankService.${rpc}`)])
    for (const v of ['v1', 'v1beta1']) {
      expect(server.paths).toContain(`/google.cloud.aiplatform.${v}.PredictionService/StreamGenerateContent`)
      expect(server.paths).toContain(`/google.cloud.aiplatform.${v}.ReasoningEngineExecutionService/StreamQueryReasoningEngine`)
    }
    const services = new Set(server.paths.map((p) => p.split('/')[1]))
    expect([...services]).toEqual([
      'google.ai.generativelanguage.v1beta.RetrieverService',
      'google.cloud.aiplatform.v1.VertexRagService',
      'google.cloud.aiplatform.v1.VertexRagDataService',
      'google.cloud.aiplatform.v1beta1.VertexRagService',
      'google.cloud.aiplatform.v1beta1.VertexRagDataService',
      'google.cloud.aiplatform.v1beta1.MemoryBankService',
      'google.cloud.aiplatform.v1beta1.SessionService',
      'google.cloud.aiplatform.v1.SessionService',
      'google.cloud.aiplatform.v1beta1.ReasoningEngineService',
      'google.cloud.aiplatform.v1beta1.ReasoningEngineExecutionService',
      'google.cloud.aiplatform.v1.ReasoningEngineService',
      'google.cloud.aiplatform.v1.ReasoningEngineExecutionService',
      'google.cloud.aiplatform.v1.PredictionService',
      'google.cloud.aiplatform.v1beta1.PredictionService',
      'google.longrunning.Operations',
      'google.cloud.location.Locations',
      'google.iam.v1.IAMPolicy',
    ])
    // Every method Google's clients declare for these services (their own compiled descriptors) is served.
    type Nested = { nested?: Record<string, Nested>; methods?: Record<string, unknown> }
    const methodsOf = (descriptor: Nested, service: string): string[] => {
      let node: Nested | undefined = descriptor
      for (const part of service.split('.')) node = node?.nested?.[part]
      return Object.keys(node?.methods ?? {}).map((m) => `/${service}/${m}`)
    }
    const aiplatformProtos = require('@google-cloud/aiplatform/build/protos/protos.json') as Nested
    const languageProtos = require('@google-ai/generativelanguage/build/protos/protos.json') as Nested
    const clientMethods = [
      ...methodsOf(languageProtos, 'google.ai.generativelanguage.v1beta.RetrieverService'),
      ...['v1.VertexRagService', 'v1.VertexRagDataService', 'v1beta1.VertexRagService', 'v1beta1.VertexRagDataService', 'v1beta1.MemoryBankService', 'v1beta1.SessionService', 'v1.SessionService', 'v1beta1.ReasoningEngineService', 'v1.ReasoningEngineService'].flatMap((s) => methodsOf(aiplatformProtos, `google.cloud.aiplatform.${s}`)),
    ]
    // Agent Engine Sessions: 7 RPCs in each version; ReasoningEngineService: 5 in each.
    expect(clientMethods.length).toBe(74 + 14 + 10)
    expect(server.paths.filter((p) => clientMethods.includes(p))).toEqual(clientMethods)
    // PredictionService: its unary and server-streaming RPCs, 10 in v1 and 12 in v1beta1 (generateContent and
    // streamGenerateContent served, the others UNIMPLEMENTED). ReasoningEngineService (5) and the
    // execution service's query RPCs (4, UNIMPLEMENTED) in each version.
    expect(server.paths.length).toBe(84 + 14 + 22 + 18)
  })
})
