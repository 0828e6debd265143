import fc from 'fast-check'
import { MAX_FILTER_DEPTH, type Filter } from '../filter/ast.js'
import { intOption } from './check.js'
import { DEFAULT_METADATA_FIELDS, checkFields, type MetadataFields } from './metadata.js'
import { filterScalarArbitrary, listMemberArbitrary, type MetadataKind } from './values.js'

/** Options of {@link filterArbitrary}. */
export interface FilterArbitraryOptions {
  /** The fields filters test, with their kinds: pass the same fields as to `metadataArbitrary`. @defaultValue DEFAULT_METADATA_FIELDS */
  readonly fields?: MetadataFields
  /** Levels of and / or / not around the comparisons, at most (0: comparisons only). @defaultValue 3 */
  readonly maxDepth?: number
}

const COMPARE = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte'] as const

/** The comparisons that suit a field of a kind, plus exists for every field. */
function leavesOf(field: string, kind: MetadataKind): fc.Arbitrary<Filter>[] {
  const exists = fc.constant<Filter>({ op: 'exists', field })
  const lists = fc.record({ op: fc.constantFrom('includes' as const, 'excludes' as const), value: listMemberArbitrary }).map(({ op, value }): Filter => ({ op, field, value }))
  if (kind === 'stringList') return [lists, exists]
  const scalar = filterScalarArbitrary(kind)
  const ops = kind === 'boolean' ? (['eq', 'ne'] as const) : COMPARE
  const compare = fc.record({ op: fc.constantFrom(...ops), value: scalar }).map(({ op, value }): Filter => ({ op, field, value }))
  const member = fc.record({ op: fc.constantFrom('in' as const, 'nin' as const), values: fc.array(scalar, { maxLength: 3 }) }).map(({ op, values }): Filter => ({ op, field, values }))
  return kind === 'any' ? [compare, member, lists, exists] : [compare, member, exists]
}

/**
 * Valid declarative filters (the `Filter` language of `@quarry/core`) over the given fields:
 * comparisons suited to each field's kind (`'any'` fields get every comparison, so kinds mismatch
 * too), `in` / `nin` (lists may be empty), `includes` / `excludes` on string lists, `exists`, and
 * `and` / `or` (of zero to three filters) and `not` nested at most `maxDepth` levels.
 */
export function filterArbitrary(options: FilterArbitraryOptions = {}): fc.Arbitrary<Filter> {
  const fields = checkFields(options.fields ?? DEFAULT_METADATA_FIELDS, 'fields')
  const maxDepth = intOption(options.maxDepth, 'maxDepth', 0, MAX_FILTER_DEPTH - 1, 3)
  const leaf = fc.oneof(...fields.flatMap(([field, kind]) => leavesOf(field, kind)))
  // One arbitrary per level, each nesting the one below: the depth is bounded by construction.
  let filter = leaf
  for (let level = 1; level <= maxDepth; level++) {
    const inner = filter
    filter = fc.oneof(
      { arbitrary: leaf, weight: 4 },
      { arbitrary: fc.array(inner, { maxLength: 3 }).map((filters): Filter => ({ op: 'and', filters })), weight: 1 },
      { arbitrary: fc.array(inner, { maxLength: 3 }).map((filters): Filter => ({ op: 'or', filters })), weight: 1 },
      { arbitrary: inner.map((f): Filter => ({ op: 'not', filter: f })), weight: 1 },
    )
  }
  return filter
}
