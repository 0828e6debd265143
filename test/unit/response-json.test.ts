import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { jsonPieces, MAX_RESPONSE_BYTES } from '../../packages/adapters/src/http/replies.js'
import { runs } from '../support/runs.js'

/**
 * The REST edge writes an answer's JSON in one JSON.stringify when a walk of its values shows it
 * surely fits within MAX_RESPONSE_BYTES, else in pieces, a list element at a time, so that one past
 * the bound is refused before it is all one string (http/replies.ts): either way the pieces must be
 * exactly JSON.stringify's text, their byte count its UTF-8 length, and an answer refused exactly
 * when that length passes the bound.
 */
describe('jsonPieces', () => {
  const same = (value: unknown): void => {
    const json = jsonPieces(value)
    const text = JSON.stringify(value) ?? 'null'
    expect(json?.pieces.join('')).toBe(text)
    expect(json?.bytes).toBe(Buffer.byteLength(text))
  }

  it('writes what JSON.stringify writes, for any JSON value and the values JSON leaves out or rewrites', () => {
    const value = fc.oneof(fc.jsonValue({ maxDepth: 6 }), fc.constant(undefined), fc.double(), fc.date({ noInvalidDate: true }), fc.func(fc.integer()))
    const shaped = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, value, fc.array(tie('node'), { maxLength: 5 }), fc.dictionary(fc.string(), tie('node'), { maxKeys: 5 })),
    })).node
    fc.assert(fc.property(shaped, same), { numRuns: runs(500) })
    // Within a bound the walk cannot vouch for (its guess is at least the exact length), the
    // answer goes in pieces: refused exactly when its length passes the bound.
    fc.assert(
      fc.property(shaped, fc.integer({ min: -8, max: 8 }), (node, slack) => {
        const text = JSON.stringify(node) ?? 'null'
        const bound = Buffer.byteLength(text) + slack
        const json = jsonPieces(node, bound)
        if (slack < 0) expect(json).toBeUndefined()
        else expect(json?.pieces.join('')).toBe(text)
      }),
      { numRuns: runs(500) },
    )
  })

  it('writes pages of large elements and text with surrogate pairs in pieces of about 64 Ki characters', () => {
    const big = 'é😀x'.repeat(50_000)
    const page = { memories: Array.from({ length: 10 }, (_, i) => ({ name: `m${i}`, fact: big, topics: [{ label: 'a' }] })), nextPageToken: 't' }
    same(page)
    same([{ candidates: [{ content: { parts: [{ text: big }] } }] }])
    same({ contexts: { contexts: Array.from({ length: 3000 }, (_, i) => ({ sourceUri: `u${i}`, text: 'word '.repeat(20), score: i / 3 })) } })
    // 21 MB of JSON, but strings that could take 72 MB escaped: too large to vouch for, so written
    // an element at a time.
    const large = { memories: Array.from({ length: 10 }, (_, i) => ({ name: `m${i}`, fact: 'é😀x'.repeat(300_000) })) }
    same(large)
    expect(jsonPieces(large)?.pieces.length).toBeGreaterThan(10)
  })

  it('does not vouch for what JSON.stringify would ask to write itself, nor walk a huge sparse list', () => {
    const hidden = { a: 1 }
    Object.defineProperty(hidden, 'toJSON', { value: () => 'x'.repeat(1000), enumerable: false })
    const list = [1, 2] as unknown[] & { toJSON?: () => string }
    list.toJSON = () => 'y'.repeat(1000)
    class Listed extends Array<number> {
      toJSON(): string {
        return 'z'.repeat(1000)
      }
    }
    const longNumbers = [-0.0000012345678901234567, -0.0000012345678901234567, -0.0000012345678901234567]
    for (const value of [{ page: hidden }, { page: list }, { page: Listed.from([1]) }, longNumbers]) {
      const text = JSON.stringify(value)
      const bytes = Buffer.byteLength(text)
      expect(jsonPieces(value, bytes - 1)).toBeUndefined()
      expect(jsonPieces(value, bytes)?.pieces.join('')).toBe(text)
    }
    // 2^28 holes: refused once past the bound, element by element, not listed first (that took 1.8 GB).
    expect(jsonPieces({ page: new Array(2 ** 28) }, 1 << 20)).toBeUndefined()
  })

  it('refuses an answer past the bound once its elements pass it, without writing the rest', () => {
    const element = { fact: 'x'.repeat(1 << 20) }
    // 64 elements of 1 MiB each (and their names): just past 64 MiB.
    const page = { memories: Array.from({ length: 64 }, () => element) }
    expect(jsonPieces(page)).toBeUndefined()
    expect(jsonPieces({ memories: page.memories.slice(0, 63) })?.bytes).toBeLessThan(MAX_RESPONSE_BYTES)
    // A smaller bound refuses as soon as it is passed.
    expect(jsonPieces(page, 3 << 20)).toBeUndefined()
    expect(jsonPieces({ memories: page.memories.slice(0, 2) }, 3 << 20)?.bytes).toBe(JSON.stringify({ memories: page.memories.slice(0, 2) }).length)
  })
})
