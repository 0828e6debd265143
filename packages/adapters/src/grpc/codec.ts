import protobuf from 'protobufjs'
import type { FieldViolation, RpcStatus } from '../rpc/status.js'
import { MAX_REQUEST_VALUES } from '../transport/json.js'
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
export function decodeRequest(type: ProtoType, bytes: Buffer, maxValues = MAX_REQUEST_VALUES): Decoded {
  // A message of n bytes holds at most n values and nests at most n / 2 deep: most need no scan.
  const over = bytes.length > Math.min(maxValues, 2 * MAX_DEPTH) ? boundExceeded(type, bytes, maxValues) : undefined
  if (over?.what === 'values') return { ok: false, message: `The request message holds more than ${maxValues} field values (at byte ${over.at}): send fewer items per request.` }
  if (over?.what === 'depth') return { ok: false, message: `The request message nests messages deeper than ${MAX_DEPTH} levels (at byte ${over.at}), protobuf's recursion limit (each level of a Struct is three: the Struct, its entry and its Value).` }
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

/** Wire types (https://protobuf.dev/programming-guides/encoding/#structure). */
const VARINT = 0
const FIXED64 = 1
const DELIMITED = 2
const FIXED32 = 5

/**
 * Where the message first holds more than `max` field values (each field's every occurrence, each
 * element of a packed list, counted in nested messages and map entries too) or nests deeper than
 * MAX_DEPTH, or undefined: the bounds REST's JSON bodies have (transport/json.ts), found on the
 * wire before protobuf.js builds an object for each value. 8 MB of empty strings is four million of
 * them, seconds of decoding before any field's limit is checked. Bytes that do not parse stop the
 * count: decoding reports them.
 */
function boundExceeded(type: ProtoType, bytes: Uint8Array, max: number): { readonly at: number; readonly what: 'values' | 'depth' } | undefined {
  let values = 0
  let at = 0
  const varint = (end: number): number => {
    let value = 0
    for (let shift = 0; at < end && shift < 53; shift += 7) {
      const byte = bytes[at++] as number
      value += (byte & 0x7f) * 2 ** shift
      if (byte < 0x80) return value
    }
    throw MALFORMED
  }
  // `field(id)` names what field `id` holds here: a message type to count inside, a packed scalar's
  // wire type, or nothing to look into.
  const scan = (end: number, field: (id: number) => Inner, depth: number): void => {
    if (depth > MAX_DEPTH) throw DEEP
    while (at < end) {
      const tag = varint(end)
      if (++values > max) throw OVER
      const wire = tag & 7
      if (wire === VARINT) varint(end)
      else if (wire === FIXED64) at += 8
      else if (wire === FIXED32) at += 4
      else if (wire === DELIMITED) {
        const length = varint(end)
        const stop = at + length
        if (stop > end) throw MALFORMED
        const inner = field(Math.floor(tag / 8))
        if (inner === undefined) at = stop
        else if (typeof inner === 'number') {
          // A packed list: one value per element.
          values += inner === VARINT ? countVarints(bytes, at, stop) : Math.floor(length / (inner === FIXED64 ? 8 : 4))
          if (values > max) throw OVER
          at = stop
        } else scan(stop, inner, depth + 1)
      } else if (wire !== 3 && wire !== 4) throw MALFORMED
      if (at > end) throw MALFORMED
    }
  }
  try {
    scan(bytes.length, fieldsOf(type), 1)
    return undefined
  } catch (error) {
    if (error === OVER) return { at, what: 'values' }
    if (error === DEEP) return { at, what: 'depth' }
    if (error === MALFORMED) return undefined
    throw error
  }
}

/** What a length-delimited field holds for the count: a message's fields, a packed scalar's wire type, or nothing (text, bytes). */
type Inner = ((id: number) => Inner) | number | undefined

const OVER = new Error('over the bound')
const DEEP = new Error('too deep')
const MALFORMED = new Error('not protobuf')

/** The fields of a message type for the count (their Inner), found once per type. */
const innerOf = new WeakMap<ProtoType, (id: number) => Inner>()

function fieldsOf(type: ProtoType): (id: number) => Inner {
  const known = innerOf.get(type)
  if (known) return known
  const byId = new Map<number, Inner>()
  const lookup = (id: number): Inner => byId.get(id)
  innerOf.set(type, lookup)
  for (const field of type.fieldsArray) {
    const resolved = field.resolve().resolvedType
    const value: Inner = isType(resolved) ? fieldsOf(resolved) : field.repeated && !field.map ? packedWire(resolved ? 'enum' : field.type) : undefined
    // A map's entries are messages of a key (1) and a value (2).
    byId.set(field.id, field.map ? (id) => (id === 2 ? value : undefined) : value)
  }
  return lookup
}

/** The wire type of a packed list of this scalar type; undefined for text and bytes. */
function packedWire(type: string): number | undefined {
  if (type === 'enum') return VARINT
  return (protobuf.types.packed as Record<string, number | undefined>)[type]
}

/** Varints in bytes [start, end): the bytes that end one. */
function countVarints(bytes: Uint8Array, start: number, end: number): number {
  let n = 0
  for (let i = start; i < end; i++) if ((bytes[i] as number) < 0x80) n++
  return n
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
