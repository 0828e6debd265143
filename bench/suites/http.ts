import { fork, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, createServer as createBareServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttp2Server, type Http2Server } from 'node:http2'
import { createGloveEmbedder } from '@quarry/core'
import { createServer, type Outcome } from '@quarry/adapters'
import { npmCorpus } from '../lib/npm-corpus.js'
import { makeQueries } from '../lib/queries.js'
import { median, percentile } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'
import type { protos as aiplatformProtos } from '@google-cloud/aiplatform'
import type { protos as languageProtos } from '@google-ai/generativelanguage'
import * as grpcRaw from '@grpc/grpc-js'
import { loadServiceProtos, type ProtoType } from '../../packages/adapters/src/grpc/protos.js'
import { framedMessage } from '../../packages/adapters/src/grpc/server.js'

// Google's own Node clients, as users run them (CommonJS; required as test/http/grpc.test.ts does).
const require = createRequire(import.meta.url)
const aiplatform = require('@google-cloud/aiplatform') as typeof import('@google-cloud/aiplatform')
const { v1beta } = require('@google-ai/generativelanguage') as typeof import('@google-ai/generativelanguage')
/** The clients' own grpc-js (their google-gax's), for the insecure channel credentials. */
const { grpc } = createRequire(require.resolve('@google-cloud/aiplatform'))('google-gax') as { grpc: typeof import('@grpc/grpc-js') }

const SELF = fileURLToPath(import.meta.url)

type Mode = 'in-process' | 'rest' | 'bare' | 'grpc' | 'grpc-raw'
const MODES: readonly Mode[] = ['in-process', 'rest', 'bare', 'grpc', 'grpc-raw']
/** The modes whose clients run in the bench's process, against the server's. */
type WireMode = Exclude<Mode, 'in-process'>
type Json = Record<string, unknown>
type Engines = ReturnType<typeof createServer>['engines']

/** Google's clients on their default transport, one per service (all concurrent clients share it). */
interface GoogleClients {
  readonly rag: InstanceType<typeof aiplatform.v1beta1.VertexRagServiceClient>
  readonly retriever: InstanceType<typeof v1beta.RetrieverServiceClient>
  readonly memory: InstanceType<typeof aiplatform.v1beta1.MemoryBankServiceClient>
  readonly data: InstanceType<typeof aiplatform.v1beta1.VertexRagDataServiceClient>
}

/** Resource names the server process made while loading the data, which requests carry. */
interface Names {
  readonly parent: string
  readonly ragCorpus: string
  readonly ragFile: string
  readonly engine: string
  readonly memory: string
}

/** One call, every way: its REST path and body, the full request (the body plus the resource name the path carries) in process and over gRPC. */
interface Call {
  /** GET (no body) or POST (default). */
  readonly method?: 'GET'
  readonly path: string
  /** The RPC's full gRPC path (`/package.Service/Method`), for the raw grpc-js client. */
  readonly rpc: string
  /** Concurrent clients measured (default 1, 8, 32). */
  readonly clients?: readonly number[]
  readonly body: (q: string, i: number) => Json
  readonly request: (body: Json) => Json
  /** The call in process, in the server's process. */
  readonly local: (engines: Engines, request: Json) => Promise<Outcome<unknown>>
  /** The call through Google's client, in the bench's process. */
  readonly grpc: (clients: GoogleClients, request: Json) => Promise<unknown>
  /** What every transport must answer alike: ids in order, each with its scores at float precision (gRPC's `float` fields are 32-bit). */
  readonly hits: (response: unknown) => string[]
}

/** A small read: its REST path (GET, a query string at most) and the same call in process, for the bare server. */
interface SmallRead {
  readonly path: string
  readonly local: (engines: Engines) => Promise<Outcome<unknown>>
}

/** Measured rounds of each transport per call and client count (after a warm-up round). */
const ROUNDS = 3
/** Small reads: concurrent clients, and rounds of each of REST and bare (in the order bare, REST, REST, bare, ...). */
const SMALL_READ_CLIENTS = 16
const SMALL_READ_ROUNDS = 8

type Stat = { rps: number; p50: number; p99: number }
/** A round's figures with the CPU microseconds per request of the server's process and of the clients'. */
type Measured = Stat & { cpu: number; clientCpu: number }

/** A score as every transport can tell it: unset (proto3's 0) as 0, at float precision. */
const f32 = (v: number | null | undefined): number => Math.fround(v ?? 0)

