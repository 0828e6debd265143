import { NUMBERS, isType, messageFromJson, timestampFromJson } from './json-message.js'
import { longFromValue, newWriter, wireTypeOf, type ProtoType, type ProtoWriter } from './protos.js'

/**
 * A response's proto3 JSON written straight to protobuf bytes: the bytes `messageFromJson` then
 * protobuf.js's `encode` write, without the two objects per message they build on the way (most of
 * a gRPC answer's own cost). Fields in number order, each value converted as protobuf.js's
 * `fromObject` converts it. Only the shapes responses have take this path: the well-known types
 * with a JSON form of their own (but Timestamp), maps, and anything unexpected (a value of the
 * wrong kind, an unknown enum name, a null) go through the general path, whole message or field,
 * so a JSON that path refuses is refused with its error. test/unit/grpc-json-message.test.ts
 * compares the bytes on every golden response and random values.
 */

/** Thrown inside the writer when a value needs the general path (one instance: no stack is taken per throw). */
const GENERAL = new Error('needs the general path')

type Write = (w: ProtoWriter, value: unknown, depth: number) => void

interface FieldWriter {
  readonly name: string
  /** Writes the field's (non-null) value: tag and payload. */
  readonly write: Write
}

/** A message type's fields in number order, or `general` when the whole message takes the general path. */
type Plan = { readonly general: true } | { readonly general: false; readonly fields: readonly FieldWriter[] }

const TIMESTAMP = '.google.protobuf.Timestamp'
/** protobuf.js's own nesting limit (its encoder's `util.recursionLimit`). */
const MAX_DEPTH = 100

const wirePlans = new WeakMap<ProtoType, Plan>()

function planOf(type: ProtoType): Plan {
  const known = wirePlans.get(type)
  if (known) return known
  // Set first: a message that contains itself finds its plan while it is being made.
  const fields: FieldWriter[] = []
  // The well-known types (Timestamp is written by writeTimestamp where a field holds one).
  const special = type.fullName.startsWith('.google.protobuf.')
  const plan: Plan = special ? { general: true } : { general: false, fields }
  wirePlans.set(type, plan)
  if (special) return plan
  const sorted = [...type.fieldsArray].sort((a, b) => a.id - b.id)
  const writers: FieldWriter[] = []
  for (const field of sorted) {
    const resolved = field.resolve().resolvedType
    // A map's value is field 2 of its entries, and unchecked like a repeated field's elements.
    const id = field.map ? 2 : field.id
    const one = field.delimited || (field.map && (field as { keyType?: string }).keyType !== 'string') ? undefined : isType(resolved) ? messageValue(resolved, id) : resolved ? enumValue(resolved.values, id) : scalarValue(field.type, id, field.repeated || field.map)
    // A group's delimiters, a map keyed by other than strings, a type protobuf.js has no writer for: the general path writes the message.
    if (!one) {
      wirePlans.set(type, { general: true })
      return { general: true }
    }
    const packed = field.repeated && field.packed && !isType(resolved) && field.type !== 'string' && field.type !== 'bytes'
    writers.push({ name: field.name, write: field.map ? map(one, field.id) : field.repeated ? repeated(one, packed, field.id) : one.single })
  }
  fields.push(...writers)
  return plan
}

/** How one value of a field is written: alone with its tag, or inside a packed run without one. */
interface ValueWriter {
  readonly single: Write
  readonly bare: Write
}

function messageValue(type: ProtoType, id: number): ValueWriter {
  const tag = ((id << 3) | 2) >>> 0
  const bare: Write =
    type.fullName === TIMESTAMP
      ? (w, value) => writeTimestamp(value, w)
      : (w, value, depth) => {
          if (typeof value !== 'object' || value === null) throw GENERAL
          writeMessage(type, value, w, depth + 1)
        }
  return {
    bare,
    single: (w, value, depth) => {
      w.uint32(tag).fork()
      bare(w, value, depth)
      w.ldelim()
    },
  }
}

function enumValue(values: Readonly<Record<string, number>>, id: number): ValueWriter {
  const tag = (id << 3) >>> 0
  const bare: Write = (w, value) => {
    const n = typeof value === 'string' && Object.hasOwn(values, value) ? values[value] : undefined
    // An unknown name, or a number (kept or renamed by the general path's two steps): the general path.
    if (typeof n !== 'number') throw GENERAL
    w.int32(n)
  }
  return { bare, single: (w, value, depth) => bare(w.uint32(tag), value, depth) }
}

