import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { compileFilter, createIndex, QuarryError, type Filter, type FilterScalar, type Metadata } from '@quarry/core'
import { filterArbitrary, metadataArbitrary, type MetadataFields } from '@quarry/core/testing'
import { ValueIndex } from '../../packages/core/src/filter/value-index.js'
import { Bitset } from '../../packages/core/src/util/bitset.js'
import { runs } from '../support/runs.js'
import { prng } from '../support/random.js'

/** A record's own value of a field (a name such as `constructor` is no field of a record that does not set it). */
const own = (m: Readonly<Metadata>, field: string): unknown => (Object.hasOwn(m, field) ? m[field] : undefined)

/** The filter semantics written plainly: a different type than the stored one never matches. */
function naive(f: Filter, m: Readonly<Metadata>): boolean {
  const kind = (v: unknown): string => (v instanceof Date ? 'datetime' : Array.isArray(v) ? 'list' : typeof v)
  const scalar = (v: FilterScalar): [string, unknown] => (typeof v === 'object' ? ['datetime', Date.parse(v.datetime)] : [typeof v, v])
  const stored = (v: unknown): unknown => (v instanceof Date ? v.getTime() : v)
  switch (f.op) {
    case 'and':
      return f.filters.every((g) => naive(g, m))
    case 'or':
      return f.filters.some((g) => naive(g, m))
    case 'not':
      return !naive(f.filter, m)
    case 'exists':
      return Object.hasOwn(m, f.field)
    case 'includes':
      return Array.isArray(own(m, f.field)) && (own(m, f.field) as string[]).includes(f.value)
    case 'excludes':
      return Array.isArray(own(m, f.field)) && !(own(m, f.field) as string[]).includes(f.value)
    case 'in':
    case 'nin': {
      const v = own(m, f.field)
      if (v === undefined || Array.isArray(v)) return false
      const same = f.values.map(scalar).filter(([k]) => k === kind(v))
      if (same.length === 0) return false
      const hit = same.some(([, x]) => x === stored(v))
      return f.op === 'in' ? hit : !hit
    }
    default: {
      const v = own(m, f.field)
      const [k, x] = scalar(f.value)
      if (v === undefined || kind(v) !== k) return false
      const s = stored(v) as string | number | boolean
      const w = x as string | number | boolean
      if (f.op === 'eq') return s === w
      if (f.op === 'ne') return s !== w
      if (k === 'boolean') return false
      return f.op === 'lt' ? s < w : f.op === 'lte' ? s <= w : f.op === 'gt' ? s > w : s >= w
    }
  }
}

/** Fields of any kind, record by record: comparisons with another kind than the stored one are common. */
const FIELDS: MetadataFields = { genre: 'any', year: 'any', tags: 'any', live: 'any', when: 'any' }
const metadata = metadataArbitrary({ fields: FIELDS })
const filter = filterArbitrary({ fields: FIELDS })

/** Gives each live label of `replaced` its new metadata, in the value index and in `live`. */
function replaceAll(values: ValueIndex, live: Map<number, Metadata>, replaced: readonly (readonly [number, Metadata])[]): void {
  for (const [label, m] of replaced) {
    const old = live.get(label)
    if (!old) continue
    values.remove(label, old)
    values.add(label, m)
    live.set(label, m)
  }
}

/** A value index of `records` (labelled by position), then `removed` taken out and `replaced` put in place; with what it holds by label. */
function churned(records: readonly Metadata[], removed: readonly number[], replaced: readonly (readonly [number, Metadata])[]): { index: ValueIndex; live: Map<number, Metadata> } {
  const index = new ValueIndex()
  const live = new Map<number, Metadata>()
  records.forEach((m, label) => {
    index.add(label, m)
    live.set(label, m)
  })
  for (const label of removed) {
    const m = live.get(label)
    if (m) {
      index.remove(label, m)
      live.delete(label)
    }
  }
  replaceAll(index, live, replaced)
  return { index, live }
}

