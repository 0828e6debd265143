import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { TopK } from '../../packages/core/src/util/top-k.js'
import type { Label } from '../../packages/core/src/ids.js'

describe('TopK', () => {
  it('equals sort-and-truncate, ties by label order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 })), fc.integer({ min: 0, max: 40 }), (keys, k) => {
        const top = new TopK(k, (a, b) => a - b)
        keys.forEach((key, label) => top.push(key, label as Label))
        const expected = keys
          .map((key, label) => ({ key, label }))
          .sort((a, b) => a.key - b.key || a.label - b.label)
          .slice(0, k)
        expect(top.sorted()).toEqual(expected)
      }),
    )
  })
})
