import { parseRfc3339 } from './clock.js'
import { omitUndefined } from './omit.js'
import { DEFAULT_LIMITS, checkCount, checkLength, tooDeep, tooMany, type Limit } from './limits.js'
import { isPlainObject } from './json-object.js'
import { invalidArgument, invalidPayload, type RpcFailure } from './status.js'

/**
 * A small proto3-JSON reader for requests: each method declares its request message as a schema,
 * and `readMessage` checks a request against it the way Google's front end does — lowerCamelCase
 * or snake_case names, unknown names refused, enums as names or numbers, int64 as numbers or
 * decimal strings, `null` as unset, at most one member of a oneof — and returns it typed. Every
 * string, list and map is bounded (the limit its schema declares, else `DEFAULT_LIMITS`) and so
 * is the nesting of every value, so reading never does unbounded work or recursion.
 *
 * Presence, as proto3 has it: a singular scalar field (string, bool, number, enum) without the
 * `optional` label and outside any oneof has no presence — its zero value ('', false, 0, the
 * enum's 0) cannot be told from "unset" ("Under the implicit presence discipline, the default
 * value is synonymous with 'not present'", https://protobuf.dev/programming-guides/field_presence;
 * gRPC never even sends it), so the reader returns it as unset and every handler sees one
 * meaning: `resultsCount: 0` is the default, like no resultsCount. Fields with presence keep their zero: `optional` ones (`optional(float)`, for
 * `optional float alpha`) and oneof members (`numericValue: 0` is a value). The protos test
 * checks each schema field's presence against Google's protos.
 */
type ScalarType =
  | { readonly t: 'string'; readonly max?: Limit; readonly presence?: true }
  | { readonly t: 'bytes'; readonly presence?: true }
  | { readonly t: 'bool'; readonly presence?: true }
  | { readonly t: 'int32'; readonly presence?: true }
  | { readonly t: 'int64'; readonly presence?: true }
  | { readonly t: 'float'; readonly presence?: true }
  | { readonly t: 'double'; readonly presence?: true }
  | { readonly t: 'enum'; readonly name: string; readonly values: Readonly<Record<string, number>>; readonly presence?: true }

export type FieldType =
  | ScalarType
  | { readonly t: 'timestamp' }
  | { readonly t: 'duration' }
  | { readonly t: 'fieldMask' }
  | { readonly t: 'repeated'; readonly of: FieldType; readonly max?: Limit }
  | { readonly t: 'map'; readonly of: FieldType; readonly max?: Limit; readonly keyMax?: Limit }
  | { readonly t: 'opaque'; readonly name: string }
  | MessageType

export interface MessageType {
  readonly t: 'message'
  readonly name: string
  readonly fields: Readonly<Record<string, FieldType>>
  readonly oneofs?: readonly (readonly string[])[]
}

/** The TypeScript type a schema reads to. Every field is optional, as in proto3. */
export type Infer<T> = T extends { t: 'string' | 'bytes' | 'timestamp' }
  ? string
  : T extends { t: 'bool' }
    ? boolean
    : T extends { t: 'int32' | 'int64' | 'float' | 'double' | 'duration' }
      ? number
      : T extends { t: 'fieldMask' }
        ? string[]
        : T extends { t: 'enum'; values: infer V }
          ? keyof V & string
          : T extends { t: 'repeated'; of: infer I }
            ? Infer<I>[]
            : T extends { t: 'map'; of: infer I }
              ? Record<string, Infer<I>>
              : T extends { t: 'opaque' }
                ? Readonly<Record<string, unknown>>
                : T extends { t: 'message'; fields: infer F }
                ? { [K in keyof F]?: Infer<F[K]> }
                : never

export const string = { t: 'string' } as const
/** bytes, as proto3 JSON writes them: base64 text (standard or URL-safe, padded or not), kept as given. */
export const bytes = { t: 'bytes' } as const
export const bool = { t: 'bool' } as const
export const int32 = { t: 'int32' } as const
export const int64 = { t: 'int64' } as const
export const float = { t: 'float' } as const
export const double = { t: 'double' } as const
export const timestamp = { t: 'timestamp' } as const
export const duration = { t: 'duration' } as const
export const fieldMask = { t: 'fieldMask' } as const

