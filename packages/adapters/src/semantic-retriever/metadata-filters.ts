import type { Filter } from '@quarry/core'
import { invalidArgument } from '../rpc/status.js'
import { CHUNK_PREFIX, DOCUMENT_PREFIX } from './custom-metadata.js'
import type { MetadataFilterInput } from './schema.js'

type ConditionInput = NonNullable<MetadataFilterInput['conditions']>[number]

/** The operations that compare numbers, as core filter operators. */
const NUMERIC_ONLY = { LESS: 'lt', LESS_EQUAL: 'lte', GREATER_EQUAL: 'gte', GREATER: 'gt' } as const

/**
 * metadataFilters[] → a core filter, with Google's rules: conditions inside one MetadataFilter are
 * ORed, MetadataFilters are ANDed (so numeric conditions on one key in separate filters form a
 * range); string conditions on one key may only be ORed (inside one filter); LESS…GREATER take
 * `numericValue` only, INCLUDES / EXCLUDES `stringValue` only. Keys are
 * `chunk.custom_metadata.<k>` or `document.custom_metadata.<k>` (the latter refused where the
 * document is fixed) and name the core field as they are.
 */
export function compileMetadataFilters(filters: readonly MetadataFilterInput[], scope: 'corpus' | 'document'): Filter | undefined {
  if (filters.length === 0) return undefined
  // Keys and operations first, for every filter; then the values.
  filters.forEach((f, i) => {
    const path = `metadataFilters[${i}]`
    const key = f.key ?? ''
    const prefix = key.startsWith(CHUNK_PREFIX) ? CHUNK_PREFIX : key.startsWith(DOCUMENT_PREFIX) ? DOCUMENT_PREFIX : undefined
    if (prefix === undefined || key.length === prefix.length) {
      throw invalidArgument(`${path}.key`, `key must be "chunk.custom_metadata.<key>" or "document.custom_metadata.<key>"; received "${key}".`)
    }
    if (prefix === DOCUMENT_PREFIX && scope === 'document') {
      throw invalidArgument(`${path}.key`, `documents.query filters chunk metadata only ("chunk.custom_metadata.<key>"): the document is already fixed by name; received "${key}".`)
    }
    ;(f.conditions ?? []).forEach((c, j) => {
      if (c.operation === undefined || c.operation === 'OPERATOR_UNSPECIFIED') {
        throw invalidArgument(`${path}.conditions[${j}].operation`, 'operation is required: one of LESS, LESS_EQUAL, EQUAL, GREATER_EQUAL, GREATER, NOT_EQUAL, INCLUDES, EXCLUDES.')
      }
    })
  })
  const stringKeys = new Map<string, number>()
  const parts = filters.map((f, i): Filter => {
    const path = `metadataFilters[${i}]`
    const key = f.key as string
    const given = f.conditions ?? []
    if (given.length === 0) throw invalidArgument(`${path}.conditions`, 'give at least one condition.')
    const conditions = given.map((c, j): Filter => {
      const at = `${path}.conditions[${j}]`
      const hasString = typeof c.stringValue === 'string'
      if (hasString === (typeof c.numericValue === 'number' && Number.isFinite(c.numericValue))) throw invalidArgument(at, 'set exactly one of stringValue and numericValue.')
      if (hasString) {
        const previous = stringKeys.get(key)
        if (previous !== undefined && previous !== i) {
          throw invalidArgument(at, `string conditions on key "${key}" must be ORed inside one MetadataFilter (metadataFilters[${previous}]); Google's API does not AND them.`)
        }
        stringKeys.set(key, i)
      }
      return condition(key, c, at, hasString)
    })
    return conditions.length === 1 ? (conditions[0] as Filter) : { op: 'or', filters: conditions }
  })
  return { op: 'and', filters: parts }
}

/** One Condition on `key` (its operation and its one value already checked) as a core comparison. */
function condition(key: string, c: ConditionInput, at: string, hasString: boolean): Filter {
  const value = hasString ? (c.stringValue as string) : (c.numericValue as number)
  switch (c.operation) {
    case 'EQUAL':
      return { op: 'eq', field: key, value }
    case 'NOT_EQUAL':
      return { op: 'ne', field: key, value }
    case 'INCLUDES':
    case 'EXCLUDES':
      if (!hasString) throw invalidArgument(`${at}.numericValue`, `${c.operation} tests a string list for a stringValue.`)
      return { op: c.operation === 'INCLUDES' ? 'includes' : 'excludes', field: key, value: value as string }
    default: {
      if (hasString) throw invalidArgument(`${at}.stringValue`, `${c.operation} compares numbers: use numericValue.`)
      return { op: NUMERIC_ONLY[c.operation as keyof typeof NUMERIC_ONLY], field: key, value }
    }
  }
}
