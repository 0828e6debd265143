import fc from 'fast-check'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { compileFilter, createIndex, loadIndex, type Filter, type FilterScalar, type Metadata, type MetadataValue, type QuarryIndex } from '@quarry/core'
import { runs } from '../support/runs.js'

const dir = mkdtempSync(join(tmpdir(), 'quarry-field-indexes-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// Records hold two fields every record has (dense) and up to five of 40 keys each record may or may
// not have (sparse: most keys are held by a few records, some by one), each of any kind. The value
// indexes size a field by the records holding it (lists, Maps) or by the labels (bitsets, arrays)
// as it fills, and drop what no record holds: every way between is answered as testing each record.
const SPARSE = Array.from({ length: 40 }, (_, k) => `k${k}`)
const STRINGS = ['a', 'b', 'c', 'd']
const date = fc.integer({ min: 0, max: 4 }).map((d) => new Date(d * 86_400_000))
const value: fc.Arbitrary<MetadataValue> = fc.oneof(
  fc.constantFrom(...STRINGS),
  fc.integer({ min: -3, max: 3 }),
  fc.constantFrom(0.5, -0, 1e12),
  date,
  fc.subarray(STRINGS),
  fc.boolean(),
)
const metadata: fc.Arbitrary<Metadata> = fc
  .tuple(fc.integer({ min: 0, max: 5 }), fc.constantFrom(...STRINGS), fc.uniqueArray(fc.tuple(fc.constantFrom(...SPARSE), value), { maxLength: 5, selector: ([k]) => k }))
  .map(([n, s, pairs]) => ({ n, s, ...Object.fromEntries(pairs) }))

type Op = { kind: 'upsert'; id: number; metadata: Metadata } | { kind: 'remove'; id: number } | { kind: 'reload' }
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('upsert' as const), id: fc.nat(59), metadata }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('remove' as const), id: fc.nat(59) }), weight: 3 },
  { arbitrary: fc.constant({ kind: 'reload' as const }), weight: 1 },
)

const scalar: fc.Arbitrary<FilterScalar> = fc.oneof(
  fc.constantFrom(...STRINGS, 'bb'),
  fc.integer({ min: -4, max: 4 }),
  fc.constantFrom(0.5, 0, 1e12),
  date.map((d) => ({ datetime: d.toISOString() })),
  fc.boolean(),
)
const field = fc.oneof(fc.constantFrom('n', 's', 'missing'), fc.constantFrom(...SPARSE))
const leaf: fc.Arbitrary<Filter> = fc.oneof(
  fc.record({ op: fc.constantFrom('eq', 'ne', 'lt', 'lte', 'gt', 'gte' as const), field, value: scalar }),
  fc.record({ op: fc.constantFrom('in', 'nin' as const), field, values: fc.array(scalar, { minLength: 1, maxLength: 3 }) }),
  fc.record({ op: fc.constantFrom('includes', 'excludes' as const), field, value: fc.constantFrom(...STRINGS) }),
  fc.record({ op: fc.constant('exists' as const), field }),
  field.map((f): Filter => ({ op: 'not', filter: { op: 'exists', field: f } })),
)
const filter: fc.Arbitrary<Filter> = fc.oneof(
  { arbitrary: leaf, weight: 3 },
  fc.array(leaf, { maxLength: 3 }).map((filters): Filter => ({ op: 'and', filters })),
  fc.array(leaf, { maxLength: 3 }).map((filters): Filter => ({ op: 'or', filters })),
  leaf.map((f): Filter => ({ op: 'not', filter: f })),
)

/** Ids of the records a search with `f` finds, and of those the filter passes tested one by one. */
function both(index: QuarryIndex, live: ReadonlyMap<string, Metadata>, f: Filter): [string[], string[]] {
  const test = compileFilter(f)
  const brute = [...live].filter(([, m]) => test(m)).map(([id]) => id).sort()
  const found = index.search({ text: 'x', topK: 10_000, filter: f }).hits.map((h) => h.id).sort()
  return [found, brute]
}

describe('value indexes over sparse and dense fields of every kind', () => {
  it('answer filters as testing each record does, through upserts, removals, saves and loads', () => {
    let saves = 0
    // Some runs also add 8,000 records at one step and remove them at another (or never): fields
    // fill the label range (bitsets, arrays by label), then shrink back to a few records (lists,
    // Maps), with runs of sorted values merged on the way.
    const bulk = Array.from({ length: 8000 }, (_, i): [string, Metadata] => [`b${i}`, { n: i % 6, s: STRINGS[i % 4] as string, ...(i % 1000 === 0 ? { k3: i, k4: [STRINGS[i % 3] as string] } : {}) }])
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 120 }), fc.option(fc.nat(119), { nil: undefined }), fc.option(fc.nat(60), { nil: undefined }), fc.array(filter, { minLength: 1, maxLength: 8 }), (ops, add, gap, filters) => {
        const addAt = add === undefined ? -1 : add % ops.length
        const removeAt = add === undefined || gap === undefined ? -1 : Math.min(ops.length - 1, addAt + gap)
        let index = createIndex({ text: { analyzer: { tokenizer: 'unicode' } } })
        const live = new Map<string, Metadata>()
        const check = (): void => {
          for (const f of filters) {
            const [found, brute] = both(index, live, f)
            expect(found, JSON.stringify(f)).toEqual(brute)
          }
        }
        for (const [step, o] of ops.entries()) {
          if (step === addAt) {
            index.addMany(bulk.filter(([id]) => !live.has(id)).map(([id, m]) => ({ id, text: 'x', metadata: m })))
            for (const [id, m] of bulk) live.set(id, m)
          }
          if (step === removeAt) {
            index.removeMany(bulk.map(([id]) => id))
            for (const [id] of bulk) live.delete(id)
            check()
          }
          if (o.kind === 'upsert') {
            index.upsert({ id: `r${o.id}`, text: 'x', metadata: o.metadata })
            live.set(`r${o.id}`, o.metadata)
          } else if (o.kind === 'remove') {
            index.remove(`r${o.id}`)
            live.delete(`r${o.id}`)
          } else {
            check()
            const to = join(dir, `s${saves++}`)
            index.save(to)
            index = loadIndex(to)
            rmSync(to, { recursive: true, force: true })
          }
        }
        check()
      }),
      { numRuns: runs(60) },
    )
  })
})
