import { Readable } from 'node:stream'
import { ApiError } from './api-error.js'
import { copyData, type CopyBounds } from './copy-data.js'
import { DEFAULT_LIMITS } from './limits.js'
import { LongRunningOperation, longRunning, type OperationLike } from './long-running.js'
import type { EngineWrites } from './engine-writes.js'
import { toOutcome, type Outcome } from './outcome.js'
import { paged, pagedAsync, type PageCallOptions } from './paged.js'
import { failure, rpcStatus, type RpcStatus } from './status.js'
import { unary } from './unary.js'

/**
 * Methods as data. Each API declares every RPC once, in a table: its name, handler, whether it
 * writes, its calling shape and its HTTP bindings. The service (request JSON → Outcome), the
 * in-process client (Google's calling convention), the REST and gRPC servers and the data
 * folder's write log are all derived from the table, so adding an RPC is one entry plus its handler.
 */

export type HttpVerb = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/** One google.api.http binding (the path below the version prefix, as in the protos). */
export interface HttpBinding {
  readonly verb: HttpVerb
  readonly path: string
  /** `*`: the body is the request; a field name: the body is that field; absent: no body. */
  readonly body?: string
  /** Google's media upload binding: `/upload/<version>/...`, a multipart body. */
  readonly media?: boolean
  /** The path's first segment instead of the version (Google's `/ui/...` bindings of location operations). */
  readonly prefix?: string
  /**
   * A server-streaming RPC's binding: Google's REST answers it as Server-Sent Events with `alt=sse`,
   * else as a JSON array of the messages (Quarry's handlers answer one message).
   */
  readonly stream?: boolean
}

/** How a Google client calls the method. */
type CallShape =
  | { readonly kind: 'unary' }
  | { readonly kind: 'paged'; readonly items: string }
  /** `result` is never set: it carries the type of the operation's response for the client. */
  | { readonly kind: 'longRunning'; readonly result?: unknown }

/** The file content of a media upload, beside the request (the multipart part over HTTP). */
export type UploadContent = string | Uint8Array

export interface MethodSpec<C, R, S extends CallShape = CallShape, U extends boolean = boolean> {
  /** The RPC's name in its service, `CreateCorpus`. */
  readonly rpc: string
  /** The service when the table spans two (`VertexRagService`); else the table's. */
  readonly service?: string
  readonly run: (ctx: C, request: unknown, content: UploadContent | undefined) => Promise<R>
  /** Writes are serialized and schedule a snapshot; reads run beside them. */
  readonly write: boolean
  /**
   * Work a write may start when it must wait for the writes before it: what depends on the request
   * and the engine's options alone (an upload's chunking and embedding), never on the state. `run`
   * finds it by the request object, and uses it only if the request still reads the same; a call
   * that starts at once has none.
   */
  readonly ahead?: (ctx: C, request: unknown, content: UploadContent | undefined) => void
  readonly shape: S
  readonly http: readonly HttpBinding[]
  /** The method takes file content as a second argument (uploads). */
  readonly content?: U
  /** API versions that serve it (others answer UNIMPLEMENTED and bind no route); all when absent. */
  readonly versions?: readonly string[]
}

/** Any method over context C (a table holds many response types; each entry is checked by `method`). */
type AnyMethod<C> = MethodSpec<C, unknown, CallShape>

export type MethodTable<C> = Readonly<Record<string, AnyMethod<C>>>

export const UNARY = { kind: 'unary' } as const

/** A list method: `items` names the repeated field of its response. */
export function pagedShape<const K extends string>(items: K): { readonly kind: 'paged'; readonly items: K } {
  return { kind: 'paged', items }
}

/** A long-running method whose operation's response is a `T`. */
export function longRunningShape<T>(): { readonly kind: 'longRunning'; readonly result?: T } {
  return { kind: 'longRunning' }
}

/**
 * The handler of an RPC Quarry does not serve (yet): it answers UNIMPLEMENTED (gRPC 12, HTTP 501)
 * with a message naming the method and saying why, whatever the request. A table entry with this
 * handler still gets its client method and its REST routes, so callers never meet a TypeError or
 * a 404 for a method Google's client has. `R` is the response type Google's client declares.
 */
