import { fork, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Agent, createServer as createBareServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { connect as connectHttp2, createServer as createHttp2Server, type ClientHttp2Session, type Http2Server } from 'node:http2'
import { createGloveEmbedder } from '@quarry/core'
import { createServer, type Outcome } from '@quarry/adapters'
import { npmCorpus } from '../lib/npm-corpus.js'
import { makeQueries } from '../lib/queries.js'
import { median, percentile } from '../lib/stats.js'
import { buildDist, DIST_ADAPTERS } from '../lib/dist.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'
import type { protos as aiplatformProtos } from '@google-cloud/aiplatform'
import type { protos as languageProtos } from '@google-ai/generativelanguage'
import { loadServiceProtos, type ProtoType } from '../../packages/adapters/src/grpc/protos.js'
import { framedMessage } from '../../packages/adapters/src/grpc/server.js'

// Google's own Node clients, as users run them (CommonJS; required as test/http/grpc.test.ts does).
const require = createRequire(import.meta.url)
const aiplatform = require('@google-cloud/aiplatform') as typeof import('@google-cloud/aiplatform')
const { v1beta } = require('@google-ai/generativelanguage') as typeof import('@google-ai/generativelanguage')
/** The clients' own google-gax: its grpc-js (insecure channel credentials) and OAuth client (a local token for REST). */
const gax = createRequire(require.resolve('@google-cloud/aiplatform'))('google-gax') as { grpc: typeof import('@grpc/grpc-js'); googleAuthLibrary: { OAuth2Client: new () => { setCredentials(c: { access_token: string; expiry_date: number }): void } } }

const SELF = fileURLToPath(import.meta.url)

/**
 * Each call is sent two ways over each transport. Raw: Node's own clients (node:http with JSON,
 * node:http2 with protobuf.js messages), so the ratio is the server's. Google's: the clients users
 * run, on REST (`fallback: true`) and on gRPC (their default).
 */
type Mode = 'in-process' | 'rest' | 'bare' | 'grpc' | 'google-rest' | 'google-grpc'
const MODES: readonly Mode[] = ['in-process', 'rest', 'bare', 'grpc', 'google-rest', 'google-grpc']
/** The modes whose clients run in the bench's process, against the server's. */
type WireMode = Exclude<Mode, 'in-process'>
type Json = Record<string, unknown>
type Engines = ReturnType<typeof createServer>['engines']

/** Google's clients on one transport, one per service (all concurrent clients share it). */
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
/** How a service method is called: as a transport calls it (the bare server), or as code in process (no options: its request and response copied). */
type ServeCall = { readonly transport?: boolean }
/** The bare server serializes each answer at once, as Quarry's transports do: the engine's own objects, uncopied (CallOptions.transport). */
const AS_TRANSPORT: ServeCall = { transport: true }

interface Call {
  /** GET (no body) or POST (default). */
  readonly method?: 'GET'
  readonly path: string
  /** The RPC's full gRPC path (`/package.Service/Method`), for the raw gRPC client. */
  readonly rpc: string
  /** Concurrent clients measured (default 1, 8, 32). */
  readonly clients?: readonly number[]
  readonly body: (q: string, i: number) => Json
  readonly request: (body: Json) => Json
  /** The call in process, in the server's process. */
  readonly local: (engines: Engines, request: Json, call?: ServeCall) => Promise<Outcome<unknown>>
  /** The call through Google's client (on either transport), in the bench's process. */
  readonly google: (clients: GoogleClients, request: Json) => Promise<unknown>
  /** What every transport must answer alike: ids in order, each with its scores at float precision (gRPC's `float` fields are 32-bit). */
  readonly hits: (response: unknown) => string[]
}

/** A small read: its REST path (GET, a query string at most) and the same call in process, for the bare server. */
interface SmallRead {
  readonly path: string
  readonly local: (engines: Engines, call?: ServeCall) => Promise<Outcome<unknown>>
}

/** Measured rounds of each transport per call and client count (after a warm-up round). */
const ROUNDS = 3
/** Reads against bare (small reads and the queries): concurrent clients, and rounds of each of REST and bare (in the order bare, REST, REST, bare, ...). */
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
      local: (e, r, call) => e.vertexRag.v1beta1.retrieveContexts(r, undefined, call),
      google: async (g, r) => (await g.rag.retrieveContexts(r as aiplatformProtos.google.cloud.aiplatform.v1beta1.IRetrieveContextsRequest))[0],
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
      local: (e, r, call) => e.semanticRetriever.queryCorpus(r, undefined, call),
      google: async (g, r) => (await g.retriever.queryCorpus(r as languageProtos.google.ai.generativelanguage.v1beta.IQueryCorpusRequest))[0],
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
      local: (e, r, call) => e.memoryBank.retrieveMemories(r, undefined, call),
      google: async (g, r) => (await g.memory.retrieveMemories(r as aiplatformProtos.google.cloud.aiplatform.v1beta1.IRetrieveMemoriesRequest))[0],
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
      local: (e, r, call) => e.vertexRag.v1beta1.getRagCorpus(r, undefined, call),
      google: async (g, r) => (await g.data.getRagCorpus(r as aiplatformProtos.google.cloud.aiplatform.v1beta1.IGetRagCorpusRequest))[0],
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
    getRagCorpus: { path: `/v1beta1/${ragCorpus}`, local: (e, call) => e.vertexRag.v1beta1.getRagCorpus({ name: ragCorpus }, undefined, call) },
    listRagCorpora: { path: `/v1beta1/${parent}/ragCorpora`, local: (e, call) => e.vertexRag.v1beta1.listRagCorpora({ parent }, undefined, call) },
    getRagFile: { path: `/v1beta1/${ragFile}`, local: (e, call) => e.vertexRag.v1beta1.getRagFile({ name: ragFile }, undefined, call) },
    listRagFiles: { path: `/v1beta1/${ragCorpus}/ragFiles?pageSize=5`, local: (e, call) => e.vertexRag.v1beta1.listRagFiles({ parent: ragCorpus, pageSize: 5 }, undefined, call) },
    getCorpus: { path: '/v1beta/corpora/bench', local: (e, call) => e.semanticRetriever.getCorpus({ name: 'corpora/bench' }, undefined, call) },
    getDocument: { path: '/v1beta/corpora/bench/documents/d', local: (e, call) => e.semanticRetriever.getDocument({ name: 'corpora/bench/documents/d' }, undefined, call) },
    getMemory: { path: `/v1beta1/${memory}`, local: (e, call) => e.memoryBank.getMemory({ name: memory }, undefined, call) },
  }
}