/** Labels the value index matches, as a sorted array. */
function indexed(values: ValueIndex, f: Filter): number[] {
  return [...values.match(f).toArray()]
}

describe('declarative filters', () => {
  it('the compiled evaluator agrees with a naive interpreter on any filter and record', () => {
    fc.assert(
      fc.property(filter, metadata, (f, m) => {
        expect(compileFilter(f)(m)).toBe(naive(f, m))
      }),
      { numRuns: runs(3000) },
    )
  })

  it('fields named like what every object inherits (constructor, toString, valueOf) are a record\'s own or missing, on every path', () => {
    // Fields a plain object inherits: a record has one only when it sets it (here every fourth sets `toString`).
    const ALSO: MetadataFields = Object.fromEntries(['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'n'].map((name) => [name, 'any' as const]))
    fc.assert(
      fc.property(filterArbitrary({ fields: ALSO }), metadataArbitrary({ fields: ALSO }), (f, m) => {
        expect(compileFilter(f)(m)).toBe(naive(f, m))
      }),
      { numRuns: runs(1000) },
    )
    expect(compileFilter({ op: 'exists', field: 'constructor' })({ n: 1 })).toBe(false)
    expect(compileFilter({ op: 'exists', field: 'toString' })({ toString: 'set' })).toBe(true)
    // Through a whole index, whichever strategy the planner picks (a broad one post-filters a graph
    // search): every hit passes the filter, and there are as many as asked.
    const random = prng(5)
    const index = createIndex({ dimensions: 4 })
    const stored = Array.from({ length: 20_000 }, (_, i): Metadata => ({ n: i % 100, ...(i % 4 === 0 ? { toString: 'set' } : {}) }))
    index.addMany(stored.map((metadata, i) => ({ id: `r${i}`, vector: [random(), random(), random(), random()], metadata })))
    const filters: Filter[] = [
      { op: 'or', filters: [{ op: 'lt', field: 'n', value: 50 }, { op: 'exists', field: 'constructor' }] },
      { op: 'and', filters: [{ op: 'lt', field: 'n', value: 50 }, { op: 'not', filter: { op: 'exists', field: 'valueOf' } }] },
      { op: 'and', filters: [{ op: 'lt', field: 'n', value: 50 }, { op: 'exists', field: 'toString' }] },
      { op: 'or', filters: [{ op: 'lt', field: 'n', value: 30 }, { op: 'eq', field: 'toString', value: 'set' }] },
    ]
    for (const f of filters) {
      const { hits } = index.search({ vector: [0.5, 0.2, 0.9, 0.4], topK: 10, filter: f })
      expect(hits.length, JSON.stringify(f)).toBe(10)
      for (const h of hits) expect(naive(f, stored[Number(h.id.slice(1))] as Metadata), `${h.id} for ${JSON.stringify(f)}`).toBe(true)
    }
  })

  it('value indexes return exactly the brute-force matches, also after removals and replacements', () => {
    fc.assert(
      fc.property(fc.array(metadata, { maxLength: 40 }), fc.array(fc.nat(39)), fc.array(fc.tuple(fc.nat(39), metadata)), fc.array(filter, { minLength: 1, maxLength: 5 }), (records, removed, replaced, filters) => {
        const { index: values, live } = churned(records, removed, replaced)
        for (const f of filters) {
          const brute = [...live].filter(([, m]) => naive(f, m)).map(([label]) => label).sort((a, b) => a - b)
          expect(indexed(values, f)).toEqual(brute)
        }
      }),
      { numRuns: runs(400) },
    )
  })

  it('index.ids(filter): the ids of the matching records in label order, as ids() and the compiled filter give them', () => {
    fc.assert(
      fc.property(fc.array(metadata, { maxLength: 40 }), fc.array(fc.nat(39)), fc.array(fc.tuple(fc.nat(39), metadata)), fc.array(filter, { minLength: 1, maxLength: 5 }), (records, removed, replaced, filters) => {
        const index = createIndex()
        records.forEach((m, i) => index.add({ id: `r${i}`, text: 'x', metadata: m }))
        for (const i of removed) index.remove(`r${i}`)
        for (const [i, m] of replaced) if (index.has(`r${i}`)) index.replaceMetadata(`r${i}`, m)
        // Labels freed by removals are taken again: label order is not the order ids were added in.
        index.add({ id: 'late', text: 'x', metadata: records[0] ?? {} })
        for (const f of filters) {
          const test = compileFilter(f)
          expect([...index.ids(f)]).toEqual([...index.ids()].filter((id) => test(index.metadata(id) ?? {})))
        }
      }),
      { numRuns: runs(300) },
    )
    const index = createIndex()
    index.add({ id: 'a', text: 'x', metadata: { n: 1 } })
    expect([...index.ids({ op: 'not', filter: { op: 'eq', field: 'n', value: 1 } })]).toEqual([])
    expect(() => index.ids({ op: 'eq', field: 'n' } as unknown as Filter)).toThrowError(expect.objectContaining({ code: 'INVALID_QUERY', path: 'filter.value' }) as Error)
    expect(() => index.ids(((m: Metadata) => m.n === 1) as unknown as Filter)).toThrowError(expect.objectContaining({ code: 'INVALID_QUERY', path: 'filter' }) as Error)
  })

  it("the planner's estimate is never below the matches, and exact for a range with no stale entries", () => {
    fc.assert(
      fc.property(fc.array(metadata, { maxLength: 40 }), fc.array(fc.tuple(fc.nat(39), metadata)), fc.array(filter, { minLength: 1, maxLength: 5 }), (records, replaced, filters) => {
        const values = new ValueIndex()
        const live = new Map<number, Metadata>()
        records.forEach((m, label) => {
          values.add(label, m)
          live.set(label, m)
        })
        // Ranges before any replacement: no entry of the sorted values is stale.
        for (const f of filters) if (['lt', 'lte', 'gt', 'gte'].includes(f.op)) expect(values.estimate(f)).toBe(values.match(f).count())
        replaceAll(values, live, replaced)
        for (const f of filters) expect(values.estimate(f)).toBeGreaterThanOrEqual(values.match(f).count())
      }),
      { numRuns: runs(400) },
    )
  })

  it('a broad range on a graph search is tested on the candidates, with the hits of an exact search over the passing records', () => {
    const rand = prng(3)
    const n = 12_000
    // Over the scan limit (planner.exactBelow's 1,000 here, above exactFilterMax, scaled by ef 128 / 64
    // to 2,000) and at least postFilterAbove: post-filtered.
    const index = createIndex({ dimensions: 8, metric: 'l2', dense: 'hnsw', hnsw: { efConstruction: 100 }, planner: { exactFilterMax: 300 } })
    index.addMany(Array.from({ length: n }, (_, i) => ({ id: `r${i}`, vector: Array.from({ length: 8 }, () => rand()), metadata: { bucket: i % 100 } })))
    const exact = createIndex({ dimensions: 8, metric: 'l2', dense: 'exact' })
    for (const id of index.ids()) {
      const r = index.get(id)
      exact.add({ id, vector: r?.vector as Float32Array, metadata: r?.metadata ?? {} })
    }
    // Counts the bitsets the value indexes build: none for a broad range on the graph.
    const values = index.state.values
    const match = values.match.bind(values)
    let bitsets = 0
    values.match = (f) => (bitsets++, match(f))
    for (const below of [90, 50, 20]) {
      const f: Filter = { op: 'lt', field: 'bucket', value: below }
      for (let q = 0; q < 5; q++) {
        const vector = Array.from({ length: 8 }, () => rand())
        // Precise distances: the graph's float32 sums and the scan's differ in the last bits.
        const { hits, stats } = index.search({ vector, topK: 10, ef: 128, filter: f, preciseDistances: true })
        // Estimated from the sorted values (no bitset built), exactly here: nothing was replaced.
        expect(stats).toMatchObject({ strategy: 'hnsw-postfilter', estimatedSelectivity: below / 100 })
        expect(hits).toEqual(exact.search({ vector, topK: 10, filter: f, preciseDistances: true }).hits)
      }
    }
    expect(bitsets).toBe(0)
    // A range passing few enough records for the exact scan still builds its bitset and scans them.
    expect(index.search({ vector: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], topK: 10, filter: { op: 'lt', field: 'bucket', value: 5 } }).stats).toMatchObject({ strategy: 'exact-filtered', allowed: 600 })
    expect(bitsets).toBe(1)
  })

  it('not(not f) == f and De Morgan, through the value indexes', () => {
    fc.assert(
      fc.property(fc.array(metadata, { maxLength: 30 }), filter, filter, (records, a, b) => {
        const values = new ValueIndex()
        records.forEach((m, label) => values.add(label, m))
        expect(indexed(values, { op: 'not', filter: { op: 'not', filter: a } })).toEqual(indexed(values, a))
        expect(indexed(values, { op: 'not', filter: { op: 'and', filters: [a, b] } })).toEqual(indexed(values, { op: 'or', filters: [{ op: 'not', filter: a }, { op: 'not', filter: b }] }))
        expect(indexed(values, { op: 'not', filter: { op: 'or', filters: [a, b] } })).toEqual(indexed(values, { op: 'and', filters: [{ op: 'not', filter: a }, { op: 'not', filter: b }] }))
      }),
      { numRuns: runs(300) },
    )
  })

  it('searches give the same hits with a declarative filter as with the equivalent function, dense and text', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(metadata, fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 3, maxLength: 3 })), { minLength: 1, maxLength: 40 }), filter, (rows, f) => {
        const index = createIndex({ dimensions: 3, metric: 'l2', dense: 'exact' })
        rows.forEach(([m, v], i) => index.add({ id: `r${i}`, vector: v, text: `word${i % 3} common`, metadata: m }))
        const fn = compileFilter(f)
        const q = [1, 0, -1]
        expect(index.search({ vector: q, topK: 50, filter: f }).hits).toEqual(index.search({ vector: q, topK: 50, filter: (m) => fn(m) }).hits)
        expect(index.search({ text: 'common word1', topK: 50, filter: f }).hits).toEqual(index.search({ text: 'common word1', topK: 50, filter: (m) => fn(m) }).hits)
      }),
      { numRuns: runs(200) },
    )
  })

  it('bad filters are refused with the path of the problem', () => {
    const index = createIndex({ dimensions: 2, metric: 'l2' })
    expect(() => index.search({ vector: [1, 0], filter: { op: 'eq', field: 'a', value: Number.NaN } })).toThrowError(expect.objectContaining({ code: 'INVALID_QUERY', path: 'filter.value' }) as Error)
    expect(() => index.search({ vector: [1, 0], filter: { op: 'and', filters: [{ op: 'like', field: 'a' }] } as never })).toThrowError(expect.objectContaining({ path: 'filter.filters[0].op' }) as Error)
  })
})

