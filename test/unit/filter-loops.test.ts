import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { createIndex, QuarryError, type FilterFn, type Metadata } from '@quarry/core'
import { filterLoopsCompiled, ignoresId } from '../../packages/core/src/filter/predicate.js'
import { expectSameRanking, oracleDistances, oracleSearch } from '../support/oracle.js'

/**
 * Issue 43, filter functions: a narrow function-filtered search evaluates the function on every
 * record in one loop, and each filter source searched with more than once gets a copy of that
 * loop of its own (V8 inlines a call only while its call site has seen one function). Whichever
 * loop runs, the answer is the brute-force oracle's: ids, order and distances.
 */
const N = 3000
const dim = 4
const vectorOf = (i: number): number[] => [i % 13, (i * 7) % 11, (i * 3) % 17, i % 5]
const metadataOf = (i: number): Metadata => ({ i, group: i % 4 === 0 ? 'a' : 'b' })
const vectors = new Map(Array.from({ length: N }, (_, i) => [`r${i}`, vectorOf(i)] as const))
const query = [6, 5, 8, 2]

/** An exact index whose filtered searches all scan the passing records (the loop under test). */
function build() {
  const index = createIndex({ dimensions: dim, metric: 'l2', dense: 'exact', planner: { exactBelow: 0, postFilterAbove: 1 } })
  index.addMany(Array.from({ length: N }, (_, i) => ({ id: `r${i}`, vector: vectorOf(i), metadata: metadataOf(i) })))
  return index
}

/** Filters of different sources, each with the ids it keeps. */
const filters: { fn: FilterFn; keep: (i: number) => boolean }[] = [
  { fn: (m) => (m['i'] as number) % 97 === 3, keep: (i) => i % 97 === 3 },
  { fn: (m) => m['group'] === 'a' && (m['i'] as number) < 400, keep: (i) => i % 4 === 0 && i < 400 },
  { fn: (_m, id) => id.endsWith('7'), keep: (i) => String(i).endsWith('7') },
  { fn: (m) => (m['i'] as number) > 2990, keep: (i) => i > 2990 },
  // Filters called without the id (one plain parameter) and with it (the id read other ways).
  { fn: ({ i }) => (i as number) % 89 === 1, keep: (i) => i % 89 === 1 },
  { fn: (_m, id = '') => id.endsWith('3'), keep: (i) => String(i).endsWith('3') },
  { fn: (...args: [Readonly<Metadata>, string]) => args[1].endsWith('5'), keep: (i) => String(i).endsWith('5') },
  {
    fn: function (this: unknown, _m: Readonly<Metadata>) {
      // eslint-disable-next-line prefer-rest-params
      return (arguments[1] as string).endsWith('9')
    },
    keep: (i) => String(i).endsWith('9'),
  },
]

describe('filter functions', () => {
  it('give the oracle\'s answer on the first search and on every later one, in a loop of their own from the second', () => {
    const index = build()
    const all = oracleDistances('l2', vectors, query)
    const compiledBefore = filterLoopsCompiled()
    for (let round = 0; round < 3; round++) {
      for (const { fn, keep } of filters) {
        const result = index.search({ vector: query, topK: 10, filter: fn })
        expect(result.stats.strategy).toBe('exact-filtered')
        expectSameRanking(result.hits, oracleSearch('l2', vectors, query, 10, (id) => keep(Number(id.slice(1)))), 10, all)
      }
      // Compiled once per source, at its second search.
      expect(filterLoopsCompiled() - compiledBefore).toBe(round === 0 ? 0 : filters.length)
    }
  })

  it('leave the id unread only for an arrow function of one plain parameter', () => {
    // Function texts as Function.prototype.toString gives them. Arrows of one parameter cannot reach a second argument.
    for (const text of ['(m) => m.a < 1', 'm => m.a', '({ a, b: c }) => a < c', 'async (m) => m', '(m) => arguments[1]', "(m) => eval('arguments[1]')"]) expect(ignoresId(text), text).toBe(true)
    // Anything else may: a `function` can through `arguments` (spelled any way, or through eval or its own `.caller` chain).
    const mayReadId = [
      '(m, id) => id',
      "(m, id = 'x') => id",
      '(...a) => a[1]',
      '(m /* , id */) => m',
      '({ a = 1 }) => a',
      '({ a: { b } }) => b',
      '([a]) => a',
      'function (m) { return m.x }',
      'function (m) { return \\u0061rguments[1] }',
      'function f /* (m) */ (m, id) { return id }',
      "function (m) { return eval('argu' + 'ments[1]') }",
      'function Boolean() { [native code] }',
      'function () { [native code] }',
      'filter(m) { return m.a }',
    ]
    for (const text of mayReadId) expect(ignoresId(text), text).toBe(false)
    expect(ignoresId(String(Boolean))).toBe(false)
    expect(ignoresId(String(((m: unknown) => m).bind(null)))).toBe(false)
  })

  it('fail with FILTER_FAILED naming the record, in either loop', () => {
    const index = build()
    // The same source three times: the first search runs the shared loop, the later ones its own.
    const throwing = (at: number): FilterFn => (m) => {
      if (m['i'] === at) throw new Error('bad filter')
      return true
    }
    for (const at of [0, 1500, N - 1]) {
      let caught: unknown
      try {
        index.search({ vector: query, filter: throwing(at) })
      } catch (error) {
        caught = error
      }
      expect(caught).toBeInstanceOf(QuarryError)
      expect((caught as QuarryError).code).toBe('FILTER_FAILED')
      expect((caught as QuarryError).message).toContain(`on record "r${at}": bad filter`)
    }
    // The index is unchanged and searches on.
    const first = filters[0] as (typeof filters)[number]
    expect(index.search({ vector: query, topK: 1, filter: first.fn }).hits[0]?.id).toBe(oracleSearch('l2', vectors, query, 1, (id) => first.keep(Number(id.slice(1))))[0]?.id)
  })

  it('run in the shared loop where code cannot be compiled from strings, with the same answers', async () => {
    // A process started with --disallow-code-generation-from-strings: the loop copies cannot be
    // made; every search still answers, the same ids as the oracle.
    const script = [
      "const { createIndex } = await import('@quarry/core')",
      "const { filterLoopsCompiled } = await import('./packages/core/src/filter/predicate.ts')",
      "const index = createIndex({ dimensions: 1, metric: 'l2', dense: 'exact', planner: { exactBelow: 0, postFilterAbove: 1 } })",
      "index.addMany(Array.from({ length: 500 }, (_, i) => ({ id: 'r' + i, vector: [i], metadata: { i } })))",
      'const ids = []',
      'for (let round = 0; round < 3; round++) ids.push(index.search({ vector: [250], topK: 3, filter: (m) => m.i % 10 === 0 }).hits.map((h) => h.id).join(","))',
      'console.log(JSON.stringify({ ids, compiled: filterLoopsCompiled() }))',
    ].join('\n')
    const child = spawn(process.execPath, ['--disallow-code-generation-from-strings', '--conditions=quarry-source', '--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (b: Buffer) => (out += b.toString()))
    child.stderr.on('data', (b: Buffer) => (err += b.toString()))
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    expect(err).toBe('')
    expect(code).toBe(0)
    expect(JSON.parse(out)).toEqual({ ids: ['r250,r240,r260', 'r250,r240,r260', 'r250,r240,r260'], compiled: 0 })
  })
})
