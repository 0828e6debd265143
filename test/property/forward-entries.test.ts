import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ForwardEntries, NO_TEXT } from '../../packages/core/src/sparse/forward.js'
import { runs } from '../support/runs.js'

// Issue 43: the forward index keeps every document's entry in two shared columns instead of a
// typed array pair per document. The oracle is a Map of plain arrays; entries are large enough
// that the columns outgrow their first 1,024 slots, so growth and the rewrite that drops the
// slots of replaced and removed entries both run, and a reload from the snapshot columns is
// checked at every step.

type Op = { label: number; terms: number } | { label: number; terms: undefined } | 'reload'

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ label: fc.integer({ min: 0, max: 40 }), terms: fc.integer({ min: 0, max: 400 }) }) },
  { weight: 3, arbitrary: fc.record({ label: fc.integer({ min: 0, max: 40 }), terms: fc.constant(undefined) }) },
  { weight: 1, arbitrary: fc.constant('reload' as const) },
)

/** Entry `seed` of n terms: ascending ids, tfs that tell entries apart. */
function entryOf(n: number, seed: number): { ids: number[]; tfs: number[] } {
  const ids = Array.from({ length: n }, (_, i) => i * 3 + (seed % 3))
  return { ids, tfs: ids.map((id) => Math.fround(seed + id / 8)) }
}

function concat<T extends Uint32Array | Float32Array>(parts: readonly T[], make: (n: number) => T): T {
  const out = make(parts.reduce((sum, p) => sum + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}

describe('forward entries in shared columns', () => {
  it('hold what a Map holds through sets, replacements, deletions, growth, rewrites and reloads', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), (ops) => {
        let forward = ForwardEntries.empty()
        const oracle = new Map<number, { ids: number[]; tfs: number[] }>()
        ops.forEach((o, step) => {
          if (o === 'reload') {
            const { counts, ids, tfs } = forward.columns(41)
            const reloaded = ForwardEntries.fromColumns(counts, concat(ids, (n) => new Uint32Array(n)), concat(tfs, (n) => new Float32Array(n)))
            expect(reloaded).toBeDefined()
            forward = reloaded as ForwardEntries
          } else if (o.terms === undefined) {
            forward.delete(o.label)
            oracle.delete(o.label)
          } else {
            const entry = entryOf(o.terms, step)
            forward.delete(o.label)
            forward.set(o.label, Uint32Array.from(entry.ids), Float32Array.from(entry.tfs), o.terms)
            oracle.set(o.label, entry)
          }
          for (let label = 0; label <= 41; label++) {
            const want = oracle.get(label)
            const got = forward.get(label)
            expect(forward.has(label)).toBe(want !== undefined)
            expect(got && { ids: [...got.ids], tfs: [...got.tfs] }).toEqual(want)
            if (want && want.ids.length > 0) {
              const i = (step + label) % want.ids.length
              expect(forward.tf(label, want.ids[i] as number)).toBe(want.tfs[i])
              expect(forward.tf(label, (want.ids[i] as number) + 1)).toBe(0)
            }
          }
          // The documents BM25 counts: entries that hold a term (an empty entry is none, as Lucene's docCount).
          expect(forward.withTerms(41)).toBe([...oracle.values()].filter((e) => e.ids.length > 0).length)
        })
      }),
      { numRuns: runs(60) },
    )
  })

  it('grows past its first slots, drops dead ones, and gives its snapshot columns in label order', () => {
    const forward = ForwardEntries.empty()
    // Label 0 replaced 10 times over 3,000 slots: the columns fill with dead slots and are rewritten.
    for (let round = 0; round < 10; round++) {
      forward.delete(0)
      forward.set(0, Uint32Array.from({ length: 300 }, (_, i) => i), new Float32Array(300).fill(round), 300)
      forward.set(1 + round, Uint32Array.of(7 + round), Float32Array.of(round), 1)
    }
    const { counts, ids, tfs } = forward.columns(12)
    expect([...counts]).toEqual([300, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, NO_TEXT])
    const range = Array.from({ length: 10 }, (_, i) => i)
    expect([...concat(ids, (n) => new Uint32Array(n))]).toEqual([...Array.from({ length: 300 }, (_, i) => i), ...range.map((r) => 7 + r)])
    expect([...concat(tfs, (n) => new Float32Array(n))]).toEqual([...new Array<number>(300).fill(9), ...range])
    expect(forward.withTerms(12)).toBe(11)
  })
})
