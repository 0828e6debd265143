import * as grpc from '@grpc/grpc-js'
import type { AccessOptions } from '../transport/guard.js'
import { checkAccess } from '../transport/guard.js'
import type { Outcome } from '../rpc/outcome.js'
import { rpcStatus, type RpcStatus } from '../rpc/status.js'
import type { BoundMethod } from '../transport/bound-methods.js'
import { clientOf, type InFlight } from '../transport/in-flight.js'
import { decodeRequest, encodeMessage, encodeStatus, type Decoded } from './codec.js'
import { loadServiceProtos, serviceOf, type ProtoRoot } from './protos.js'

/**
 * The gRPC transport: Google's services on plaintext HTTP/2, as Cloud emulators serve them, from
 * the same bound methods as REST (transport/bound-methods.ts) and the protos Google ships
 * (grpc/protos.ts). Every unary and server-streaming RPC of each service the protos define is
 * registered: a bound one runs its method (a stream sends its answer as one message), one Quarry's
 * tables lack answers UNIMPLEMENTED. Methods in the tables that the
 * protos do not define (newer than them) are served over REST only.
 */

export interface GrpcServerOptions {
  /** Largest request message, in bytes (larger: RESOURCE_EXHAUSTED). */
  readonly maxMessageBytes: number
  readonly access: AccessOptions
  /** The address the REST server is bound to (the `:authority` rule is the same). */
  readonly boundHost: () => string | undefined
  readonly onInternalError: (error: unknown) => void
  /** The bound on requests held at once, shared with REST. */
  readonly inFlight: InFlight
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

type Callback = grpc.sendUnaryData<Buffer>
/** What a unary call and a server-streaming one share: the request, its metadata, peer and deadline. */
type Call = grpc.ServerUnaryCall<Decoded, Buffer> | grpc.ServerWritableStream<Decoded, Buffer>

/**
 * A server-streaming call answered like a unary one: the response as its one message, or the
 * error as its status. Quarry's methods compute their whole answer (REST sends it as one
 * server-sent event); a stream of one is what a streaming client reads.
 */
function streamReply(call: grpc.ServerWritableStream<Decoded, Buffer>): Callback {
  return (error, bytes) => {
    if (error) call.emit('error', error)
    else {
      if (bytes) call.write(bytes)
      call.end()
    }
  }
}

/** A gRPC error with Google's status details in `grpc-status-details-bin`. */
function serviceError(root: ProtoRoot, status: RpcStatus): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata()
  metadata.set('grpc-status-details-bin', encodeStatus(root, status))
  return { code: status.code, details: status.message, metadata }
}

/** Milliseconds until a call's deadline (Infinity without one). */
function msUntilDeadline(call: Call): number {
  const deadline = call.getDeadline()
  return (deadline instanceof Date ? deadline.getTime() : deadline) - Date.now()
}


