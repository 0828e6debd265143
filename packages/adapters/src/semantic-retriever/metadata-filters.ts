import { QuarryError, fromGoogleMetadataFilters, type Filter, type GoogleCondition } from '@quarry/core'
import { omitUndefined } from '../rpc/omit.js'
import { invalidArgument } from '../rpc/status.js'
import { CHUNK_PREFIX, DOCUMENT_PREFIX } from './custom-metadata.js'
import type { MetadataFilterInput } from './schema.js'

/**
 * metadataFilters[] → a core filter. Keys are `chunk.custom_metadata.<k>` or
 * `document.custom_metadata.<k>` (the latter refused where the document is fixed); the core
 * compiler applies Google's rules: conditions ORed inside a filter, filters ANDed, string
 * conditions on one key only ORed, operations typed (LESS.. numeric, INCLUDES/EXCLUDES string lists).
 */
export function compileMetadataFilters(filters: readonly MetadataFilterInput[], scope: 'corpus' | 'document'): Filter | undefined {
  if (filters.length === 0) return undefined
  const google = filters.map((f, i) => {
    const path = `metadataFilters[${i}]`
    const key = f.key ?? ''
    const prefix = key.startsWith(CHUNK_PREFIX) ? CHUNK_PREFIX : key.startsWith(DOCUMENT_PREFIX) ? DOCUMENT_PREFIX : undefined
    if (prefix === undefined || key.length === prefix.length) {
      throw invalidArgument(`${path}.key`, `key must be "chunk.custom_metadata.<key>" or "document.custom_metadata.<key>"; received "${key}".`)
    }
    if (prefix === DOCUMENT_PREFIX && scope === 'document') {
      throw invalidArgument(`${path}.key`, `documents.query filters chunk metadata only ("chunk.custom_metadata.<key>"): the document is already fixed by name; received "${key}".`)
    }
    const conditions = (f.conditions ?? []).map((c, j): GoogleCondition => {
      if (c.operation === undefined || c.operation === 'OPERATOR_UNSPECIFIED') {
        throw invalidArgument(`${path}.conditions[${j}].operation`, 'operation is required: one of LESS, LESS_EQUAL, EQUAL, GREATER_EQUAL, GREATER, NOT_EQUAL, INCLUDES, EXCLUDES.')
      }
      return omitUndefined({ operation: c.operation, stringValue: c.stringValue, numericValue: c.numericValue })
    })
    return { key, conditions }
  })
  try {
    return fromGoogleMetadataFilters(google)
  } catch (error) {
    if (error instanceof QuarryError) throw invalidArgument(error.path ?? 'metadataFilters', error.message.replace(/^[^:]*: /, ''))
    throw error
  }
}