/** The queries read at 16 clients after the small reads, each request its own query. */
const QUERY_READS = ['retrieveContexts', 'queryCorpus', 'retrieveMemories'] as const

/** The passages and queries, the same in both processes (the npm corpus is deterministic). */
function corpusOf(quick: boolean): { passages: { text: string }[]; queries: string[] } {
  const passages = npmCorpus().slice(0, quick ? 2000 : 10_000)
  return { passages, queries: makeQueries(passages, 50).map((q) => q.text) }
}

/**
 * A round holds at least this many clients' worth of requests (`perClient` each). One client's
 * `perClient` alone (150) is over in a tenth of a second, right after the other transports' rounds:
 * its p50 was then partly of code still warming up (most on the transport with the longer path),
 * and moved from run to run.
 */
const MIN_ROUND_CLIENTS = 8

/** Requests each of `concurrency` clients sends in a round: `perClient`, or more below MIN_ROUND_CLIENTS clients. */
function perClientAt(concurrency: number, perClient: number): number {
  return Math.ceil((Math.max(concurrency, MIN_ROUND_CLIENTS) * perClient) / concurrency)
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
 * path, the engine called in process as a transport calls it (nothing copied), its response written as JSON (an error as 500 with the
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
type FloorMode = 'http echo' | 'http2 echo'
const FLOOR_MODES: readonly FloorMode[] = ['http echo', 'http2 echo']

/**
 * Servers that do no work, each answering any request with the same 200 bytes: the floor under
 * each transport, set by Node's HTTP/1.1 and HTTP/2: `http echo` is a bare `node:http` server,
 * `http2 echo` a minimal gRPC server on `node:http2` (headers, one message and trailers; nothing else).
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
    ports: { 'http echo': portOf(http1), 'http2 echo': portOf(http2) },
    close: async () => {
      http1.closeAllConnections()
      await Promise.all([new Promise((resolve) => http1.close(resolve)), new Promise((resolve) => http2.close(resolve))])
    },
  }
}

/**
 * One unary gRPC call the plainest way: a node:http2 stream with the message framed, the answer's
 * one message unframed, and its status from the trailers (or from the headers of a trailers-only answer).
 */
function unaryHttp2(session: ClientHttp2Session, path: string, message: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' })
    const chunks: Buffer[] = []
    let status: string | undefined
    let detail = ''
    const take = (headers: Record<string, unknown>): void => {
      if (headers['grpc-status'] === undefined) return
      status = String(headers['grpc-status'])
      detail = decodeURIComponent(String(headers['grpc-message'] ?? ''))
    }
    stream.on('response', take)
    stream.on('trailers', take)
    stream.on('data', (c: Buffer) => chunks.push(c))
    stream.on('error', reject)
    stream.on('end', () => {
      const body = Buffer.concat(chunks)
      if (status !== '0') return reject(new Error(`${path}: grpc-status ${status ?? 'missing'} ${detail}`))
      if (body.length < 5 || body[0] !== 0 || body.readUInt32BE(1) !== body.length - 5) return reject(new Error(`${path}: not one uncompressed message`))
      resolve(body.subarray(5))
    })
    stream.end(framedMessage(message))
  })
}

