import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compileFilter, createHashingEmbedder, validateFilter, type Metadata } from '@quarry/core'
import { MemoryBank, VertexRagEngine } from '@quarry/adapters'
import { MAX_FILTER_DEPTH, MAX_FILTER_LENGTH, parseFilter, printFilter, type FilterExpr, type Literal } from '../../packages/adapters/src/rpc/aip160.js'
import { toCoreFilter } from '../../packages/adapters/src/rpc/aip160-filter.js'
import type { RpcFailure } from '../../packages/adapters/src/rpc/status.js'
import { violation } from '../support/rpc-failure.js'
import { runs } from '../support/runs.js'

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
      { numRuns: runs(2000) },
    )
  })

  it('evaluates like a naive interpreter once compiled to a core filter', () => {
    fc.assert(
      fc.property(expr, fc.array(metadata, { minLength: 1, maxLength: 8 }), (e, records) => {
        const predicate = compileFilter(toCoreFilter(e, { path: 'filter', fieldOf: (k) => k, typeOf: () => undefined }))
        for (const m of records) expect(predicate(m)).toBe(naive(e, m))
      }),
      { numRuns: runs(2000) },
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
    // A number run on into letters is named whole where it starts; one past float64's range too.
    expect(message('year = 0x7E2')).toMatch(/position 8 .*"0x7E2" is not a number: write numbers in decimal \(2018, -1.5, 1e3\), or quote a text value \("0x7E2"\)\.$/)
    expect(message('year = 12abc AND x = 1')).toMatch(/position 8 .*"12abc" is not a number/)
    expect(message('price = 1e999')).toMatch(/position 9 .*1e999 is beyond the range of numbers/)
    expect(message('tiny = 5e-324 AND big = 1.7e308')).toBe('parsed')
    // Lowercase logical operators read as field names: the message says to write them in capitals.
    expect(message('year = 1 and genre = "drama"')).toMatch(/position 14 .*expected an operator \(=, !=, <, <=, >, >=, :\) after "and"\. AIP-160 writes its logical operators in capitals: AND, not and\.$/)
    expect(message('year = 1 Or genre = "drama"')).toMatch(/capitals: OR, not Or\.$/)
    expect(message('not year = 1')).toMatch(/capitals: NOT, not not\.$/)
    expect(message('andromeda 1')).not.toMatch(/capitals/)
  })
})