describe('numeric range indexes under heavy churn', () => {
  it('stay exact through merges of the write run and stale entries', () => {
    const rand = ((seed: number) => () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296))(7)
    const values = new ValueIndex()
    const live = new Map<number, Metadata>()
    for (let step = 0; step < 20_000; step++) {
      const label = Math.floor(rand() * 3000)
      const old = live.get(label)
      if (old) values.remove(label, old)
      if (rand() < 0.2) {
        live.delete(label)
      } else {
        const m: Metadata = { n: Math.floor(rand() * 500), when: new Date(Math.floor(rand() * 100) * 1000) }
        values.add(label, m)
        live.set(label, m)
      }
      if (step % 997 === 0) {
        const lo = Math.floor(rand() * 500)
        const f: Filter = { op: 'and', filters: [{ op: 'gte', field: 'n', value: lo }, { op: 'lt', field: 'n', value: lo + 50 }, { op: 'gt', field: 'when', value: { datetime: new Date(30_000).toISOString() } }] }
        const brute = [...live].filter(([, m]) => naive(f, m)).map(([l]) => l).sort((a, b) => a - b)
        expect(indexed(values, f)).toEqual(brute)
        expect(indexed(values, { op: 'eq', field: 'n', value: lo })).toEqual([...live].filter(([, m]) => m.n === lo).map(([l]) => l).sort((a, b) => a - b))
      }
    }
  })
})

