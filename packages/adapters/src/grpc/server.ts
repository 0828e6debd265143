import { constants as http2, createServer as createHttp2Server, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2'
import { gunzip, inflate, type InputType, type ZlibOptions } from 'node:zlib'
import type { AccessOptions } from '../transport/guard.js'
import { checkAccess } from '../transport/guard.js'
import { rpcStatus, type CodeName, type RpcStatus } from '../rpc/status.js'
import type { BoundMethod } from '../transport/bound-methods.js'
import { clientOf, type InFlight } from '../transport/in-flight.js'
import type { Receiving } from '../transport/receiving.js'
import { inSlices, sweepPeriodMs } from '../transport/slices.js'
import { decodeRequest, encodeMessage, encodeStatus } from './codec.js'
import { loadServiceProtos, serviceOf, type ProtoRoot, type ProtoType } from './protos.js'

/**
 * The gRPC transport: Google's services on plaintext HTTP/2, as Cloud emulators serve them, from
 * the same bound methods as REST (transport/bound-methods.ts) and the protos Google ships
 * (grpc/protos.ts). Every unary and server-streaming RPC of each service the protos define is
 * served: a bound one runs its method (a stream sends its answer as one message), one Quarry's
 * tables lack answers UNIMPLEMENTED. Methods in the tables that the protos do not define (newer
 * than them) are served over REST only.
 *
 * The protocol is gRPC over HTTP/2 as its specification writes it
 * (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md), on `node:http2` directly: a
 * call is one stream, its request one length-prefixed message, its answer response headers, one
 * message and trailers, or trailers alone for an error. Quarry serves no client or bidirectional
 * streams, so a general gRPC server (grpc-js's) buys it nothing but a cost per call: against a
 * server that does no work, its calls took longer (`bench http`, the floor).
 */

export interface GrpcServerOptions {
  /** Largest request message, in bytes, after decompression (larger: RESOURCE_EXHAUSTED). */
  readonly maxMessageBytes: number
  readonly access: AccessOptions
  /** The address the REST server is bound to (the `:authority` rule is the same). */
  readonly boundHost: () => string | undefined
  readonly onInternalError: (error: unknown) => void
  /** The bound on requests held at once, shared with REST. */
  readonly inFlight: InFlight
  /** The messages being received, bounded in idle time and in bytes, shared with REST's bodies. */
  readonly receiving: Receiving
  /**
   * How long an answer may go without the client reading any of it, ms, before its stream is reset
   * (CANCELLED): its request slot and its bytes are then free. The server's `sendTimeoutMs`, as
   * REST's answers have it.
   */
  readonly sendIdleMs: number
}

export interface GrpcServer {
  /** RPCs each service serves, by full method path (`/google.longrunning.Operations/GetOperation`), bound or UNIMPLEMENTED. */
  readonly paths: readonly string[]
  /** Bound methods the shipped protos do not define (REST only), as `Service.Rpc`. */
  readonly restOnly: readonly string[]
  /** RPCs of the protos that no method table has (they answer UNIMPLEMENTED), as full method paths. */
  readonly unbound: readonly string[]
  listen(port: number, host: string): Promise<number>
  close(): Promise<void>
}

/** One RPC the server answers: its request type, how its answer is encoded, and the method (none: UNIMPLEMENTED). */
interface Route {
  readonly name: string
  readonly requestType: ProtoType
  readonly encode: (json: unknown) => Buffer
  readonly bound: BoundMethod | undefined
}

/** The length prefix of a gRPC message: a byte saying whether it is compressed, then its length (big-endian). */
const PREFIX_BYTES = 5

/** Message encodings a client may compress with (`grpc-encoding`), as zlib reads them. */
const DECOMPRESS: Readonly<Record<string, (input: InputType, options: ZlibOptions, callback: (error: Error | null, result: Buffer) => void) => void>> = { gzip: gunzip, deflate: inflate }
const ACCEPT_ENCODING = 'identity,deflate,gzip'

const EMPTY: Buffer = Buffer.alloc(0)

/** Units of `grpc-timeout` in milliseconds (the protocol's hours down to nanoseconds). */
const TIMEOUT_UNITS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 }

