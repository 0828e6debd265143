import type { AddressInfo } from 'node:net'
import { createConsole } from '../console/routes.js'
import type { GrpcServer } from '../grpc/server.js'
import { localCredentials } from '../http/local-credentials.js'
import { SEND_IDLE_MS, send, sendStatus } from '../http/replies.js'
import { createRestServer } from '../http/server.js'
import { MemoryBank } from '../memory-bank/service.js'
import { SemanticRetriever } from '../semantic-retriever/service.js'
import { bindMethods, type BoundMethod, type Engines } from '../transport/bound-methods.js'
import { predictionSurfaces } from '../generative/service.js'
import { omitUndefined } from '../rpc/omit.js'
import { DataDir } from '../transport/data-dir.js'
import { DurableWrites } from '../transport/durable.js'
import { InFlight } from '../transport/in-flight.js'
import { Receiving } from '../transport/receiving.js'
import { VertexRagEngine } from '../vertex-rag/service.js'
import { checkServerOptions, type QuarryServer, type QuarryServerOptions } from './options.js'

/**
 * The composition root: builds the engines, binds their methods, puts the durability layer in
 * front of them, and plugs in the transports (REST, gRPC, the console) as peers that each receive
 * what they serve and import none of the others.
 */

/** The engines to serve: those given, the others made from the options (one embedder shared). */
function buildEngines(options: QuarryServerOptions, onInternalError: (error: unknown) => void): Engines {
  const shared = { ...(options.embedder ? { embedder: options.embedder } : {}), onInternalError }
  return {
    semanticRetriever: options.engines?.semanticRetriever ?? new SemanticRetriever({ ...shared, ...options.semanticRetriever }),
    vertexRag: options.engines?.vertexRag ?? new VertexRagEngine({ ...shared, ...options.vertexRag }),
    memoryBank: options.engines?.memoryBank ?? new MemoryBank({ ...shared, ...options.memoryBank }),
  }
}

/** With a data folder: its lock taken and the writes journaled (checkpoints scheduled); none without. */
function openDurability(options: QuarryServerOptions, engines: Engines, bound: readonly BoundMethod[], onInternalError: (error: unknown) => void): DurableWrites | undefined {
  if (options.dataDir === undefined) return undefined
  const durability = options.durability ?? 'log'
  return new DurableWrites(bound, new DataDir(options.dataDir, engines), {
    durability,
    checkpointMs: options.snapshotDelayMs ?? (durability === 'log' ? 30_000 : 200),
    ...(options.checkpointBytes === undefined ? {} : { checkpointBytes: options.checkpointBytes }),
    ...(options.acceptLogLoss === undefined ? {} : { acceptLogLoss: options.acceptLogLoss }),
    onInternalError,
  })
}

/** Why a `listen` ends when `close` came while it started (its port bound, its log replayed, gRPC loading). */
const CLOSED_WHILE_STARTING = 'the server was closed while it started'

/**
 * The local server: Google's REST paths for the Semantic Retriever (v1beta), Vertex AI RAG Engine
 * (v1, v1beta1) and Memory Bank (v1beta1) over the in-process engines, and gRPC with `grpcPort`.
 * Binds to loopback unless told otherwise.
 */
export function createServer(options: QuarryServerOptions = {}): QuarryServer {
  checkServerOptions(options)
  const onInternalError = options.onInternalError ?? ((error: unknown) => console.error('quarry: internal error', error))
  const engines = buildEngines(options, onInternalError)
  // Requests from the network read local files only under folders the server is given (none by
  // default), whatever the engines allow in-process callers: the routes use served surfaces.
  const rag = engines.vertexRag.served(options.importRoots ?? options.vertexRag?.importRoots ?? [])
  const bound = bindMethods(engines, rag, predictionSurfaces(rag, omitUndefined({ model: options.model, onInternalError })))
  const durable = openDurability(options, engines, bound, onInternalError)
  // In-process writes (`server.engines`) reach the engines without the log: the durability layer
  // runs each in turn with its own writes, and saves it with a checkpoint.
  const unroute = durable ? [engines.semanticRetriever, engines.vertexRag, engines.memoryBank].map((engine) => engine.routeUnloggedWrites((write) => durable.unlogged(write))) : []
  const restoredCheckpoint = durable?.load() ?? false
  const maxBody = options.maxBodyBytes ?? 32 * 1024 * 1024
  // With a data folder, writes reach the engines through it; both transports serve the same
  // methods, and the console counts the writes they answer (its generation).
  const site = options.console === false ? undefined : createConsole(engines, { send, sendStatus })
  const methods = site?.countWrites(durable?.methods ?? bound) ?? durable?.methods ?? bound
  const inFlight = new InFlight(options.maxInFlight ?? 256)
  const streams = new InFlight(options.maxEventStreams ?? 32, { noun: 'event streams', option: 'maxEventStreams' })
  const access = { allowedHosts: options.allowedHosts ?? [], corsOrigins: options.corsOrigins ?? [] }
  let boundHost: string | undefined
  // Not ready while `listen` replays the data folder's log (the checkpoint is loaded above, before any port is bound).
  let ready = false
  // Both transports receive into one budget: four bodies of the largest size, idle at most bodyTimeoutMs.
  // An answer the client reads none of is let go after this, on either transport.
  const sendTimeoutMs = options.sendTimeoutMs ?? SEND_IDLE_MS
  const receiving = new Receiving(options.bodyTimeoutMs ?? 5000, 4 * maxBody)
  const server = createRestServer({ methods, maxBodyBytes: maxBody, access, boundHost: () => boundHost, ready: () => ready, writesRefused: () => durable?.writeRefusal?.message, inFlight, streams, receiving, sendTimeoutMs, onInternalError, onRequest: options.onRequest, site })
  // gRPC (node:http2 and protobufjs, ~0.1 s of module loading) is loaded by `listen`, and only with a grpcPort.
  let grpc: GrpcServer | undefined
  // Set by close(): a listen still loading gRPC's modules then starts no gRPC server.
  let closing = false

  return {
    server,
    engines,
    get restored() {
      return restoredCheckpoint || (durable?.replayed ?? 0) > 0
    },
    get replayed() {
      return durable?.replayed ?? 0
    },
    get logKeptAside() {
      return durable?.keptAside
    },
    get ready() {
      return ready
    },
    flush: async (flushOptions) => durable?.checkpoint(flushOptions),
    listen: async ({ port = 0, host = '127.0.0.1' } = {}) => {
      if (closing) throw new Error('the server is closed: create a new one to listen again')
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => resolve())
      })
      boundHost = host
      // The log's writes are replayed over the checkpoint before the APIs are served: until then
      // the port answers /readyz with 503 (and the APIs with 503), not with a refused connection.
      try {
        await durable?.recover()
        // Closed meanwhile (while the port was bound, or its log replayed): the start ends here.
        if (closing) throw new Error(CLOSED_WHILE_STARTING)
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
        if (closing) throw new Error(CLOSED_WHILE_STARTING)
        grpc ??= createGrpcServer(methods, { maxMessageBytes: maxBody, access, boundHost: () => boundHost, onInternalError, inFlight, receiving, sendIdleMs: sendTimeoutMs })
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
          // A listen that failed (a log refused at start) closed the port already: closing again is
          // no error, so a caller's `finally { close() }` does not hide why the listen failed.
          if (!server.listening) return resolve()
          server.close((error) => (error ? reject(error) : resolve()))
          server.closeAllConnections()
        }),
        grpc?.close(),
      ])
      try {
        await durable?.close()
      } finally {
        for (const stop of unroute) stop()
      }
    },
  }
}
