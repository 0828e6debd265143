import fc from 'fast-check'
import type { Metadata } from '../engine/record.js'
import { intOption } from './check.js'
import { idArbitrary } from './ids.js'
import { metadataArbitrary, type MetadataFields } from './metadata.js'
import { vectorArbitrary, type VectorArbitraryOptions } from './vectors.js'

/** A generated record: what `QuarryIndex.add` and `ExactOracle.add` take, and what a store under test gets. */
export interface GeneratedRecord {
  readonly id: string
  readonly vector: number[]
  readonly metadata: Metadata
}

/** Options of {@link recordArbitrary}. */
export interface RecordArbitraryOptions extends VectorArbitraryOptions {
  /** The metadata fields and their kinds. @defaultValue DEFAULT_METADATA_FIELDS */
  readonly fields?: MetadataFields
  /** Ids. @defaultValue idArbitrary() (printable ASCII, 1 to 8 characters) */
  readonly id?: fc.Arbitrary<string>
}

/** Options of {@link recordsArbitrary}. */
export interface RecordsArbitraryOptions extends RecordArbitraryOptions {
  /** Fewest records. @defaultValue 0 */
  readonly minLength?: number
  /** Most records. @defaultValue 50 */
  readonly maxLength?: number
}

/** One record: an id, a vector for the metric (see `vectorArbitrary`) and metadata (see `metadataArbitrary`). */
export function recordArbitrary(options: RecordArbitraryOptions): fc.Arbitrary<GeneratedRecord> {
  const { fields, id, ...vector } = options
  return fc.record({
    id: id ?? idArbitrary(),
    vector: vectorArbitrary(vector),
    metadata: metadataArbitrary(fields === undefined ? {} : { fields }),
  })
}

/** A collection of records with distinct ids (pass an `id` arbitrary with room for `maxLength` distinct ids). */
export function recordsArbitrary(options: RecordsArbitraryOptions): fc.Arbitrary<GeneratedRecord[]> {
  const { minLength, maxLength, ...record } = options
  const max = intOption(maxLength, 'maxLength', 0, 1_000_000, 50)
  const min = intOption(minLength, 'minLength', 0, max, 0)
  return fc.uniqueArray(recordArbitrary(record), { selector: (r) => r.id, minLength: min, maxLength: max })
}