/** A message with gRPC's length prefix, uncompressed: how an answer goes on the wire. */
export function framedMessage(bytes: Buffer): Buffer {
  const framed = Buffer.allocUnsafe(PREFIX_BYTES + bytes.length)
  framed[0] = 0
  framed.writeUInt32BE(bytes.length, 1)
  bytes.copy(framed, PREFIX_BYTES)
  return framed
}

/**
 * An answer is written this many bytes at a time, each piece once the last has left: a piece sent is
 * the progress the sweep looks for. Node reports no progress within one write, however large.
 */
const SEND_PIECE_BYTES = 64 * 1024

/** The longest a Node timer waits. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** Milliseconds a `grpc-timeout` header allows (at most 8 digits and a unit), or undefined without a valid one. */
export function timeoutMs(header: string | undefined): number | undefined {
  const match = header === undefined ? null : /^(\d{1,8})([HMSmun])$/.exec(header)
  return match ? Number(match[1]) * (TIMEOUT_UNITS[match[2] as string] as number) : undefined
}

/**
 * `grpc-message`'s form: the message's UTF-8 bytes, percent-encoded outside printable ASCII and
 * for `%` itself, as the protocol specifies (a client decodes it back).
 */
export function percentEncoded(message: string): string {
  let out = ''
  for (const byte of Buffer.from(message, 'utf8')) out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  return out
}

/** A header's one value (HTTP/2 gives a list for a repeated one: the first counts). */
function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/**
 * About how long the calls one turn of the event loop starts take in all, ms (see `start` below):
 * enough for a few cheap calls to share the turn's write, little enough that answers leave often.
 */
const TURN_MS = 1
const MAX_TURN_CALLS = 32

/**
 * Streams open at once on one connection (SETTINGS_MAX_CONCURRENT_STREAMS): HTTP/2's recommended
 * least, and nghttp2's and grpc-go's default (Node's is 2^32 - 1). Ample for a client's concurrent
 * calls (more queue in the client); a stream costs the server while open, whatever it sends.
 */
const MAX_STREAMS_PER_CONNECTION = 100

/** A call's hold on a request slot (InFlight), for `run`. */
interface Slot {
  readonly client: string | undefined
  /** Takes the slot: false when none is left. */
  readonly enter: () => boolean
}

/** A call still receiving its request, as the sweep reads it. */
interface Receipt {
  /** When it last received bytes (Date.now()). */
  at: number
  /** When its stream opened. */
  readonly opened: number
  readonly received: () => number
  /** Ends it with a status, its message left unread. */
  readonly refuse: (code: CodeName, message: string) => void
}

/** A finished call's answer: a message, or a status. */
type Answer = { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly status: RpcStatus }

