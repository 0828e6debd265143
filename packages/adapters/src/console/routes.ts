import type { IncomingMessage, ServerResponse } from 'node:http'
import { parseJsonBounded } from '../transport/json.js'
import type { Outcome } from '../rpc/outcome.js'
import { rpcStatus, type RpcStatus } from '../rpc/status.js'
import type { BoundMethod, Engines } from '../transport/bound-methods.js'
import { streamGenerations, type EventTiming } from './events.js'
import { explain } from './explain.js'
import { countWrites, Generation } from './generation.js'
import { overview, ragChunkCounts, ragChunks, scopes } from './overview.js'
import { readConsoleFile, staticHeaders } from './static.js'

/** How the REST server answers (http/replies.ts, handed over by server/): the console answers the same way. */
interface ConsoleReplies {
  /** A JSON answer. */
  readonly send: (res: ServerResponse, httpStatus: number, body: unknown) => void
  /** Google's error JSON for a Status. */
  readonly sendStatus: (res: ServerResponse, status: RpcStatus, httpStatus?: number) => void
}

/** The console on a server: its generation, and its pages and endpoints. */
interface ConsoleSite {
  readonly generation: Generation
  /** The methods with their successful writes counted in {@link ConsoleSite.generation}. */
  countWrites(methods: readonly BoundMethod[]): BoundMethod[]
  /** Whether a path (undecoded, no query) is the console's: `/`, `/console` and `/console/...`. */
  owns(path: string): boolean
  /** Answers `/` and `/console/...` (true), or leaves the request to the API (false); `body` is the request's, received whole by the server. */
  serve(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<boolean>
  /** The console's page (`/`, `/console/index.html`): what a link from another site may open. */
  isPage(path: string): boolean
  /** The event stream, which the server admits apart from the API's requests. */
  isStream(path: string): boolean
}

type Verb = 'GET' | 'POST'

interface Endpoint {
  readonly verb: Verb
  readonly answer: (req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer) => Promise<void> | void
}

const PREFIX = '/console/'
const API = `${PREFIX}api/`
const PAGES: ReadonlySet<string> = new Set(['/', `${PREFIX}index.html`])
const EVENTS = `${API}events`

/**
 * The console: its files (static.ts) at `/` (index.html) and `/console/<file>`, and its JSON under
 * `/console/api/` — overview, events (server-sent), scopes, rag-chunks, rag-chunk-counts, explain. The server's access guard runs
 * before it. Paths are matched undecoded, so no encoded `/` or `..` reaches a file name.
 */
export function createConsole(engines: Engines, replies: ConsoleReplies, timing?: EventTiming): ConsoleSite {
  const generation = new Generation()
  const reply = <T>(res: ServerResponse, outcome: Outcome<T>): void => {
    if (outcome.ok) replies.send(res, 200, outcome.response)
    else replies.sendStatus(res, outcome.status)
  }
  const endpoints: Readonly<Record<string, Endpoint>> = {
    overview: { verb: 'GET', answer: (_req, res) => replies.send(res, 200, overview(engines, generation.value)) },
    events: { verb: 'GET', answer: (_req, res) => streamGenerations(res, generation, timing) },
    scopes: {
      verb: 'GET',
      answer: async (_req, res, url) => reply(res, await scopes(engines.memoryBank, url.searchParams.get('parent') ?? undefined)),
    },
    'rag-chunks': {
      verb: 'GET',
      answer: async (_req, res, url) => {
        const q = url.searchParams
        reply(res, await ragChunks(engines.vertexRag, q.get('name') ?? undefined, q.get('pageSize'), q.get('pageToken')))
      },
    },
    'rag-chunk-counts': {
      verb: 'GET',
      answer: async (_req, res, url) => reply(res, await ragChunkCounts(engines.vertexRag, url.searchParams.get('parent') ?? undefined)),
    },
    explain: {
      verb: 'POST',
      answer: async (req, res, _url, body) => {
        const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
        if (type !== 'application/json') {
          replies.sendStatus(res, rpcStatus('INVALID_ARGUMENT', `Send the explain body as JSON with Content-Type application/json; received ${type === '' ? 'no Content-Type' : `"${type.slice(0, 100)}"`}.`), 415)
          return
        }
        const parsed = parseJsonBounded(body.toString('utf8'))
        if (!parsed.ok) {
          replies.sendStatus(res, rpcStatus('INVALID_ARGUMENT', `Invalid JSON payload received in the request body: ${parsed.message}`))
          return
        }
        reply(res, await explain(engines, parsed.value))
      },
    },
  }

  const notFound = (res: ServerResponse, message: string): void => replies.sendStatus(res, rpcStatus('NOT_FOUND', message), 404)

  const file = async (req: IncomingMessage, res: ServerResponse, name: string, path: string): Promise<void> => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return notFound(res, `${req.method} is not allowed on ${path} (allowed: GET, HEAD).`)
    const found = await readConsoleFile(name)
    if (!found) return notFound(res, `The console has no file ${path.slice(0, 200)}.`)
    res.writeHead(200, staticHeaders(found.contentType, found.body.length))
    res.end(req.method === 'HEAD' ? undefined : found.body)
  }

  const endpoint = async (req: IncomingMessage, res: ServerResponse, name: string, path: string, url: URL, body: Buffer): Promise<void> => {
    const found = Object.hasOwn(endpoints, name) ? endpoints[name] : undefined
    if (!found) return notFound(res, `No console endpoint serves ${path.slice(0, 200)} (endpoints: ${Object.keys(endpoints).map((e) => `${API}${e}`).join(', ')}).`)
    if (req.method !== found.verb) return notFound(res, `${req.method} is not allowed on ${path} (allowed: ${found.verb}).`)
    return found.answer(req, res, url, body)
  }

  const owns = (path: string): boolean => path === '/' || path === '/console' || path.startsWith(PREFIX)
  return {
    generation,
    owns,
    countWrites: (methods) => countWrites(methods, generation),
    isPage: (path) => PAGES.has(path),
    isStream: (path) => path === EVENTS,
    serve: async (req, res, body) => {
      const raw = req.url ?? ''
      const path = raw.split('?', 1)[0] ?? ''
      if (!owns(path)) return false
      const url = new URL(`http://localhost${raw}`)
      if (path === '/') await file(req, res, 'index.html', path)
      else if (path.startsWith(API)) await endpoint(req, res, path.slice(API.length), path, url, body)
      else await file(req, res, path.slice(PREFIX.length), path)
      return true
    },
  }
}
