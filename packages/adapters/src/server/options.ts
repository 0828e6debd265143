import type { Server } from 'node:http'
import { QuarryError, describeValue, rejectUnknownOptions, type Embedder } from '@quarry/core'
import type { RequestLogEntry } from '../http/server.js'
import type { ExternalAccountCredentials } from '../http/local-credentials.js'
import type { MemoryBankOptions } from '../memory-bank/options.js'
import type { SemanticRetrieverOptions } from '../semantic-retriever/options.js'
import type { Engines } from '../transport/bound-methods.js'
import type { Durability } from '../transport/durable.js'
import type { GenerativeModel } from '../generative/model.js'
import type { VertexRagOptions } from '../vertex-rag/options.js'

export interface QuarryServerOptions {
  /** Shared by the three APIs unless their own options name another. @defaultValue `defaultEmbedder()` (GloVe SIF, loaded on first use) */
  embedder?: Embedder
  semanticRetriever?: SemanticRetrieverOptions
  vertexRag?: VertexRagOptions
  memoryBank?: MemoryBankOptions
  /**
   * Answers `generateContent` on publisher models after Quarry has run the request's RAG retrieval
   * tool (docs/generate-content.md). @defaultValue `localModel`: deterministic, labelled, quotes the retrieved contexts
   */
  model?: GenerativeModel
  /** Engines to serve (e.g. shared with in-process clients); made from the options otherwise. */
  engines?: Partial<Engines>
  /** Largest request body accepted, in bytes (larger: 413). @defaultValue 32 MiB */
  maxBodyBytes?: number
  /** Told about unexpected errors (answered as INTERNAL, without details). @defaultValue console.error */
  onInternalError?: (error: unknown) => void
  /**
   * Keep the state in this folder: loaded at start, snapshotted (crash-safely) after changes and
   * on close. Without it, state lives in memory.
   */
  dataDir?: string
  /**
   * With dataDir, what an acknowledged write survives (README "Durability"): `log` — a crash of
   * the process or machine (each write is in the write-ahead log on disk before it is answered);
   * `checkpoint` — a clean stop (snapshots follow changes by `snapshotDelayMs`); `none` — state
   * written at close only. @defaultValue 'log'
   */
  durability?: Durability
  /**
   * With dataDir: `log` takes a checkpoint (a whole snapshot; the log restarts empty) this many
   * milliseconds after the first write since the last one; `checkpoint` snapshots this long after
   * a change. @defaultValue 30000 with `log`, 200 with `checkpoint`
   */
  snapshotDelayMs?: number
  /** With dataDir and `log`: also checkpoint once the log holds this many bytes. @defaultValue 64 MiB */
  checkpointBytes?: number
  /**
   * With dataDir: start even when the write-ahead log the checkpoint names is missing, cut short or
   * damaged (refused otherwise, saying what would be lost): the writes that can be read are
   * replayed and the log is kept aside as `<name>.damaged-<time>` (`logKeptAside`; a hard link,
   * else a copy). @defaultValue false
   */
  acceptLogLoss?: boolean
  /**
   * Host names answered besides this machine's own (localhost, `*.localhost`, IP addresses, the
   * bound host): requests naming any other `Host` get 403, which stops DNS rebinding. A name
   * starting with `.` allows its subdomains too; `all` turns the check off. @defaultValue []
   */
  allowedHosts?: readonly string[]
  /**
   * Folders that `file://` imports over HTTP may read (links followed, never out of them); none by
   * default, so a request cannot make the server read the machine's files. Applies to engines
   * passed in `engines` too, whatever their own `importRoots` (in-process callers keep those).
   * @defaultValue vertexRag.importRoots, else []
   */
  importRoots?: readonly string[]
  /**
   * Origins whose web pages may call the server (CORS, preflights answered); `*` allows any.
   * Requests from any other origin get 403. @defaultValue [] (no other site's pages)
   */
  corsOrigins?: readonly string[]
  /** Told about every request once its response is finished or its connection closed (e.g. an access log). */
  onRequest?: (entry: RequestLogEntry) => void
  /**
   * Also serve gRPC (plaintext HTTP/2, as Cloud emulators do) on this port, on the same host and
   * engines, when `listen` is called; 0 picks a free port. Google's clients reach it with
   * `{ apiEndpoint, port, sslCreds: grpc.credentials.createInsecure() }`. @defaultValue no gRPC
   */
  grpcPort?: number
  /**
   * Requests held at once, over both transports; beyond it a request is answered 429 /
   * RESOURCE_EXHAUSTED at once (with `Retry-After: 1`) instead of queuing without bound. @defaultValue 256
   */
  maxInFlight?: number
  /**
   * The console's event streams open at once (they hold no `maxInFlight` slot); beyond it a new
   * stream gets 429 and the page polls instead. A remote client (not loopback) holds at most
   * max(8, limit / 4) of them, as of the request slots. @defaultValue 32
   */
  maxEventStreams?: number
  /**
   * A request body that sends nothing for this many milliseconds ends with 408 (bodies are received
   * before a request takes a slot, so a slow one holds none meanwhile). @defaultValue 5000
   */
  bodyTimeoutMs?: number
  /**
   * A response the client does not read: once its first byte is sent, the connection (REST) or the
   * stream (gRPC: reset, CANCELLED) is closed when this many milliseconds pass without the client
   * taking any of it, freeing the request's slot and the answer's memory. Time spent computing the
   * answer does not count. @defaultValue 10000
   */
  sendTimeoutMs?: number
  /**
   * Serve the console (docs/rest-server.md "Console"): its pages at `/` and `/console/<file>` from the
   * files shipped in the package, and its JSON under `/console/api/` (overview, events, scopes,
   * explain), behind the same Host and Origin checks as the API. `false`: `/` and `/console/` answer
   * 404 as any unknown path. @defaultValue true
   */
  console?: boolean
}

