import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { pageByKey, pageByKeyUnsorted, type Page } from '../../packages/adapters/src/rpc/paging.js'

/**
 * `pageByKeyUnsorted` picks one page out of items in any order (lists with an `orderBy`: sessions,
 * memories) instead of sorting them all. Its oracle is `pageByKey` over the same items sorted:
 * every page, walked by its tokens, has the same items in the same order and the same token,
 * including a last page that ends exactly at the end (no token) and items deleted between pages.
 */
interface Item {
  readonly a: number
  readonly b: number
  readonly seq: number
}

const LIMITS = { defaultSize: 3, maxSize: 5 }

function sortedBy(items: readonly Item[], desc: readonly boolean[]): Item[] {
  const key = (x: Item): number[] => [x.a, x.b, x.seq]
  return [...items].sort((x, y) => {
    const kx = key(x)
    const ky = key(y)
    for (let i = 0; i < kx.length; i++) {
      const d = (kx[i] as number) - (ky[i] as number)
      if (d !== 0) return desc[i] === true ? -d : d
    }
    return 0
  })
}

describe('pageByKeyUnsorted', () => {
  it('pages as pageByKey over the sorted items, with deletions between pages', () => {
    fc.assert(
      fc.property(
        // Keys from a small range (many ties), a unique seq each, in any order.
        fc.uniqueArray(fc.record({ a: fc.integer({ min: 0, max: 3 }), b: fc.integer({ min: -2, max: 2 }), seq: fc.nat({ max: 1000 }) }), { selector: (x) => x.seq, maxLength: 40 }),
        fc.tuple(fc.boolean(), fc.boolean()),
        fc.integer({ min: 0, max: 7 }),
        fc.array(fc.nat(), { maxLength: 20 }),
        // As lists hold them: in any order, in the asked order, or in its reverse (read from the end).
        fc.constantFrom('any', 'asked', 'reversed'),
        (items, [descA, descB], pageSize, deletions, arrival) => {
          const desc = [descA, descB, false]
          let live = arrival === 'any' ? [...items] : arrival === 'asked' ? sortedBy(items, desc) : sortedBy(items, desc).reverse()
          let tokenSorted: string | undefined
          let tokenUnsorted: string | undefined
          for (let page = 0; page < 50; page++) {
            const request = (token: string | undefined) => ({ pageSize, ...(token === undefined ? {} : { pageToken: token }) })
            const expected: Page<Item> = pageByKey(sortedBy(live, desc), (x) => [x.a, x.b, x.seq], desc, 'list', request(tokenSorted), LIMITS)
            const actual = pageByKeyUnsorted(live, [(x) => x.a, (x) => x.b, (x) => x.seq], desc, 'list', request(tokenUnsorted), LIMITS)
            expect(actual.items).toEqual(expected.items)
            expect(actual.nextPageToken).toEqual(expected.nextPageToken)
            if (expected.nextPageToken === undefined) return
            tokenSorted = expected.nextPageToken
            tokenUnsorted = actual.nextPageToken
            // An item deleted between pages (maybe the one the token names).
            const gone = deletions[page]
            if (gone !== undefined && live.length > 0) live = live.filter((_, i) => i !== gone % live.length)
          }
          throw new Error('the pages did not end')
        },
      ),
      { numRuns: 300 },
    )
  })
})