function callsOf(names: Names): Record<string, Call> {
  const { parent, ragCorpus, engine } = names
  return {
    retrieveContexts: {
      rpc: '/google.cloud.aiplatform.v1beta1.VertexRagService/RetrieveContexts',
      path: `/v1beta1/${parent}:retrieveContexts`,
      body: (q) => ({ vertexRagStore: { ragResources: [{ ragCorpus }] }, query: { text: q, ragRetrievalConfig: { topK: 10 } } }),
      request: (b) => ({ parent, ...b }),
      local: (e, r) => e.vertexRag.v1beta1.retrieveContexts(r),
      grpc: async (g, r) => (await g.rag.retrieveContexts(r as aiplatformProtos.google.cloud.aiplatform.v1beta1.IRetrieveContextsRequest))[0],
      hits: (response) => {
        const contexts = (response as { contexts?: { contexts?: { sourceUri?: string | null; text?: string | null; score?: number | null; distance?: number | null }[] | null } | null }).contexts?.contexts ?? []
        return contexts.map((c) => `${c.sourceUri ?? ''} ${JSON.stringify(c.text ?? '')} score ${f32(c.score)} distance ${f32(c.distance)}`)
      },
    },
    queryCorpus: {
      rpc: '/google.ai.generativelanguage.v1beta.RetrieverService/QueryCorpus',
      path: '/v1beta/corpora/bench:query',
      body: (q) => ({ query: q, resultsCount: 10 }),
      request: (b) => ({ name: 'corpora/bench', ...b }),
      local: (e, r) => e.semanticRetriever.queryCorpus(r),
      grpc: async (g, r) => (await g.retriever.queryCorpus(r as languageProtos.google.ai.generativelanguage.v1beta.IQueryCorpusRequest))[0],
      hits: (response) => {
        const chunks = (response as { relevantChunks?: { chunkRelevanceScore?: number | null; chunk?: { name?: string | null } | null }[] | null }).relevantChunks ?? []
        return chunks.map((c) => `${c.chunk?.name ?? ''} score ${f32(c.chunkRelevanceScore)}`)
      },
    },
    retrieveMemories: {
      rpc: '/google.cloud.aiplatform.v1beta1.MemoryBankService/RetrieveMemories',
      path: `/v1beta1/${engine}/memories:retrieve`,
      body: (q, i) => ({ scope: { user_id: `u${i % 50}` }, similaritySearchParams: { searchQuery: q, topK: 5 } }),
      request: (b) => ({ parent: engine, ...b }),
      local: (e, r) => e.memoryBank.retrieveMemories(r),
      grpc: async (g, r) => (await g.memory.retrieveMemories(r as aiplatformProtos.google.cloud.aiplatform.v1beta1.IRetrieveMemoriesRequest))[0],
      hits: (response) => {
        const memories = (response as { retrievedMemories?: { distance?: number | null; memory?: { name?: string | null } | null }[] | null }).retrievedMemories ?? []
        return memories.map((m) => `${m.memory?.name ?? ''} distance ${f32(m.distance)}`)
      },
    },
    // A small read (issue 43): the admission checks are most of its REST cost.
    getCorpus: {
      method: 'GET',
      rpc: '/google.cloud.aiplatform.v1beta1.VertexRagDataService/GetRagCorpus',
      path: `/v1beta1/${ragCorpus}`,
      clients: [1, 16],
      body: () => ({}),
      request: () => ({ name: ragCorpus }),
      local: (e, r) => e.vertexRag.v1beta1.getRagCorpus(r),
      grpc: async (g, r) => (await g.data.getRagCorpus(r as aiplatformProtos.google.cloud.aiplatform.v1beta1.IGetRagCorpusRequest))[0],
      hits: (response) => {
        const corpus = response as { name?: string | null; displayName?: string | null }
        return [`${corpus.name ?? ''} ${corpus.displayName ?? ''}`]
      },
    },
  }
}

/** Reads that do almost no engine work, so REST's own cost (admission, routing, the answer) shows. */
function smallReadsOf(names: Names): Record<string, SmallRead> {
  const { parent, ragCorpus, ragFile, memory } = names
  return {
    getRagCorpus: { path: `/v1beta1/${ragCorpus}`, local: (e) => e.vertexRag.v1beta1.getRagCorpus({ name: ragCorpus }) },
    listRagCorpora: { path: `/v1beta1/${parent}/ragCorpora`, local: (e) => e.vertexRag.v1beta1.listRagCorpora({ parent }) },
    getRagFile: { path: `/v1beta1/${ragFile}`, local: (e) => e.vertexRag.v1beta1.getRagFile({ name: ragFile }) },
    listRagFiles: { path: `/v1beta1/${ragCorpus}/ragFiles?pageSize=5`, local: (e) => e.vertexRag.v1beta1.listRagFiles({ parent: ragCorpus, pageSize: 5 }) },
    getCorpus: { path: '/v1beta/corpora/bench', local: (e) => e.semanticRetriever.getCorpus({ name: 'corpora/bench' }) },
    getDocument: { path: '/v1beta/corpora/bench/documents/d', local: (e) => e.semanticRetriever.getDocument({ name: 'corpora/bench/documents/d' }) },
    getMemory: { path: `/v1beta1/${memory}`, local: (e) => e.memoryBank.getMemory({ name: memory }) },
  }
}

