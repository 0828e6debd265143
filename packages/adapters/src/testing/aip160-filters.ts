import fc from 'fast-check'
import { printFilter, type Comparator, type FilterExpr, type Literal } from '../rpc/aip160.js'
import { floatValue, integerValue, stringValue, timestampValue } from './values.js'

/** A key a filter string may name, with the type of its values (`integer`: a number, written as an integer). */
export interface FilterKey {
  readonly field: string
  readonly type: 'string' | 'number' | 'integer' | 'boolean' | 'datetime' | 'list'
  /** Strings to compare with or look for (a string key or a list's members). @defaultValue common and arbitrary strings */
  readonly strings?: readonly string[]
}

const ALL: readonly Comparator[] = ['=', '!=', '<', '<=', '>', '>=']
const EQUALITY: readonly Comparator[] = ['=', '!=']

/** Whether a field can be written in a filter: not a keyword, no backquote (quoting cannot hold one). */
export function writableField(field: string): boolean {
  return field !== '' && !field.includes('`') && !['AND', 'OR', 'NOT'].includes(field)
}

function leaf(key: FilterKey): fc.Arbitrary<FilterExpr> {
  const { field } = key
  const strings = key.strings && key.strings.length > 0 ? fc.constantFrom(...key.strings) : stringValue
  const str = strings.map((v): Literal => ({ t: 'string', v }))
  const exists = fc.constant<FilterExpr>({ k: 'has', field, value: '*' })
  const cmp = (ops: readonly Comparator[], value: fc.Arbitrary<Literal>): fc.Arbitrary<FilterExpr> =>
    fc.record({ op: fc.constantFrom(...ops), value }).map(({ op, value }): FilterExpr => ({ k: 'cmp', field, op, value }))
  switch (key.type) {
    case 'string':
      return fc.oneof(cmp(EQUALITY, str), exists)
    case 'number':
      return fc.oneof(cmp(ALL, floatValue.map((v): Literal => ({ t: 'number', v }))), exists)
    case 'integer':
      return fc.oneof(cmp(ALL, integerValue.map((v): Literal => ({ t: 'number', v }))), exists)
    case 'boolean':
      return fc.oneof(cmp(EQUALITY, fc.boolean().map((v): Literal => ({ t: 'bool', v }))), exists)
    case 'datetime':
      return fc.oneof(cmp(ALL, timestampValue.map((v): Literal => ({ t: 'string', v }))), exists)
    case 'list':
      return fc.oneof(str.map((value): FilterExpr => ({ k: 'has', field, value })), exists)
  }
}

/**
 * AIP-160 filter strings over typed keys, as Quarry's parser reads them (and Google documents
 * them): comparisons suited to each key's type, `key:*`, `list:"value"`, NOT, AND and OR nested at
 * most `maxDepth` levels (printed with parentheses where needed).
 */
export function aip160FilterArbitrary(keys: readonly FilterKey[], maxDepth = 2): fc.Arbitrary<string> {
  const leaves = fc.oneof(...keys.map(leaf))
  let expr = leaves
  for (let level = 1; level <= maxDepth; level++) {
    const inner = expr
    expr = fc.oneof(
      { arbitrary: leaves, weight: 3 },
      { arbitrary: inner.map((e): FilterExpr => ({ k: 'not', expr: e })), weight: 1 },
      { arbitrary: fc.array(inner, { minLength: 2, maxLength: 3 }).map((items): FilterExpr => ({ k: 'and', items })), weight: 1 },
      { arbitrary: fc.array(inner, { minLength: 2, maxLength: 3 }).map((items): FilterExpr => ({ k: 'or', items })), weight: 1 },
    )
  }
  return expr.map(printFilter)
}
