import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Embedder } from '@quarry/core'
import { MemoryBank } from '../memory-bank/service.js'
import type { MemoryBankOptions } from '../memory-bank/options.js'
import type { Outcome } from '../rpc/outcome.js'
import { codeName, httpStatusOf, rpcStatus, type RpcStatus } from '../rpc/status.js'
import { SemanticRetriever } from '../semantic-retriever/service.js'
import type { SemanticRetrieverOptions } from '../semantic-retriever/options.js'
import { VertexRagEngine } from '../vertex-rag/service.js'
import type { VertexRagOptions } from '../vertex-rag/options.js'
import { encodeEnums } from '../transport/enums.js'
import { checkAccess, corsHeaders, preflightHeaders } from '../transport/guard.js'
import { parseJsonBounded } from '../transport/json.js'
import { parseMultipart } from './multipart.js'
import { DataDir } from '../transport/data-dir.js'
import { restRoutes, type Route } from './routes.js'
import { bindMethods, type Engines } from '../transport/bound-methods.js'
import { setPath } from './template.js'
import { DurableWrites, type Durability } from '../transport/durable.js'
import { InFlight } from '../transport/in-flight.js'
import type { GrpcServer } from '../grpc/server.js'
import { answerTokenPath, isTokenPath } from './token-exchange.js'
import { localCredentials, type ExternalAccountCredentials } from './local-credentials.js'
import { createConsole } from '../console/routes.js'

export interface QuarryServerOptions {
  /** Shared by the three APIs unless their own options name another. @defaultValue `defaultEmbedder()` (GloVe SIF, loaded on first use) */
  embedder?: Embedder
  semanticRetriever?: SemanticRetrieverOptions
  vertexRag?: VertexRagOptions
  memoryBank?: MemoryBankOptions
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
   * Serve the console (docs/rest-server.md "Console"): its pages at `/` and `/console/<file>` from the
   * files shipped in the package, and its JSON under `/console/api/` (overview, events, scopes,
   * explain), behind the same Host and Origin checks as the API. `false`: `/` and `/console/` answer
   * 404 as any unknown path. @defaultValue true
   */
  console?: boolean
}

/** One answered request, for {@link QuarryServerOptions.onRequest}. */
export interface RequestLogEntry {
  readonly method: string
  /** The URL's path, without the query string (it may carry an API key). */
  readonly path: string
  /** The HTTP status sent (0 when the connection closed before a response). */
  readonly status: number
  /** Milliseconds from the request's arrival to its response's end. */
  readonly ms: number
}

export interface QuarryServer {
  readonly server: Server
  readonly engines: Engines
  /** Whether state was loaded from dataDir at start (a checkpoint; after `listen`, or writes replayed from the log). */
  readonly restored: boolean
  /** Writes replayed from the write-ahead log by `listen` (with dataDir and `log` durability). */
  readonly replayed: number
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

/** Names that would reach an object's prototype instead of a field. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/** Query parameters that steer the transport, not the request. */
const TRANSPORT_PARAMS = new Set(['$alt', 'alt', 'key', 'prettyPrint', '$prettyPrint', 'fields', '$fields', 'access_token', 'uploadType', 'upload_protocol', '$callback', 'callback'])

class HttpFailure extends Error {
  constructor(readonly httpStatus: number, readonly status: RpcStatus) {
    super(status.message)
  }
}

/** Requests whose body was left partly unread (over the limit): their answer closes the connection. */
const cutShort = new WeakSet<IncomingMessage>()

/** The readiness route: 200 `{"ready": true}` once the data folder is restored, 503 before. */
const READY_PATH = '/readyz'

function send(res: ServerResponse, httpStatus: number, body: unknown): void {
  const text = JSON.stringify(body)
  const headers: Record<string, string | number> = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) }
  // The rest of the body is still on the connection: it must not be read as the next request.
  if (cutShort.has(res.req)) headers['connection'] = 'close'
  res.writeHead(httpStatus, headers)
  res.end(text)
}

function sendStatus(res: ServerResponse, status: RpcStatus, httpStatus = httpStatusOf(status.code)): void {
  send(res, httpStatus, { error: { code: httpStatus, message: status.message, status: codeName(status.code), ...(status.details ? { details: status.details } : {}) } })
}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0)
  if (declared > limit) throw new HttpFailure(413, rpcStatus('INVALID_ARGUMENT', `The request body is ${declared} bytes; this server takes at most ${limit} (maxBodyBytes).`))
  const gone = (): Error => Object.assign(new Error('the client went away'), { code: 'ECONNRESET' })
  if (req.destroyed) return Promise.reject(gone())
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0))
  // Events rather than an async iterator: a small body is one 'data' and one 'end', with no promise per chunk.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size <= limit) chunks.push(chunk)
      else {
        done()
        // Not read any further (a body without a declared length has no bound): the 413 is sent
        // and then the connection closes (see `send`).
        req.pause()
        cutShort.add(req)
        reject(new HttpFailure(413, rpcStatus('INVALID_ARGUMENT', `The request body is larger than ${limit} bytes (maxBodyBytes).`)))
      }
    }
    const onEnd = (): void => {
      done()
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks))
    }
    const onError = (error: Error): void => {
      done()
      reject(error)
    }
    // Closed before its end: the client went away.
    const onClose = (): void => onError(gone())
    const done = (): void => {
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      req.off('close', onClose)
    }
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
    req.on('close', onClose)
  })
}

