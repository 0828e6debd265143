import { QuarryError, describe } from '../errors.js'
import { validateId } from '../ids.js'
import type { Metadata, MetadataValue } from '../filter/values.js'
import type { PreparedSparse, SparseIndex } from '../sparse/sparse-index.js'

export type { Metadata, MetadataValue }

/** Text of a record: one string, or named fields (boosted by the index's `text.fields`). */
export type TextInput = string | Readonly<Record<string, string>>

/**
 * A record's text analyzed ahead of its add by {@link QuarryIndex.prepareText}: give it as the
 * record's `text` to `add`, `addMany` or `upsert` of the same index and the write does not
 * analyze the text again. The record is the one the plain text makes (the same stored text, the
 * same BM25 statistics). Another index, or an index loaded since, analyzes `text` as usual.
 */
export class PreparedText {
  /** The text as given (validated, frozen): what the record stores. */
  readonly text: TextInput
  readonly #index: SparseIndex
  readonly #document: PreparedSparse

  /** @internal Use {@link QuarryIndex.prepareText}. */
  constructor(text: TextInput, index: SparseIndex, document: PreparedSparse) {
    this.text = text
    this.#index = index
    this.#document = document
  }

  /** @internal The analyzed document, if it was made for the text index `index`. */
  static documentFor(prepared: PreparedText, index: SparseIndex): PreparedSparse | undefined {
    return prepared.#index === index ? prepared.#document : undefined
  }
}

/** A record as given to `add` / `upsert`. */
export interface RecordInput {
  /** Unique, non-empty string of at most 1024 characters. */
  id: string
  /** The embedding; required when the index has `dimensions`, absent otherwise. */
  vector?: readonly number[] | Float32Array
  /** Text for BM25 search; required in a text-only index. A {@link PreparedText} is text analyzed ahead (`prepareText`). */
  text?: TextInput | PreparedText
  /** Optional metadata, visible to filters and returned with hits. */
  metadata?: Metadata
}

/** A record as stored and returned by `get`. */
export interface StoredRecord {
  readonly id: string
  /** Present when the index has vectors. */
  readonly vector?: Float32Array
  /** Present when the record has text. */
  readonly text?: TextInput
  readonly metadata: Readonly<Metadata>
}

const EMPTY: Readonly<Metadata> = Object.freeze({})

/**
 * A Date whose setters throw: stored metadata is handed out by reference (in hits and `get`), and
 * a caller changing a stored Date in place would silently desynchronize the value indexes. The
 * setters are overridden once on the prototype, so a stored Date costs no more than a Date.
 */
class StoredDate extends Date {}
for (const name of Object.getOwnPropertyNames(Date.prototype)) {
  if (!name.startsWith('set')) continue
  Object.defineProperty(StoredDate.prototype, name, {
    value: () => {
      throw new TypeError('this Date is stored metadata and cannot change; upsert the record with a new Date instead.')
    },
  })
}

/** A stored (immutable) Date of `ms`, as validateMetadata makes them; for snapshots. */
export function frozenDate(ms: number): Date {
  // The same object as `new StoredDate(ms)` (StoredDate adds no constructor), about a quarter
  // faster: V8's derived-class call into Date's constructor is the slow part of a million loads.
  return Reflect.construct(Date, [ms], StoredDate) as Date
}

/** Sets an own property, even one named "__proto__" (plain assignment would change the prototype). */
function put<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

/** Checks a record's shape and returns its id and a private copy of its metadata. */
export function validateRecord(record: unknown, fields: ReadonlySet<string> = RECORD_FIELDS): { id: string; vector: unknown; text: TextInput | PreparedText | undefined; metadata: Readonly<Metadata> } {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new QuarryError('INVALID_RECORD', `a record must be an object like { id, vector, text, metadata }; received ${describe(record)}.`)
  }
  // Its entries are no fields: read as one, it would be refused for its missing id, a puzzle.
  if (record instanceof Map) throw new QuarryError('INVALID_RECORD', 'a record must be an object like { id, vector, text, metadata }; received a Map (Object.fromEntries(map) makes one of it).')
  // A misspelt field (`metdata`) would otherwise leave the record without it, with no word.
  // for…in with an own-property test, as search options are read: no array made per record.
  for (const key in record) {
    if (Object.hasOwn(record, key) && !fields.has(key)) throw new QuarryError('INVALID_RECORD', `a record has no field "${key}": its fields are ${[...fields].join(', ')}.`, { path: key })
  }
  const { id, vector, text, metadata } = record as { id?: unknown; vector?: unknown; text?: unknown; metadata?: unknown }
  return { id: validateId(id), vector, text: text instanceof PreparedText ? text : validateText(text), metadata: validateMetadata(metadata) }
}

/** The fields of a record for `add`, `addMany` and `upsert`. */
export const RECORD_FIELDS: ReadonlySet<string> = new Set(['id', 'vector', 'text', 'metadata'])

/**
 * The records of a batch (`addMany`, `ingest`): an array, each of its places a record (a hole is
 * one, refused as `undefined` is), so that every record is checked before the first is written.
 */
export function recordList(records: unknown, what: string): readonly unknown[] {
  if (!Array.isArray(records)) {
    const iterable = typeof records === 'object' && records !== null && Symbol.iterator in records
    throw new QuarryError('INVALID_RECORD', `${what} takes an array of records; received ${describe(records)}${iterable ? ' (make it an array first: [...records])' : ''}.`)
  }
  return records
}

