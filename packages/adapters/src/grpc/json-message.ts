import { fromProto3JSON, toProto3JSON } from 'proto3-json-serializer'
import { setOwn } from '../rpc/json-object.js'
import type { ProtoType } from './protos.js'

/**
 * Proto3 JSON ↔ protobuf.js messages with the same results as Google's `proto3-json-serializer`,
 * at a fraction of its cost: that library resolves the whole type (`resolveAll`), rebuilds its
 * full name and matches a regular expression at every message of every call, which was most of a
 * gRPC answer's CPU. Here each type's fields are sorted into kinds once (a plan, cached per type);
 * the well-known types with a JSON form of their own (Timestamp, Duration, FieldMask, Struct,
 * Value, ListValue, Any, the wrappers) are still converted by the library itself, except Struct,
 * Value and ListValue read into JSON, done here to keep a "__proto__" key a field
 * (structValueToJson); the final message is built by protobuf.js's generated `fromObject` / the
 * library's rules for `toObject`.
 * test/unit/grpc-json-message.test.ts checks both directions against the library on every
 * golden request and response.
 */

/** The shape both directions walk: a JSON object, or a decoded message's own fields. */
type Fields = Record<string, unknown>

type Kind = 'scalar' | 'bytes' | 'enum' | 'null' | 'message'

interface FieldPlan {
  readonly kind: Kind
  readonly repeated: boolean
  readonly map: boolean
  /** The field's enum or message type (the enum's `valuesById` for names). */
  readonly type: ProtoType | EnumLike | undefined
  /** The declared type (`string`, `int64`, ...) for the library's scalar checks. */
  readonly scalar: string
}

interface EnumLike {
  readonly valuesById: Record<number, string>
}

interface Plan {
  /** A well-known type with a JSON form of its own: the library converts it whole. */
  readonly special: boolean
  readonly timestamp: boolean
  readonly fields: ReadonlyMap<string, FieldPlan>
}

/** Well-known types whose JSON is not their fields (proto3 JSON mapping). */
const SPECIAL: ReadonlySet<string> = new Set([
  '.google.protobuf.Any',
  '.google.protobuf.Value',
  '.google.protobuf.Struct',
  '.google.protobuf.ListValue',
  '.google.protobuf.Duration',
  '.google.protobuf.Timestamp',
  '.google.protobuf.FieldMask',
  '.google.protobuf.DoubleValue',
  '.google.protobuf.FloatValue',
  '.google.protobuf.Int64Value',
  '.google.protobuf.UInt64Value',
  '.google.protobuf.Int32Value',
  '.google.protobuf.UInt32Value',
  '.google.protobuf.BoolValue',
  '.google.protobuf.StringValue',
  '.google.protobuf.BytesValue',
])

/** Scalar types whose proto3 JSON is a number (or a string holding one). */
export const NUMBERS: ReadonlySet<string> = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', 'int64', 'uint64', 'sint64', 'fixed64', 'sfixed64', 'float', 'double'])

const plans = new WeakMap<ProtoType, Plan>()

/** A field's resolved type is a message (an enum has no fields). */
export function isType(type: unknown): type is ProtoType {
  return typeof type === 'object' && type !== null && 'fieldsArray' in type
}

/** The type's plan (made once; the root was resolved when the protos were loaded). */
function planOf(type: ProtoType): Plan {
  const known = plans.get(type)
  if (known) return known
  const fields = new Map<string, FieldPlan>()
  for (const field of type.fieldsArray) {
    const resolved = field.resolve().resolvedType
    const kind: Kind = isType(resolved) ? 'message' : resolved ? (resolved.fullName === '.google.protobuf.NullValue' ? 'null' : 'enum') : field.type === 'bytes' ? 'bytes' : 'scalar'
    fields.set(field.name, { kind, repeated: field.repeated, map: field.map, type: resolved ?? undefined, scalar: field.type })
  }
  const plan = { special: SPECIAL.has(type.fullName), timestamp: type.fullName === TIMESTAMP, fields }
  plans.set(type, plan)
  return plan
}