export function enumOf<const V extends Record<string, number>>(name: string, values: V): { readonly t: 'enum'; readonly name: string; readonly values: V } {
  return { t: 'enum', name, values }
}
/**
 * A proto3 `optional` scalar (explicit presence): a zero it is given is a value, not "unset"
 * (`optional float alpha`: 0 means sparse only, not the default 0.5).
 */
export function optional<const T extends ScalarType>(type: T): T & { readonly presence: true } {
  return { ...type, presence: true }
}

/** Whether a field has presence: `optional`, or a member of a oneof. */
export function hasPresence(message: MessageType, field: string): boolean {
  const type = message.fields[field]
  return (type !== undefined && 'presence' in type && type.presence === true) || (message.oneofs ?? []).some((group) => group.includes(field))
}

/** A scalar's zero value: '', false, 0, or the enum value numbered 0. */
function isZero(type: FieldType, value: unknown): boolean {
  switch (type.t) {
    case 'string':
    case 'bytes':
      return value === ''
    case 'bool':
      return value === false
    case 'int32':
    case 'int64':
    case 'float':
    case 'double':
      // ProtoJSON reads -0 as 0.
      return value === 0
    case 'enum':
      return typeof value === 'string' && type.values[value] === 0
    default:
      return false
  }
}

/** A string field of at most `max` characters (instead of `DEFAULT_LIMITS.string`). */
export function text(max: Limit): { readonly t: 'string'; readonly max: Limit } {
  return { t: 'string', max }
}
/** A list field; `max` bounds its entries (instead of `DEFAULT_LIMITS.entries`). */
export function repeated<const I extends FieldType>(of: I, max?: Limit): { readonly t: 'repeated'; readonly of: I; readonly max?: Limit } {
  return { t: 'repeated', of, ...omitUndefined({ max }) }
}
/** A map field; `entries` bounds its size and `keys` the characters of a key (instead of the defaults). */
export function mapOf<const I extends FieldType>(
  of: I,
  limits: { readonly entries?: Limit; readonly keys?: Limit } = {},
): { readonly t: 'map'; readonly of: I; readonly max?: Limit; readonly keyMax?: Limit } {
  return { t: 'map', of, ...omitUndefined({ max: limits.entries, keyMax: limits.keys }) }
}
/** A message Quarry does not interpret (another backend's config, say): an object of whatever shape, kept as given. */
export function opaque(name: string): { readonly t: 'opaque'; readonly name: string } {
  return { t: 'opaque', name }
}

/**
 * The same message without some fields, recursively by message name: how an older API surface
 * (v1) is derived from a newer one (v1beta1).
 */
export function without<T extends FieldType>(type: T, removed: Readonly<Record<string, readonly string[]>>, rename: (name: string) => string = (n) => n): T {
  if (type.t === 'repeated' || type.t === 'map') return { ...type, of: without(type.of, removed, rename) }
  if (type.t === 'enum' || type.t === 'opaque') return { ...type, name: rename(type.name) }
  if (type.t !== 'message') return type
  const drop = removed[type.name] ?? []
  const fields = Object.fromEntries(Object.entries(type.fields).filter(([k]) => !drop.includes(k)).map(([k, v]) => [k, without(v, removed, rename)]))
  const oneofs = (type.oneofs ?? []).map((o) => o.filter((k) => !drop.includes(k))).filter((o) => o.length > 0)
  return { ...type, name: rename(type.name), fields, oneofs }
}

export function message<const F extends Record<string, FieldType>>(name: string, fields: F, oneofs: readonly (readonly (keyof F & string)[])[] = []): { readonly t: 'message'; readonly name: string; readonly fields: F; readonly oneofs: readonly (readonly string[])[] } {
  return { t: 'message', name, fields, oneofs }
}

