import type { Metadata } from '@quarry/core'
import { loweredLimit } from '../rpc/limits.js'
import { omitUnset } from '../rpc/omit.js'
import { invalidArgument } from '../rpc/status.js'
import type { CustomMetadataInput } from './schema.js'
import type { CustomMetadataJson } from './resources.js'
import type { ChunkState, DocumentState } from './state.js'

/** Core metadata field holding a chunk's document name (queryDocument filters on it). */
export const DOCUMENT_FIELD = '$document'
/** Core metadata fields of custom metadata: the filter keys of the API, verbatim. */
export const CHUNK_PREFIX = 'chunk.custom_metadata.'
export const DOCUMENT_PREFIX = 'document.custom_metadata.'

/**
 * Checks a customMetadata list (at most `limit` entries, unique non-empty keys, exactly one value
 * each) and returns it as stored: frozen proto3 JSON.
 */
export function readCustomMetadata(list: readonly CustomMetadataInput[] | undefined, path: string, limit: number): readonly CustomMetadataJson[] {
  const entries = list ?? []
  // The schema holds Google's 20; `limit` is the engine's own, possibly lower.
  if (entries.length > limit) throw loweredLimit(entries.length, limit, path, 'limits.customMetadata')
  const seen = new Set<string>()
  return Object.freeze(
    entries.map((m, i): CustomMetadataJson => {
      const at = `${path}[${i}]`
      if (m.key === undefined || m.key === '') throw invalidArgument(`${at}.key`, 'key is required: a non-empty string.')
      if (seen.has(m.key)) throw invalidArgument(`${at}.key`, `key "${m.key}" appears twice; give each key once (a list of strings goes in stringListValue).`)
      seen.add(m.key)
      if (m.stringValue !== undefined) return Object.freeze({ key: m.key, stringValue: m.stringValue })
      if (m.numericValue !== undefined) return Object.freeze({ key: m.key, numericValue: m.numericValue })
      if (m.stringListValue !== undefined) {
        // An empty repeated field is omitted in proto3 JSON: an empty list is `stringListValue: {}`.
        const values = m.stringListValue.values ?? []
        return Object.freeze({ key: m.key, stringListValue: Object.freeze(omitUnset({ values: Object.freeze([...values]) })) })
      }
      throw invalidArgument(at, `set one of stringValue, stringListValue or numericValue for key "${m.key}".`)
    }),
  )
}

function put(target: Metadata, key: string, m: CustomMetadataJson): void {
  const value = 'stringValue' in m ? m.stringValue : 'numericValue' in m ? m.numericValue : (m.stringListValue.values ?? [])
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/** The metadata of a chunk's record in the corpus index: its own and its document's custom metadata, and the document name. */
export function chunkMetadata(document: DocumentState, chunk: ChunkState): Metadata {
  const out: Metadata = { [DOCUMENT_FIELD]: document.name }
  for (const m of document.customMetadata) put(out, DOCUMENT_PREFIX + m.key, m)
  for (const m of chunk.customMetadata) put(out, CHUNK_PREFIX + m.key, m)
  return out
}
