import { createServer as createHttpServer, maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Outcome } from '../rpc/outcome.js'
import { codeName, rpcStatus, type RpcStatus } from '../rpc/status.js'
import type { BoundMethod } from '../transport/bound-methods.js'
import { encodeEnums } from '../transport/enums.js'
import { accessCheck, corsHeaders, preflightHeaders, refuseOtherSite, type AccessOptions } from '../transport/guard.js'
import { clientOf, type InFlight } from '../transport/in-flight.js'
import { boundSends, HttpFailure, receiveBody, send, sendStatus, sendStream, type Received } from './replies.js'
import type { Receiving } from '../transport/receiving.js'
import { buildRequest, checkContentType, requestTarget } from './request.js'
import { restRoutes, routeMatcher } from './routes.js'
import { answerTokenPath, isTokenPath } from './token-exchange.js'

/** One answered request, as the server's `onRequest` option is told of it. */
export interface RequestLogEntry {
  readonly method: string
  /** The URL's path, without the query string (it may carry an API key). */
  readonly path: string
  /** The HTTP status sent (0 when the connection closed before a response). */
  readonly status: number
  /** Milliseconds from the request's arrival to its response's end. */
  readonly ms: number
}

/** Pages served beside the API on the same port (the console): true when it answered the request. */
export interface Site {
  /** Whether the path (undecoded, no query) is the site's: only those requests go to `serve`. */
  owns(path: string): boolean
  /** Answers the request (true), or leaves it to the API (false); `body` is the request's, received whole. */
  serve(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<boolean>
  /** Whether the path (undecoded, no query) is a page a top-level navigation from another site may open. */
  isPage(path: string): boolean
  /** Whether the path opens a long-lived stream (server-sent events): it takes a stream slot, not an API slot. */
  isStream(path: string): boolean
}

export interface RestOptions {
  /** The bound methods to serve: one route per google.api.http binding. */
  readonly methods: readonly BoundMethod[]
  /** Largest request body accepted, in bytes (larger: 413). */
  readonly maxBodyBytes: number
  readonly access: AccessOptions
  /** The address the server is bound to, once it is (the Host rule accepts it). */
  readonly boundHost: () => string | undefined
  /** False while the data folder is restored: then every request but GET /readyz answers 503. */
  readonly ready: () => boolean
  /** Why writes are refused while the server is otherwise ready (the data folder's disk), for GET /readyz. */
  readonly writesRefused?: () => string | undefined
  /** The bound on requests held at once, shared with gRPC. */
  readonly inFlight: InFlight
  /** The bound on the site's open streams (the console's events), apart from the requests'. */
  readonly streams: InFlight
  /** The bodies being received, bounded in idle time (408) and in bytes (429), shared with gRPC. */
  readonly receiving: Receiving
  /** How long an answer being sent may make no progress before its connection is closed (its slot freed). */
  readonly sendTimeoutMs: number
  readonly onInternalError: (error: unknown) => void
  readonly onRequest?: ((entry: RequestLogEntry) => void) | undefined
  readonly site?: Site | undefined
}

/**
 * The readiness route: 200 `{"ready": true}` once the data folder is restored, 503 before. Ready
 * with writes refused (reads still served) it stays 200 and says so: `"writes": "refused"`, why.
 */
const READY_PATH = '/readyz'

/**
 * The REST transport: Google's REST paths for the Semantic Retriever (v1beta), Vertex AI RAG
 * Engine (v1, v1beta1) and Memory Bank (v1beta1), from the bound methods the composition root
 * (server/) hands it, behind the access guard and the in-flight bound.
 */
export function createRestServer(options: RestOptions): Server {
  const { maxBodyBytes: maxBody, access, site, inFlight, streams, onInternalError } = options
  const routes = routeMatcher(restRoutes(options.methods))
  const checkAccessOf = accessCheck(access)
  const leaveLoopback = (): void => inFlight.leave()
  // Bodies are received before a slot is taken, so a client sending slowly or not at all holds
  // none; what they may buffer meanwhile is bounded (four bodies of the largest size, with gRPC's).
  const receiving = options.receiving

  /**
   * Admission, once the body is in (or failed): who may ask (Host, Origin, Fetch Metadata), then
   * the body, then a slot. A refused request is answered 403 whatever became of its body.
   */
  const admit = async (req: IncomingMessage, res: ServerResponse, received: Received): Promise<void> => {
    const headers = req.headers
    // Node would answer this itself with an empty 400 (requireHostHeader, turned off below for this).
    if (headers.host === undefined && req.httpVersion === '1.1') {
      sendStatus(res, rpcStatus('INVALID_ARGUMENT', 'An HTTP/1.1 request names its server in a Host header (RFC 9112 section 3.2); this one has none.'), 400)
      return
    }
    const rawPath = (req.url ?? '/').split('?', 1)[0] as string
    const admitted = checkAccessOf(headers, options.boundHost())
    // Only browsers send Fetch Metadata: other clients skip the check.
    const fetchSite = headers['sec-fetch-site']
    const refused = !admitted.ok
      ? admitted.message
      : fetchSite === undefined
        ? undefined
        : refuseOtherSite({ site: fetchSite, mode: headers['sec-fetch-mode'], dest: headers['sec-fetch-dest'] }, admitted.cors !== undefined, site?.isPage(rawPath) ?? false)
    if (refused !== undefined) {
      sendStatus(res, rpcStatus('PERMISSION_DENIED', refused), 403)
      return
    }
    if (admitted.ok && admitted.cors !== undefined) {
      for (const [name, value] of Object.entries(corsHeaders(admitted.cors))) res.setHeader(name, value)
      if (req.method === 'OPTIONS') {
        res.writeHead(204, preflightHeaders(admitted.cors, headers['access-control-request-headers']))
        res.end()
        return
      }
    }
    if ('failure' in received) throw received.failure
    // Gone while its body was joined (a large one is copied asynchronously): its 'close' has come
    // already, so a slot taken now would never be given back.
    if (res.destroyed) return
    const body = received.body
    const client = clientOf(req.socket.remoteAddress)
    const slots = site?.isStream(rawPath) === true ? streams : inFlight
    if (!slots.enter(client)) {
      res.setHeader('retry-after', '1')
      sendStatus(res, rpcStatus('RESOURCE_EXHAUSTED', slots.message(client)), 429)
      return
    }
    // 'close' comes once; a loopback API request shares one listener (no closure per request).
    res.on('close', client === undefined && slots === inFlight ? leaveLoopback : () => slots.leave(client))
    await handle(req, res, rawPath, body)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse, rawPath: string, body: Buffer): Promise<void> => {
    // Readiness: for orchestrators and scripts, behind the same Host / Origin checks as everything.
    const ready = options.ready()
    if (rawPath === READY_PATH && (req.method === 'GET' || req.method === 'HEAD')) {
      if (!ready) {
        res.setHeader('retry-after', '1')
        send(res, 503, { ready: false, reason: 'restoring the data folder' })
        return
      }
      const refused = options.writesRefused?.()
      send(res, 200, refused === undefined ? { ready: true } : { ready: true, writes: 'refused', reason: refused })
      return
    }
    if (!ready) {
      res.setHeader('retry-after', '1')
      sendStatus(res, rpcStatus('UNAVAILABLE', `The server is restoring its data folder; retry in a moment (GET ${READY_PATH} answers 200 once it is done).`), 503)
      return
    }
    // The console's pages at / and /console/<file>, its JSON under /console/api/.
    if (site?.owns(rawPath) === true && (await site.serve(req, res, body))) return
    const { path, query } = requestTarget(req.url)
    // The local OAuth token exchange of application-default credentials (token-exchange.ts).
    if (isTokenPath(path)) return answerTokenPath(req, res, path, body)
    const candidates = routes(path)
    const route = candidates.find((r) => r.method === req.method)
    if (!route) {
      const message = candidates.length > 0 ? `${req.method} is not allowed on ${path} (allowed: ${[...new Set(candidates.map((r) => r.method))].join(', ')}).` : `No API serves ${req.method} ${path}.`
      sendStatus(res, rpcStatus('NOT_FOUND', message), 404)
      return
    }
    const match = route.compiled.regex.exec(path) as RegExpExecArray
    checkContentType(route, req.headers['content-type'], body.length, req.headers['content-encoding'])
    const { request, upload } = buildRequest(route, match, query, body, req.headers['content-type'] ?? '')
    // A client gone before its answer (its connection closed) cancels the call, as over gRPC: a
    // write still waiting for its turn is not applied.
    const signal = { aborted: false }
    res.once('close', () => {
      if (!res.writableEnded) signal.aborted = true
    })
    const outcome: Outcome<unknown> = await route.call(request, upload, signal)
    if (!outcome.ok) {
      sendStatus(res, outcome.status)
      return
    }
    const alt = query?.get('$alt')?.[0] ?? query?.get('alt')?.[0] ?? ''
    const response = /enum-encoding=int/.test(alt) ? encodeEnums(outcome.response, route.enums) : outcome.response
    if (route.stream) sendStream(res, [response], alt.split(';')[0] === 'sse')
    else send(res, 200, response)
  }

  const onRequest = options.onRequest
  const server = createHttpServer({ requireHostHeader: false }, (req, res) => {
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
    const failed = (error: unknown): void => {
      if (error instanceof HttpFailure) sendStatus(res, error.status, error.httpStatus)
      else if (req.destroyed || (error as NodeJS.ErrnoException).code === 'ECONNRESET') {
        // The client went away mid-request: nothing to answer, nothing wrong with the server.
        res.destroy()
      } else {
        onInternalError(error)
        if (!res.headersSent) sendStatus(res, rpcStatus('INTERNAL', 'Internal error encountered.'))
      }
    }
    // The body first (most reads have none by their framing: at once), before a slot is taken.
    receiveBody(req, maxBody, receiving, (received) => void admit(req, res, received).catch(failed))
  })
  boundSends(server, options.sendTimeoutMs)

  // What Node refuses before a request reaches the handler (bad HTTP, headers too large, a request
  // not whole in time) is answered with Google's error JSON too, where nothing of an answer has gone
  // out on the connection yet; then the connection closes.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // The answer in progress on the connection, which Node keeps on the socket (its own
    // clientError handler reads it so): a client error there may not write an answer of its own.
    const inProgress = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? undefined
    // With an answer unfinished there, an answer of Node's would be read as that one's (or written
    // into its body): the connection closes instead. Only a request timed out while it arrives is
    // told so (408), if nothing of its answer has gone out.
    const answering = inProgress !== undefined && !inProgress.writableFinished && (inProgress.headersSent || error.code !== 'ERR_HTTP_REQUEST_TIMEOUT')
    if (error.code === 'ECONNRESET' || !socket.writable || answering) {
      socket.destroy()
      return
    }
    const [httpStatus, status] = clientErrorStatus(error, server)
    // An answer to HEAD has no body (its client would read one as the start of the next answer).
    const raw = (error as { rawPacket?: unknown }).rawPacket
    const head = Buffer.isBuffer(raw) && raw.subarray(0, 5).toString('latin1') === 'HEAD '
    const body = head ? '' : JSON.stringify({ error: { code: httpStatus, message: status.message, status: codeName(status.code) } })
    socket.end(`HTTP/1.1 ${httpStatus} ${STATUS_CODES[httpStatus] ?? ''}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
    // Half-closed: the client reads the answer and closes. What it still sends is refused again
    // (the socket no longer writable: destroyed above); one that keeps it open is cut in a second.
    setTimeout(() => socket.destroy(), 1000).unref()
  })
  // `Expect` other than 100-continue: Node's own answer is an empty 417.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    res.setHeader('connection', 'close')
    sendStatus(res, rpcStatus('FAILED_PRECONDITION', `This server meets no expectation but 100-continue; the request's Expect is "${String(req.headers.expect).slice(0, 100)}".`), 417)
  })

