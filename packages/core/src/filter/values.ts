import type { FilterScalar } from './ast.js'
import { isoDatetimeMs } from './datetime.js'

/** A metadata value: a string, number, boolean, string list or datetime. */
export type MetadataValue = string | number | boolean | readonly string[] | Date

/** Metadata of a record: flat, JSON-serializable key/value pairs. */
export type Metadata = Record<string, MetadataValue>

/** The type of a metadata value as filters see it. Comparisons only match within one kind. */
export type ValueKind = 'string' | 'number' | 'boolean' | 'datetime' | 'list'

/** A comparable form: kind plus a primitive (datetimes as epoch milliseconds). */
export interface Typed {
  readonly kind: ValueKind
  readonly value: string | number | boolean
}

export function storedTyped(value: MetadataValue | undefined): Typed | undefined {
  if (value === undefined) return undefined
  if (typeof value === 'string') return { kind: 'string', value }
  if (typeof value === 'number') return { kind: 'number', value }
  if (typeof value === 'boolean') return { kind: 'boolean', value }
  if (value instanceof Date) return { kind: 'datetime', value: value.getTime() }
  return { kind: 'list', value: '' }
}

export function filterTyped(value: FilterScalar): Typed {
  if (typeof value === 'string') return { kind: 'string', value }
  if (typeof value === 'number') return { kind: 'number', value }
  if (typeof value === 'boolean') return { kind: 'boolean', value }
  // Checked by validateFilter: every filter is, before it is compiled.
  return { kind: 'datetime', value: isoDatetimeMs(value.datetime) ?? Number.NaN }
}

/** Kinds whose values are ordered (lt, lte, gt, gte apply). */
export function ordered(kind: ValueKind): boolean {
  return kind === 'string' || kind === 'number' || kind === 'datetime'
}