export function unimplemented<R = Record<string, unknown>>(rpc: string, why: string): (ctx: unknown, request: unknown) => Promise<R> {
  return async () => {
    throw failure('UNIMPLEMENTED', `${rpc} is not implemented by Quarry: ${why}`)
  }
}

/** Declares one method, inferring its response type from the handler. */
export function method<C, R, const S extends CallShape, const U extends boolean = false>(spec: MethodSpec<C, R, S, U>): MethodSpec<C, R, S, U> {
  return spec
}

type ResponseOf<M> = M extends MethodSpec<never, infer R, CallShape> ? R : never
type TakesContent<M> = M extends MethodSpec<never, unknown, CallShape, infer U> ? U : false
type ShapeOf<M> = M extends MethodSpec<never, unknown, infer S> ? S : never
type ItemOf<R, K> = K extends keyof R ? (NonNullable<R[K]> extends readonly (infer I)[] ? I : never) : never

/** A service method: request JSON (and upload content) → the response JSON or a google.rpc.Status. */
type ServiceMethod<M> = TakesContent<M> extends true
  ? (request: unknown, content?: UploadContent, options?: CallOptions) => Promise<Outcome<ResponseOf<M>>>
  : (request: unknown, content?: undefined, options?: CallOptions) => Promise<Outcome<ResponseOf<M>>>

export type ServiceMethods<T> = { readonly [K in keyof T]: ServiceMethod<T[K]> }

/** A client method in Google's calling convention. */
type ClientMethod<M> =
  ShapeOf<M> extends { readonly kind: 'paged'; readonly items: infer K }
    ? (request?: unknown, options?: PageCallOptions) => Promise<[ItemOf<ResponseOf<M>, K>[], Record<string, unknown> | null, ResponseOf<M>]>
    : ShapeOf<M> extends { readonly kind: 'longRunning'; readonly result?: infer T }
      ? (request?: unknown) => Promise<[LongRunningOperation<T>, OperationLike]>
      : TakesContent<M> extends true
        ? (request: unknown, content?: UploadContent) => Promise<[ResponseOf<M>]>
        : (request?: unknown) => Promise<[ResponseOf<M>]>

type PagedKeys<T> = { [K in keyof T]: ShapeOf<T[K]> extends { readonly kind: 'paged' } ? K : never }[keyof T]
type LongRunningKeys<T> = { [K in keyof T]: ShapeOf<T[K]> extends { readonly kind: 'longRunning' } ? K : never }[keyof T]
type PagedItem<M> = ItemOf<ResponseOf<M>, ShapeOf<M> extends { readonly items: infer I } ? I : never>
type OperationResult<M> = ShapeOf<M> extends { readonly result?: infer T } ? T : never

/**
 * Every method of a table in Google's calling convention, plus what Google's generated clients
 * derive from the same descriptors: `listXAsync` (an async iterable) and `listXStream` (an object
 * stream) for the paged ones, `checkXProgress(name)` (the operation read back) for long-running ones.
 */
export type ClientMethods<T> = { readonly [K in keyof T]: ClientMethod<T[K]> } & {
  readonly [K in PagedKeys<T> as `${K & string}Async`]: (request?: unknown) => AsyncIterable<PagedItem<T[K]>>
} & {
  readonly [K in PagedKeys<T> as `${K & string}Stream`]: (request?: unknown) => Readable
} & {
  readonly [K in LongRunningKeys<T> as `check${Capitalize<K & string>}Progress`]: (name: string) => Promise<LongRunningOperation<OperationResult<T[K]>>>
}

/** What a transport knows about one call besides its request. */
export interface CallOptions {
  /**
   * Aborted when the caller cancels (gRPC). A write not yet started then is not applied (it
   * answers CANCELLED); one that has started runs to its end, so a write is applied whole or not
   * at all.
   */
  readonly signal?: { readonly aborted: boolean }
  /** When the caller stops waiting (epoch milliseconds; Infinity or absent: never): a write not applied by then is not applied. */
  readonly deadline?: number
  /**
   * @internal Set by the transports (REST, gRPC), whose request was parsed for this call alone and
   * whose response is serialized at once: neither is copied. Any other caller gets a copy of the
   * response and the engine works on a copy of the request, so that neither changing what it got
   * nor what it passed (even while its write waits for its turn) changes the engine's state.
   */
  readonly transport?: boolean
}