/** The passages and queries, the same in both processes (the npm corpus is deterministic). */
function corpusOf(quick: boolean): { passages: { text: string }[]; queries: string[] } {
  const passages = npmCorpus().slice(0, quick ? 2000 : 10_000)
  return { passages, queries: makeQueries(passages, 50).map((q) => q.text) }
}

/** The closed loop: `concurrency` clients each sending `perClient` requests, the next when the last returns. */
async function closedLoop(concurrency: number, perClient: number, queries: readonly string[], send: (q: string, i: number) => Promise<unknown>): Promise<Stat> {
  const latencies: number[] = []
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let k = 0; k < perClient; k++) {
        const i = (w * perClient + k) % queries.length
        const t = performance.now()
        await send(queries[i] as string, i)
        latencies.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - t0) / 1000
  return { rps: latencies.length / seconds, p50: median(latencies), p99: percentile(latencies, 0.99) }
}

/**
 * A bare `node:http` server: the body read and parsed with JSON.parse, the call found by its exact
 * path, the engine called in process, its response written as JSON (an error as 500 with the
 * message); nothing else. What the REST layer is measured against.
 */
async function bareServer(calls: ReadonlyMap<string, (body: Json) => Promise<Outcome<unknown>>>): Promise<{ server: Server; port: number }> {
  const server = createBareServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const c = calls.get(req.url ?? '')
      const answer = (status: number, json: unknown): void => {
        const text = JSON.stringify(json)
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
        res.end(text)
      }
      if (!c) return answer(404, { error: 'no such call' })
      const text = Buffer.concat(chunks).toString('utf8')
      void c(text === '' ? {} : (JSON.parse(text) as Json)).then((out) => (out.ok ? answer(200, out.response) : answer(500, { error: out.status.message })))
    })
  })
  // The REST server's keep-alive timeouts: a socket idle while the other transports run stays open.
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the bare server has no port')
  return { server, port: address.port }
}

/** The echo servers' answer: 200 bytes, as JSON over HTTP/1.1 and as a message over gRPC. */
const ECHO_JSON = JSON.stringify({ text: 'x'.repeat(188) })
const ECHO_MESSAGE = Buffer.alloc(200, 7)
const FLOOR_CLIENTS: readonly number[] = [1, 8]
type FloorMode = 'http echo' | 'grpc-js echo' | 'http2 echo'
const FLOOR_MODES: readonly FloorMode[] = ['http echo', 'grpc-js echo', 'http2 echo']

/**
 * Servers that do no work, each answering any request with the same 200 bytes: the floor under
 * each transport, set by Node's HTTP/1.1 and HTTP/2 and by the clients. `http echo` is a bare
 * `node:http` server, `grpc-js echo` a grpc-js server (what Quarry's gRPC runs on), `http2 echo`
 * a minimal gRPC server on `node:http2` (headers, one message and trailers; nothing else).
 */
async function echoServers(): Promise<{ ports: Record<FloorMode, number>; close: () => Promise<void> }> {
  const http1 = createBareServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ECHO_JSON) })
      res.end(ECHO_JSON)
    })
  })
  http1.keepAliveTimeout = 65_000
  await new Promise<void>((resolve) => http1.listen(0, '127.0.0.1', resolve))
  const grpcJs = new grpcRaw.Server({ 'grpc.enable_channelz': 0 })
  const same = (b: Buffer): Buffer => b
  grpcJs.addService({ Echo: { path: '/echo.Echo/Echo', requestStream: false, responseStream: false, requestSerialize: same, requestDeserialize: same, responseSerialize: same, responseDeserialize: same } }, { Echo: (_call: unknown, callback: grpcRaw.sendUnaryData<Buffer>) => callback(null, ECHO_MESSAGE) })
  const grpcJsPort = await new Promise<number>((resolve, reject) => grpcJs.bindAsync('127.0.0.1:0', grpcRaw.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))))
  const framed = framedMessage(ECHO_MESSAGE)
  const http2: Http2Server = createHttp2Server()
  http2.on('stream', (stream) => {
    stream.resume()
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true })
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }))
      stream.end(framed)
    })
  })
  await new Promise<void>((resolve) => http2.listen(0, '127.0.0.1', resolve))
  const portOf = (server: Server | Http2Server): number => {
    const address = server.address()
    if (address === null || typeof address === 'string') throw new Error('an echo server has no port')
    return address.port
  }
  return {
    ports: { 'http echo': portOf(http1), 'grpc-js echo': grpcJsPort, 'http2 echo': portOf(http2) },
    close: async () => {
      grpcJs.forceShutdown()
      http1.closeAllConnections()
      await Promise.all([new Promise((resolve) => http1.close(resolve)), new Promise((resolve) => http2.close(resolve))])
    },
  }
}