  // Clients keep connections open between calls; closing idle ones after Node's default 5 s
  // races with a client reusing them (ECONNRESET). Google's front ends keep them longer too.
  server.keepAliveTimeout = 65_000
  // Node's own bounds on a request's arrival (408 past them; neither touches an idle kept-alive
  // connection): its headers within 20 s, all of it within 120 s — a body that trickles a byte
  // now and then, never idle for bodyTimeoutMs, still ends (sooner when another body needs its
  // room: transport/receiving.ts).
  server.headersTimeout = 20_000
  server.requestTimeout = 120_000
  return server
}

/** The HTTP status and Google's Status for what Node refused on a connection (its `clientError`). */
function clientErrorStatus(error: NodeJS.ErrnoException, server: Server): [number, RpcStatus] {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, rpcStatus('INVALID_ARGUMENT', `The request's headers are larger than this server reads (${maxHeaderSize} bytes together, Node's --max-http-header-size); send fewer or shorter headers.`)]
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return [413, rpcStatus('INVALID_ARGUMENT', 'The chunk extensions of the request body are larger than this server reads; send its chunks without extensions.')]
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, rpcStatus('DEADLINE_EXCEEDED', `The request did not arrive whole in time (its headers within ${server.headersTimeout / 1000} s, all of it within ${server.requestTimeout / 1000} s); send it without pauses.`)]
    default: {
      // llhttp says what it could not parse ("Invalid method encountered"), and its code.
      const reason = (error as { reason?: unknown }).reason
      const what = typeof reason === 'string' && reason !== '' ? reason : error.message
      return [400, rpcStatus('INVALID_ARGUMENT', `The request is not valid HTTP/1.1: ${what.slice(0, 200)}${error.code === undefined ? '' : ` (${error.code.slice(0, 60)})`}.`)]
    }
  }
}
