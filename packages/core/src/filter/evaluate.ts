import type { Metadata } from './values.js'
import { validateFilter, type Filter } from './ast.js'
import { filterTyped, ordered, storedTyped, type Typed, type ValueKind } from './values.js'

/** true when stored and wanted are of one kind and `test` holds between their primitives. */
function compare(stored: Typed | undefined, wanted: Typed, test: (a: string | number | boolean, b: string | number | boolean) => boolean): boolean {
  return stored !== undefined && stored.kind === wanted.kind && test(stored.value, wanted.value)
}

/** The name an inherited-looking field's own value is tested under (see compileFilter). */
const OWN = '\u0000own'

/**
 * Compiles a declarative filter into a predicate over metadata (used where no value index
 * answers, and as the reference the value index is tested against). The filter is checked as a
 * search checks it: a malformed one is INVALID_QUERY at its path (`filter.filters[1].value`).
 */
export function compileFilter(filter: Filter): (metadata: Readonly<Metadata>) => boolean {
  // Typed callers still pass JSON, casts and NaN: unchecked, these threw TypeErrors or matched nothing.
  return compileChecked(validateFilter(filter))
}

/** {@link compileFilter} of a filter already checked by `validateFilter` (a search's). */
export function compileChecked(filter: Filter): (metadata: Readonly<Metadata>) => boolean {
  // A field named like something every object inherits (`constructor`, `toString`, `__proto__`)
  // is a record's only when it sets it, as the value indexes see it: the test reads the record's
  // own value (moved to a name nothing inherits). Other fields keep the plain property read.
  if ('field' in filter && filter.field in Object.prototype) {
    const field = filter.field
    const test = compileChecked({ ...filter, field: OWN })
    return (m) => test({ [OWN]: Object.hasOwn(m, field) ? m[field] : undefined } as Readonly<Metadata>)
  }
  switch (filter.op) {
    case 'and': {
      const parts = filter.filters.map(compileChecked)
      return (m) => parts.every((p) => p(m))
    }
    case 'or': {
      const parts = filter.filters.map(compileChecked)
      return (m) => parts.some((p) => p(m))
    }
    case 'not': {
      const inner = compileChecked(filter.filter)
      return (m) => !inner(m)
    }
    case 'exists':
      return (m) => m[filter.field] !== undefined
    case 'includes':
    case 'excludes': {
      const { field, value, op } = filter
      return (m) => {
        const list = m[field]
        if (!Array.isArray(list)) return false
        return list.includes(value) === (op === 'includes')
      }
    }
    case 'in':
    case 'nin': {
      const { field, op } = filter
      // The values by kind, each kind a Set: a record costs one lookup, not a pass over the values.
      // (A Set compares as ===, but for NaN, which no filter value is.)
      const wanted = new Map<ValueKind, Set<string | number | boolean>>()
      for (const w of filter.values.map(filterTyped)) {
        const values = wanted.get(w.kind)
        if (values) values.add(w.value)
        else wanted.set(w.kind, new Set([w.value]))
      }
      return (m) => {
        const stored = storedTyped(m[field])
        if (!stored || stored.kind === 'list') return false
        const sameKind = wanted.get(stored.kind)
        if (sameKind === undefined) return false
        return sameKind.has(stored.value) === (op === 'in')
      }
    }
    default: {
      const { field, op } = filter
      const wanted = filterTyped(filter.value)
      if (op === 'eq') return (m) => compare(storedTyped(m[field]), wanted, (a, b) => a === b)
      if (op === 'ne') return (m) => compare(storedTyped(m[field]), wanted, (a, b) => a !== b)
      if (!ordered(wanted.kind)) return () => false
      const test =
        op === 'lt' ? (a: string | number | boolean, b: string | number | boolean) => a < b
        : op === 'lte' ? (a: string | number | boolean, b: string | number | boolean) => a <= b
        : op === 'gt' ? (a: string | number | boolean, b: string | number | boolean) => a > b
        : (a: string | number | boolean, b: string | number | boolean) => a >= b
      return (m) => compare(storedTyped(m[field]), wanted, test)
    }
  }
}