/** What the bench asks of the server's process, and what it answers. */
type Ask = { op: 'local'; call: string; request: Json } | { op: 'measure'; call: string; concurrency: number; perClient: number } | { op: 'cpu' } | { op: 'close' }
type Ready = { url: string; grpcPort: number; barePort: number; echoPorts: Record<FloorMode, number>; names: Names }

/**
 * The server's process: Quarry's server (REST and gRPC) and the bare server on the same engines,
 * loaded with the bench data, as `quarry serve` runs apart from its clients. It answers the bench's
 * asks over IPC: a call in process (the oracle), a closed loop in process, its CPU time, close.
 */
async function serveChild(quick: boolean): Promise<void> {
  const send = (message: unknown): void => void process.send?.(message)
  const embedder = createGloveEmbedder()
  const server = createServer({ embedder, grpcPort: 0, onInternalError: (e) => console.error(e) })
  const { url, grpcPort } = await server.listen()
  if (grpcPort === undefined) throw new Error('the server did not start gRPC')
  const engines = server.engines
  const { semanticRetriever: sr, vertexRag, memoryBank } = engines
  const { passages, queries } = corpusOf(quick)
  await sr.createCorpus({ corpus: { name: 'corpora/bench' } })
  await sr.createDocument({ parent: 'corpora/bench', document: { name: 'corpora/bench/documents/d' } })
  for (let i = 0; i < passages.length; i += 100) {
    await sr.batchCreateChunks({ parent: 'corpora/bench/documents/d', requests: passages.slice(i, i + 100).map((p) => ({ chunk: { data: { stringValue: p.text.slice(0, 2000) } } })) })
  }
  const parent = 'projects/b/locations/l'
  const created = await vertexRag.v1beta1.createRagCorpus({ parent, ragCorpus: { displayName: 'bench', vectorDbConfig: { ragManagedDb: { ann: {} } } } })
  if (!created.ok) throw new Error(created.status.message)
  const ragCorpus = created.response.response?.name as string
  for (let i = 0; i < passages.length; i += 50) {
    await vertexRag.v1beta1.uploadRagFile({ parent: ragCorpus, ragFile: { displayName: `f${i}.txt` }, uploadRagFileConfig: { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 128, chunkOverlap: 16 } } } } }, passages.slice(i, i + 50).map((p) => p.text).join('\n\n'))
  }
  const engine = 'projects/b/locations/l/reasoningEngines/1'
  for (let i = 0; i < Math.min(passages.length, 5000); i += 5) {
    await memoryBank.generateMemories({ parent: engine, scope: { user_id: `u${(i / 5) % 50}` }, disableConsolidation: true, directMemoriesSource: { directMemories: passages.slice(i, i + 5).map((p) => ({ fact: p.text.slice(0, 300) })) } })
  }
  const listed = await vertexRag.v1beta1.listRagFiles({ parent: ragCorpus, pageSize: 1 })
  const memories = await memoryBank.listMemories({ parent: engine, pageSize: 1 })
  const names: Names = {
    parent,
    ragCorpus,
    engine,
    ragFile: listed.ok ? (listed.response.ragFiles?.[0]?.name as string) : '',
    memory: memories.ok ? (memories.response.memories?.[0]?.name as string) : '',
  }
  const calls = callsOf(names)
  const bare = await bareServer(
    new Map([
      ...Object.values(calls).map((c) => [c.path, (body: Json) => c.local(engines, c.request(body))] as const),
      ...Object.values(smallReadsOf(names)).map((r) => [r.path, () => r.local(engines)] as const),
    ]),
  )
  const echo = await echoServers()
  const local = async (c: Call, request: Json): Promise<unknown> => {
    const out = await c.local(engines, request)
    if (!out.ok) throw new Error(out.status.message)
    // The in-process answer as a transport would send it: made into JSON text.
    JSON.stringify(out.response)
    return out.response
  }
  process.on('message', (message: { id: number; ask: Ask }) => {
    const { id, ask } = message
    const answer = async (): Promise<unknown> => {
      if (ask.op === 'cpu') {
        const { user, system } = process.cpuUsage()
        return user + system
      }
      if (ask.op === 'close') {
        await Promise.all([server.close(), echo.close(), new Promise<void>((resolve) => bare.server.close(() => resolve()))])
        return null
      }
      const c = calls[ask.call]
      if (!c) throw new Error(`no call ${ask.call}`)
      if (ask.op === 'local') return local(c, ask.request)
      return closedLoop(ask.concurrency, ask.perClient, queries, (q, i) => local(c, c.request(c.body(q, i))))
    }
    answer().then(
      (value) => send({ id, value }),
      (error: unknown) => send({ id, error: error instanceof Error ? error.message : String(error) }),
    )
  })
  const ready: Ready = { url, grpcPort, barePort: bare.port, echoPorts: echo.ports, names }
  send({ ready })
}

