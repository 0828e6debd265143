import { QuarryError, describe } from '../errors.js'
import { validateId } from '../ids.js'

/** A metadata value: what Google's retrieval APIs carry (string, number, boolean, string list). */
export type MetadataValue = string | number | boolean | readonly string[]

/** Metadata of a record: flat, JSON-serializable key/value pairs. */
export type Metadata = Record<string, MetadataValue>

/** A record as given to `add` / `upsert`. */
export interface RecordInput {
  /** Unique, non-empty string of at most 1024 characters. */
  id: string
  /** The embedding; its length must equal the index's `dimensions`. */
  vector: readonly number[] | Float32Array
  /** Optional metadata, visible to filters and returned with hits. */
  metadata?: Metadata
}

/** A record as stored and returned by `get`. */
export interface StoredRecord {
  readonly id: string
  readonly vector: Float32Array
  readonly metadata: Readonly<Metadata>
}

const EMPTY: Readonly<Metadata> = Object.freeze({})

/** Checks a record's shape and returns its id and a private copy of its metadata. */
export function validateRecord(record: unknown): { id: string; vector: unknown; metadata: Readonly<Metadata> } {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new QuarryError('INVALID_RECORD', `a record must be an object like { id, vector, metadata }; received ${describe(record)}.`)
  }
  const { id, vector, metadata } = record as { id?: unknown; vector?: unknown; metadata?: unknown }
  return { id: validateId(id), vector, metadata: validateMetadata(metadata) }
}

/** Validates metadata and returns a frozen copy, so later changes by the caller do not leak in. */
export function validateMetadata(metadata: unknown): Readonly<Metadata> {
  if (metadata === undefined) return EMPTY
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    throw new QuarryError('INVALID_RECORD', `metadata must be a plain object of string, number, boolean or string-list values; received ${describe(metadata)}.`, {
      path: 'metadata',
    })
  }
  const copy: Metadata = {}
  for (const [key, value] of Object.entries(metadata)) {
    const path = `metadata.${key}`
    if (typeof value === 'string' || typeof value === 'boolean') {
      copy[key] = value
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) {
        throw new QuarryError('INVALID_RECORD', `${path} must be a finite number; received ${describe(value)}.`, { path })
      }
      copy[key] = value
    } else if (Array.isArray(value) && value.every((item): item is string => typeof item === 'string')) {
      copy[key] = Object.freeze([...value])
    } else {
      throw new QuarryError('INVALID_RECORD', `${path} must be a string, a finite number, a boolean or a list of strings; received ${describe(value)}.`, { path })
    }
  }
  return Object.freeze(copy)
}