describe('AIP-160 filter limits: length and nesting', () => {
  const status = violation
  const records: Metadata[] = [{ a: 1, b: 2 }, { a: 2, b: 2 }, { a: 1 }, {}]
  const evaluate = (filter: string): boolean[] => {
    const predicate = compileFilter(validateFilter(toCoreFilter(parseFilter(filter, 'filter'), { path: 'filter', fieldOf: (k) => k, typeOf: () => undefined })))
    return records.map((m) => predicate(m))
  }

  it(`refuses nesting deeper than ${MAX_FILTER_DEPTH} (parentheses, NOT, -) at the position where it crosses, 10,000 deep included`, () => {
    expect(MAX_FILTER_DEPTH).toBe(32)
    // 10,000 levels within the length limit (a filter whose closing parentheses would pass it is refused for its length first).
    const cases: [string, number][] = [
      [`${'('.repeat(10_000)}a = 1`, 33],
      [`${'-'.repeat(10_000)}a = 1`, 33],
      [`${'NOT('.repeat(2_500)}a = 1${')'.repeat(2_500)}`, 16 * 4 + 1],
      [`${'NOT '.repeat(33)}a = 1`, 32 * 4 + 1],
      [`${'a = 1 AND ('.repeat(33)}a = 1${')'.repeat(33)}`, 32 * 11 + 11],
    ]
    for (const [filter, position] of cases) {
      const s = status(() => parseFilter(filter, 'metadataFilter'))
      expect(s.code).toBe(3)
      expect(s.field).toBe('metadataFilter')
      expect(s.message).toMatch(new RegExp(`^metadataFilter: invalid filter at position ${position} \\(.*\\): the filter nests deeper than 32 levels here \\(parentheses and NOT / - count one each\\); at most 32 \\(Quarry's cap; Google documents none\\)\\.$`))
    }
  })

  it('parses and evaluates filters at the nesting limit', () => {
    // 32 negations cancel out; 31 do not.
    expect(evaluate(`${'NOT '.repeat(32)}a = 1`)).toEqual([true, false, true, false])
    expect(evaluate(`${'-'.repeat(31)}a = 1`)).toEqual([false, true, false, true])
    expect(evaluate(`${'('.repeat(32)}a = 1${')'.repeat(32)}`)).toEqual([true, false, true, false])
    // Alternating AND / OR, 32 parentheses deep: the deepest tree the limit allows, well inside core's own.
    let nested = 'b = 2'
    for (let i = 0; i < 32; i++) nested = i % 2 === 0 ? `a = 9 OR a = 1 AND (${nested})` : `a = 1 AND (${nested}) OR a = 8`
    const expr = parseFilter(nested, 'filter')
    const depth = (e: FilterExpr): number => (e.k === 'and' || e.k === 'or' ? 1 + Math.max(...e.items.map(depth)) : e.k === 'not' ? 1 + depth(e.expr) : 1)
    expect(depth(expr)).toBeGreaterThan(32)
    const predicate = compileFilter(validateFilter(toCoreFilter(expr, { path: 'filter', fieldOf: (k) => k, typeOf: () => undefined })))
    for (const m of records) expect(predicate(m)).toBe(naive(expr, m))
    expect(records.map((m) => predicate(m))).toEqual([true, false, false, false])
  })

  it(`refuses filters longer than ${MAX_FILTER_LENGTH.toLocaleString('en-US')} characters, naming the limit`, () => {
    const at = (length: number): string => {
      const base = 'a = 1 OR '.repeat(Math.ceil(length / 9)).slice(0, length - 5)
      return `${base.replace(/ OR $|OR $|O$/, '   ')}${' '.repeat(length - 5 - base.length)}a = 1`
    }
    const longest = at(MAX_FILTER_LENGTH)
    expect(longest).toHaveLength(20_000)
    expect(evaluate(longest)).toEqual([true, false, true, false])
    const s = status(() => parseFilter(`${longest} `, 'filter'))
    expect(s).toMatchObject({ code: 3, field: 'filter' })
    expect(s.message).toMatch(/^filter: invalid filter at position 20001 \(.*\): a filter is at most 20,000 characters \(Quarry's cap; Google documents none\); this one has 20,001\.$/)
    // A million-character filter is refused as cheaply: nothing is tokenized. So is 10,000-deep nesting that is also too long.
    expect(status(() => parseFilter('('.repeat(1_000_000), 'filter')).message).toMatch(/this one has 1,000,000\.$/)
    expect(status(() => parseFilter(`${'NOT '.repeat(10_000)}a = 1`, 'filter'))).toMatchObject({ code: 3, field: 'filter', message: expect.stringMatching(/position 20001 .*this one has 40,005\.$/) })
  })

  it('answers deep and long filters through RAG Engine and Memory Bank as INVALID_ARGUMENT', async () => {
    const embedder = createHashingEmbedder({ dimensions: 16 })
    const rag = new VertexRagEngine({ embedder })
    const created = await rag.v1beta1.createRagCorpus({ parent: 'projects/p/locations/l', ragCorpus: { displayName: 'c' } })
    if (!created.ok) throw new Error(created.status.message)
    const ragCorpus = created.response.response?.name as string
    const retrieve = (metadataFilter: string) =>
      rag.v1beta1.retrieveContexts({ parent: 'projects/p/locations/l', vertexRagStore: { ragResources: [{ ragCorpus }] }, query: { text: 'x', ragRetrievalConfig: { filter: { metadataFilter } } } })
    const deep = await retrieve(`${'('.repeat(10_000)}a = 1`)
    expect(deep.ok).toBe(false)
    if (deep.ok) return
    expect(deep.status.code).toBe(3)
    expect(deep.status.details?.[0]?.fieldViolations[0]?.field).toBe('query.ragRetrievalConfig.filter.metadataFilter')
    expect(deep.status.message).toMatch(/position 33 .*nests deeper than 32/)
    const long = await retrieve('a = 1 AND '.repeat(2_001))
    expect(!long.ok && long.status.message).toMatch(/at most 20,000 characters/)

    const bank = new MemoryBank({ embedder })
    const E = 'projects/p/locations/l/reasoningEngines/1'
    for (const outcome of [
      await bank.listMemories({ parent: E, filter: `${'NOT('.repeat(2_500)}fact = "x"${')'.repeat(2_500)}` }),
      await bank.retrieveMemories({ parent: E, scope: { u: '1' }, filter: `${'-'.repeat(10_000)}fact = "x"` }),
      await bank.purgeMemories({ parent: E, filter: `${'('.repeat(10_000)}fact = "x"` }),
    ]) {
      expect(outcome.ok).toBe(false)
      if (outcome.ok) continue
      expect(outcome.status.code).toBe(3)
      expect(outcome.status.details?.[0]?.fieldViolations[0]?.field).toBe('filter')
      expect(outcome.status.message).toMatch(/nests deeper than 32 levels/)
    }
  })
})