/** What the bench asks of the server's process, and what it answers. */
type Ask = { op: 'local'; call: string; request: Json } | { op: 'measure'; call: string; concurrency: number; perClient: number } | { op: 'cpu' } | { op: 'close' }
type Ready = { url: string; grpcPort: number; barePort: number; echoPorts: Record<FloorMode, number>; names: Names }

/**
 * The server's process: Quarry's server (REST and gRPC) and the bare server on the same engines,
 * loaded with the bench data, as `quarry serve` runs apart from its clients. It answers the bench's
 * asks over IPC: a call in process (the oracle), a closed loop in process, its CPU time, close.
 */
async function serveChild(quick: boolean, from: ServeFrom): Promise<void> {
  const send = (message: unknown): void => void process.send?.(message)
  const adapters = import.meta.resolve('@quarry/adapters')
  if ((adapters === pathToFileURL(DIST_ADAPTERS).href) !== (from === 'dist')) throw new Error(`the server's process was to run ${from}, but @quarry/adapters resolves to ${adapters}`)
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
      ...Object.values(calls).map((c) => [c.path, (body: Json) => c.local(engines, c.request(body), AS_TRANSPORT)] as const),
      ...Object.values(smallReadsOf(names)).map((r) => [r.path, () => r.local(engines, AS_TRANSPORT)] as const),
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

/**
 * What the server's process runs: `dist` (default), the built, bundled packages, as an installed
 * `quarry serve` does (built first); `source` (HTTP_FROM=source), the workspace's TypeScript
 * sources through tsx, whose keepNames wraps every function the sources make, per request too.
 */
type ServeFrom = 'dist' | 'source'

function serveFrom(): ServeFrom {
  const from = process.env['HTTP_FROM'] ?? 'dist'
  if (from !== 'dist' && from !== 'source') throw new Error(`HTTP_FROM must be dist or source, not ${from}`)
  return from
}

/** The server's process, started: its ports and names, and a way to ask it. */
async function startServerProcess(quick: boolean, from: ServeFrom): Promise<{ ready: Ready; ask: (ask: Ask) => Promise<unknown>; child: ChildProcess }> {
  // The bench's node flags (tsx runs this file, the heap size); without the source condition
  // `@quarry/core` and `@quarry/adapters` resolve to the built packages. Its output is the bench's.
  const execArgv = from === 'dist' ? process.execArgv.filter((flag) => flag !== '--conditions=quarry-source') : process.execArgv
  const child = fork(SELF, ['--http-server-child', quick ? 'quick' : 'full', from], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
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
 * `quarry serve`, two ways over each of REST and gRPC: raw, with Node's own clients (node:http
 * keep-alive with JSON; one node:http2 connection with protobuf.js messages from the same protos,
 * no client library), which measures the server; and as users call it, with Google's own clients on
 * REST (`fallback: true`) and on gRPC (one client per service and transport, shared by all
 * concurrent clients: HTTP/2 multiplexes them over one connection). And in the server's process
 * with no transport, with 1,
 * 8 and 32 concurrent clients (a closed loop: each client sends its next request when the last
 * returns). Requests per second, p50 / p99 latency, the server process's CPU per request (what the
 * transport costs Quarry, apart from the client's cost), and the ratios. Before timing, one answer
 * of each call over every transport must equal the in-process answer (ids, order, scores). Then
 * the floor: the same clients against servers that do no work (echoServers). The server's process
 * runs the built packages, as an installed `quarry serve` does; HTTP_FROM=source runs the sources.
 */
export async function runHttp(ctx: SuiteContext): Promise<void> {
  // HTTP_READS=retrieveMemories,getCorpus runs just those reads at 16 clients (REST against bare,
  // about 20 s each): for working on the REST layer's cost. It prints them and writes no results.
  const onlyReads = process.env['HTTP_READS']?.split(',')
  const readNames = [...Object.keys(smallReadsOf({ parent: '', ragCorpus: '', ragFile: '', engine: '', memory: '' })), ...QUERY_READS]
  const unknown = onlyReads?.filter((name) => !readNames.includes(name)) ?? []
  if (unknown.length > 0) throw new Error(`HTTP_READS names no read ${unknown.join(', ')}; the reads are ${readNames.join(', ')}`)
  const from = serveFrom()
  if (from === 'dist') buildDist('adapters')
  const { ready, ask, child } = await startServerProcess(ctx.quick, from)
  const { url, grpcPort, barePort, echoPorts, names } = ready
  const { passages, queries } = corpusOf(ctx.quick)
  const calls = callsOf(names)
  const smallReads = smallReadsOf(names)

  // gRPC: endpoint, port and plaintext credentials only; `universeDomain` keeps google-auth-library
  // from probing the cloud metadata server. REST: plain HTTP, with an OAuth client holding a local token.
  const auth = new gax.googleAuthLibrary.OAuth2Client()
  auth.setCredentials({ access_token: 'local', expiry_date: Date.now() + 3.6e6 })
  type Options = NonNullable<ConstructorParameters<typeof aiplatform.v1beta1.VertexRagServiceClient>[0]>
  const googleClients = (options: Options): GoogleClients => ({
    rag: new aiplatform.v1beta1.VertexRagServiceClient(options),
    retriever: new v1beta.RetrieverServiceClient(options),
    memory: new aiplatform.v1beta1.MemoryBankServiceClient(options),
    data: new aiplatform.v1beta1.VertexRagDataServiceClient(options),
  })
  const overGrpc = googleClients({ apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: gax.grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' })
  const overRest = googleClients({ apiEndpoint: '127.0.0.1', port: Number(new URL(url).port), protocol: 'http', fallback: true, authClient: auth as unknown as NonNullable<Options['authClient']> })
  // The raw way: one node:http2 connection and protobuf.js with the same shipped protos, no client library.
  const rawRoot = loadServiceProtos(['google.cloud.aiplatform.v1beta1.VertexRagService', 'google.cloud.aiplatform.v1beta1.VertexRagDataService', 'google.ai.generativelanguage.v1beta.RetrieverService', 'google.cloud.aiplatform.v1beta1.MemoryBankService'])
  const rawSession = connectHttp2(`http://127.0.0.1:${grpcPort}`)
  const rawTypes = new Map<string, [ProtoType, ProtoType]>()
  const rawCall = async (rpc: string, request: Json): Promise<unknown> => {
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
    // The answer decoded, as REST's is parsed: its fields read like JSON's (no further conversion).
    return res.decode(await unaryHttp2(rawSession, rpc, Buffer.from(req.encode(req.fromObject(request)).finish())))
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
    if (mode === 'google-grpc') return c.google(overGrpc, c.request(body))
    if (mode === 'google-rest') return c.google(overRest, c.request(body))
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
    await send(c, 'google-grpc', body)
    firstCallMs[name] = performance.now() - t
    const expected = c.hits(await ask({ op: 'local', call: name, request: c.request(body) }))
    if (expected.length === 0) throw new Error(`${name}: no hits in process`)
    for (const mode of ['rest', 'bare', 'grpc', 'google-rest', 'google-grpc'] as const) {
      const got = c.hits(await send(c, mode, body))
      if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`${name} over ${mode} answers ${JSON.stringify(got)}, in process ${JSON.stringify(expected)}`)
    }
  }

  const perClient = ctx.quick ? 20 : 150
  const rows: Record<string, string | number>[] = []
  for (const [name, c] of Object.entries(onlyReads === undefined ? calls : {})) {
    for (const concurrency of c.clients ?? [1, 8, 32]) {
      // Fewer clients send more each, so that every round holds at least MIN_ROUND_CLIENTS clients' worth of requests.
      const each = perClientAt(concurrency, perClient)
      // In process, the loop runs in the server's process: the bench's own CPU is then only waiting.
      const measure = (mode: Mode): Promise<Measured> =>
        measured(concurrency * each, async () => (mode === 'in-process' ? ((await ask({ op: 'measure', call: name, concurrency, perClient: each })) as Stat) : closedLoop(concurrency, each, queries, (q, i) => send(c, mode, c.body(q, i)))))
      // A warm-up round of each, then ROUNDS measured rounds, interleaved (the order rotating); medians.
      for (const mode of MODES) await measure(mode)
      const runs = new Map<Mode, Measured[]>(MODES.map((m) => [m, []]))
      for (let round = 0; round < ROUNDS; round++) {
        for (let j = 0; j < MODES.length; j++) {
          const mode = MODES[(j + round) % MODES.length] as Mode
          runs.get(mode)?.push(await measure(mode))
        }
      }
      const med = new Map(
        MODES.map((m) => {
          const xs = runs.get(m) ?? []
          const of = (k: keyof Measured): number => median(xs.map((x) => x[k]))
          return [m, { rps: of('rps'), p50: of('p50'), p99: of('p99'), cpu: of('cpu'), clientCpu: of('clientCpu') }] as const
        }),
      )
      const at = (m: Mode): Measured => med.get(m) as Measured
      const eachRound = (over: Mode, under: Mode): string => (runs.get(over) ?? []).map((x, k) => (x.rps / ((runs.get(under) ?? [])[k]?.rps ?? NaN)).toFixed(2)).join(' ')
      /** gRPC against REST, sent the same way: requests per second, p50, and the CPU per request of the server and of the clients. */
      const versus = (prefix: string, grpcMode: Mode, restMode: Mode): Record<string, string | number> => ({
        [`${prefix}grpc / rest rps`]: at(grpcMode).rps / at(restMode).rps,
        [`${prefix}grpc / rest, each round`]: eachRound(grpcMode, restMode),
        [`${prefix}grpc / rest p50`]: at(grpcMode).p50 / at(restMode).p50,
        [`${prefix}grpc / rest server µs`]: at(grpcMode).cpu / at(restMode).cpu,
        [`${prefix}grpc / rest client µs`]: at(grpcMode).clientCpu / at(restMode).clientCpu,
      })
      rows.push({
        call: name,
        clients: concurrency,
        'requests per client': each,
        ...Object.fromEntries(MODES.flatMap((m) => [[`${m} rps`, at(m).rps], [`${m} p50 ms`, at(m).p50], [`${m} p99 ms`, at(m).p99], [`${m} server µs`, at(m).cpu], [`${m} client µs`, at(m).clientCpu]])),
        'rest / bare rps': at('rest').rps / at('bare').rps,
        'rest / bare, each round': eachRound('rest', 'bare'),
        ...versus('', 'grpc', 'rest'),
        ...versus('google ', 'google-grpc', 'google-rest'),
      })
    }
  }
  // The floor: each transport against a server that does no work, with the same clients
  // (node:http with a keep-alive agent; one node:http2 connection, bytes in and out).
  const floorPerRound = ctx.quick ? 300 : 3000
  const echoSession = connectHttp2(`http://127.0.0.1:${echoPorts['http2 echo']}`)
  const echoRequest = Buffer.alloc(60, 1)
  const echoBody = JSON.stringify({ text: 'y'.repeat(50) })
  const echoOnce = async (mode: FloorMode): Promise<void> => {
    if (mode === 'http echo') {
      const res = await post('/echo', echoBody, echoPorts['http echo'])
      if (res.text !== ECHO_JSON) throw new Error(`the http echo answered ${res.text.slice(0, 100)}`)
      return
    }
    const bytes = await unaryHttp2(echoSession, '/echo.Echo/Echo', echoRequest)
    if (!bytes.equals(ECHO_MESSAGE)) throw new Error(`the ${mode} answered ${bytes.length} other bytes`)
  }
  const floorRows: Record<string, string | number>[] = []
  for (const concurrency of onlyReads === undefined ? FLOOR_CLIENTS : []) {
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
  echoSession.close()

  // Reads at 16 clients (the target's count), REST against bare only: the small reads, then the
  // queries (POST, each request its own query): more rounds, each with enough requests to span many
  // scheduler slices, in the order bare, REST, REST, bare (drift over a round pair cancels); medians.
  const perRound = ctx.quick ? 800 : 6000
  // A query does more engine work per request: fewer requests make a round of about the same length.
  const perQueryRound = ctx.quick ? 300 : 2000
  const reads = [
    ...Object.entries(smallReads).map(([name, read]) => ({ name, path: read.path, body: (): string | undefined => undefined, requests: perRound })),
    ...QUERY_READS.map((name) => {
      const c = calls[name] as Call
      return { name, path: c.path, body: (i: number): string | undefined => JSON.stringify(c.body(queries[i % queries.length] as string, i)), requests: perQueryRound }
    }),
  ]
  const smallReadRows: Record<string, string | number>[] = []
  for (const { name, path, body, requests } of reads.filter((r) => onlyReads === undefined || onlyReads.includes(r.name))) {
    const [overRest, overBare] = await Promise.all([post(path, body(0)), post(path, body(0), barePort)])
    if (overRest.status !== 200 || JSON.stringify(JSON.parse(overRest.text)) !== JSON.stringify(JSON.parse(overBare.text))) throw new Error(`${name}: REST answers ${overRest.status} ${overRest.text.slice(0, 200)}, bare ${overBare.text.slice(0, 200)}`)
    // A round's requests per second, and the server process's CPU microseconds per request (read
    // before and after the timed part): what the REST layer costs beyond bare, apart from the clients.
    const round = async (to: string | number): Promise<{ rps: number; cpu: number }> => {
      let sent = 0
      const before = await serverCpu()
      const t0 = performance.now()
      await Promise.all(
        Array.from({ length: SMALL_READ_CLIENTS }, async () => {
          while (sent < requests) if ((await post(path, body(sent++), to)).status !== 200) throw new Error(`${name} failed during the run`)
        }),
      )
      const rps = requests / ((performance.now() - t0) / 1000)
      return { rps, cpu: ((await serverCpu()) - before) / requests }
    }
    await round(barePort)
    await round(port)
    const rest: { rps: number; cpu: number }[] = []
    const bare: { rps: number; cpu: number }[] = []
    for (let k = 0; k < SMALL_READ_ROUNDS; k++) {
      if (k % 2 === 0) bare.push(await round(barePort))
      rest.push(await round(port))
      if (k % 2 === 1) bare.push(await round(barePort))
    }
    const ratios = rest.map((r, k) => r.rps / (bare[k]?.rps ?? NaN))
    smallReadRows.push({
      call: name,
      clients: SMALL_READ_CLIENTS,
      requests,
      'rest rps': median(rest.map((r) => r.rps)),
      'bare rps': median(bare.map((r) => r.rps)),
      'rest / bare rps': median(ratios),
      'rest / bare, each round': ratios.map((x) => x.toFixed(2)).join(' '),
      'rest server µs': median(rest.map((r) => r.cpu)),
      'bare server µs': median(bare.map((r) => r.cpu)),
    })
  }
  agent.destroy()
  rawSession.close()
  await Promise.all([overGrpc, overRest].flatMap((g) => [g.rag.close(), g.retriever.close(), g.memory.close(), g.data.close()]))
  await ask({ op: 'close' })
  child.disconnect()
  if (onlyReads !== undefined) {
    printTable(`reads at ${SMALL_READ_CLIENTS} clients, REST vs a bare node:http server, keep-alive, ${SMALL_READ_ROUNDS} rounds (HTTP_READS: no results written)`, smallReadRows)
    return
  }
  printTable(`in process vs REST (loopback, keep-alive) vs gRPC, raw and with Google's clients, server in its own process, ${perClient} requests per client (one client: ${perClientAt(1, perClient)}), ${passages.length} passages`, rows)
  printTable(`reads at ${SMALL_READ_CLIENTS} clients, REST vs a bare node:http server, keep-alive, ${SMALL_READ_ROUNDS} rounds of ${perRound} requests each (queries: ${perQueryRound})`, smallReadRows)
  printTable(`the floor: servers that do no work, the same clients, ${ROUNDS} rounds of ${floorPerRound} requests each`, floorRows)
  console.log(`first gRPC call of each client (loads protos, connects): ${Object.entries(firstCallMs).map(([n, ms]) => `${n} ${ms.toFixed(0)} ms`).join(', ')}`)
  writeFileSync(join(ctx.resultsDir, 'http.json'), `${JSON.stringify({ suite: 'http', date: new Date().toISOString(), node: process.version, cpus: ctx.cpus, quick: ctx.quick, passages: passages.length, perClient, minRoundClients: MIN_ROUND_CLIENTS, server: 'its own process; clients in the bench process', serverFrom: from, clients: "raw: node:http (keep-alive) and node:http2 (one connection); Google's: one per service and transport, shared by the concurrent clients", grpcFirstCallMs: firstCallMs, rounds: ROUNDS, rows, floorRequests: floorPerRound, floor: floorRows, smallReadRounds: SMALL_READ_ROUNDS, smallReadRequests: perRound, queryReadRequests: perQueryRound, smallReads: smallReadRows }, null, 1)}\n`)
}

if (process.argv[2] === '--http-server-child') {
  serveChild(process.argv[3] === 'quick', process.argv[4] === 'source' ? 'source' : 'dist').catch((error: unknown) => {
    console.error(error)
    process.exit(1)
  })
}
