import { QuarryError, describe } from '../errors.js'
import { isoDatetimeMs } from './datetime.js'

/** A datetime value in a filter (JSON-serializable): an ISO 8601 string. */
export interface DatetimeValue {
  readonly datetime: string
}

/** A value a comparison compares against. */
export type FilterScalar = string | number | boolean | DatetimeValue

/**
 * A declarative metadata filter: a JSON-serializable discriminated union on `op`. A comparison
 * whose value has a different type than the stored value matches nothing; it never
 * throws. Value indexes answer it without testing every record.
 */
export type Filter =
  | { readonly op: 'and'; readonly filters: readonly Filter[] }
  | { readonly op: 'or'; readonly filters: readonly Filter[] }
  | { readonly op: 'not'; readonly filter: Filter }
  | { readonly op: 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte'; readonly field: string; readonly value: FilterScalar }
  | { readonly op: 'in' | 'nin'; readonly field: string; readonly values: readonly FilterScalar[] }
  | { readonly op: 'includes' | 'excludes'; readonly field: string; readonly value: string }
  | { readonly op: 'exists'; readonly field: string }

const COMPARISONS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte'] as const

/**
 * Levels a filter may nest, at most, its comparisons counting as one (so 99 of and / or / not
 * around a comparison): far above any real filter, and it keeps validation, compilation and
 * evaluation (all recursive) far from the stack's limit.
 */
export const MAX_FILTER_DEPTH = 100

/**
 * Filters (and / or / not and comparisons, the filter itself included) one filter may hold, at
 * most: a part other than an equality, `in` or a range ORed into its parent costs a bitset of
 * every record, so an unbounded width is an unbounded search. The values of `in` and `nin` do not
 * count: each costs only its own labels.
 */
export const MAX_FILTER_PARTS = 20_000

function bad(path: string, message: string): QuarryError {
  return new QuarryError('INVALID_QUERY', `${path}: ${message}`, { path })
}

function checkScalar(value: unknown, path: string): void {
  if (typeof value === 'string' || typeof value === 'boolean') return
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw bad(path, `a number in a filter must be finite; received ${describe(value)}.`)
    return
  }
  if (typeof value === 'object' && value !== null && typeof (value as { datetime?: unknown }).datetime === 'string') {
    const keys = Object.keys(value)
    if (keys.length !== 1) throw bad(`${path}.${keys.find((k) => k !== 'datetime') ?? ''}`, `a datetime value is { datetime: "ISO 8601" } alone; remove the other keys.`)
    if (isoDatetimeMs((value as DatetimeValue).datetime) === undefined) throw bad(path, `datetime must be an ISO 8601 date or date and time of a real instant, like "2024-05-01", "2024-05-01T09:30:00Z" or "2024-05-01T09:30:00+02:00" (without an offset: UTC); received ${describe((value as DatetimeValue).datetime)}.`)
    return
  }
  if (value instanceof Date) throw bad(path, `a filter is JSON: give a Date as { datetime: date.toISOString() }.`)
  throw bad(path, `a filter value is a string, a finite number, a boolean or { datetime: "ISO 8601" }; received ${describe(value)}.`)
}

function checkField(field: unknown, path: string): void {
  if (typeof field !== 'string' || field === '') throw bad(`${path}.field`, `field must be a metadata key (a non-empty string); received ${describe(field)}.`)
}

/** Checks a filter's structure up front, its nesting included; returns it typed. */
export function validateFilter(filter: unknown, path = 'filter'): Filter {
  return check(filter, path, 1, { parts: 0 })
}

function check(filter: unknown, path: string, depth: number, seen: { parts: number }): Filter {
  if (++seen.parts > MAX_FILTER_PARTS) {
    throw bad(path, `a filter holds at most ${MAX_FILTER_PARTS} filters (and / or / not and comparisons, nested ones included); this one holds more. Give many values of one field as one { op: 'in', field, values: [...] } (or 'nin'): its values do not count.`)
  }
  if (depth > MAX_FILTER_DEPTH) throw bad(path, `filters nest at most ${MAX_FILTER_DEPTH} levels deep, the comparison at the bottom included (${MAX_FILTER_DEPTH - 1} of and / or / not around it); this one goes deeper here. Flatten it: and / or take any number of filters.`)
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
    throw bad(path, `a filter is an object like { op: 'eq', field: 'genre', value: 'drama' } or a function; received ${describe(filter)}.`)
  }
  const f = filter as Record<string, unknown>
  const keys = typeof f.op === 'string' && Object.hasOwn(KEYS, f.op) ? (KEYS[f.op] as readonly string[]) : (COMPARISONS as readonly unknown[]).includes(f.op) ? (KEYS['eq'] as readonly string[]) : undefined
  if (keys === undefined) throw bad(`${path}.op`, `op must be one of and, or, not, ${COMPARISONS.join(', ')}, in, nin, includes, excludes, exists; received ${describe(f.op)}.`)
  // Unknown keys before missing ones: a misspelt key (`feild`, `values` for `value`) is named, where
  // checking first would report only the key it left missing ("field ... received undefined").
  for (const key of Object.keys(f)) {
    if (keys.includes(key)) continue
    const missing = keys.filter((k) => !Object.hasOwn(f, k))
    const hint = missing.length === 0 ? '.' : missing.length === 1 ? `, and ${missing[0]} is missing: is "${key}" a misspelt ${missing[0]}?` : `, and ${missing.join(', ')} are missing.`
    throw bad(`${path}.${key}`, `a '${String(f.op)}' filter takes ${keys.join(', ')}; "${key}" is none of them${hint}`)
  }
  switch (f.op) {
    case 'and':
    case 'or':
      if (!Array.isArray(f.filters)) throw bad(`${path}.filters`, `'${f.op}' takes filters: an array of filters.`)
      f.filters.forEach((sub, i) => check(sub, `${path}.filters[${i}]`, depth + 1, seen))
      break
    case 'not':
      check(f.filter, `${path}.filter`, depth + 1, seen)
      break
    case 'in':
    case 'nin':
      checkField(f.field, path)
      if (!Array.isArray(f.values)) throw bad(`${path}.values`, `'${f.op}' takes values: an array.`)
      f.values.forEach((v, i) => checkScalar(v, `${path}.values[${i}]`))
      break
    case 'includes':
    case 'excludes':
      checkField(f.field, path)
      if (typeof f.value !== 'string') throw bad(`${path}.value`, `'${f.op}' tests a string list for a string; received ${describe(f.value)}.`)
      break
    case 'exists':
      checkField(f.field, path)
      break
    default:
      // One of COMPARISONS (any other op was refused above).
      checkField(f.field, path)
      checkScalar(f.value, `${path}.value`)
  }
  return filter as Filter
}

/** The keys each op's filter takes (every comparison those of `eq`). */
const KEYS: Readonly<Record<string, readonly string[]>> = {
  and: ['op', 'filters'],
  or: ['op', 'filters'],
  not: ['op', 'filter'],
  in: ['op', 'field', 'values'],
  nin: ['op', 'field', 'values'],
  includes: ['op', 'field', 'value'],
  excludes: ['op', 'field', 'value'],
  exists: ['op', 'field'],
  eq: ['op', 'field', 'value'],
}