/**
 * @internal The options of a call whose request was made for it alone and whose answer is used at
 * once and kept by no one (a transport's, a replayed log record's): nothing is copied.
 */
export const TRANSPORT_CALL: CallOptions = { transport: true }

export interface ServeOptions {
  /** The API version this surface answers (methods limited to other versions are UNIMPLEMENTED). */
  readonly version?: string
  readonly writes: EngineWrites
  /**
   * Called inside the write lock as each write starts and again once it has run (not for one
   * abandoned before it ran), so an engine can note that its state may have changed (a save links
   * a file only while none ran since). Both: a write changes the state after awaits (the embedder),
   * and a save that does not wait for the lock (an engine's saveTo) may come at any point of it.
   */
  readonly onWrite?: () => void
  readonly onInternalError: (error: unknown) => void
}

/** The service methods of a table over one context: each a read or a serialized write, never a throw. */
export function serveTable<C, T extends MethodTable<C>>(table: T, ctx: C, options: ServeOptions): ServiceMethods<T> {
  const out: Record<string, (request: unknown, content?: UploadContent, call?: CallOptions) => Promise<Outcome<unknown>>> = {}
  for (const [name, spec] of Object.entries(table)) {
    const served = options.version === undefined || spec.versions === undefined || spec.versions.includes(options.version)
    const run = (request: unknown, content: UploadContent | undefined): Promise<Outcome<unknown>> =>
      toOutcome(async () => {
        if (!served) throw failure('UNIMPLEMENTED', `${spec.rpc} is served in ${(spec.versions ?? []).join(', ')} only; call it through that version (this is ${options.version ?? ''}).`)
        return spec.run(ctx, request, content)
      }, options.onInternalError)
    const ahead = spec.ahead
    const startAhead = ahead
      ? (request: unknown, content: UploadContent | undefined): void => {
          try {
            if (served) ahead(ctx, request, content)
          } catch {
            // A request that cannot be read ahead is read (and refused) in its turn.
          }
        }
      : undefined
    const method: Serve = spec.write
      ? (request, content, call) => {
          if (startAhead && options.writes.busy) startAhead(request, content)
          return options.writes.write(() => {
            // Waited for the writes before it past its caller's patience: not applied.
            const abandoned = call === undefined ? undefined : abandonedStatus(call)
            if (abandoned) return Promise.resolve({ ok: false as const, status: abandoned })
            const onWrite = options.onWrite
            if (!onWrite) return run(request, content)
            onWrite()
            return run(request, content).finally(onWrite)
          })
        }
      : (request, content) => run(request, content)
    out[name] = withAhead(copying(method, options.onInternalError), startAhead)
  }
  return out as ServiceMethods<T>
}

type Serve = (request: unknown, content?: UploadContent, call?: CallOptions) => Promise<Outcome<unknown>>

/**
 * A service method for callers in this process: it works on a copy of the request, taken at the
 * call, and answers a copy of the response, so the caller shares no object with the engine's
 * state (an operation, an event's JSON, a corpus's config). A transport's calls pass through
 * ({@link CallOptions.transport}).
 */
function copying(method: Serve, onInternalError: (error: unknown) => void): Serve {
  return (request, content, call) => {
    if (call?.transport === true) return method(request, content, call)
    // Copied at once, so a write that waits starts its `ahead` at the call, as a transport's does.
    let ownRequest: unknown
    let ownContent: UploadContent | undefined
    try {
      ownRequest = copyData(request, REQUEST_COPY)
      ownContent = typeof content === 'string' || content === undefined ? content : Uint8Array.prototype.slice.call(content)
    } catch (error) {
      // A request whose copy throws (a getter that throws) is answered as its reading would be, never thrown.
      return toOutcome(() => Promise.reject(error), onInternalError)
    }
    return method(ownRequest, ownContent, call).then((outcome) => (outcome.ok ? toOutcome(async () => copyData(outcome.response, RESPONSE_COPY), onInternalError) : outcome))
  }
}