/** One value of a field from its JSON (an element of a repeated or map field, or the field's own). */
function valueFromJson(field: FieldPlan, key: string, value: unknown): unknown {
  switch (field.kind) {
    case 'message':
      return fromJson(field.type as ProtoType, value)
    case 'enum':
      // As the library: a known number by its name; a string (known or not) as sent.
      if (typeof value === 'number') return (field.type as EnumLike).valuesById[value] ?? value
      if (typeof value === 'string') return value
      throw new Error(`field ${key}: an enum value must be a string or a number`)
    case 'null':
      return 'NULL_VALUE'
    case 'bytes':
      if (typeof value !== 'string') throw new Error(`field ${key} of type bytes cannot contain value ${String(value)}`)
      return Buffer.from(value, 'base64')
    case 'scalar': {
      const ok = NUMBERS.has(field.scalar) ? typeof value === 'number' || typeof value === 'string' : field.scalar === 'string' ? typeof value === 'string' : typeof value === 'boolean'
      // Inside repeated and map fields the library passes scalars through unchecked; so do we.
      if (!ok && !field.repeated && !field.map) throw new Error(`field ${key} of type ${field.scalar} cannot contain value ${String(value)}`)
      return value
    }
  }
}

const TIMESTAMP = '.google.protobuf.Timestamp'

/** An RFC 3339 time as Timestamp's `{seconds, nanos}`, as `proto3-json-serializer` reads it (its `googleProtobufTimestampFromProto3JSON`). */
export function timestampFromJson(json: string): { seconds?: number; nanos?: number } {
  const plain = plainUtc(json)
  if (plain) return plain
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?/.test(json)) throw new Error(`incorrect value ${json} passed as google.protobuf.Timestamp`)
  const seconds = Math.floor(new Date(json).getTime() / 1000)
  const fraction = json.split('.')[1]
  const nanos = fraction ? Number.parseInt(fraction.slice(0, -1).padEnd(9, '0')) : 0
  return { ...(seconds !== 0 ? { seconds } : {}), ...(nanos !== 0 ? { nanos } : {}) }
}