/** Text is a string or a flat plain object of string fields; returns a frozen copy. */
export function validateText(text: unknown): TextInput | undefined {
  if (text === undefined || typeof text === 'string') return text
  if (typeof text === 'object' && text !== null && !Array.isArray(text)) {
    const kind = instanceKind(text)
    if (kind !== undefined) {
      // A class instance is not fields: a PreparedText of another index's copy of @quarry/core would otherwise be stored as { text }.
      throw new QuarryError('INVALID_RECORD', `text must be a string or a plain object of string fields like { title, body }; received an instance of ${kind}${kind === 'PreparedText' ? ' from another copy of @quarry/core (prepare the text with the index you add it to)' : ''}.`, { path: 'text' })
    }
    const copy: Record<string, string> = {}
    for (const [field, value] of Object.entries(text)) {
      if (typeof value !== 'string') {
        throw new QuarryError('INVALID_RECORD', `text.${field} must be a string; received ${describe(value)}.`, { path: `text.${field}` })
      }
      put(copy, field, value)
    }
    return Object.freeze(copy)
  }
  throw new QuarryError('INVALID_RECORD', `text must be a string or an object of string fields like { title, body }; received ${describe(text)}.`, { path: 'text' })
}

/**
 * The class of an object that is not plain (its prototype neither Object.prototype nor null), or
 * undefined for a plain one: only a plain object's own enumerable properties are all it holds.
 */
function instanceKind(value: object): string | undefined {
  const proto = Object.getPrototypeOf(value) as object | null
  if (proto === Object.prototype || proto === null) return undefined
  return (proto as { constructor?: { name?: string } }).constructor?.name || 'object'
}

/** Validates metadata and returns a frozen copy, so later changes by the caller do not leak in. */
export function validateMetadata(metadata: unknown): Readonly<Metadata> {
  if (metadata === undefined) return EMPTY
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    throw new QuarryError('INVALID_RECORD', `metadata must be a plain object of string, number, boolean or string-list values; received ${describe(metadata)}.`, {
      path: 'metadata',
    })
  }
  // Its own enumerable properties are what is stored: a Map's entries, or a class's getters and
  // inherited fields, would be left out without a word.
  const kind = instanceKind(metadata)
  if (kind !== undefined) {
    throw new QuarryError('INVALID_RECORD', `metadata must be a plain object of string, number, boolean or string-list values, like { genre: 'drama' }; received an instance of ${kind}${kind === 'Map' ? ' (Object.fromEntries(map) makes one of it)' : ''}.`, {
      path: 'metadata',
    })
  }
  const entries = Object.entries(metadata)
  // One shared empty object: `metadata: {}` on every record would otherwise cost an object each.
  if (entries.length === 0) return EMPTY
  const copy: Metadata = {}
  for (const [key, value] of entries) {
    const path = `metadata.${key}`
    if (typeof value === 'string' || typeof value === 'boolean') {
      put<MetadataValue>(copy, key, value)
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) {
        throw new QuarryError('INVALID_RECORD', `${path} must be a finite number; received ${describe(value)}.`, { path })
      }
      put<MetadataValue>(copy, key, value)
    } else if (Array.isArray(value) && value.every((item): item is string => typeof item === 'string')) {
      put<MetadataValue>(copy, key, Object.freeze([...value]))
    } else if (value instanceof Date) {
      if (Number.isNaN(value.getTime())) throw new QuarryError('INVALID_RECORD', `${path} is an invalid Date.`, { path })
      put<MetadataValue>(copy, key, frozenDate(value.getTime()))
    } else {
      throw new QuarryError('INVALID_RECORD', `${path} must be a string, a finite number, a boolean, a list of strings or a Date; received ${describe(value)}.`, { path })
    }
  }
  return Object.freeze(copy)
}

/** Texts left where a snapshot was loaded, one per label, decoded when asked for (a new copy each time). */
interface LoadedTexts {
  at(label: number): string | undefined
}

/**
 * Texts by label (undefined for free labels and records without text). A loaded index keeps the
 * texts of its snapshot undecoded ({@link LoadedTexts}) until a label is read (decoded then, not
 * kept) or written (the new text kept here): no string per record is built on load.
 */
export class TextColumn {
  /** Texts written since the load (or all of them in an index that was not loaded). */
  readonly #texts: (TextInput | undefined)[] = []
  readonly #loaded: LoadedTexts | undefined
  /** 1 where a label's text is still the loaded one. */
  readonly #live: Uint8Array

  /**
   * An empty column, or one over loaded texts: label l's text is `loaded.at(l)` where `live[l]`
   * is 1, else `texts[l]` (adopted, not copied).
   */
  constructor(loaded?: { readonly texts: (TextInput | undefined)[]; readonly strings: LoadedTexts; readonly live: Uint8Array }) {
    this.#texts = loaded?.texts ?? []
    this.#loaded = loaded?.strings
    this.#live = loaded?.live ?? new Uint8Array(0)
  }

  get(label: number): TextInput | undefined {
    const text = this.#texts[label]
    if (text !== undefined || this.#loaded === undefined || label >= this.#live.length || this.#live[label] === 0) return text
    return this.#loaded.at(label)
  }

  /** The form of a label's text, without decoding a loaded one. */
  form(label: number): 'none' | 'string' | 'fields' {
    const text = this.#texts[label]
    if (text === undefined) return label < this.#live.length && this.#live[label] === 1 ? 'string' : 'none'
    return typeof text === 'string' ? 'string' : 'fields'
  }

  set(label: number, text: TextInput | undefined): void {
    if (label < this.#live.length) this.#live[label] = 0
    this.#texts[label] = text
  }
}