describe('string and list postings from one record to every record', () => {
  // Values held by one record (ids, URLs), by a few and by most: postings are label lists while
  // small and bitsets once dense (value-index.ts), under churn, and read back from a snapshot.
  it('match exactly like brute force, also after a snapshot round trip', () => {
    const rand = ((seed: number) => () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296))(11)
    const pick = (pool: number): string => `v${Math.floor(rand() * pool)}`
    let values = new ValueIndex()
    const live = new Map<number, Metadata>()
    for (let step = 0; step < 12_000; step++) {
      const label = Math.floor(rand() * 2000)
      const old = live.get(label)
      if (old) values.remove(label, old)
      if (rand() < 0.15) {
        live.delete(label)
      } else {
        const m: Metadata = { unique: `u${step}`, few: pick(300), common: pick(2), tags: [pick(3), pick(500)], flag: rand() < 0.5 }
        values.add(label, m)
        live.set(label, m)
      }
      if (step % 1499 === 0) {
        if (step % 2998 === 0) values = ValueIndex.fromSnapshot(values.snapshot()) as ValueIndex
        const some = [...live.values()][Math.floor(rand() * live.size)] as Metadata
        const filters: Filter[] = [
          { op: 'eq', field: 'unique', value: some.unique as string },
          { op: 'ne', field: 'few', value: some.few as string },
          { op: 'in', field: 'few', values: [some.few as string, 'v7', 'v8'] },
          { op: 'nin', field: 'common', values: ['v0'] },
          { op: 'gte', field: 'unique', value: 'u5' },
          { op: 'lt', field: 'few', value: 'v150' },
          { op: 'includes', field: 'tags', value: (some.tags as string[])[1] as string },
          { op: 'excludes', field: 'tags', value: 'v1' },
          { op: 'eq', field: 'flag', value: true },
          { op: 'not', filter: { op: 'eq', field: 'common', value: 'v1' } },
        ]
        for (const f of filters) {
          const brute = [...live].filter(([, m]) => naive(f, m)).map(([l]) => l).sort((a, b) => a - b)
          expect(indexed(values, f), JSON.stringify(f)).toEqual(brute)
        }
      }
    }
  })
})