export function createGrpcServer(methods: readonly BoundMethod[], options: GrpcServerOptions): GrpcServer {
  const byPath = new Map<string, BoundMethod>()
  // Both Vertex versions bind the same mixins (google.longrunning.Operations ...): the first answers.
  for (const bound of methods) {
    const path = `/${bound.service}/${bound.rpc}`
    if (!byPath.has(path)) byPath.set(path, bound)
  }
  const services = [...new Set(methods.map((m) => m.service))]
  const root = loadServiceProtos(services)
  // Channelz (grpc-js's call statistics for its debugging service) is not served: no call pays for it.
  const server = new grpc.Server({ 'grpc.max_receive_message_length': options.maxMessageBytes, 'grpc.enable_channelz': 0 })
  const paths: string[] = []
  const restOnly: string[] = []
  const unbound: string[] = []

  const answer = (call: Call, callback: Callback, outcome: Outcome<unknown>, encode: (json: unknown) => Buffer): void => {
    if (!outcome.ok) {
      callback(serviceError(root, outcome.status))
      return
    }
    let bytes: Buffer
    try {
      bytes = encode(outcome.response)
    } catch (error) {
      options.onInternalError(error)
      callback(serviceError(root, rpcStatus('INTERNAL', 'Internal error encountered.')))
      return
    }
    if (!call.cancelled) callback(null, bytes)
  }

  for (const name of services) {
    const service = serviceOf(root, name)
    // A service the shipped protos do not define is REST only (listed below).
    if (!service) continue
    const definition: Record<string, grpc.MethodDefinition<Decoded, Buffer>> = {}
    const implementation: grpc.UntypedServiceImplementation = {}
    for (const protoMethod of service.methodsArray) {
      protoMethod.resolve()
      const requestType = protoMethod.resolvedRequestType
      const responseType = protoMethod.resolvedResponseType
      // Client and bidirectional streams carry many requests: no method of Quarry's reads one.
      if (!requestType || !responseType || protoMethod.requestStream) continue
      const responseStream = protoMethod.responseStream === true
      const path = `/${name}/${protoMethod.name}`
      paths.push(path)
      definition[protoMethod.name] = {
        path,
        requestStream: false,
        responseStream,
        requestDeserialize: (bytes: Buffer): Decoded => decodeRequest(requestType, bytes),
        // Used by clients, not by this server; kept true for completeness.
        requestSerialize: (value: Decoded) => (value.ok ? encodeMessage(requestType, value.json) : Buffer.alloc(0)),
        responseSerialize: (bytes: Buffer) => bytes,
        responseDeserialize: (bytes: Buffer) => bytes,
        originalName: protoMethod.name.charAt(0).toLowerCase() + protoMethod.name.slice(1),
      }
      const bound = byPath.get(path)
      if (!bound) unbound.push(path)
      const encode = (json: unknown): Buffer => encodeMessage(responseType, json)
      const handle = (call: Call, callback: Callback): void => {
        const admitted = checkAccess({ host: call.getHost(), origin: call.metadata.get('origin')[0]?.toString() }, options.boundHost(), options.access)
        if (!admitted.ok) return callback(serviceError(root, rpcStatus('PERMISSION_DENIED', admitted.message)))
        if (!call.request.ok) return callback(serviceError(root, rpcStatus('INVALID_ARGUMENT', call.request.message, call.request.violations)))
        if (!bound) return callback(serviceError(root, rpcStatus('UNIMPLEMENTED', `${name}.${protoMethod.name} is not implemented by Quarry.`)))
        // Called once the whole request message has arrived: a stalled stream holds no slot.
        const inFlight = options.inFlight
        // The peer is `address:port` (grpc-js joins the socket's two, IPv6 unbracketed).
        const peer = call.getPeer()
        const client = clientOf(peer.slice(0, Math.max(0, peer.lastIndexOf(':'))))
        if (!inFlight.enter(client)) return callback(serviceError(root, rpcStatus('RESOURCE_EXHAUSTED', inFlight.message(client))))
        // A cancel aborts the signal; the deadline is passed as a time (gRPC reports both as "cancelled").
        const controller = new AbortController()
        const abandon = (): void => controller.abort()
        if (call.cancelled) abandon()
        else call.once('cancelled', abandon)
        bound
          .call(call.request.json, undefined, { signal: controller.signal, deadline: Date.now() + msUntilDeadline(call) })
          .then((outcome) => answer(call, callback, outcome, encode))
          .catch((error: unknown) => {
            options.onInternalError(error)
            callback(serviceError(root, rpcStatus('INTERNAL', 'Internal error encountered.')))
          })
          .finally(() => {
            inFlight.leave(client)
            call.removeListener('cancelled', abandon)
          })
      }
      implementation[protoMethod.name] = responseStream
        ? (call: grpc.ServerWritableStream<Decoded, Buffer>): void => handle(call, streamReply(call))
        : (call: grpc.ServerUnaryCall<Decoded, Buffer>, callback: Callback): void => handle(call, callback)
    }
    server.addService(definition as grpc.ServiceDefinition, implementation)
  }
  for (const [path, bound] of byPath) if (!paths.includes(path)) restOnly.push(`${bound.service}.${bound.rpc}`)

  return {
    paths,
    restOnly,
    unbound,
    listen: (port, host) =>
      new Promise((resolve, reject) => {
        server.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)))
      }),
    close: () =>
      new Promise((resolve) => {
        // In-flight calls get a moment to finish; then the rest are cut.
        const timer = setTimeout(() => server.forceShutdown(), 2000)
        server.tryShutdown(() => {
          clearTimeout(timer)
          resolve()
        })
      }),
  }
}