/** The digits of `text` from `start` to `end` as a number, or -1 if one is not a digit. */
function digits(text: string, start: number, end: number): number {
  let n = 0
  for (let i = start; i < end; i++) {
    const d = text.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}

/**
 * What `toISOString` writes (`YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z`, a day every month has) read by its
 * characters, with the library's result; undefined for anything else (the general rule above).
 * The library's date parser, regex and splits cost more than the rest of the message.
 */
function plainUtc(json: string): { seconds?: number; nanos?: number } | undefined {
  const n = json.length
  if (n < 20 || n > 30 || json.charCodeAt(n - 1) !== 90 /* Z */ || json[4] !== '-' || json[7] !== '-' || json[10] !== 'T' || json[13] !== ':' || json[16] !== ':') return undefined
  const year = digits(json, 0, 4)
  const month = digits(json, 5, 7)
  const day = digits(json, 8, 10)
  const hour = digits(json, 11, 13)
  const minute = digits(json, 14, 16)
  const second = digits(json, 17, 19)
  // Years below 100 mean 19xx to Date.UTC; days past 28 may not exist: the general rule decides those.
  if (year < 100 || month < 1 || month > 12 || day < 1 || day > 28 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined
  let nanos = 0
  if (n > 20) {
    if (json[19] !== '.' || n === 21) return undefined
    const fraction = digits(json, 20, n - 1)
    if (fraction < 0) return undefined
    nanos = fraction * 10 ** (9 - (n - 21))
  }
  const seconds = daysSinceEpoch(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
  if (seconds !== 0 && nanos !== 0) return { seconds, nanos }
  if (seconds !== 0) return { seconds }
  return nanos !== 0 ? { nanos } : {}
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar, as `Date.UTC` counts them
 * (Howard Hinnant's days_from_civil): every resource's times pass here, and the arithmetic costs
 * a fraction of Date.UTC's call.
 */
function daysSinceEpoch(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year
  const era = Math.floor(y / 400)
  const yearOfEra = y - era * 400
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

const ANY = '.google.protobuf.Any'

/** Whether an Any's JSON names (`@type`) a message type the protos loaded with `type` define. */
function anyTypeKnown(type: ProtoType, json: unknown): boolean {
  if (typeof json !== 'object' || json === null) return true
  const url = (json as Fields)['@type']
  // No type, or not a string: the library's own error, as before.
  if (typeof url !== 'string') return true
  const found = type.root.lookup(url.slice(url.lastIndexOf('/') + 1))
  return found !== null && 'fieldsArray' in found
}

/** protobuf.js's object form of a JSON value of `type` (what its `fromObject` reads), or null. */
function fromJson(type: ProtoType, json: unknown): unknown {
  const plan = planOf(type)
  // Every resource carries Timestamps: converted here (the library's own rule, below).
  if (plan.timestamp && typeof json === 'string') return timestampFromJson(json)
  // An Any of a type the shipped protos lack (an operation of a REST-only method, such as
  // PurgeMemories) has no bytes gRPC could carry: left out, so the message around it is still
  // answered (an operation without its metadata or result) rather than failing whole.
  if (type.fullName === ANY && !anyTypeKnown(type, json)) return null
  // A message instance: the enclosing `fromObject` keeps it as it is.
  if (plan.special) return fromProto3JSON(type, json as Parameters<typeof fromProto3JSON>[1])
  if (json === null) return null
  const result: Fields = {}
  for (const key of Object.keys(json as Fields)) {
    const field = plan.fields.get(key)
    if (!field) continue
    const value = (json as Fields)[key]
    if (field.repeated) {
      if (value === null) result[key] = []
      else if (!Array.isArray(value)) throw new Error(`expected an array for field ${key}`)
      else {
        const values = value.map((v: unknown) => valueFromJson(field, key, v))
        // An Any left out (above) is no element of the list.
        result[key] = (field.type as ProtoType | undefined)?.fullName === ANY ? values.filter((v) => v !== null) : values
      }
    } else if (field.map) {
      const map: Fields = {}
      // setOwn: a "__proto__" key stays a key (protobuf.js's fromObject keeps it so), not the map's prototype.
      for (const k of Object.keys(value as Fields)) setOwn(map, k, valueFromJson(field, key, (value as Fields)[k]))
      result[key] = map
    } else {
      result[key] = valueFromJson(field, key, value)
    }
  }
  return result
}

const DURATION = '.google.protobuf.Duration'

/**
 * The ranges timestamp.proto and duration.proto give their fields: a Timestamp from 0001-01-01 to
 * 9999-12-31 with nanos 0 to 999,999,999; a Duration within ±10,000 years with |nanos| below 10^9,
 * of the sign of its seconds. Outside them the JSON form would be another instant (nanos of 2e9
 * would read as .2 s) or none: refused, as REST refuses their JSON forms.
 */
function checkTime(type: string, message: Fields): void {
  const seconds = int64Number(message['seconds'])
  const nanos = int64Number(message['nanos'])
  const name = type.slice(1)
  if (type === TIMESTAMP) {
    if (nanos < 0 || nanos > 999_999_999) throw new Error(`a ${name} holds nanos ${nanos}; they are 0 to 999,999,999`)
    if (seconds < -62_135_596_800 || seconds > 253_402_300_799) throw new Error(`a ${name} holds seconds ${seconds}, outside 0001-01-01 to 9999-12-31`)
    return
  }
  if (Math.abs(nanos) > 999_999_999) throw new Error(`a ${name} holds nanos ${nanos}; they are -999,999,999 to 999,999,999`)
  if ((seconds > 0 && nanos < 0) || (seconds < 0 && nanos > 0)) throw new Error(`a ${name} holds seconds ${seconds} and nanos ${nanos}; the two have the same sign`)
  if (Math.abs(seconds) > 315_576_000_000) throw new Error(`a ${name} holds seconds ${seconds}, beyond 10,000 years`)
}

/**
 * A Duration's proto3 JSON: seconds with 0, 3, 6 or 9 fractional digits and the suffix "s"
 * ("1.5s" is written "1.500s"), negative when either part is (checkTime: they share a sign).
 */
function durationJson(seconds: number, nanos: number): string {
  const sign = seconds < 0 || nanos < 0 ? '-' : ''
  const whole = Math.abs(seconds)
  const n = Math.abs(nanos)
  if (n === 0) return `${sign}${whole}s`
  const digits = String(n).padStart(9, '0')
  const fraction = n % 1_000_000 === 0 ? digits.slice(0, 3) : n % 1000 === 0 ? digits.slice(0, 6) : digits
  return `${sign}${whole}.${fraction}s`
}

/** An integer field's value as protobuf.js decodes it (a number, or a Long for an int64), as a number; 0 when unset. */
function int64Number(value: unknown): number {
  if (typeof value === 'number') return value
  if (typeof value === 'object' && value !== null && 'toNumber' in value && typeof value.toNumber === 'function') return Number(value.toNumber())
  return value === undefined || value === null ? 0 : Number(value)
}

/** The message of `type` a proto3 JSON value stands for (null for JSON null). Throws when the JSON does not fit. */
export function messageFromJson(type: ProtoType, json: unknown): ReturnType<ProtoType['fromObject']> | null {
  const object = fromJson(type, json)
  return object === null ? null : type.fromObject(object as Fields)
}

/** A decoded message's proto3 JSON (enum names, int64 as strings, bytes as base64, the well-known types' own forms). */
export function messageToJson(type: ProtoType, message: object): unknown {
  const plan = planOf(type)
  const struct = STRUCT_TO_JSON.get(type.fullName)
  if (struct) return struct(message)
  if (plan.special) {
    if (type.fullName === TIMESTAMP || type.fullName === DURATION) checkTime(type.fullName, message as Fields)
    // The library drops a negative Duration's nanos ("-1.000000005s" came out "-1s").
    if (type.fullName === DURATION) return durationJson(int64Number((message as Fields)['seconds']), int64Number((message as Fields)['nanos']))
    return toProto3JSON(message as Parameters<typeof toProto3JSON>[0])
  }
  const result: Fields = {}
  for (const key of Object.keys(message)) {
    const value = (message as Fields)[key]
    const field = plan.fields.get(key)
    if (!field) continue
    if (value === null) {
      result[key] = null
    } else if (Array.isArray(value)) {
      // Repeated fields with no values are left out.
      if (value.length > 0) result[key] = value.map((v: unknown) => valueToJson(field, v, false))
    } else if (field.map) {
      const map: Fields = {}
      for (const k of Object.keys(value as Fields)) setOwn(map, k, valueToJson(field, (value as Fields)[k], false))
      result[key] = map
    } else if (field.kind === 'null') {
      result[key] = null
    } else {
      result[key] = valueToJson(field, value, true)
    }
  }
  return result
}

interface ValueMessage {
  readonly nullValue?: unknown
  readonly numberValue?: unknown
  readonly stringValue?: unknown
  readonly boolValue?: unknown
  readonly structValue?: StructMessage
  readonly listValue?: ListValueMessage
}
interface StructMessage {
  readonly fields?: Readonly<Record<string, ValueMessage>>
}
interface ListValueMessage {
  readonly values?: readonly ValueMessage[]
}

/**
 * google.protobuf.Struct, Value and ListValue as proto3 JSON, as `proto3-json-serializer` writes
 * them (an empty Value is null, a non-finite number its string), except that every key is set as
 * the object's own field (setOwn): the library's assignment turned a "__proto__" key into the
 * object's prototype, a request REST reads as given.
 */
function structValueToJson(value: ValueMessage): unknown {
  const has = (name: keyof ValueMessage): boolean => Object.hasOwn(value, name)
  if (has('nullValue')) return null
  if (has('numberValue') && typeof value.numberValue === 'number') return Number.isFinite(value.numberValue) ? value.numberValue : value.numberValue.toString()
  if (has('stringValue') && typeof value.stringValue === 'string') return value.stringValue
  if (has('boolValue') && typeof value.boolValue === 'boolean') return value.boolValue
  if (has('structValue') && typeof value.structValue === 'object') return structToJson(value.structValue)
  if (has('listValue') && typeof value.listValue === 'object') return listValueToJson(value.listValue)
  return null
}

function structToJson(struct: StructMessage): Fields {
  const out: Fields = {}
  const fields = struct.fields ?? {}
  for (const key of Object.keys(fields)) setOwn(out, key, structValueToJson(fields[key] as ValueMessage))
  return out
}

function listValueToJson(list: ListValueMessage): unknown[] {
  return (list.values ?? []).map(structValueToJson)
}

const STRUCT_TO_JSON: ReadonlyMap<string, (message: object) => unknown> = new Map<string, (message: object) => unknown>([
  ['.google.protobuf.Struct', (m) => structToJson(m as StructMessage)],
  ['.google.protobuf.Value', (m) => structValueToJson(m as ValueMessage)],
  ['.google.protobuf.ListValue', (m) => listValueToJson(m as ListValueMessage)],
])

/** One decoded value of a field as proto3 JSON (`single`: the field's own, not an element of a repeated or map field). */
function valueToJson(field: FieldPlan, value: unknown, single: boolean): unknown {
  if (field.kind === 'enum' || field.kind === 'null') {
    if (typeof value === 'number') return (field.type as EnumLike).valuesById[value] ?? value
    if (typeof value === 'string') return value
    throw new Error('an enum value must be a string or a number')
  }
  if (field.kind === 'message') return messageToJson(field.type as ProtoType, value as object)
  // As the library: a field's own NaN or Infinity as a string, an element's as it is.
  if (typeof value === 'number') return Number.isFinite(value) || !single ? value : value.toString()
  if (typeof value === 'string' || typeof value === 'boolean') return value
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')
  // int64 fields decode as Long.
  if (typeof value === 'object' && value !== null && value.constructor.name === 'Long') return String(value)
  throw new Error(`don't know how to convert value ${String(value)}`)
}
