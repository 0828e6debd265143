import protobuf from 'protobufjs'
import type { FieldViolation, RpcStatus } from '../rpc/status.js'
import { isType, messageToJson } from './json-message.js'
import { encodeJson } from './json-wire.js'
import type { ProtoRoot, ProtoType } from './protos.js'

/**
 * Binary protobuf ↔ proto3 JSON, the form every adapter reads and writes: a gRPC request becomes
 * exactly the JSON a REST client would send (lowerCamelCase names, enums by name, int64 as
 * strings, Timestamps as RFC 3339, Durations as "1.5s", FieldMasks as "a,b", Any with "@type"),
 * and a response JSON becomes the message Google's clients decode. The conversion is Google's own
 * (`proto3-json-serializer`, what google-gax uses for its REST transport), its per-call cost cut by
 * per-type plans (grpc/json-message.ts), and responses written straight to bytes (grpc/json-wire.ts).
 */

/** A request as decoded: its JSON, or why its bytes are not that message. */
export type Decoded = { readonly ok: true; readonly json: Record<string, unknown> } | { readonly ok: false; readonly message: string; readonly violations?: readonly FieldViolation[] }

/**
 * Reads a request message. Never throws: a malformed message is answered INVALID_ARGUMENT by
 * the handler (gRPC's own deserializer error would be INTERNAL). Proto3 leaves zero values off
 * the wire, so an unset scalar is absent here, as in REST JSON: zero means the default.
 */
export function decodeRequest(type: ProtoType, bytes: Buffer): Decoded {
  try {
    const message = type.decode(strictReader(bytes))
    // Proto3 JSON writes a Value's NaN or Infinity as the string "NaN" / "Infinity": refused here,
    // before it can turn into a string, as REST refuses a number JSON cannot hold (rpc/proto-json.ts).
    const field = nonFiniteValue(type, message, '', 0)
    if (field !== undefined) {
      const text = `Invalid value at '${field}' (type.googleapis.com/google.protobuf.Value): a number value must be finite; NaN and Infinity have no JSON form. Send a finite number, or the text as a string value.`
      return { ok: false, message: text, violations: [{ field, description: text }] }
    }
    const json = messageToJson(type, message)
    if (typeof json !== 'object' || json === null || Array.isArray(json)) return { ok: false, message: `The request is not a ${type.fullName.slice(1)} message.` }
    return { ok: true, json: json as Record<string, unknown> }
  } catch (error) {
    return { ok: false, message: `The request is not a valid ${type.fullName.slice(1)} message: ${error instanceof Error ? error.message.slice(0, 200) : 'undecodable bytes'}.` }
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * A reader whose string fields must be UTF-8, as proto3 requires of them and as REST reads its body
 * (http/request.ts): protobufjs would put U+FFFD in place of a bad byte and the text would be
 * stored so. Set on this reader alone (protobufjs's own is shared with other code in the process).
 */
function strictReader(bytes: Buffer): protobuf.Reader {
  const reader = protobuf.Reader.create(bytes)
  reader.string = strictString
  return reader
}

function strictString(this: protobuf.Reader): string {
  const field = this.bytes()
  try {
    return UTF8.decode(field)
  } catch {
    throw new Error('a string field holds bytes that are not UTF-8 (proto3 strings are UTF-8 text)')
  }
}

/** How deep the check below follows messages: deeper than any request proto3 JSON would read. */
const MAX_DEPTH = 100

/** Messages proto3 JSON writes as plain JSON: their own field names are not part of a path. */
const JSON_TYPES: ReadonlySet<string> = new Set(['.google.protobuf.Struct', '.google.protobuf.ListValue', '.google.protobuf.Value'])


/** Types that can hold a google.protobuf.Value at some depth (true), or cannot (false): found once per type. */
const holdsValue = new WeakMap<ProtoType, boolean>()

/**
 * Whether a message of `type` can hold a google.protobuf.Value: most requests cannot, and then
 * none of their fields needs a look. `inside` holds the types being asked about further out: a
 * type met again there adds nothing, so "no" is only remembered for the type first asked about.
 */
function canHoldValue(type: ProtoType, inside: Set<ProtoType> = new Set()): boolean {
  const known = holdsValue.get(type)
  if (known !== undefined) return known
  if (inside.has(type)) return false
  inside.add(type)
  const holds = type.fullName === '.google.protobuf.Value' || type.fieldsArray.some((field) => {
    const inner = field.resolve().resolvedType
    return isType(inner) && canHoldValue(inner, inside)
  })
  if (holds || inside.size === 1) holdsValue.set(type, holds)
  inside.delete(type)
  return holds
}

/** The JSON path of the first google.protobuf.Value holding a non-finite number in `message` (of `type`), if any. */
function nonFiniteValue(type: ProtoType, message: unknown, path: string, depth: number): string | undefined {
  if (typeof message !== 'object' || message === null || depth > MAX_DEPTH || !canHoldValue(type)) return undefined
  const fields = message as Record<string, unknown>
  if (type.fullName === '.google.protobuf.Value') {
    const n = fields['numberValue']
    if (typeof n === 'number' && !Number.isFinite(n)) return path
  }
  for (const field of type.fieldsArray) {
    const value = fields[field.name]
    const inner = field.resolve().resolvedType
    if (value === undefined || value === null || !isType(inner)) continue
    const base = JSON_TYPES.has(type.fullName) ? path : path === '' ? field.name : `${path}.${field.name}`
    const entries: (readonly [string, unknown])[] = field.map
      ? Object.entries(value as Record<string, unknown>).map(([k, v]) => [base === '' ? k : `${base}.${k}`, v] as const)
      : field.repeated
        ? (value as unknown[]).map((v, i) => [`${base}[${i}]`, v] as const)
        : [[base, value] as const]
    for (const [at, v] of entries) {
      const found = nonFiniteValue(inner, v, at, depth + 1)
      if (found !== undefined) return found
    }
  }
  return undefined
}

/**
 * Writes a message (a response, a status) from its JSON. Fields the protos do not have (newer than the
 * shipped protos: served over REST only) are left out. Throws when the JSON does not fit the
 * message (a bug on our side: the caller answers INTERNAL).
 */
export function encodeMessage(type: ProtoType, json: unknown): Buffer {
  return encodeJson(type, json)
}

/** google.rpc.Status with its details (BadRequest ...) as binary Any: the `grpc-status-details-bin` trailer Google's clients decode. */
export function encodeStatus(root: ProtoRoot, status: RpcStatus): Buffer {
  const type = root.lookupType('google.rpc.Status')
  return encodeMessage(type, { code: status.code, message: status.message, ...(status.details ? { details: status.details } : {}) })
}