/** Reads and drops a body the server will not use (so the connection can be reused). */
async function drain(req: IncomingMessage, limit: number): Promise<void> {
  await readBody(req, limit).catch(() => undefined)
}

function parseJson(text: string, what: string): unknown {
  const parsed = parseJsonBounded(text)
  if (!parsed.ok) throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `Invalid JSON payload received in the ${what}: ${parsed.message}`))
  return parsed.value
}

/** The media type of a Content-Type header, lowercased, without parameters. */
function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase()
}

/** 415 unless the request's body is of a type the route reads: JSON, or a multipart upload. */
function checkContentType(route: Route, contentType: string | undefined, bodyLength: number): void {
  const type = mediaType(contentType ?? '')
  if (route.multipart) {
    if (type === 'multipart/related' || type === 'multipart/form-data') return
    throw new HttpFailure(415, rpcStatus('INVALID_ARGUMENT', `${route.method} ${route.template} is a media upload: send Content-Type multipart/related or multipart/form-data (a "metadata" JSON part and a "file" part); received ${type === '' ? 'none' : `"${type.slice(0, 100)}"`}.`))
  }
  if (type === 'application/json') return
  // An empty body needs no type (nor does a route without one); any body must be declared JSON.
  if (bodyLength === 0 && (type === '' || route.body === undefined)) return
  throw new HttpFailure(415, rpcStatus('INVALID_ARGUMENT', `Send the request body as JSON with Content-Type application/json; received ${type === '' ? 'no Content-Type' : `"${type.slice(0, 100)}"`}.`))
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `Invalid JSON payload received: the ${what} must be a JSON object.`))
  return value as Record<string, unknown>
}

/**
 * No body: nothing, blanks, or the JSON string `""`, which google-gax's REST transport sends when
 * a request has nothing left for the body (a POST without a body binding such as
 * operations:cancel, or a body field whose only member went into the path).
 */
function emptyBody(body: Buffer): boolean {
  const text = body.toString('utf8').trim()
  return text === '' || text === '""'
}

/** The request message of a call: path-bound fields, then the body where the route puts it, then query parameters. */
function buildRequest(route: Route, match: RegExpExecArray, url: URL, body: Buffer, contentType: string): { request: Record<string, unknown>; upload: Uint8Array | undefined } {
  let request: Record<string, unknown> = {}
  let upload: Uint8Array | undefined
  if (route.multipart) {
    const parts = parseMultipart(body, contentType)
    if (!parts || parts.length === 0) throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', 'A media upload is a multipart body: a "metadata" JSON part ({ ragFile, uploadRagFileConfig }) and a "file" part.'))
    const metadata = parts.find((p) => p.name === 'metadata') ?? parts.find((p) => (p.headers['content-type'] ?? '').includes('json')) ?? parts[0]
    const file = parts.find((p) => p.name === 'file') ?? parts.find((p) => p !== metadata)
    request = asObject(parseJson(metadata?.body.toString('utf8') ?? '{}', 'metadata part'), 'metadata part')
    upload = file?.body
  } else if (route.body !== undefined && !emptyBody(body)) {
    const parsed = asObject(parseJson(body.toString('utf8'), 'request body'), 'request body')
    if (route.body === '*') request = parsed
    else request[route.body] = parsed
  } else if (route.body === undefined && !emptyBody(body) && body.toString('utf8').trim() !== '{}') {
    // (An empty JSON object carries no field: Google's front end takes it, and the Gen AI SDK's DELETEs send one.)
    throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `${route.method} ${route.template} takes no body; send its fields as query parameters.`))
  }
  for (const key of new Set(url.searchParams.keys())) {
    if (TRANSPORT_PARAMS.has(key)) continue
    if (key.split('.').some((part) => FORBIDDEN_KEYS.has(part))) {
      throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `Invalid JSON payload received. Unknown name "${key}": Cannot bind query parameter.`, [{ field: key, description: 'not a field of this request' }]))
    }
    const values = url.searchParams.getAll(key)
    setPath(request, key, values.length === 1 ? values[0] : values)
  }
  route.compiled.fields.forEach((field, i) => {
    const raw = match[i + 1] as string
    let value: string
    try {
      value = decodeURIComponent(raw)
    } catch {
      throw new HttpFailure(400, rpcStatus('INVALID_ARGUMENT', `The request path is not valid percent-encoding: ${raw.slice(0, 200)}`))
    }
    setPath(request, field, value)
  })
  return { request, upload }
}