describe('wide filters', () => {
  // Few distinct values per field, so many records share one and many filter values hit.
  const day = (d: number): string => `2024-01-${String(d).padStart(2, '0')}T00:00:00Z`
  const stored = fc.record(
    {
      s: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
      n: fc.integer({ min: 0, max: 30 }),
      d: fc.integer({ min: 1, max: 9 }).map((x) => new Date(day(x))),
      b: fc.boolean(),
      l: fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }),
      x: fc.oneof(fc.constantFrom('a', 'b'), fc.integer({ min: 0, max: 5 }), fc.boolean()),
    },
    { requiredKeys: [] },
  ) as fc.Arbitrary<Metadata>
  const field = fc.constantFrom('s', 'n', 'd', 'b', 'l', 'x', 'missing')
  const scalar: fc.Arbitrary<FilterScalar> = fc.oneof(fc.constantFrom('a', 'b', 'c', 'zz'), fc.integer({ min: -1, max: 32 }), fc.boolean(), fc.integer({ min: 1, max: 10 }).map((x) => ({ datetime: day(x) })))
  const values = fc.array(scalar, { minLength: 0, maxLength: 300 })
  const leaf: fc.Arbitrary<Filter> = fc.oneof(
    fc.record({ op: fc.constantFrom('eq' as const, 'ne' as const, 'lt' as const, 'gte' as const), field, value: scalar }),
    fc.record({ op: fc.constantFrom('in' as const, 'nin' as const), field, values }),
    fc.record({ op: fc.constant('exists' as const), field }),
    fc.record({ op: fc.constantFrom('includes' as const, 'excludes' as const), field, value: fc.constantFrom('a', 'b', 'c') }),
  )
  const wide: fc.Arbitrary<Filter> = fc.oneof(
    fc.record({ op: fc.constantFrom('in' as const, 'nin' as const), field, values }),
    fc.record({ op: fc.constantFrom('or' as const, 'and' as const), filters: fc.array(leaf, { maxLength: 300 }) }),
    // An or of equalities and ins on a few fields (gathered by field), with other parts between them.
    fc.record({ op: fc.constant('or' as const), filters: fc.array(fc.oneof(leaf, fc.record({ op: fc.constant('not' as const), filter: leaf })), { maxLength: 300 }) }),
  )

  it('in, nin, or and and of hundreds of parts match exactly the brute-force records, estimate eq and in exactly', () => {
    fc.assert(
      fc.property(fc.array(stored, { maxLength: 60 }), fc.array(fc.nat(59)), fc.array(fc.tuple(fc.nat(59), stored)), wide, (records, removed, replaced, f) => {
        const { index, live } = churned(records, removed, replaced)
        const brute = [...live].filter(([, m]) => naive(f, m)).map(([label]) => label).sort((a, b) => a - b)
        expect(indexed(index, f)).toEqual(brute)
        expect(index.estimate(f)).toBeGreaterThanOrEqual(brute.length)
        if (f.op === 'in') expect(index.estimate(f)).toBe(brute.length)
        if (f.op === 'or') for (const part of f.filters) if (part.op === 'eq' || part.op === 'in') expect(index.estimate(part)).toBe(indexed(index, part).length)
      }),
      { numRuns: runs(300) },
    )
  })

  it('numbers and datetimes in both runs of a field, with stale entries: in and its estimate are exact', () => {
    const random = prng(11)
    const index = new ValueIndex()
    const live = new Map<number, Metadata>()
    const at = (x: number): Date => new Date(Date.UTC(2024, 0, 1 + x))
    const record = (): Metadata => ({ n: Math.floor(random() * 400), d: at(Math.floor(random() * 400)) })
    // Past 1,024 writes the sorted run is built; later replacements leave stale entries and an unsorted run.
    for (let label = 0; label < 3000; label++) {
      const m = record()
      index.add(label, m)
      live.set(label, m)
    }
    for (let round = 0; round < 3; round++) {
      replaceAll(index, live, Array.from({ length: 700 }, () => [Math.floor(random() * 3000), record()] as const))
      const numbers = Array.from({ length: 150 }, () => Math.floor(random() * 420))
      const dates = Array.from({ length: 150 }, () => ({ datetime: at(Math.floor(random() * 420)).toISOString() }))
      for (const f of [
        { op: 'in', field: 'n', values: numbers },
        { op: 'in', field: 'd', values: dates },
        { op: 'nin', field: 'n', values: numbers },
        { op: 'or', filters: numbers.map((value) => ({ op: 'eq', field: 'n', value })) },
      ] as Filter[]) {
        const brute = [...live].filter(([, m]) => naive(f, m)).map(([label]) => label).sort((a, b) => a - b)
        expect(indexed(index, f)).toEqual(brute)
        if (f.op === 'in') expect(index.estimate(f)).toBe(brute.length)
      }
    }
  })

  it('a wide in adds each value\'s labels to one bitset, not a bitset per value', () => {
    const index = new ValueIndex()
    for (let label = 0; label < 20_000; label++) index.add(label, { s: `v${label}` })
    const wanted = Array.from({ length: 5000 }, (_, i) => `v${i * 4}`)
    const or = vi.spyOn(Bitset.prototype, 'or')
    try {
      const f: Filter = { op: 'in', field: 's', values: wanted }
      expect([...index.match(f).toArray()]).toEqual(wanted.map((_, i) => i * 4))
      expect(index.estimate(f)).toBe(5000)
      const either: Filter = { op: 'or', filters: wanted.map((value) => ({ op: 'eq', field: 's', value })) }
      expect([...index.match(either).toArray()]).toEqual(wanted.map((_, i) => i * 4))
      expect(or.mock.calls.length).toBeLessThan(10)
    } finally {
      or.mockRestore()
    }
  })

  it('an and of 200,000 parts is answered, not a RangeError', () => {
    const index = new ValueIndex()
    for (let label = 0; label < 64; label++) index.add(label, { g: label % 4 })
    const f: Filter = { op: 'and', filters: Array.from({ length: 200_000 }, (_, i): Filter => (i === 0 ? { op: 'eq', field: 'g', value: 1 } : { op: 'exists', field: 'g' })) }
    expect(index.estimate(f)).toBe(16)
    expect(index.match(f).count()).toBe(16)
    expect(index.estimate({ op: 'or', filters: f.filters })).toBe(64)
  })

  it('a search refuses a filter of more than 10,000 parts with INVALID_QUERY, and takes an in of as many values', () => {
    const f: Filter = { op: 'and', filters: Array.from({ length: 200_000 }, (): Filter => ({ op: 'exists', field: 'g' })) }
    const search = createIndex({ dimensions: 2, dense: 'exact' })
    search.add({ id: 'a', vector: [1, 0], metadata: { g: 1 } })
    const refused = (() => {
      try {
        search.search({ vector: [1, 0], filter: f })
      } catch (e) {
        return e
      }
      return undefined
    })()
    expect(refused).toBeInstanceOf(QuarryError)
    expect((refused as QuarryError).code).toBe('INVALID_QUERY')
    expect((refused as QuarryError).message).toMatch(/at most 20000 filters/)
    // An in of as many values is one filter.
    expect(search.search({ vector: [1, 0], filter: { op: 'in', field: 'g', values: Array.from({ length: 200_000 }, (_, i) => i) } }).hits.map((h) => h.id)).toEqual(['a'])
  })
})

