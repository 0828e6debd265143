import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Bitset } from '../../packages/core/src/util/bitset.js'

/**
 * The bitset behind declarative filters: its count (which skips zero words) and its members
 * (sized by a count the caller passes) against a plain Set, on sparse and dense sets of labels.
 */
describe('Bitset', () => {
  it('counts and lists its members as a Set of the same labels does', () => {
    const labels = fc.oneof(fc.array(fc.nat({ max: 4999 }), { maxLength: 40 }), fc.array(fc.nat({ max: 199 }), { maxLength: 400 }))
    fc.assert(
      fc.property(labels, fc.array(fc.nat({ max: 4999 }), { maxLength: 20 }), (added, deleted) => {
        const bits = new Bitset(64)
        const oracle = new Set<number>()
        for (const label of added) {
          bits.add(label)
          oracle.add(label)
        }
        for (const label of deleted) {
          bits.delete(label)
          oracle.delete(label)
        }
        const members = [...oracle].sort((a, b) => a - b)
        expect(bits.count()).toBe(oracle.size)
        expect([...bits.toArray()]).toEqual(members)
        expect([...bits.toArray(oracle.size)]).toEqual(members)
      }),
    )
  })

  it('counts the top bit of a word and the last word', () => {
    const bits = new Bitset(96)
    for (const label of [31, 63, 95, 0]) bits.add(label)
    expect(bits.count()).toBe(4)
    expect([...bits.toArray()]).toEqual([0, 31, 63, 95])
  })
})