/** `display_name` → `displayName`. */
export function camelCase(name: string): string {
  // Most names come in lowerCamelCase already (every JSON client sends them so): no regex run.
  return name.includes('_') ? name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()) : name
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`
}

const SHOWN = 60

/**
 * A received value as JSON for an error message, cut at 60 characters. It is written piece by
 * piece and stops once long enough — never by stringifying the whole value — so a huge or deeply
 * nested value costs what a small one does (each level writes a bracket: recursion ends with the
 * budget).
 */
function shown(value: unknown): string {
  let text = ''
  const full = (): boolean => text.length > SHOWN
  const write = (v: unknown): void => {
    if (typeof v === 'string') text += JSON.stringify(v.length > SHOWN ? v.slice(0, SHOWN + 1) : v)
    // Infinity from a JSON body was a number past the largest double (1e400), not the null JSON writes for it.
    else if (typeof v === 'number') text += String(v)
    else if (typeof v === 'boolean' || typeof v === 'bigint') text += String(v)
    else if (v === null || typeof v !== 'object') text += 'null'
    else if (v instanceof Date) text += Number.isNaN(v.getTime()) ? 'null' : JSON.stringify(v.toISOString())
    else if (Array.isArray(v)) {
      text += '['
      for (let i = 0; i < v.length && !full(); i++) {
        if (i > 0) text += ','
        write(v[i])
      }
      if (!full()) text += ']'
    } else {
      text += '{'
      let first = true
      for (const k in v) {
        if (full()) break
        if (!Object.hasOwn(v, k)) continue
        const member: unknown = (v as Record<string, unknown>)[k]
        // JSON leaves out members it cannot write.
        if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue
        text += `${first ? '' : ','}${JSON.stringify(k.length > SHOWN ? k.slice(0, SHOWN + 1) : k)}:`
        first = false
        write(member)
      }
      if (!full()) text += '}'
    }
  }
  if (value === undefined) text = 'undefined'
  else if (typeof value === 'function') text = 'a function'
  else if (typeof value === 'symbol') text = String(value)
  else write(value)
  return text.length > SHOWN ? `${text.slice(0, SHOWN - 3)}...` : text
}

function invalidValue(path: string, type: string, value: unknown): Error {
  return invalidPayload(path, `Invalid value at '${path}' (${type}), ${shown(value)}`)
}

const INT32_MAX = 2 ** 31 - 1
/** Base64 as proto3 JSON reads bytes: the standard or the URL-safe alphabet, with or without padding. */
const BASE64 = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/

/**
 * A number that is not finite, said as what the client sent: JSON.parse reads a number past the
 * largest double (1e400) as Infinity, which JSON itself would write as null; NaN comes from
 * callers in process only.
 */
function notFinite(path: string, type: string, n: number, limit: string): Error {
  const sent = Number.isNaN(n) ? 'NaN' : `a ${n < 0 ? 'negative ' : ''}number past the largest double (about 1.8e308 in magnitude; read as ${String(n)})`
  return invalidPayload(path, `Invalid value at '${path}' (${type}), ${sent}: ${limit}`)
}

function readInteger(value: unknown, path: string, type: 'TYPE_INT32' | 'TYPE_INT64'): number {
  if (typeof value === 'number' && !Number.isFinite(value)) throw notFinite(path, type, value, `${type === 'TYPE_INT32' ? 'an int32' : 'an int64'} is a whole number.`)
  const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw invalidValue(path, type, value)
  if (type === 'TYPE_INT32' && (n > INT32_MAX || n < -INT32_MAX - 1)) throw invalidValue(path, type, value)
  return n
}

function readFloat(value: unknown, path: string, type: 'TYPE_FLOAT' | 'TYPE_DOUBLE'): number {
  if (typeof value === 'number' && !Number.isFinite(value)) throw notFinite(path, type, value, type === 'TYPE_FLOAT' ? 'a float holds at most about 3.4e38 in magnitude.' : 'a double holds at most about 1.8e308 in magnitude.')
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  if (typeof n !== 'number' || !Number.isFinite(n)) throw invalidValue(path, type, value)
  if (type === 'TYPE_DOUBLE') return n
  const f = float32(n)
  if (!Number.isFinite(f)) throw invalidPayload(path, `Invalid value at '${path}' (TYPE_FLOAT), ${shown(value)}: a float holds at most about 3.4e38 in magnitude.`)
  return f
}

/**
 * A `float` field's value as Google holds it, a 32-bit float, written as the shortest decimal that
 * reads back as it, as proto3 JSON prints a float ("0.1", not 0.10000000149011612): the same
 * number whether it came as JSON or as float bits over gRPC, so that an equality filter written one
 * way matches a value stored the other. Infinity beyond the float range.
 */
export function float32(n: number): number {
  const f = Math.fround(n)
  if (!Number.isFinite(f) || f === 0) return f
  // Nine significant digits always read back (IEEE 754 single precision).
  for (let digits = 1; digits < 9; digits++) {
    const shortest = Number(f.toPrecision(digits))
    if (Math.fround(shortest) === f) return shortest
  }
  return Number(f.toPrecision(9))
}

/**
 * google.protobuf.Duration's range: seconds "Must be from -315,576,000,000 to +315,576,000,000
 * inclusive" (about 10,000 years), nanos from -999,999,999 to +999,999,999 and of the seconds' sign
 * (duration.proto).
 */
export const MAX_DURATION_SECONDS = 315_576_000_000

/** Duration as proto3 JSON ("12.5s") or the Node clients' { seconds, nanos }; read to seconds, within Duration's range. */
function readDuration(value: unknown, path: string): number {
  let read: number | undefined
  if (typeof value === 'string') {
    const m = /^(-?\d+(?:\.\d{1,9})?)s$/.exec(value)
    if (m?.[1] !== undefined) read = Number(m[1])
  } else if (typeof value === 'object' && value !== null) {
    // The Node clients' object form: { seconds, nanos }.
    const { seconds = 0, nanos = 0, ...rest } = value as Record<string, unknown>
    if (Object.keys(rest).length === 0) {
      const s = readInteger(seconds, `${path}.seconds`, 'TYPE_INT64')
      const ns = readInteger(nanos, `${path}.nanos`, 'TYPE_INT32')
      if (Math.abs(ns) > 999_999_999 || (s > 0 && ns < 0) || (s < 0 && ns > 0)) throw invalidValue(`${path}.nanos`, 'TYPE_INT32', nanos)
      read = s + ns / 1e9
    }
  }
  if (read === undefined) throw invalidPayload(path, `Invalid value at '${path}' (type.googleapis.com/google.protobuf.Duration), ${shown(value)}: give seconds with an "s" suffix, like "3600s".`)
  if (Math.abs(read) > MAX_DURATION_SECONDS) {
    throw invalidPayload(path, `Invalid value at '${path}' (type.googleapis.com/google.protobuf.Duration), ${shown(value)}: a Duration is at most ${MAX_DURATION_SECONDS}s (about 10,000 years) either way.`)
  }
  return read
}

/** google.protobuf.Timestamp's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z. */
export const MIN_TIMESTAMP_MS = -62_135_596_800_000
export const MAX_TIMESTAMP_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/**
 * Timestamp as RFC 3339 text naming a real instant (no February 30, no 24:00: parseRfc3339), a
 * Date, or the Node clients' { seconds, nanos }; read to RFC 3339 (UTC, Z).
 */
function readTimestamp(value: unknown, path: string): string {
  let ms: number | undefined
  if (typeof value === 'string') ms = parseRfc3339(value)
  else if (value instanceof Date) ms = value.getTime()
  else if (typeof value === 'object' && value !== null) {
    const { seconds = 0, nanos = 0, ...rest } = value as Record<string, unknown>
    if (Object.keys(rest).length === 0) ms = readInteger(seconds, `${path}.seconds`, 'TYPE_INT64') * 1000 + Math.floor(readInteger(nanos, `${path}.nanos`, 'TYPE_INT32') / 1e6)
  }
  if (ms === undefined || !Number.isFinite(ms) || ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS) {
    throw invalidPayload(path, `Invalid value at '${path}' (type.googleapis.com/google.protobuf.Timestamp), ${shown(value)}: give RFC 3339 text of a real date and time like "2024-05-01T12:00:00Z", between years 1 and 9999.`)
  }
  return new Date(ms).toISOString()
}

/** FieldMask as its JSON form ("a,b.c"), the object form { paths: [...] }, or an array of paths; paths read to lowerCamelCase. */
function readFieldMask(value: unknown, path: string): string[] {
  let paths: unknown = value
  if (typeof value === 'string') {
    const long = checkLength(value, DEFAULT_LIMITS.string, path)
    if (long) throw long
    paths = value === '' ? [] : value.split(',')
  } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { paths: p, ...rest } = value as Record<string, unknown>
    if (Object.keys(rest).length > 0) throw invalidArgument(path, `a FieldMask has only "paths"; received ${shown(Object.keys(rest))}.`)
    paths = p ?? []
  }
  if (!Array.isArray(paths)) throw invalidValue(path, 'type.googleapis.com/google.protobuf.FieldMask', value)
  const over = checkCount(paths.length, DEFAULT_LIMITS.entries, path, 'paths')
  if (over) throw over
  return paths.map((p: unknown, i) => {
    if (typeof p !== 'string') throw invalidValue(path, 'type.googleapis.com/google.protobuf.FieldMask', value)
    const long = checkLength(p, DEFAULT_LIMITS.key, `${path}.paths[${i}]`)
    if (long) throw long
    return p.trim().split('.').map(camelCase).join('.')
  })
}

function readEnum(type: { readonly name: string; readonly values: Readonly<Record<string, number>> }, value: unknown, path: string): string {
  if (typeof value === 'string' && Object.hasOwn(type.values, value)) return value
  if (typeof value === 'number') {
    for (const [name, n] of Object.entries(type.values)) if (n === value) return name
  }
  throw invalidPayload(path, `Invalid value at '${path}' (type.googleapis.com/${type.name}), ${shown(value)}; expected one of ${Object.keys(type.values).join(', ')}.`)
}

/** Reads one value of a field type (value is not null/undefined) at nesting `depth`. */
function readValue(type: FieldType, value: unknown, path: string, depth: number): unknown {
  if (depth > DEFAULT_LIMITS.depth.max) throw tooDeep(path)
  switch (type.t) {
    case 'string': {
      if (typeof value !== 'string') throw invalidValue(path, 'TYPE_STRING', value)
      const over = checkLength(value, type.max ?? DEFAULT_LIMITS.string, path)
      if (over) throw over
      return value
    }
    case 'bytes': {
      if (typeof value !== 'string') throw invalidValue(path, 'TYPE_BYTES', value)
      const over = checkLength(value, DEFAULT_LIMITS.string, path)
      if (over) throw over
      if (!BASE64.test(value)) throw invalidPayload(path, `Invalid value at '${path}' (TYPE_BYTES), ${shown(value)}: bytes are base64 text.`)
      return value
    }
    case 'bool':
      if (typeof value === 'boolean') return value
      if (value === 'true' || value === 'false') return value === 'true'
      throw invalidValue(path, 'TYPE_BOOL', value)
    case 'int32':
      return readInteger(value, path, 'TYPE_INT32')
    case 'int64':
      return readInteger(value, path, 'TYPE_INT64')
    case 'float':
    case 'double':
      return readFloat(value, path, type.t === 'float' ? 'TYPE_FLOAT' : 'TYPE_DOUBLE')
    case 'duration':
      return readDuration(value, path)
    case 'timestamp':
      return readTimestamp(value, path)
    case 'fieldMask':
      return readFieldMask(value, path)
    case 'enum':
      return readEnum(type, value, path)
    case 'repeated': {
      if (!Array.isArray(value)) throw invalidPayload(path, `Invalid value at '${path}': expected a list; received ${shown(value)}.`)
      // Counted before any element is read: an oversized list costs nothing.
      const over = checkCount(value.length, type.max ?? DEFAULT_LIMITS.entries, path)
      if (over) throw over
      return value.map((item, i) => {
        if (item === null || item === undefined) throw invalidPayload(`${path}[${i}]`, `Invalid value at '${path}[${i}]': a list element cannot be null.`)
        return readValue(type.of, item, `${path}[${i}]`, depth + 1)
      })
    }
    case 'map': {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidPayload(path, `Invalid value at '${path}': expected an object (a map); received ${shown(value)}.`)
      const entries = Object.entries(value)
      const over = checkCount(entries.length, type.max ?? DEFAULT_LIMITS.entries, path)
      if (over) throw over
      const out: Record<string, unknown> = {}
      for (const [k, v] of entries) {
        // The key is checked before it becomes part of a path or a message.
        const long = checkLength(k, type.keyMax ?? DEFAULT_LIMITS.key, path, `a key of '${path}'`)
        if (long) throw long
        if (v === null || v === undefined) throw invalidPayload(`${path}.${k}`, `Invalid value at '${path}.${k}': a map value cannot be null.`)
        Object.defineProperty(out, k, { value: readValue(type.of, v, `${path}.${k}`, depth + 1), enumerable: true, writable: true, configurable: true })
      }
      return out
    }
    case 'opaque':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidPayload(path, `Invalid value at '${path}' (type.googleapis.com/${type.name}): expected an object.`)
      checkOpaque(value, path, depth, type.name)
      return value
    case 'message':
      return readMessageValue(type, value, path, depth)
  }
}

/**
 * Bounds what an opaque message holds — nesting, strings, entries, values in all — walking it
 * with an explicit stack: Quarry keeps it as given and writes it back (JSON, snapshots), so it
 * must be as bounded as every field it reads.
 */
function checkOpaque(root: object, path: string, depth: number, name: string): void {
  interface Visit {
    readonly value: unknown
    readonly key: string
    readonly parent: Visit | undefined
    readonly depth: number
  }
  const pathOf = (v: Visit): string => {
    const keys: string[] = []
    for (let at: Visit | undefined = v; at?.parent !== undefined; at = at.parent) keys.push(at.key)
    return keys.reverse().reduce((p, k) => (k.startsWith('[') ? `${p}${k}` : `${p}.${k}`), path)
  }
  const stack: Visit[] = [{ value: root, key: '', parent: undefined, depth }]
  // Values are counted as they are found, so the stack itself never outgrows the limit.
  let values = 1
  const found = (n: number): void => {
    values += n
    if (values > DEFAULT_LIMITS.opaqueValues.max) throw tooMany(values, DEFAULT_LIMITS.opaqueValues, path, 'values or more')
  }
  for (let v = stack.pop(); v !== undefined; v = stack.pop()) {
    // The path is built only for a failure: checking stays linear in the values.
    if (v.depth > DEFAULT_LIMITS.depth.max) throw tooDeep(pathOf(v))
    const value = v.value
    // JSON.parse reads 1e999 as Infinity (in-process callers may pass NaN): neither survives a
    // snapshot as a number (JSON writes null), so the stored type would change.
    if (typeof value === 'number' && !Number.isFinite(value)) {
      throw invalidPayload(pathOf(v), `Invalid value at '${pathOf(v)}' (type.googleapis.com/${name}): a number must be finite; NaN and Infinity have no JSON form. Send a finite number, or the text as a string.`)
    }
    if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') throw notJsonData(pathOf(v), name, `a ${typeof value}`)
    // A key whose value is undefined is absent, in memory and in JSON alike; a list element (or a
    // hole) cannot be absent: kept in memory, it would be written as null to a snapshot.
    if (value === undefined && v.parent !== undefined && Array.isArray(v.parent.value)) throw notJsonData(pathOf(v), name, 'undefined (a list element, or a hole in the list)')
    if (typeof value === 'string') {
      if (value.length > DEFAULT_LIMITS.string.max) {
        const over = checkLength(value, DEFAULT_LIMITS.string, pathOf(v))
        if (over) throw over
      }
    } else if (Array.isArray(value)) {
      if (value.length > DEFAULT_LIMITS.entries.max) throw tooMany(value.length, DEFAULT_LIMITS.entries, pathOf(v))
      found(value.length)
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: `[${i}]`, parent: v, depth: v.depth + 1 })
    } else if (typeof value === 'object' && value !== null) {
      // A Date, a Map or a class instance would be kept as given in process and written otherwise
      // (or not at all) to a snapshot; a `toJSON` function is refused as a function.
      if (!Array.isArray(value) && !isPlainObject(value)) throw notJsonData(pathOf(v), name, `an instance of ${className(value)}`)
      const keys = Object.keys(value)
      if (keys.length > DEFAULT_LIMITS.entries.max) throw tooMany(keys.length, DEFAULT_LIMITS.entries, pathOf(v))
      found(keys.length)
      for (const k of keys) {
        if (k.length <= DEFAULT_LIMITS.key.max) continue
        const long = checkLength(k, DEFAULT_LIMITS.key, pathOf(v), `a key of '${pathOf(v)}'`)
        if (long) throw long
      }
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i] ?? ''
        stack.push({ value: (value as Record<string, unknown>)[k], key: k, parent: v, depth: v.depth + 1 })
      }
    }
  }
}

/** A class's name for a message (a constructor's own name, never its source). */
function className(value: object): string {
  const ctor: unknown = (value as { constructor?: unknown }).constructor
  return typeof ctor === 'function' && typeof ctor.name === 'string' && ctor.name !== '' ? ctor.name.slice(0, 40) : 'a class'
}

function notJsonData(path: string, name: string, what: string): RpcFailure {
  return invalidPayload(path, `Invalid value at '${path}' (type.googleapis.com/${name}): ${what} is not JSON data; a value here is an object, a list, text, a number, true, false or null.`)
}

function readMessageValue(type: MessageType, value: unknown, path: string, depth: number): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidPayload(path, `Invalid value at '${path === '' ? type.name : path}' (type.googleapis.com/${type.name}): expected an object; received ${shown(value)}.`)
  }
  const out: Record<string, unknown> = {}
  const given = new Set<string>()
  for (const [rawKey, v] of Object.entries(value)) {
    const key = camelCase(rawKey)
    const fieldType = Object.hasOwn(type.fields, key) ? type.fields[key] : undefined
    if (fieldType === undefined) {
      const where = path === '' ? '' : ` at '${path}'`
      throw invalidPayload(path, `Invalid JSON payload received. Unknown name ${shown(rawKey)}${where}: Cannot find field.`)
    }
    if (v === null || v === undefined) continue
    if (given.has(key)) throw invalidArgument(join(path, key), `Invalid JSON payload received. Field "${key}" is given twice (as lowerCamelCase and snake_case).`)
    given.add(key)
    const read = readValue(fieldType, v, join(path, key), depth + 1)
    // A zero without presence is "unset" (see the top of this file).
    if (isZero(fieldType, read) && !hasPresence(type, key)) continue
    out[key] = read
  }
  for (const group of type.oneofs ?? []) {
    const set = group.filter((k) => Object.hasOwn(out, k))
    if (set.length > 1) {
      throw invalidArgument(join(path, set[1] ?? ''), `Invalid JSON payload received. Only one of ${set.map((k) => `"${k}"`).join(' and ')} may be set (they are one oneof).`)
    }
  }
  return out
}

/** Reads a request (or any message) against its schema; throws an INVALID_ARGUMENT RpcFailure. */
export function readMessage<const M extends MessageType>(type: M, value: unknown, path = ''): Infer<M> {
  return readMessageValue(type, value ?? {}, path, 0) as Infer<M>
}