/** The server's process, started: its ports and names, and a way to ask it. */
async function startServerProcess(quick: boolean): Promise<{ ready: Ready; ask: (ask: Ask) => Promise<unknown>; child: ChildProcess }> {
  // The same node flags as the bench (TypeScript sources, heap size); its output is the bench's.
  const child = fork(SELF, ['--http-server-child', quick ? 'quick' : 'full'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let next = 0
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.on('message', (m: { ready?: Ready; id?: number; value?: unknown; error?: string }) => {
      if (m.ready) return resolve(m.ready)
      const w = waiting.get(m.id ?? -1)
      if (!w) return
      waiting.delete(m.id ?? -1)
      if (m.error !== undefined) w.reject(new Error(m.error))
      else w.resolve(m.value)
    })
    child.once('exit', (code) => {
      const error = new Error(`the server process exited (${code})`)
      reject(error)
      for (const w of waiting.values()) w.reject(error)
    })
  })
  const ask = (a: Ask): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = next++
      waiting.set(id, { resolve, reject })
      child.send({ id, ask: a })
    })
  return { ready, ask, child }
}

/**
 * The transports' cost: retrieveContexts, queryCorpus, retrieveMemories and getRagCorpus (a small
 * read, at 1 and 16 clients), served by one server process (Quarry's REST and gRPC, and a bare
 * `node:http` server on the same engines), called from the bench's process as an app calls
 * `quarry serve`: over loopback REST (keep-alive, JSON), over gRPC as users call it (Google's own
 * clients on their default transport, one client per service shared by all concurrent clients:
 * HTTP/2 multiplexes them over one connection) and raw (one grpc-js channel, protobuf.js messages
 * from the same protos, no client library), and in the server's process with no transport, with 1,
 * 8 and 32 concurrent clients (a closed loop: each client sends its next request when the last
 * returns). Requests per second, p50 / p99 latency, the server process's CPU per request (what the
 * transport costs Quarry, apart from the client's cost), and the ratios. Before timing, one answer
 * of each call over every transport must equal the in-process answer (ids, order, scores). Then
 * the floor: the same clients against servers that do no work (echoServers).
 */
