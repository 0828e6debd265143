import type { Filter, FilterScalar } from '@quarry/core'
import { printLiteral, type FilterExpr, type Literal } from './aip160.js'
import { parseRfc3339, RFC3339_SHAPE } from './clock.js'
import { invalidArgument } from './status.js'

/** How a filter key is typed where a schema declares it; undefined where nothing does. */
export type KeyType = 'string' | 'number' | 'boolean' | 'datetime' | 'list'

interface FilterFields {
  /** The request field holding the filter, named by its errors. */
  readonly path: string
  /** The core metadata field a filter key reads. */
  readonly fieldOf: (key: string) => string
  /** The declared type of a key, if any. */
  readonly typeOf: (key: string) => KeyType | undefined
  /**
   * Whether `key:value` is refused on a key declared of one value (not a list): it could match
   * nothing, so its `NOT` would match everything (a purge by it would delete all). `key:*` is fine.
   */
  readonly hasOnListsOnly?: boolean
  /** A comparison a key makes in its own way (Memory Bank's `scope = "<JSON>"`), or undefined for the usual one. */
  readonly compare?: (e: Extract<FilterExpr, { k: 'cmp' }>) => Filter | undefined
}

/**
 * A literal as the value a key is compared with: a quoted RFC 3339 timestamp compares as a
 * datetime unless the key is declared a string; a number or boolean compares as text where the
 * key is declared a string; everything else keeps its own type (and so matches nothing where the
 * stored value has another type — Google's rule). A key declared a timestamp takes a quoted RFC
 * 3339 time only: anything else ("2025-01-01", "yesterday", 5) could match nothing, so its `NOT`
 * would match everything — a purge by such a filter would delete every memory.
 */
function scalarOf(value: Literal, type: KeyType | undefined, key: string, path: string): FilterScalar {
  const rfc3339 = value.t === 'string' && parseRfc3339(value.v) !== undefined
  if (type !== 'string' && value.t === 'string' && !rfc3339 && RFC3339_SHAPE.test(value.v)) {
    throw invalidArgument(path, `${printLiteral(value)} names no real instant (a day past its month's end, or an hour, minute or second out of range): give a real RFC 3339 time.`)
  }
  if (type === 'datetime' && !rfc3339) {
    throw invalidArgument(path, `${key} is a timestamp: compare it with a quoted RFC 3339 time, like ${key} >= "2025-01-31T00:00:00Z" (a date, a time and a zone); received ${printLiteral(value)}.`)
  }
  if (rfc3339 && type !== 'string') return { datetime: value.v as string }
  // A key declared a string compares as text whatever the literal looks like (`user_id = 123`).
  if (type === 'string' && value.t !== 'string') return String(value.v)
  return value.v
}

/** An AIP-160 expression → a core declarative filter. */
export function toCoreFilter(e: FilterExpr, fields: FilterFields): Filter {
  switch (e.k) {
    case 'and':
      return { op: 'and', filters: e.items.map((x) => toCoreFilter(x, fields)) }
    case 'or':
      return { op: 'or', filters: e.items.map((x) => toCoreFilter(x, fields)) }
    case 'not':
      return { op: 'not', filter: toCoreFilter(e.expr, fields) }
    case 'has': {
      const field = fields.fieldOf(e.field)
      if (e.value === '*') return { op: 'exists', field }
      const type = fields.typeOf(e.field)
      if (fields.hasOnListsOnly === true && type !== undefined && type !== 'list') {
        throw invalidArgument(fields.path, `${e.field} holds one value: compare it with = (${e.field} = ${printLiteral(e.value)}); ":" tests a list for a member, and ":*" for presence.`)
      }
      return { op: 'includes', field, value: String(e.value.v) }
    }
    case 'cmp': {
      const own = fields.compare?.(e)
      if (own !== undefined) return own
      const field = fields.fieldOf(e.field)
      const value = scalarOf(e.value, fields.typeOf(e.field), e.field, fields.path)
      const op = { '=': 'eq', '!=': 'ne', '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' } as const
      return { op: op[e.op], field, value }
    }
  }
}