function scalarValue(type: string, id: number, unchecked: boolean): ValueWriter | undefined {
  const wire = wireTypeOf(type)
  if (wire === undefined) return undefined
  const tag = ((id << 3) | wire) >>> 0
  const accepts = unchecked ? (): boolean => true : NUMBERS.has(type) ? (v: unknown): boolean => typeof v === 'number' || typeof v === 'string' : type === 'string' ? (v: unknown): boolean => typeof v === 'string' : type === 'bool' ? (v: unknown): boolean => typeof v === 'boolean' : (v: unknown): boolean => typeof v === 'string'
  // Each as protobuf.js's `fromObject` converts it, then its writer.
  const put = ((): ((w: ProtoWriter, v: unknown) => void) | undefined => {
    switch (type) {
      case 'double':
        return (w, v) => w.double(Number(v))
      case 'float':
        return (w, v) => w.float(Number(v))
      case 'uint32':
        return (w, v) => w.uint32((v as number) >>> 0)
      case 'fixed32':
        return (w, v) => w.fixed32((v as number) >>> 0)
      case 'int32':
        return (w, v) => w.int32((v as number) | 0)
      case 'sint32':
        return (w, v) => w.sint32((v as number) | 0)
      case 'sfixed32':
        return (w, v) => w.sfixed32((v as number) | 0)
      case 'int64':
        return (w, v) => w.int64(longFromValue(v, false))
      case 'sint64':
        return (w, v) => w.sint64(longFromValue(v, false))
      case 'sfixed64':
        return (w, v) => w.sfixed64(longFromValue(v, false))
      case 'uint64':
        return (w, v) => w.uint64(longFromValue(v, true))
      case 'fixed64':
        return (w, v) => w.fixed64(longFromValue(v, true))
      case 'string':
        return (w, v) => w.string(String(v))
      case 'bool':
        return (w, v) => w.bool(Boolean(v))
      case 'bytes':
        return (w, v) => {
          if (typeof v !== 'string') throw GENERAL
          w.bytes(Buffer.from(v, 'base64'))
        }
      default:
        return undefined
    }
  })()
  if (!put) return undefined
  const bare: Write = (w, value) => {
    if (!accepts(value)) throw GENERAL
    put(w, value)
  }
  return { bare, single: (w, value, depth) => bare(w.uint32(tag), value, depth) }
}

function repeated(one: ValueWriter, packed: boolean, id: number): Write {
  const tag = ((id << 3) | 2) >>> 0
  return (w, value, depth) => {
    if (!Array.isArray(value)) throw GENERAL
    if (value.length === 0) return
    if (packed) {
      w.uint32(tag).fork()
      for (const v of value) one.bare(w, v, depth)
      w.ldelim()
    } else for (const v of value) one.single(w, v, depth)
  }
}

/** A map keyed by strings: an entry per key, the key as field 1 and the value as field 2. */
function map(one: ValueWriter, id: number): Write {
  const tag = ((id << 3) | 2) >>> 0
  return (w, value, depth) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw GENERAL
    const entries = value as Record<string, unknown>
    for (const key of Object.keys(entries)) {
      if (key === '__proto__') throw GENERAL
      w.uint32(tag).fork().uint32(10).string(key)
      one.single(w, entries[key], depth)
      w.ldelim()
    }
  }
}

/** A Timestamp from its RFC 3339 text, as `Timestamp.fromObject` and `encode` write `{seconds, nanos}`. */
function writeTimestamp(json: unknown, w: ProtoWriter): void {
  if (typeof json !== 'string') throw GENERAL
  const { seconds, nanos } = timestampFromJson(json)
  // A safe integer goes to the writer as it is: protobuf.js writes the same bits from a number as from its Long, without making one.
  if (seconds !== undefined) w.uint32(8).int64(Number.isSafeInteger(seconds) ? seconds : longFromValue(seconds, false))
  if (nanos !== undefined) w.uint32(16).int32(nanos | 0)
}

function writeMessage(type: ProtoType, json: object, w: ProtoWriter, depth: number): void {
  if (depth > MAX_DEPTH) throw GENERAL
  const plan = planOf(type)
  if (plan.general) {
    const message = messageFromJson(type, json)
    if (message === null) throw GENERAL
    type.encode(message, w)
    return
  }
  if (Array.isArray(json)) throw GENERAL
  const fields = json as Record<string, unknown>
  for (const field of plan.fields) {
    const value = fields[field.name]
    if (value === undefined) continue
    // null: an empty repeated field or an unset message to the general path, an error for the rest.
    if (value === null) throw GENERAL
    field.write(w, value, depth)
  }
}

/**
 * The message of `type` a proto3 JSON value stands for, as bytes: the bytes of
 * `type.encode(messageFromJson(type, json) ?? type.create())`. Throws as that does.
 */
export function encodeJson(type: ProtoType, json: unknown): Buffer {
  if (typeof json === 'object' && json !== null) {
    const w = newWriter()
    try {
      writeMessage(type, json, w, 0)
      const bytes = w.finish()
      // Node's writer finishes into a Buffer already.
      return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes)
    } catch {
      // The general path writes the same bytes, or throws its own error for a JSON it refuses.
    }
  }
  const message = messageFromJson(type, json)
  return Buffer.from(type.encode(message ?? type.create()).finish())
}