export async function runHttp(ctx: SuiteContext): Promise<void> {
  const { ready, ask, child } = await startServerProcess(ctx.quick)
  const { url, grpcPort, barePort, echoPorts, names } = ready
  const { passages, queries } = corpusOf(ctx.quick)
  const calls = callsOf(names)
  const smallReads = smallReadsOf(names)

  // Endpoint, port and plaintext credentials only; `universeDomain` keeps google-auth-library from probing the cloud metadata server.
  const options = { apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' }
  const clients: GoogleClients = {
    rag: new aiplatform.v1beta1.VertexRagServiceClient(options),
    retriever: new v1beta.RetrieverServiceClient(options),
    memory: new aiplatform.v1beta1.MemoryBankServiceClient(options),
    data: new aiplatform.v1beta1.VertexRagDataServiceClient(options),
  }
  // The raw way: one grpc-js channel and protobuf.js with the same shipped protos, no client library.
  const rawRoot = loadServiceProtos(['google.cloud.aiplatform.v1beta1.VertexRagService', 'google.cloud.aiplatform.v1beta1.VertexRagDataService', 'google.ai.generativelanguage.v1beta.RetrieverService', 'google.cloud.aiplatform.v1beta1.MemoryBankService'])
  const rawClient = new grpcRaw.Client(`127.0.0.1:${grpcPort}`, grpcRaw.credentials.createInsecure())
  const rawTypes = new Map<string, [ProtoType, ProtoType]>()
  const rawCall = (rpc: string, request: Json): Promise<unknown> => {
    let types = rawTypes.get(rpc)
    if (!types) {
      const [service, method] = rpc.slice(1).split('/') as [string, string]
      const m = rawRoot.lookupService(service).methods[method]
      m?.resolve()
      if (!m?.resolvedRequestType || !m.resolvedResponseType) throw new Error(`${rpc} is not in the protos`)
      types = [m.resolvedRequestType, m.resolvedResponseType]
      rawTypes.set(rpc, types)
    }
    const [req, res] = types
    return new Promise((resolve, reject) =>
      rawClient.makeUnaryRequest(rpc, (v: Json) => Buffer.from(req.encode(req.fromObject(v)).finish()), (b: Buffer) => res.toObject(res.decode(b), { longs: String, enums: String }), request, (e, v) => (e ? reject(e) : resolve(v))),
    )
  }

  // A keep-alive agent, as Google's clients keep connections open (one for both servers: its sockets are per port).
  const agent = new Agent({ keepAlive: true, maxSockets: 64 })
  const { port } = new URL(url)
  const post = (path: string, body: string | undefined, to: string | number = port): Promise<{ status: number; text: string }> =>
    new Promise((resolve, reject) => {
      const headers = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
      const req = request({ host: '127.0.0.1', port: to, path, method: body === undefined ? 'GET' : 'POST', agent, headers }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
      })
      req.on('error', reject)
      req.end(body)
    })
  /** One request the way each transport sends it; resolves to the decoded answer. */
  const send = async (c: Call, mode: WireMode, body: Json): Promise<unknown> => {
    if (mode === 'rest' || mode === 'bare') {
      const res = await post(c.path, c.method === 'GET' ? undefined : JSON.stringify(body), mode === 'bare' ? barePort : port)
      const parsed: unknown = JSON.parse(res.text)
      if (res.status !== 200) throw new Error(res.text)
      return parsed
    }
    if (mode === 'grpc') return c.grpc(clients, c.request(body))
    return rawCall(c.rpc, c.request(body))
  }
  const serverCpu = async (): Promise<number> => (await ask({ op: 'cpu' })) as number
  /** A round's figures, with the CPU microseconds per request of the server's process and of the clients' (this one). */
  const measured = async (requests: number, round: () => Promise<Stat>): Promise<Measured> => {
    const before = await serverCpu()
    const client = process.cpuUsage()
    const stat = await round()
    const used = process.cpuUsage(client)
    return { ...stat, cpu: ((await serverCpu()) - before) / requests, clientCpu: (used.user + used.system) / requests }
  }

  // Before timing: the first gRPC call of each client (it loads the protos and opens the
  // connection), then one answer of each call over every transport against the in-process one.
  const firstCallMs: Record<string, number> = {}
  for (const [name, c] of Object.entries(calls)) {
    const body = c.body(queries[0] as string, 0)
    const t = performance.now()
    await send(c, 'grpc', body)
    firstCallMs[name] = performance.now() - t
    const expected = c.hits(await ask({ op: 'local', call: name, request: c.request(body) }))
    if (expected.length === 0) throw new Error(`${name}: no hits in process`)
    for (const mode of ['rest', 'bare', 'grpc', 'grpc-raw'] as const) {
      const got = c.hits(await send(c, mode, body))
      if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`${name} over ${mode} answers ${JSON.stringify(got)}, in process ${JSON.stringify(expected)}`)
    }
  }

  const perClient = ctx.quick ? 20 : 150
  const rows: Record<string, string | number>[] = []
  for (const [name, c] of Object.entries(calls)) {
    for (const concurrency of c.clients ?? [1, 8, 32]) {
      // In process, the loop runs in the server's process: the bench's own CPU is then only waiting.
      const measure = (mode: Mode): Promise<Measured> =>
        measured(concurrency * perClient, async () => (mode === 'in-process' ? ((await ask({ op: 'measure', call: name, concurrency, perClient })) as Stat) : closedLoop(concurrency, perClient, queries, (q, i) => send(c, mode, c.body(q, i)))))
      // A warm-up round of each, then ROUNDS measured rounds, interleaved (the order rotating); medians.
      for (const mode of MODES) await measure(mode)
      const runs = new Map<Mode, Measured[]>(MODES.map((m) => [m, []]))
      for (let round = 0; round < ROUNDS; round++) {
        for (let j = 0; j < MODES.length; j++) {
          const mode = MODES[(j + round) % MODES.length] as Mode
          runs.get(mode)?.push(await measure(mode))
        }
      }
      const [a, r, b, g, raw] = MODES.map((m) => {
        const xs = runs.get(m) ?? []
        return { rps: median(xs.map((x) => x.rps)), p50: median(xs.map((x) => x.p50)), p99: median(xs.map((x) => x.p99)), cpu: median(xs.map((x) => x.cpu)), clientCpu: median(xs.map((x) => x.clientCpu)) }
      }) as [Measured, Measured, Measured, Measured, Measured]
      const eachRound = (over: Mode, under: Mode): string => (runs.get(over) ?? []).map((x, k) => (x.rps / ((runs.get(under) ?? [])[k]?.rps ?? NaN)).toFixed(2)).join(' ')
      rows.push({
        call: name,
        clients: concurrency,
        'in-process rps': a.rps,
        'rest rps': r.rps,
        'bare rps': b.rps,
        'grpc rps': g.rps,
        'grpc raw rps': raw.rps,
        'rest / bare rps': r.rps / b.rps,
        'rest / bare, each round': eachRound('rest', 'bare'),
        'in-process p50 ms': a.p50,
        'rest p50 ms': r.p50,
        'bare p50 ms': b.p50,
        'grpc p50 ms': g.p50,
        'grpc raw p50 ms': raw.p50,
        'in-process p99 ms': a.p99,
        'rest p99 ms': r.p99,
        'bare p99 ms': b.p99,
        'grpc p99 ms': g.p99,
        'grpc raw p99 ms': raw.p99,
        'in-process server µs': a.cpu,
        'rest server µs': r.cpu,
        'bare server µs': b.cpu,
        'grpc server µs': g.cpu,
        'grpc raw server µs': raw.cpu,
        'rest p50 ratio': r.p50 / a.p50,
        'grpc p50 ratio': g.p50 / a.p50,
        'grpc / rest rps': g.rps / r.rps,
        'grpc / rest, each round': eachRound('grpc', 'rest'),
        'grpc raw / rest rps': raw.rps / r.rps,
        'grpc / rest p50': g.p50 / r.p50,
        'grpc raw / rest p50': raw.p50 / r.p50,
        'rest client µs': r.clientCpu,
        'grpc client µs': g.clientCpu,
        'grpc raw client µs': raw.clientCpu,
        'grpc / rest server µs': g.cpu / r.cpu,
        'grpc / rest client µs': g.clientCpu / r.clientCpu,
      })
    }
  }
  // The floor: each transport against a server that does no work, with the same clients
  // (node:http with a keep-alive agent; one grpc-js channel per server, bytes in and out).
  const floorPerRound = ctx.quick ? 300 : 3000
  const echoClients = { 'grpc-js echo': new grpcRaw.Client(`127.0.0.1:${echoPorts['grpc-js echo']}`, grpcRaw.credentials.createInsecure()), 'http2 echo': new grpcRaw.Client(`127.0.0.1:${echoPorts['http2 echo']}`, grpcRaw.credentials.createInsecure()) }
  const echoRequest = Buffer.alloc(60, 1)
  const echoBody = JSON.stringify({ text: 'y'.repeat(50) })
  const echoOnce = async (mode: FloorMode): Promise<void> => {
    if (mode === 'http echo') {
      const res = await post('/echo', echoBody, echoPorts['http echo'])
      if (res.text !== ECHO_JSON) throw new Error(`the http echo answered ${res.text.slice(0, 100)}`)
      return
    }
    const bytes = await new Promise<Buffer>((resolve, reject) => echoClients[mode].makeUnaryRequest('/echo.Echo/Echo', (b: Buffer) => b, (b: Buffer) => b, echoRequest, (e, v) => (e || !v ? reject(e ?? new Error('no answer')) : resolve(v))))
    if (!bytes.equals(ECHO_MESSAGE)) throw new Error(`the ${mode} answered ${bytes.length} other bytes`)
  }
  const floorRows: Record<string, string | number>[] = []
  for (const concurrency of FLOOR_CLIENTS) {
    const each = Math.ceil(floorPerRound / concurrency)
    const measure = (mode: FloorMode): Promise<Measured> => measured(concurrency * each, () => closedLoop(concurrency, each, queries, () => echoOnce(mode)))
    for (const mode of FLOOR_MODES) await measure(mode)
    const runs = new Map<FloorMode, Measured[]>(FLOOR_MODES.map((m) => [m, []]))
    for (let round = 0; round < ROUNDS; round++) {
      for (let j = 0; j < FLOOR_MODES.length; j++) {
        const mode = FLOOR_MODES[(j + round) % FLOOR_MODES.length] as FloorMode
        runs.get(mode)?.push(await measure(mode))
      }
    }
    for (const mode of FLOOR_MODES) {
      const xs = runs.get(mode) ?? []
      floorRows.push({ server: mode, clients: concurrency, rps: median(xs.map((x) => x.rps)), 'p50 ms': median(xs.map((x) => x.p50)), 'p99 ms': median(xs.map((x) => x.p99)), 'server µs': median(xs.map((x) => x.cpu)), 'client µs': median(xs.map((x) => x.clientCpu)) })
    }
  }
  for (const client of Object.values(echoClients)) client.close()

  // Small reads, REST against bare only: more rounds, each with enough requests to span many
  // scheduler slices, in the order bare, REST, REST, bare (drift over a round pair cancels); medians.
  const perRound = ctx.quick ? 800 : 6000
  const smallReadRows: Record<string, string | number>[] = []
  for (const [name, read] of Object.entries(smallReads)) {
    const [overRest, overBare] = await Promise.all([post(read.path, undefined), post(read.path, undefined, barePort)])
    if (overRest.status !== 200 || JSON.stringify(JSON.parse(overRest.text)) !== JSON.stringify(JSON.parse(overBare.text))) throw new Error(`${name}: REST answers ${overRest.status} ${overRest.text.slice(0, 200)}, bare ${overBare.text.slice(0, 200)}`)
    const round = async (to: string | number): Promise<number> => {
      let left = perRound
      const t0 = performance.now()
      await Promise.all(
        Array.from({ length: SMALL_READ_CLIENTS }, async () => {
          while (left-- > 0) if ((await post(read.path, undefined, to)).status !== 200) throw new Error(`${name} failed during the run`)
        }),
      )
      return perRound / ((performance.now() - t0) / 1000)
    }
    await round(barePort)
    await round(port)
    const restRps: number[] = []
    const bareRps: number[] = []
    for (let k = 0; k < SMALL_READ_ROUNDS; k++) {
      if (k % 2 === 0) bareRps.push(await round(barePort))
      restRps.push(await round(port))
      if (k % 2 === 1) bareRps.push(await round(barePort))
    }
    const ratios = restRps.map((r, k) => r / (bareRps[k] ?? NaN))
    smallReadRows.push({ call: name, clients: SMALL_READ_CLIENTS, 'rest rps': median(restRps), 'bare rps': median(bareRps), 'rest / bare rps': median(ratios), 'rest / bare, each round': ratios.map((x) => x.toFixed(2)).join(' ') })
  }
  agent.destroy()
  rawClient.close()
  await Promise.all([clients.rag.close(), clients.retriever.close(), clients.memory.close(), clients.data.close()])
  await ask({ op: 'close' })
  child.disconnect()
  printTable(`in process vs REST (loopback, keep-alive) vs gRPC (Google's clients), server in its own process, ${perClient} requests per client, ${passages.length} passages`, rows)
  printTable(`small reads, REST vs a bare node:http server, ${SMALL_READ_CLIENTS} keep-alive clients, ${SMALL_READ_ROUNDS} rounds of ${perRound} requests each`, smallReadRows)
  printTable(`the floor: servers that do no work, the same clients, ${ROUNDS} rounds of ${floorPerRound} requests each`, floorRows)
  console.log(`first gRPC call of each client (loads protos, connects): ${Object.entries(firstCallMs).map(([n, ms]) => `${n} ${ms.toFixed(0)} ms`).join(', ')}`)
  writeFileSync(join(ctx.resultsDir, 'http.json'), `${JSON.stringify({ suite: 'http', date: new Date().toISOString(), node: process.version, quick: ctx.quick, passages: passages.length, perClient, server: 'its own process; clients in the bench process', grpcClients: 'one per service, shared by the concurrent clients', grpcFirstCallMs: firstCallMs, rounds: ROUNDS, rows, floorRequests: floorPerRound, floor: floorRows, smallReadRounds: SMALL_READ_ROUNDS, smallReadRequests: perRound, smallReads: smallReadRows }, null, 1)}\n`)
}

if (process.argv[2] === '--http-server-child') {
  serveChild(process.argv[3] === 'quick').catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
