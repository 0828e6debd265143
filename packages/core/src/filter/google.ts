import { QuarryError, describe } from '../errors.js'
import type { Filter } from './ast.js'

/** Google's MetadataFilter (Semantic Retriever `metadataFilters[]`, keys already stripped of their prefix). */
export interface GoogleMetadataFilter {
  readonly key: string
  readonly conditions: readonly GoogleCondition[]
}

export interface GoogleCondition {
  readonly operation: 'LESS' | 'LESS_EQUAL' | 'GREATER_EQUAL' | 'GREATER' | 'EQUAL' | 'NOT_EQUAL' | 'INCLUDES' | 'EXCLUDES'
  readonly stringValue?: string
  readonly numericValue?: number
}

const NUMERIC_ONLY = { LESS: 'lt', LESS_EQUAL: 'lte', GREATER_EQUAL: 'gte', GREATER: 'gt' } as const

function fail(path: string, message: string): QuarryError {
  return new QuarryError('INVALID_QUERY', `${path}: ${message}`, { path })
}

/**
 * Compiles Google's filter shape: conditions inside one MetadataFilter are ORed, MetadataFilters
 * are ANDed (so numeric conditions on one key in separate filters form a range); string values
 * on one key may only be ORed (inside one filter), as Google's API requires.
 */
export function fromGoogleMetadataFilters(filters: readonly GoogleMetadataFilter[]): Filter {
  const stringKeys = new Map<string, number>()
  const parts = filters.map((f, i): Filter => {
    const path = `metadataFilters[${i}]`
    if (typeof f.key !== 'string' || f.key === '') throw fail(`${path}.key`, `key must be a non-empty string; received ${describe(f.key)}.`)
    if (!Array.isArray(f.conditions) || f.conditions.length === 0) throw fail(`${path}.conditions`, 'give at least one condition.')
    const conditions = f.conditions.map((c, j): Filter => {
      const at = `${path}.conditions[${j}]`
      const hasString = typeof c.stringValue === 'string'
      const hasNumber = typeof c.numericValue === 'number' && Number.isFinite(c.numericValue)
      if (hasString === hasNumber) throw fail(at, 'set exactly one of stringValue and numericValue.')
      if (hasString) {
        const previous = stringKeys.get(f.key)
        if (previous !== undefined && previous !== i) {
          throw fail(at, `string conditions on key "${f.key}" must be ORed inside one MetadataFilter (metadataFilters[${previous}]); Google's API does not AND them.`)
        }
        stringKeys.set(f.key, i)
      }
      const value = hasString ? (c.stringValue as string) : (c.numericValue as number)
      switch (c.operation) {
        case 'EQUAL':
          return { op: 'eq', field: f.key, value }
        case 'NOT_EQUAL':
          return { op: 'ne', field: f.key, value }
        case 'INCLUDES':
        case 'EXCLUDES':
          if (!hasString) throw fail(`${at}.numericValue`, `${c.operation} tests a string list for a stringValue.`)
          return { op: c.operation === 'INCLUDES' ? 'includes' : 'excludes', field: f.key, value: value as string }
        default: {
          const op = NUMERIC_ONLY[c.operation as keyof typeof NUMERIC_ONLY]
          if (!op) throw fail(`${at}.operation`, `unknown operation ${describe(c.operation)}.`)
          if (!hasNumber) throw fail(`${at}.stringValue`, `${c.operation} compares numbers: use numericValue.`)
          return { op, field: f.key, value }
        }
      }
    })
    return conditions.length === 1 ? (conditions[0] as Filter) : { op: 'or', filters: conditions }
  })
  return { op: 'and', filters: parts }
}
