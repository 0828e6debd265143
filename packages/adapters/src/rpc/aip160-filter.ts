import type { Filter, FilterScalar } from '@quarry/core'
import type { FilterExpr, Literal } from './aip160.js'

/** How a filter key is typed where a schema declares it; undefined where nothing does. */
export type KeyType = 'string' | 'number' | 'boolean' | 'datetime' | 'list'

interface FilterFields {
  /** The core metadata field a filter key reads. */
  readonly fieldOf: (key: string) => string
  /** The declared type of a key, if any. */
  readonly typeOf: (key: string) => KeyType | undefined
  /** A comparison a key makes in its own way (Memory Bank's `scope = "<JSON>"`), or undefined for the usual one. */
  readonly compare?: (e: Extract<FilterExpr, { k: 'cmp' }>) => Filter | undefined
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/

/**
 * A literal as the value a key is compared with: a quoted RFC 3339 timestamp compares as a
 * datetime unless the key is declared a string; a number or boolean compares as text where the
 * key is declared a string; everything else keeps its own type (and so matches nothing where the
 * stored value has another type — Google's rule).
 */
function scalarOf(value: Literal, type: KeyType | undefined): FilterScalar {
  if (value.t === 'string' && type !== 'string' && RFC3339.test(value.v) && (type === 'datetime' || type === undefined)) return { datetime: value.v }
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
      return { op: 'includes', field, value: String(e.value.v) }
    }
    case 'cmp': {
      const own = fields.compare?.(e)
      if (own !== undefined) return own
      const field = fields.fieldOf(e.field)
      const value = scalarOf(e.value, fields.typeOf(e.field))
      const op = { '=': 'eq', '!=': 'ne', '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' } as const
      return { op: op[e.op], field, value }
    }
  }
}
