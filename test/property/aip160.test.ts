import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compileFilter, type Metadata } from '@quarry/core'
import { parseFilter, printFilter, type FilterExpr, type Literal } from '../../packages/adapters/src/rpc/aip160.js'
import { toCoreFilter } from '../../packages/adapters/src/rpc/aip160-filter.js'
import type { RpcFailure } from '../../packages/adapters/src/rpc/status.js'

/** Generated AIP-160 expressions in normal form (no and directly inside and, no or directly inside or). */
const FIELDS = ['year', 'genre', 'tags', 'score', 'ok', 'when', 'a.b', 'AND_x']
const literal: fc.Arbitrary<Literal> = fc.oneof(
  fc.record({ t: fc.constant('string' as const), v: fc.oneof(fc.constantFrom('drama', 'scifi', 'x', '', 'two words', 'q"uote', 'back\\slash', 'new\nline', '2024-05-01T00:00:00Z')) }),
  fc.record({ t: fc.constant('number' as const), v: fc.oneof(fc.integer({ min: -5, max: 2030 }), fc.double({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }).filter((x) => !Object.is(x, -0))) }),
  fc.record({ t: fc.constant('bool' as const), v: fc.boolean() }),
)
const leaf: fc.Arbitrary<FilterExpr> = fc.oneof(
  fc.record({ k: fc.constant('cmp' as const), field: fc.constantFrom(...FIELDS), op: fc.constantFrom('=' as const, '!=' as const, '<' as const, '<=' as const, '>' as const, '>=' as const), value: literal }),
  fc.record({ k: fc.constant('has' as const), field: fc.constantFrom(...FIELDS), value: fc.oneof(fc.constant('*' as const), literal.filter((l) => l.t === 'string')) }),
)
const { expr } = fc.letrec<{ expr: FilterExpr }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({ k: fc.constant('not' as const), expr: tie('expr') }),
    fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((items): FilterExpr => ({ k: 'and', items: items.flatMap((x) => (x.k === 'and' ? x.items : [x])) })),
    fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((items): FilterExpr => ({ k: 'or', items: items.flatMap((x) => (x.k === 'or' ? x.items : [x])) })),
  ),
}))

/** The filter semantics written plainly, over plain metadata objects. */
function naive(e: FilterExpr, m: Readonly<Metadata>): boolean {
  switch (e.k) {
    case 'and':
      return e.items.every((x) => naive(x, m))
    case 'or':
      return e.items.some((x) => naive(x, m))
    case 'not':
      return !naive(e.expr, m)
    case 'has': {
      const v = m[e.field]
      if (e.value === '*') return v !== undefined
      return Array.isArray(v) && v.includes(String(e.value.v))
    }
    case 'cmp': {
      const v = m[e.field]
      if (v === undefined || Array.isArray(v)) return false
      let a: unknown = v
      let b: unknown = e.value.v
      const isDate = e.value.t === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(e.value.v)
      if (isDate) {
        if (!(v instanceof Date)) return false
        a = v.getTime()
        b = Date.parse(e.value.v as string)
      } else if (v instanceof Date || typeof v !== typeof e.value.v) return false
      if (typeof a === 'boolean' && !['=', '!='].includes(e.op)) return false
      const x = a as number
      const y = b as number
      return { '=': x === y, '!=': x !== y, '<': x < y, '<=': x <= y, '>': x > y, '>=': x >= y }[e.op]
    }
  }
}

const metadata: fc.Arbitrary<Metadata> = fc.record(
  {
    year: fc.oneof(fc.integer({ min: 1990, max: 2030 }), fc.constant('1999')),
    genre: fc.constantFrom('drama', 'scifi', 'x', ''),
    tags: fc.array(fc.constantFrom('drama', 'x', 'two words'), { maxLength: 3 }),
    score: fc.double({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }),
    ok: fc.boolean(),
    when: fc.constantFrom(new Date('2024-05-01T00:00:00Z'), new Date('2020-01-01T00:00:00Z')),
    'a.b': fc.constantFrom('x', 'drama'),
  },
  { requiredKeys: [] },
)

describe('AIP-160 filter subset', () => {
  it('parses what it prints (round trip)', () => {
    fc.assert(
      fc.property(expr, (e) => {
        expect(parseFilter(printFilter(e), 'filter')).toEqual(e)
      }),
      { numRuns: 2000 },
    )
  })

  it('evaluates like a naive interpreter once compiled to a core filter', () => {
    fc.assert(
      fc.property(expr, fc.array(metadata, { minLength: 1, maxLength: 8 }), (e, records) => {
        const predicate = compileFilter(toCoreFilter(e, { fieldOf: (k) => k, typeOf: () => undefined }))
        for (const m of records) expect(predicate(m)).toBe(naive(e, m))
      }),
      { numRuns: 2000 },
    )
  })

  it('binds OR tighter than AND, ANDs terms side by side, and reads NOT / - / :*', () => {
    const p = (s: string): FilterExpr => parseFilter(s, 'filter')
    const a = { k: 'cmp', field: 'a', op: '=', value: { t: 'number', v: 1 } } as const
    const b = { k: 'cmp', field: 'b', op: '=', value: { t: 'number', v: 2 } } as const
    const c = { k: 'cmp', field: 'c', op: '=', value: { t: 'number', v: 3 } } as const
    expect(p('a = 1 AND b = 2 OR c = 3')).toEqual({ k: 'and', items: [a, { k: 'or', items: [b, c] }] })
    expect(p('a = 1 b = 2')).toEqual({ k: 'and', items: [a, b] })
    expect(p('-a = 1')).toEqual({ k: 'not', expr: a })
    expect(p('NOT (a = 1 OR b = 2)')).toEqual({ k: 'not', expr: { k: 'or', items: [a, b] } })
    expect(p('tags:*')).toEqual({ k: 'has', field: 'tags', value: '*' })
    expect(p("genre = 'drama'")).toEqual({ k: 'cmp', field: 'genre', op: '=', value: { t: 'string', v: 'drama' } })
    expect(p('x > -2.5e1')).toEqual({ k: 'cmp', field: 'x', op: '>', value: { t: 'number', v: -25 } })
  })

  it('names the position of a syntax error', () => {
    const message = (s: string): string => {
      try {
        parseFilter(s, 'metadataFilter')
      } catch (e) {
        return (e as RpcFailure).status.message
      }
      return 'parsed'
    }
    expect(message('year >')).toMatch(/position 7 .*ends where a value is expected/)
    expect(message('year = 1 AND')).toMatch(/position 13 .*ends where a comparison is expected/)
    expect(message('(year = 1')).toMatch(/position 10 .*expected "\)"/)
    expect(message('year == 1')).toMatch(/position 7 .*expected a value/)
    expect(message('genre = "drama')).toMatch(/position 9 .*no closing "/)
    expect(message('year ~ 1')).toMatch(/position 6 .*unexpected character "~"/)
    expect(message('')).toMatch(/position 1 .*empty/)
    expect(message('year = 1)')).toMatch(/position 9 .*unexpected "\)"/)
  })
})