describe('merging the writes into the sorted values', () => {
  // A merge sorts only the writes since the last one and merges them into the sorted run, keeping
  // the entries that still hold, once each: the run a snapshot stores is every live (value, label)
  // pair in order, whatever the writes did (the same value twice, a value and back, -0 and 0).
  it('leaves exactly the live (value, label) pairs, sorted, after any writes', () => {
    const write = fc.tuple(fc.nat(299), fc.option(fc.constantFrom(-1, -0, 0, 0.5, 1, 2, 3, 1e9), { nil: undefined }))
    fc.assert(
      fc.property(fc.array(fc.array(write, { maxLength: 1500 }), { minLength: 1, maxLength: 4 }), (batches) => {
        const values = new ValueIndex()
        const live = new Map<number, number>()
        for (const batch of batches) {
          for (const [label, n] of batch) {
            const old = live.get(label)
            if (old !== undefined) values.remove(label, { n: old })
            if (n === undefined) live.delete(label)
            else {
              values.add(label, { n })
              live.set(label, n)
            }
          }
          // A range after more than 1,024 writes merges them; so does a snapshot.
          const brute = [...live].filter(([, n]) => n >= 0.5).map(([label]) => label).sort((a, b) => a - b)
          expect(indexed(values, { op: 'gte', field: 'n', value: 0.5 })).toEqual(brute)
        }
        const pairs = [...live].sort(([la, a], [lb, b]) => a - b || la - lb)
        const run = values.snapshot().fields.find((f) => f.field === 'n')?.numbers
        expect([...(run?.labels ?? [])]).toEqual(pairs.map(([label]) => label))
        expect([...(run?.values ?? [])].map((v) => v + 0)).toEqual(pairs.map(([, n]) => n + 0))
      }),
      { numRuns: runs(100) },
    )
  })
})
