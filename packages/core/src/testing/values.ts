import fc from 'fast-check'
import type { MetadataValue } from '../engine/record.js'
import type { FilterScalar } from '../filter/ast.js'

/**
 * The kinds of metadata value Quarry stores. `'any'` draws a different kind record by record, as
 * a schemaless store may hold: a filter comparing another kind than the stored one matches
 * nothing and never throws.
 */
export type MetadataKind = 'string' | 'number' | 'boolean' | 'stringList' | 'date' | 'any'

export const METADATA_KINDS: readonly MetadataKind[] = ['string', 'number', 'boolean', 'stringList', 'date', 'any']

/*
 * Stored values and filter values come from small shared pools, so that filters hit as often as
 * they miss; each filter pool also holds a value no record has.
 */
const STRINGS = ['red', 'green', 'blue', '']
const FILTER_STRINGS = [...STRINGS, 'violet']
const MEMBERS = ['x', 'y', 'z']
const FILTER_MEMBERS = ['x', 'y', 'w']
const INSTANTS = [0, 1_000_000, 86_400_000, 1_700_000_000_000]
const FILTER_INSTANTS = [...INSTANTS, 500_000]

const number = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.double({ min: -3, max: 3, noNaN: true }))

const STORED: Readonly<Record<Exclude<MetadataKind, 'any'>, fc.Arbitrary<MetadataValue>>> = {
  string: fc.constantFrom(...STRINGS),
  number,
  boolean: fc.boolean(),
  stringList: fc.uniqueArray(fc.constantFrom(...MEMBERS), { maxLength: MEMBERS.length }),
  date: fc.constantFrom(...INSTANTS).map((ms) => new Date(ms)),
}

/** A stored metadata value of a kind (a fresh Date each time). */
export function metadataValueArbitrary(kind: MetadataKind): fc.Arbitrary<MetadataValue> {
  return kind === 'any' ? fc.oneof(...Object.values(STORED)) : STORED[kind]
}

/** Scalar kinds a comparison takes (a string list is tested with includes / excludes instead). */
type ScalarKind = 'string' | 'number' | 'boolean' | 'date'

const SCALARS: Readonly<Record<ScalarKind, fc.Arbitrary<FilterScalar>>> = {
  string: fc.constantFrom(...FILTER_STRINGS),
  number: fc.oneof(fc.integer({ min: -4, max: 4 }), fc.double({ min: -4, max: 4, noNaN: true })),
  boolean: fc.boolean(),
  date: fc.constantFrom(...FILTER_INSTANTS).map((ms) => ({ datetime: new Date(ms).toISOString() })),
}

/** A value a filter compares a field of this kind with (`'any'` and `'stringList'`: a scalar of any kind). */
export function filterScalarArbitrary(kind: MetadataKind): fc.Arbitrary<FilterScalar> {
  return kind === 'any' || kind === 'stringList' ? fc.oneof(...Object.values(SCALARS)) : SCALARS[kind]
}

/** A string an includes / excludes filter looks for in a string list. */
export const listMemberArbitrary: fc.Arbitrary<string> = fc.constantFrom(...FILTER_MEMBERS)