/**
 * The local REST server: Google's REST paths for the Semantic Retriever (v1beta), Vertex AI RAG
 * Engine (v1, v1beta1) and Memory Bank (v1beta1), over the in-process engines. Binds to loopback
 * unless told otherwise.
 */
export function createServer(options: QuarryServerOptions = {}): QuarryServer {
  const onInternalError = options.onInternalError ?? ((error: unknown) => console.error('quarry: internal error', error))
  const shared = { ...(options.embedder ? { embedder: options.embedder } : {}), onInternalError }
  const engines: Engines = {
    semanticRetriever: options.engines?.semanticRetriever ?? new SemanticRetriever({ ...shared, ...options.semanticRetriever }),
    vertexRag: options.engines?.vertexRag ?? new VertexRagEngine({ ...shared, ...options.vertexRag }),
    memoryBank: options.engines?.memoryBank ?? new MemoryBank({ ...shared, ...options.memoryBank }),
  }
  // Requests from the network read local files only under folders the server is given (none by
  // default), whatever the engines allow in-process callers: the routes use served surfaces.
  const bound = bindMethods(engines, engines.vertexRag.served(options.importRoots ?? options.vertexRag?.importRoots ?? []))
  const durability = options.durability ?? 'log'
  const data = options.dataDir === undefined ? undefined : new DataDir(options.dataDir, engines)
  const durable =
    data &&
    new DurableWrites(bound, data, {
      durability,
      checkpointMs: options.snapshotDelayMs ?? (durability === 'log' ? 30_000 : 200),
      ...(options.checkpointBytes === undefined ? {} : { checkpointBytes: options.checkpointBytes }),
      onInternalError,
    })
  const restoredCheckpoint = durable?.load() ?? false
  // With a data folder, writes reach the engines through it (journaled, checkpoints scheduled);
  // both transports serve the same methods.
  // The console (console/routes.ts) counts the writes both transports answer: its generation.
  const site = options.console === false ? undefined : createConsole(engines, { send, sendStatus, readBody: (req) => readBody(req, maxBody) })
  const methods = site?.countWrites(durable?.methods ?? bound) ?? durable?.methods ?? bound
  const routes = restRoutes(methods)
  const maxBody = options.maxBodyBytes ?? 32 * 1024 * 1024
  const inFlight = new InFlight(options.maxInFlight ?? 256)
  let boundHost: string | undefined
  // Not ready while `listen` replays the data folder's log (the checkpoint is loaded above, before any port is bound).
  let ready = false
  const access = { allowedHosts: options.allowedHosts ?? [], corsOrigins: options.corsOrigins ?? [] }
  // gRPC (grpc-js and protobufjs, ~0.1 s of module loading) is loaded by `listen`, and only with a grpcPort.
  let grpc: GrpcServer | undefined
  // Set by close(): a listen still loading gRPC's modules then starts no gRPC server.
  let closing = false

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const admitted = checkAccess({ host: req.headers.host, origin: req.headers.origin }, boundHost, access)
    if (!admitted.ok) {
      await drain(req, maxBody)
      sendStatus(res, rpcStatus('PERMISSION_DENIED', admitted.message), 403)
      return
    }
    if (admitted.cors !== undefined) {
      for (const [name, value] of Object.entries(corsHeaders(admitted.cors))) res.setHeader(name, value)
      if (req.method === 'OPTIONS') {
        await drain(req, maxBody)
        res.writeHead(204, preflightHeaders(admitted.cors, req.headers['access-control-request-headers']))
        res.end()
        return
      }
    }
    // Readiness: for orchestrators and scripts, behind the same Host / Origin checks as everything.
    const rawPath = (req.url ?? '/').split('?', 1)[0] as string
    if (rawPath === READY_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      await drain(req, maxBody)
      if (!ready) res.setHeader('retry-after', '1')
      send(res, ready ? 200 : 503, ready ? { ready: true } : { ready: false, reason: 'restoring the data folder' })
      return
    }
    if (!ready) {
      await drain(req, maxBody)
      res.setHeader('retry-after', '1')
      sendStatus(res, rpcStatus('UNAVAILABLE', `The server is restoring its data folder; retry in a moment (GET ${READY_PATH} answers 200 once it is done).`), 503)
      return
    }
    // The console's pages at / and /console/<file>, its JSON under /console/api/.
    if (site && (await site.serve(req, res))) return
    // Appended, not resolved: a path starting with "//" would otherwise read as a host name.
    const url = new URL(`http://localhost${req.url?.startsWith('/') ? req.url : `/${req.url ?? ''}`}`)
    // Routes match the raw path (an encoded "/" stays inside its segment); only the bound values are decoded.
    const path = url.pathname.replace(/%3A/gi, ':')
    // The local OAuth token exchange of application-default credentials (token-exchange.ts).
    if (isTokenPath(path)) return answerTokenPath(req, res, path)
    const candidates = routes.filter((r) => r.compiled.test(path))
    const route = candidates.find((r) => r.method === req.method)
    if (!route) {
      const body = candidates.length > 0 ? `${req.method} is not allowed on ${path} (allowed: ${candidates.map((r) => r.method).join(', ')}).` : `No API serves ${req.method} ${path}.`
      await drain(req, maxBody)
      sendStatus(res, rpcStatus('NOT_FOUND', body), 404)
      return
    }
    const match = route.compiled.regex.exec(path) as RegExpExecArray
    const body = await readBody(req, maxBody)
    checkContentType(route, req.headers['content-type'], body.length)
    const { request, upload } = buildRequest(route, match, url, body, req.headers['content-type'] ?? '')
    const outcome: Outcome<unknown> = await route.call(request, upload)
    if (!outcome.ok) {
      sendStatus(res, outcome.status)
      return
    }
    const enumsAsInts = /enum-encoding=int/.test(url.searchParams.get('$alt') ?? url.searchParams.get('alt') ?? '')
    send(res, 200, enumsAsInts ? encodeEnums(outcome.response, route.enums) : outcome.response)
  }

  const onRequest = options.onRequest
  const server = createHttpServer((req, res) => {
    if (onRequest) {
      const start = performance.now()
      res.once('close', () => {
        const path = (req.url ?? '/').split('?', 1)[0] as string
        try {
          onRequest({ method: req.method ?? '', path, status: res.headersSent ? res.statusCode : 0, ms: performance.now() - start })
        } catch (error) {
          onInternalError(error)
        }
      })
    }
    if (!inFlight.enter()) {
      res.setHeader('retry-after', '1')
      drain(req, maxBody).then(() => sendStatus(res, rpcStatus('RESOURCE_EXHAUSTED', inFlight.message()), 429), () => res.destroy())
      return
    }
    res.once('close', () => inFlight.leave())
    handle(req, res).catch((error: unknown) => {
      if (error instanceof HttpFailure) sendStatus(res, error.status, error.httpStatus)
      else if (req.destroyed || (error as NodeJS.ErrnoException).code === 'ECONNRESET') {
        // The client went away mid-request: nothing to answer, nothing wrong with the server.
        res.destroy()
      } else {
        onInternalError(error)
        if (!res.headersSent) sendStatus(res, rpcStatus('INTERNAL', 'Internal error encountered.'))
      }
    })
  })

  // Clients keep connections open between calls; closing idle ones after Node's default 5 s
  // races with a client reusing them (ECONNRESET). Google's front ends keep them longer too.
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000

  return {
    server,
    engines,
    get restored() {
      return restoredCheckpoint || (durable?.replayed ?? 0) > 0
    },
    get replayed() {
      return durable?.replayed ?? 0
    },
    get ready() {
      return ready
    },
    flush: async (flushOptions) => durable?.checkpoint(flushOptions),
    listen: async ({ port = 0, host = '127.0.0.1' } = {}) => {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => resolve())
      })
      boundHost = host
      // The log's writes are replayed over the checkpoint before the APIs are served: until then
      // the port answers /readyz with 503 (and the APIs with 503), not with a refused connection.
      try {
        await durable?.recover()
      } catch (error) {
        server.close()
        throw error
      }
      ready = true
      const address = server.address() as AddressInfo
      const url = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`
      if (options.grpcPort === undefined) return { host: address.address, port: address.port, url }
      try {
        const { createGrpcServer } = await import('../grpc/server.js')
        if (closing) throw new Error('the server was closed while it started')
        grpc ??= createGrpcServer(methods, { maxMessageBytes: maxBody, access, boundHost: () => boundHost, onInternalError, inFlight })
        return { host: address.address, port: address.port, url, grpcPort: await grpc.listen(options.grpcPort, host) }
      } catch (error) {
        server.close()
        throw error
      }
    },
    credentials: () => {
      const address = server.address()
      if (address === null || typeof address === 'string') throw new Error('credentials() names the bound address: call listen() first.')
      return localCredentials({ host: address.address, port: address.port })
    },
    close: async () => {
      closing = true
      await Promise.all([
        new Promise<void>((resolve, reject) => {
          server.close((error) => (error ? reject(error) : resolve()))
          server.closeAllConnections()
        }),
        grpc?.close(),
      ])
      await durable?.close()
    },
  }
}
