import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { UnitTable, hashRange } from '../../packages/core/src/text/unit-table.js'
import { forEachWinkUnit } from '../../packages/core/src/text/wink-pieces.js'
import { runs } from '../support/runs.js'

describe('UnitTable', () => {
  it('finds exactly what a Map holds, looked up by a range of a longer string', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 6 }), { maxLength: 300 }), fc.array(fc.string({ maxLength: 6 }), { maxLength: 100 }), (added, probes) => {
        const table = new UnitTable<number>()
        const map = new Map<string, number>()
        added.forEach((key, i) => {
          if (map.has(key)) return
          map.set(key, i)
          table.add(`(${key})`, 1, 1 + key.length, hashRange(key, 0, key.length), i)
        })
        expect(table.size).toBe(map.size)
        for (const key of [...added, ...probes]) {
          // The key inside a longer text: the table compares the range, not a string of its own.
          const text = `<${key}>`
          expect(table.find(text, 1, 1 + key.length, hashRange(text, 1, 1 + key.length))).toBe(map.get(key))
        }
      }),
      { numRuns: runs(100) },
    )
  })

  it('keys differing only past a shared prefix, or colliding in the low bits, stay apart; clear empties it', () => {
    const table = new UnitTable<string>()
    const keys = Array.from({ length: 20_000 }, (_, i) => `k${i}`)
    for (const k of keys) table.add(k, 0, k.length, hashRange(k, 0, k.length), k)
    for (const k of keys) expect(table.find(k, 0, k.length, hashRange(k, 0, k.length))).toBe(k)
    expect(table.find('k', 0, 1, hashRange('k', 0, 1))).toBeUndefined()
    table.clear()
    expect(table.size).toBe(0)
    expect(table.find('k1', 0, 2, hashRange('k1', 0, 2))).toBeUndefined()
  })

  it('hashRange is FNV-1a over UTF-16 code units', () => {
    expect(hashRange('', 0, 0)).toBe(0x811c9dc5)
    expect(hashRange('a', 0, 1)).toBe(0xe40c292c)
    expect(hashRange('xay', 1, 2)).toBe(hashRange('a', 0, 1))
  })
})

describe('forEachWinkUnit', () => {
  it('hands each unit with its hashRange (computed while scanning), long runs cut as winkPieces cuts them', () => {
    const text = `a bb\tccc\u00a0 dé😀 ${'x'.repeat(300)} ${'ab,'.repeat(120)} end`
    const seen: string[] = []
    forEachWinkUnit(text, 256, false, (start, end, hash) => {
      expect(hash).toBe(hashRange(text, start, end))
      seen.push(text.slice(start, end))
    })
    expect(seen.slice(0, 4)).toEqual(['a', 'bb', 'ccc', 'dé😀'])
    expect(seen[4]).toBe('x'.repeat(256))
    expect(seen.at(-1)).toBe('end')
    expect(seen.slice(5, -1).join('')).toBe('ab,'.repeat(120))
  })
})