export function createGrpcServer(methods: readonly BoundMethod[], options: GrpcServerOptions): GrpcServer {
  const byPath = new Map<string, BoundMethod>()
  // Both Vertex versions bind the same mixins (google.longrunning.Operations ...): the first answers.
  for (const bound of methods) {
    const path = `/${bound.service}/${bound.rpc}`
    if (!byPath.has(path)) byPath.set(path, bound)
  }
  const services = [...new Set(methods.map((m) => m.service))]
  const root: ProtoRoot = loadServiceProtos(services)
  const routes = new Map<string, Route>()
  const restOnly: string[] = []
  const unbound: string[] = []
  for (const name of services) {
    const service = serviceOf(root, name)
    // A service the shipped protos do not define is REST only (listed below).
    if (!service) continue
    for (const protoMethod of service.methodsArray) {
      protoMethod.resolve()
      const requestType = protoMethod.resolvedRequestType
      const responseType = protoMethod.resolvedResponseType
      // Client and bidirectional streams carry many requests: no method of Quarry's reads one.
      if (!requestType || !responseType || protoMethod.requestStream) continue
      const path = `/${name}/${protoMethod.name}`
      const bound = byPath.get(path)
      if (!bound) unbound.push(path)
      routes.set(path, { name: `${name}.${protoMethod.name}`, requestType, encode: (json) => encodeMessage(responseType, json), bound })
    }
  }
  // Bound methods the shipped protos lack, by path: a call names where REST serves them.
  const restOnlyPaths = new Map<string, BoundMethod>()
  for (const [path, bound] of byPath) {
    if (routes.has(path)) continue
    restOnly.push(`${bound.service}.${bound.rpc}`)
    restOnlyPaths.set(path, bound)
  }
  const notServed = (path: string): string => {
    const bound = restOnlyPaths.get(path)
    if (!bound) return `The method ${path.slice(0, 200)} is not served here: Quarry serves the RPCs of Google's retrieval services.`
    const rest = bound.http[0]
    const where = rest ? ` at ${rest.verb} /${bound.version}/${rest.path}` : ''
    return `${bound.service}.${bound.rpc} is served over REST only${where}: it is newer than the protos Quarry's gRPC server ships.`
  }

  /**
   * Writes an answer's message SEND_PIECE_BYTES at a time, each piece once the client's flow control
   * has let the last one leave, noting when each left for the sweep; trailers follow the last. Written
   * whole, an answer the client does not read would sit in the stream, out of the sweep's sight.
   */
  const send = (stream: ServerHttp2Stream, bytes: Buffer): void => {
    const progress = { at: Date.now() }
    sending.set(stream, progress)
    let at = 0
    const next = (error?: Error | null): void => {
      if (error || stream.destroyed) return
      progress.at = Date.now()
      const piece = bytes.subarray(at, at + SEND_PIECE_BYTES)
      at += piece.length
      if (at < bytes.length) stream.write(piece, next)
      else stream.end(piece)
    }
    next()
  }

  /** Answers a stream once: the message with status OK, or the status alone (a trailers-only response). */
  const reply = (stream: ServerHttp2Stream, answer: Answer): void => {
    // Closed by the client (RST_STREAM, even NO_ERROR, or its session gone): respond() would throw.
    if (stream.destroyed || stream.closed || stream.headersSent) return
    if (answer.ok) {
      stream.respond({ [http2.HTTP2_HEADER_STATUS]: 200, [http2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc+proto', 'grpc-accept-encoding': ACCEPT_ENCODING }, { waitForTrailers: true })
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }))
      send(stream, framedMessage(answer.bytes))
      return
    }
    const { status } = answer
    const headers: OutgoingHttpHeaders = {
      [http2.HTTP2_HEADER_STATUS]: 200,
      [http2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc+proto',
      'grpc-accept-encoding': ACCEPT_ENCODING,
      'grpc-status': String(status.code),
      'grpc-message': percentEncoded(status.message),
      // Google's status, with its details (BadRequest's field violations), as its clients read it.
      'grpc-status-details-bin': encodeStatus(root, status).toString('base64'),
    }
    stream.respond(headers, { endStream: true })
  }
  const fail = (stream: ServerHttp2Stream, code: CodeName, message: string): void => reply(stream, { ok: false, status: rpcStatus(code, message) })

  /**
   * Runs a call whose request message has arrived whole; resolves to its answer. Its request slot is
   * taken with `slot.enter` once the message has arrived (a stalled stream holds none) and given back
   * by the caller, once both the method has returned and the stream has closed.
   */
  const run = async (route: Route, message: Buffer, slot: Slot, signal: { readonly aborted: boolean }, deadline: number): Promise<Answer> => {
    const request = decodeRequest(route.requestType, message)
    if (!request.ok) return { ok: false, status: rpcStatus('INVALID_ARGUMENT', request.message, request.violations) }
    if (!route.bound) return { ok: false, status: rpcStatus('UNIMPLEMENTED', `${route.name} is not implemented by Quarry.`) }
    if (!slot.enter()) return { ok: false, status: rpcStatus('RESOURCE_EXHAUSTED', options.inFlight.message(slot.client)) }
    const outcome = await route.bound.call(request.json, undefined, { signal, deadline, transport: true })
    return outcome.ok ? { ok: true, bytes: route.encode(outcome.response) } : { ok: false, status: outcome.status }
  }

  // Calls whose request has arrived start a turn's worth at a time: as many as take about
  // TURN_MS in all, judged by what the last turns took per call (at least one a turn). Node's HTTP/2
  // sends what a turn wrote at the start of the next one, and a client's concurrent calls share a
  // connection: started together, their answers would leave together after the last, with the
  // client idle until then. A turn at a time, each turn's answers leave while the next turn's calls
  // run, and client and server work at once rather than by turns (`bench http`, with Google's
  // clients); cheap calls still share a turn, and the one write their answers leave in. At most
  // MAX_TURN_CALLS a turn, however cheap the last ones were.
  const ready: (() => void)[] = []
  let pumping = false
  let turnStart = 0
  let startedThisTurn = 0
  /** What a call took lately, ms: the last turns' length over the calls they started (a running mean). */
  let perCallMs = TURN_MS
  const pump = (): void => {
    const now = performance.now()
    if (startedThisTurn > 0) perCallMs += ((now - turnStart) / startedThisTurn - perCallMs) / 4
    turnStart = now
    startedThisTurn = 0
    const calls = Math.min(MAX_TURN_CALLS, Math.max(1, Math.floor(TURN_MS / perCallMs)))
    while (startedThisTurn < calls && ready.length > 0) {
      startedThisTurn++
      ;(ready.shift() as () => void)()
    }
    if (ready.length > 0) setImmediate(pump)
    else pumping = false
  }
  const start = (call: () => void): void => {
    if (pumping) {
      ready.push(call)
      return
    }
    // Nothing waiting: this call runs at once (a lone client pays no extra turn); later ones queue.
    pumping = true
    turnStart = performance.now()
    startedThisTurn = 1
    call()
    setImmediate(pump)
  }

  const onStream = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void => {
    stream.on('error', () => undefined)
    const contentType = one(headers[http2.HTTP2_HEADER_CONTENT_TYPE])
    // Not a gRPC request: HTTP's own answers, as the protocol asks (415 for another content type).
    if (headers[http2.HTTP2_HEADER_METHOD] !== 'POST' || contentType === undefined || !/^application\/grpc(?:$|[+;])/.test(contentType)) {
      stream.respond({ [http2.HTTP2_HEADER_STATUS]: headers[http2.HTTP2_HEADER_METHOD] !== 'POST' ? 405 : 415 }, { endStream: true })
      return
    }
    // Another codec (application/grpc+json): its messages are not protobuf, which is all this server reads.
    const codec = /^application\/grpc(?:\+([^;\s]*))?/i.exec(contentType)?.[1]?.toLowerCase()
    if (codec !== undefined && codec !== 'proto') return fail(stream, 'UNIMPLEMENTED', `This server reads protobuf messages only (content-type application/grpc or application/grpc+proto); the call sent application/grpc+${codec.slice(0, 40)}.`)
    const path = one(headers[http2.HTTP2_HEADER_PATH]) ?? ''
    const route = routes.get(path)
    if (!route) return fail(stream, 'UNIMPLEMENTED', notServed(path))
    const admitted = checkAccess({ host: one(headers[http2.HTTP2_HEADER_AUTHORITY]), origin: headers.origin }, options.boundHost(), options.access)
    if (!admitted.ok) return fail(stream, 'PERMISSION_DENIED', admitted.message)
    const encoding = one(headers['grpc-encoding']) ?? 'identity'
    if (encoding !== 'identity' && !DECOMPRESS[encoding]) return fail(stream, 'UNIMPLEMENTED', `The message encoding "${encoding.slice(0, 40)}" is not supported; send identity, deflate or gzip.`)

    // A cancel (the client's RST_STREAM, or its connection gone) and the deadline both mark the
    // call aborted; the deadline also answers DEADLINE_EXCEEDED at once, as a gRPC server does.
    // Methods only read `aborted`: a plain flag, not an AbortController per call.
    const signal = { aborted: false }
    const timeoutHeader = one(headers['grpc-timeout'])
    const timeout = timeoutMs(timeoutHeader)
    // As grpc-js and grpc-go answer one: the client meant a deadline, and none can be read.
    if (timeoutHeader !== undefined && timeout === undefined) return fail(stream, 'INTERNAL', `Invalid grpc-timeout value "${timeoutHeader.slice(0, 40)}": at most 8 digits and a unit (H, M, S, m, u or n).`)
    // A timeout of 0 (the protocol writes positive ones; clients send it) is a deadline that has
    // passed, as grpc-go reads it: nothing runs. A timer of 0 would fire a turn later, after a call
    // that answers at once had answered OK.
    if (timeout === 0) return fail(stream, 'DEADLINE_EXCEEDED', 'Deadline exceeded.')
    const deadline = timeout === undefined ? Infinity : Date.now() + timeout
    // A timer waits at most 2^31 - 1 ms (Node fires a longer one at once); a longer deadline (grpc-timeout
    // allows years) still reaches the method as its time.
    const timer =
      timeout === undefined || timeout > MAX_TIMER_MS
        ? undefined
        : setTimeout(() => {
            signal.aborted = true
            // An answer still being sent is cancelled (RST_STREAM CANCEL), as the protocol asks: its
            // client has stopped waiting, and its slot and bytes are free at once.
            if (stream.headersSent) stream.close(http2.NGHTTP2_CANCEL)
            else fail(stream, 'DEADLINE_EXCEEDED', 'Deadline exceeded.')
          }, timeout)

    // The call's request slot, once taken: given back once its method has returned and its stream
    // has closed (its answer sent, or reset), whichever is last. Given back when the method returned,
    // slots would not bound the answers a client leaves unread, nor the memory they hold.
    const client = clientOf(stream.session?.socket?.remoteAddress)
    let taken = false
    let running = false
    let closed = false
    const slot: Slot = { client, enter: () => (taken = running = options.inFlight.enter(client)) }
    const leave = (): void => {
      if (!taken || running || !closed) return
      taken = false
      options.inFlight.leave(client)
    }

    // The request: one message, its length read from the prefix before its body is kept, so an
    // oversized one is refused as soon as it says its size, and bytes past it as soon as they come.
    // What calls still receiving hold counts in the budget REST's bodies share; one that makes no
    // progress for the idle time, or is still arriving after `receiving.holdMs`, is ended by
    // the sweep below.
    let held = EMPTY
    let owned = false
    let received = 0
    let declared = -1
    // The bytes so far are `held`'s first `received`: the first chunk as it came (a unary call's
    // whole message, as a rule), then a buffer the later chunks are copied into, which doubles as it
    // fills, up to the declared length. Kept as a list, a message sent in one-byte DATA frames would
    // cost a Buffer object per byte, a hundred times its bytes; copied, it costs at most twice them.
    const keep = (chunk: Buffer): void => {
      const needed = received + chunk.length
      if (received === 0) held = chunk
      else {
        if (!owned || needed > held.length) {
          const whole = declared >= 0 ? PREFIX_BYTES + declared : Infinity
          const grown = Buffer.allocUnsafe(Math.min(whole, Math.max(needed, 2 * held.length, 256)))
          held.copy(grown, 0, 0, received)
          held = grown
          owned = true
        }
        chunk.copy(held, received)
      }
      received = needed
    }
    let refused = false
    const { receiving } = options
    const settle = (): void => {
      if (!incomplete.delete(stream)) return
      receiving.pending -= received
    }
    const refuse = (code: CodeName, message: string): void => {
      refused = true
      settle()
      held = EMPTY
      fail(stream, code, message)
      // The rest of the message is not read: the stream ends here (after the status, in order).
      if (!stream.closed) stream.close(http2.NGHTTP2_NO_ERROR)
    }
    const opened = Date.now()
    incomplete.set(stream, { at: opened, opened, refuse, received: () => received })
    stream.once('close', () => {
      if (timer) clearTimeout(timer)
      if (!stream.headersSent) signal.aborted = true
      settle()
      sending.delete(stream)
      closed = true
      leave()
    })
    const more = (): void => refuse('UNIMPLEMENTED', `${route.name} takes one request message; the call sent more.`)
    stream.on('data', (chunk: Buffer) => {
      if (refused) return
      receiving.pending += chunk.length
      const receipt = incomplete.get(stream)
      if (receipt) receipt.at = Date.now()
      // Bytes past the declared length are counted (settle gives them back) but not kept.
      if (declared >= 0 && received + chunk.length > PREFIX_BYTES + declared) {
        received += chunk.length
        return more()
      }
      keep(chunk)
      if (declared < 0 && received >= PREFIX_BYTES) {
        declared = held.readUInt32BE(1)
        if (declared > options.maxMessageBytes) return refuse('RESOURCE_EXHAUSTED', `The request message is ${declared} bytes, over the limit of ${options.maxMessageBytes} (--max-body-mb, or maxBodyBytes).`)
        if (received > PREFIX_BYTES + declared) return more()
      }
      if (receiving.pending > receiving.budgetBytes) return refuse('RESOURCE_EXHAUSTED', `The server is receiving ${receiving.budgetBytes} bytes of requests already; retry shortly, or send fewer large messages at once.`)
      // Whole, it still counts and is still swept until the call half-closes ('end'): a client that
      // sends a whole message and never ends the stream holds its bytes under both bounds.
    })
    stream.once('end', () => {
      settle()
      if (refused || stream.headersSent || stream.destroyed || stream.closed) return
      if (declared < 0 || received < PREFIX_BYTES + declared) return fail(stream, 'INTERNAL', 'The call ended before its request message was whole.')
      const whole = held.subarray(0, received)
      const compressed = whole[0] === 1
      const body = whole.subarray(PREFIX_BYTES)
      const answer = (message: Buffer): void =>
        start(() => {
          // A call cancelled or past its deadline while it waited for its turn is not run.
          if (stream.headersSent || stream.destroyed) return
          run(route, message, slot, signal, deadline).then(
            (result) => {
              running = false
              reply(stream, result)
              leave()
            },
            (error: unknown) => {
              running = false
              options.onInternalError(error)
              fail(stream, 'INTERNAL', 'Internal error encountered.')
              leave()
            },
          )
        })
      if (!compressed) return answer(body)
      const decompress = DECOMPRESS[encoding]
      if (!decompress) return fail(stream, 'INTERNAL', 'The request message is marked compressed, but the call names no encoding (grpc-encoding).')
      // The limit holds after decompression too: a small compressed message cannot grow without bound.
      decompress(body, { maxOutputLength: options.maxMessageBytes }, (error, inflated) => {
        if (!error) return answer(inflated)
        const tooLarge = (error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE'
        fail(stream, tooLarge ? 'RESOURCE_EXHAUSTED' : 'INTERNAL', tooLarge ? `The request message inflates past the limit of ${options.maxMessageBytes} bytes (--max-body-mb, or maxBodyBytes).` : `The request message is not valid ${encoding} data.`)
      })
    })
  }

  // Calls still receiving (not yet half-closed), with when they opened and last received bytes. A
  // sweep, not a timer per call: a unary call's message and its end come in its first frame, and
  // pay for no timer.
  const incomplete = new Map<ServerHttp2Stream, Receipt>()
  const idleMs = options.receiving.idleMs
  // Answers being sent (`send`), with when a piece of each last left; swept as well.
  const sending = new Map<ServerHttp2Stream, { at: number }>()
  const sendIdleMs = options.sendIdleMs
  // The longest a call's request may take to arrive, however steadily it comes: REST's bodies'
  // hold time (`receiving.holdMs`, 20 s by default). A client that sends all of a large message but
  // a byte, then a byte now and then, never idle, would otherwise hold its part of the bodies being
  // received for as long as it liked. gRPC's messages are not ended to make room as REST's bodies
  // are (they add to `pending` directly), so here it is a hard bound.
  const arrivalMs = options.receiving.holdMs
  /** Why a call still receiving is ended now, or undefined while it may go on. */
  const overdue = (receipt: Receipt, now: number): string | undefined => {
    if (receipt.at <= now - idleMs) return `The request message made no progress for ${idleMs / 1000} s; send it without pauses.`
    if (receipt.opened <= now - arrivalMs) return `The request message was still arriving after ${arrivalMs / 1000} s (${receipt.received()} bytes received); send it faster, or a smaller one.`
    return undefined
  }
  const endIfDue = (stream: ServerHttp2Stream): void => {
    // Asked again: the call may have ended, or made progress, since the sweep.
    const now = Date.now()
    const receipt = incomplete.get(stream)
    const why = receipt && overdue(receipt, now)
    if (receipt && why !== undefined) receipt.refuse('DEADLINE_EXCEEDED', why)
    // An answer unread: RST_STREAM CANCEL (the client reads CANCELLED), the one way to end a stream
    // mid-message; trailers would wait behind the data.
    const progress = sending.get(stream)
    if (progress && progress.at <= now - sendIdleMs) stream.close(http2.NGHTTP2_CANCEL)
  }
  // While the calls a sweep found overdue are being ended (a slice at a time), the next sweep waits.
  let ending = false
  const sweep = setInterval(
    () => {
      if (ending) return
      const now = Date.now()
      const due: ServerHttp2Stream[] = []
      for (const [stream, receipt] of incomplete) if (overdue(receipt, now) !== undefined) due.push(stream)
      for (const [stream, progress] of sending) if (progress.at <= now - sendIdleMs) due.push(stream)
      if (due.length === 0) return
      ending = true
      inSlices(due, endIfDue, () => (ending = false))
    },
    sweepPeriodMs(idleMs, sendIdleMs),
  )
  sweep.unref()

  // Session memory (nghttp2's buffers, in MB) covers the largest message a client may send. Open
  // streams per connection are capped (clients queue past it) so that streams that send nothing
  // cannot pile up without bound.
  const server = createHttp2Server({ maxSessionMemory: Math.max(10, Math.ceil((2 * options.maxMessageBytes) / 1e6)), settings: { maxConcurrentStreams: MAX_STREAMS_PER_CONNECTION } })
  const sessions = new Set<ServerHttp2Session>()
  server.on('session', (session) => {
    sessions.add(session)
    session.on('error', () => undefined)
    session.once('close', () => sessions.delete(session))
  })
  server.on('stream', onStream)
  // A broken connection (HTTP/1.1 on this port, bad frames) is the client's; the server goes on.
  server.on('sessionError', () => undefined)

  return {
    paths: [...routes.keys()],
    restOnly,
    unbound,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.once('error', reject)
        server.listen(port, host, () => {
          server.off('error', reject)
          const address = server.address()
          resolve(typeof address === 'object' && address !== null ? address.port : port)
        })
      }),
    close: () =>
      new Promise((resolve) => {
        // New connections stop; open ones are told to go (GOAWAY) and finish their calls, which
        // get a moment; then the rest are cut.
        clearInterval(sweep)
        const timer = setTimeout(() => {
          for (const session of sessions) session.destroy()
        }, 2000)
        server.close(() => {
          clearTimeout(timer)
          resolve()
        })
        for (const session of sessions) session.close()
      }),
  }
}