/**
 * As deep and as long as a request's reader reads (limits.ts): what it refuses is not walked. And
 * at most a million values, counted once per place (over REST or gRPC the body's size bounds them;
 * in process one shared object can stand for a great many places, each read in turn).
 */
const REQUEST_COPY: CopyBounds = { depth: DEFAULT_LIMITS.depth.max + 1, entries: DEFAULT_LIMITS.entries.max, values: 1_000_000 }
/** A response nests what a request put in it (a session's state) in a few levels of its own. */
const RESPONSE_COPY: CopyBounds = { depth: 2 * DEFAULT_LIMITS.depth.max }

type Ahead = (request: unknown, content: UploadContent | undefined) => void

/** A service method's `ahead` (see {@link MethodSpec.ahead}), for a write lock other than the engine's (a server's log). */
const AHEADS = new WeakMap<object, Ahead>()

function withAhead<F extends object>(fn: F, ahead: Ahead | undefined): F {
  if (ahead) AHEADS.set(fn, ahead)
  return fn
}

/**
 * What a service method can start while its write waits for a lock of the caller's (a server's
 * write-ahead log serializes writes before they reach the engine's): its table's `ahead`, bound
 * to the engine; undefined for methods without.
 */
export function aheadOf(serviceMethod: object): Ahead | undefined {
  return AHEADS.get(serviceMethod)
}

/** The status of a call its caller gave up on (DEADLINE_EXCEEDED or CANCELLED), or undefined while it waits. */
function abandonedStatus(call: CallOptions): RpcStatus | undefined {
  if (call.deadline !== undefined && Date.now() >= call.deadline) {
    return rpcStatus('DEADLINE_EXCEEDED', 'The deadline passed before this write was applied; nothing was changed.')
  }
  return call.signal?.aborted ? rpcStatus('CANCELLED', 'The call was cancelled before this write was applied; nothing was changed.') : undefined
}

/**
 * The client methods of a table over its service methods (Google's calling convention). The
 * `checkXProgress` methods read operations back through the table's `getOperation` (UNIMPLEMENTED
 * if it has none).
 */
export function clientOfTable<T extends MethodTable<never>>(table: T, service: ServiceMethods<T>): ClientMethods<T> {
  const out: Record<string, unknown> = {}
  const call = service as Readonly<Record<string, (request: unknown, content?: UploadContent) => Promise<Outcome<never>>>>
  const getOperation = call['getOperation']
  const progress = async (name: string): Promise<LongRunningOperation<unknown>> => {
    const outcome: Outcome<OperationLike> = getOperation ? await getOperation({ name }) : { ok: false, status: rpcStatus('UNIMPLEMENTED', 'This client reads no operations.') }
    if (!outcome.ok) throw new ApiError(outcome.status)
    return new LongRunningOperation(outcome.response)
  }
  for (const [name, spec] of Object.entries(table)) {
    const serve = call[name] as (request: unknown, content?: UploadContent) => Promise<Outcome<never>>
    const shape = spec.shape
    if (shape.kind === 'paged') {
      const items = (response: Record<string, unknown>): readonly unknown[] | undefined => response[shape.items] as readonly unknown[] | undefined
      out[name] = (request: unknown = {}, options?: PageCallOptions) => paged((r) => serve(r), items, request, options)
      out[`${name}Async`] = (request: unknown = {}) => pagedAsync((r) => serve(r), items, request)
      // google-gax's object stream of the resources; a failure is the stream's 'error' event.
      out[`${name}Stream`] = (request: unknown = {}) => Readable.from(pagedAsync((r) => serve(r), items, request))
    } else if (shape.kind === 'longRunning') {
      out[name] = (request: unknown = {}) => longRunning(serve(request))
      out[`check${name.charAt(0).toUpperCase()}${name.slice(1)}Progress`] = progress
    } else {
      out[name] = (request: unknown = {}, content?: UploadContent) => unary(serve(request, content))
    }
  }
  return out as ClientMethods<T>
}

/** The names of a table's methods, in declaration order. */
export function methodNames<T extends object>(table: T): readonly (keyof T & string)[] {
  return Object.keys(table) as (keyof T & string)[]
}