/** Every option of `createServer` (the record makes the compiler name one left out): any other key is refused. */
export const SERVER_OPTION_KEYS: Readonly<Record<keyof QuarryServerOptions, true>> = {
  embedder: true,
  semanticRetriever: true,
  vertexRag: true,
  memoryBank: true,
  model: true,
  engines: true,
  maxBodyBytes: true,
  onInternalError: true,
  dataDir: true,
  durability: true,
  snapshotDelayMs: true,
  checkpointBytes: true,
  acceptLogLoss: true,
  allowedHosts: true,
  importRoots: true,
  corsOrigins: true,
  onRequest: true,
  grpcPort: true,
  maxInFlight: true,
  maxEventStreams: true,
  bodyTimeoutMs: true,
  sendTimeoutMs: true,
  console: true,
}

/**
 * Checks `createServer`'s options: names (a misspelt `data` for `dataDir` would leave a server in
 * memory) and values (a `durability` of `'logs'` would journal nothing; a `maxInFlight` of 0 would
 * refuse every request). The engines' own options are checked by the engines.
 */
export function checkServerOptions(options: unknown): asserts options is QuarryServerOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new QuarryError('INVALID_OPTION', `createServer takes an options object like { dataDir, grpcPort }; received ${describeValue(options)}.`, { path: 'options' })
  }
  const o = options as Record<string, unknown>
  rejectUnknownOptions(o, Object.keys(SERVER_OPTION_KEYS), '')
  const fail = (key: string, what: string): never => {
    throw new QuarryError('INVALID_OPTION', `${key} must be ${what}; received ${describeValue(o[key])}.`, { path: key })
  }
  const given = (key: keyof QuarryServerOptions): boolean => o[key] !== undefined
  for (const key of ['maxBodyBytes', 'checkpointBytes', 'maxInFlight', 'maxEventStreams', 'bodyTimeoutMs', 'sendTimeoutMs'] as const) {
    if (given(key) && (!Number.isSafeInteger(o[key]) || (o[key] as number) < 1)) fail(key, 'a positive integer')
  }
  if (given('snapshotDelayMs') && (!Number.isSafeInteger(o.snapshotDelayMs) || (o.snapshotDelayMs as number) < 0)) fail('snapshotDelayMs', 'an integer of milliseconds from 0')
  if (given('grpcPort') && (!Number.isInteger(o.grpcPort) || (o.grpcPort as number) < 0 || (o.grpcPort as number) > 65535)) fail('grpcPort', 'a port from 0 to 65535 (0: any free port)')
  if (given('durability') && !DURABILITIES.includes(o.durability as Durability)) fail('durability', `one of ${DURABILITIES.map((d) => `'${d}'`).join(', ')}`)
  if (given('dataDir') && (typeof o.dataDir !== 'string' || o.dataDir === '')) fail('dataDir', 'the path of a folder')
  for (const key of ['acceptLogLoss', 'console'] as const) if (given(key) && typeof o[key] !== 'boolean') fail(key, 'true or false')
  for (const key of ['allowedHosts', 'importRoots', 'corsOrigins'] as const) {
    if (given(key) && (!Array.isArray(o[key]) || !(o[key] as unknown[]).every((v) => typeof v === 'string'))) fail(key, 'an array of strings')
  }
  for (const key of ['onInternalError', 'onRequest', 'model'] as const) if (given(key) && typeof o[key] !== 'function') fail(key, 'a function')
  for (const key of ['semanticRetriever', 'vertexRag', 'memoryBank', 'engines', 'embedder'] as const) {
    if (given(key) && (typeof o[key] !== 'object' || o[key] === null || Array.isArray(o[key]))) fail(key, 'an object')
  }
}

/** `durability`'s values, as the `quarry serve --durability` flag takes them. */
export const DURABILITIES: readonly Durability[] = ['log', 'checkpoint', 'none']

export interface QuarryServer {
  readonly server: Server
  readonly engines: Engines
  /** Whether state was loaded from dataDir at start (a checkpoint; after `listen`, or writes replayed from the log). */
  readonly restored: boolean
  /** Writes replayed from the write-ahead log by `listen` (with dataDir and `log` durability). */
  readonly replayed: number
  /** Where `listen` kept a damaged write-ahead log aside (with `acceptLogLoss`). */
  readonly logKeptAside: string | undefined
  /**
   * Takes a checkpoint now (with dataDir), when anything changed since the last one; resolves
   * when it is on disk. It is written in slices of about `sliceMs` (8 by default), requests
   * answered between them; `Infinity` writes it in one go, stopping the event loop meanwhile.
   */
  flush(options?: { readonly sliceMs?: number }): Promise<void>
  /** Whether the server answers its APIs: false while `listen` restores the data folder (then GET /readyz is 503). */
  readonly ready: boolean
  /**
   * Starts listening (REST, and gRPC with `grpcPort`); resolves to the bound address once the
   * server is ready. With dataDir and `log` durability the port is bound first and the log is
   * replayed after: meanwhile GET /readyz answers 503 and every other request 503 UNAVAILABLE.
   * @defaultValue host 127.0.0.1, port 0 (any free port)
   */
  listen(options?: { port?: number; host?: string }): Promise<{ host: string; port: number; url: string; grpcPort?: number }>
  /**
   * Application-default credentials whose token exchange is this server, for its bound address
   * (throws before `listen`): write them with `writeCredentialsFile` where
   * `GOOGLE_APPLICATION_CREDENTIALS` points, and Google's REST SDKs need no other auth.
   */
  credentials(): ExternalAccountCredentials
  close(): Promise<void>
}
