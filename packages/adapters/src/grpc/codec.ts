import { fromProto3JSON, toProto3JSON } from 'proto3-json-serializer'
import type { RpcStatus } from '../rpc/status.js'
import type { ProtoRoot, ProtoType } from './protos.js'

/**
 * Binary protobuf ↔ proto3 JSON, the form every adapter reads and writes: a gRPC request becomes
 * exactly the JSON a REST client would send (lowerCamelCase names, enums by name, int64 as
 * strings, Timestamps as RFC 3339, Durations as "1.5s", FieldMasks as "a,b", Any with "@type"),
 * and a response JSON becomes the message Google's clients decode. The conversion is Google's own
 * (`proto3-json-serializer`, what google-gax uses for its REST transport).
 */

/** A request as decoded: its JSON, or why its bytes are not that message. */
export type Decoded = { readonly ok: true; readonly json: Record<string, unknown> } | { readonly ok: false; readonly message: string }

/**
 * Reads a request message. Never throws: a malformed message is answered INVALID_ARGUMENT by
 * the handler (gRPC's own deserializer error would be INTERNAL). Proto3 leaves zero values off
 * the wire, so an unset scalar is absent here, as in REST JSON: zero means the default.
 */
export function decodeRequest(type: ProtoType, bytes: Buffer): Decoded {
  try {
    const json = toProto3JSON(type.decode(bytes))
    if (typeof json !== 'object' || json === null || Array.isArray(json)) return { ok: false, message: `The request is not a ${type.fullName.slice(1)} message.` }
    return { ok: true, json: json as Record<string, unknown> }
  } catch (error) {
    return { ok: false, message: `The request is not a valid ${type.fullName.slice(1)} message: ${error instanceof Error ? error.message.slice(0, 200) : 'undecodable bytes'}.` }
  }
}

/**
 * Writes a message (a response, a status) from its JSON. Fields the protos do not have (newer than the
 * shipped protos: served over REST only) are left out. Throws when the JSON does not fit the
 * message (a bug on our side: the caller answers INTERNAL).
 */
export function encodeMessage(type: ProtoType, json: unknown): Buffer {
  const message = fromProto3JSON(type, json as Parameters<typeof fromProto3JSON>[1])
  return Buffer.from(type.encode(message ?? type.create()).finish())
}

/** google.rpc.Status with its details (BadRequest ...) as binary Any: the `grpc-status-details-bin` trailer Google's clients decode. */
export function encodeStatus(root: ProtoRoot, status: RpcStatus): Buffer {
  const type = root.lookupType('google.rpc.Status')
  return encodeMessage(type, { code: status.code, message: status.message, ...(status.details ? { details: status.details } : {}) })
}
