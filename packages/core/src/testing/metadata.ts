import fc from 'fast-check'
import type { Metadata } from '../engine/record.js'
import { invalidOption } from './check.js'
import { METADATA_KINDS, metadataValueArbitrary, type MetadataKind } from './values.js'

/** Metadata fields by name, each with the kind of value it holds. */
export type MetadataFields = Readonly<Record<string, MetadataKind>>

/** One field of each kind Quarry stores. */
export const DEFAULT_METADATA_FIELDS: MetadataFields = Object.freeze({ genre: 'string', year: 'number', live: 'boolean', tags: 'stringList', published: 'date' })

/** Options of {@link metadataArbitrary}. */
export interface MetadataArbitraryOptions {
  /** The fields a record may carry and their kinds. @defaultValue DEFAULT_METADATA_FIELDS (genre, year, live, tags, published) */
  readonly fields?: MetadataFields
}

/** Checks a fields option: at least one field, non-empty names, known kinds. */
export function checkFields(fields: unknown, path: string): [string, MetadataKind][] {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw invalidOption(path, "an object of field names to kinds, like { genre: 'string' }", fields)
  const entries = Object.entries(fields as Record<string, unknown>)
  if (entries.length === 0) throw invalidOption(path, 'an object with at least one field', fields)
  for (const [name, kind] of entries) {
    if (name === '') throw invalidOption(`${path}`, 'an object of non-empty field names', name)
    if (!(METADATA_KINDS as readonly unknown[]).includes(kind)) throw invalidOption(`${path}.${name}`, `one of ${METADATA_KINDS.join(', ')}`, kind)
  }
  return entries as [string, MetadataKind][]
}

/**
 * Metadata Quarry stores: each field present or not, with a value of its kind (strings, finite
 * numbers, booleans, string lists, Dates) drawn from small pools, so that filters from
 * `filterArbitrary` over the same fields match some records and not others.
 */
export function metadataArbitrary(options: MetadataArbitraryOptions = {}): fc.Arbitrary<Metadata> {
  const fields = checkFields(options.fields ?? DEFAULT_METADATA_FIELDS, 'fields')
  const present = fields.map(([name, kind]) => fc.option(metadataValueArbitrary(kind), { nil: undefined }).map((value) => [name, value] as const))
  return fc.tuple(...present).map((pairs) => {
    const out: Metadata = {}
    // defineProperty: a field named "__proto__" stays an ordinary key, as Quarry keeps it.
    for (const [name, value] of pairs) if (value !== undefined) Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true })
    return out
  })
}
