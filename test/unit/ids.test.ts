import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { hashId, hashIdUnits, IdMap } from '../../packages/core/src/ids.js'
import { runs } from '../support/runs.js'

describe('IdMap', () => {
  it('maps ids to dense labels and reuses freed labels', () => {
    const ids = new IdMap()
    expect(['a', 'b', 'c'].map((id) => ids.assign(id))).toEqual([0, 1, 2])
    expect(ids.release('b')).toBe(1)
    expect(ids.release('b')).toBeUndefined()
    expect(ids.assign('d')).toBe(1)
    expect(ids.extent).toBe(3)
    expect(ids.idOf(ids.labelOf('d') as never)).toBe('d')
    expect([...ids.labels()]).toEqual([0, 1, 2])
  })

  it('round-trips through its snapshot form, keeping free slots free', () => {
    const ids = new IdMap()
    for (const id of ['a', 'b', 'c', 'd']) ids.assign(id)
    ids.release('a')
    ids.release('c')
    const copy = IdMap.fromJSON(ids.toJSON())
    expect(copy.toJSON()).toEqual(['a', 'b', 'c', 'd'].map((id) => (id === 'a' || id === 'c' ? null : id)))
    expect(copy.size).toBe(2)
    expect([copy.assign('x'), copy.assign('y'), copy.assign('z')].sort()).toEqual([0, 2, 4])
  })
})

describe('IdMap against a Map', () => {
  it('agrees with a plain Map and label list under random assigns and releases, and after a restore', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 60 })), { maxLength: 400 }), (ops) => {
        const ids = new IdMap()
        const model = new Map<string, number>()
        const byLabel: (string | undefined)[] = []
        const free: number[] = []
        for (const [add, n] of ops) {
          const id = `id-${n}`
          if (add && !model.has(id)) {
            const label = free.pop() ?? byLabel.length
            byLabel[label] = id
            model.set(id, label)
            expect(ids.assign(id)).toBe(label)
          } else if (!add) {
            const label = model.get(id)
            expect(ids.release(id)).toBe(label)
            if (label !== undefined) {
              model.delete(id)
              byLabel[label] = undefined
              free.push(label)
            }
          }
        }
        const restored = IdMap.restore(ids.byLabel.slice(), ids.free)
        for (const map of [ids, restored as IdMap]) {
          expect(map.size).toBe(model.size)
          expect(map.extent).toBe(byLabel.length)
          for (let n = 0; n <= 60; n++) {
            expect(map.labelOf(`id-${n}`)).toBe(model.get(`id-${n}`))
            expect(map.has(`id-${n}`)).toBe(model.has(`id-${n}`))
          }
          expect([...map.byLabel]).toEqual(byLabel)
          expect([...map.free]).toEqual(free)
        }
      }),
      { numRuns: runs(200) },
    )
  })

  it('finds every id of any length and any UTF-16 code units, before and after a restore', () => {
    // The table hashes code units: ids that differ only in the last one, or only in its high
    // bits, or by a trailing NUL, must still be told apart.
    const unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))
    const id = fc.array(unit, { minLength: 1, maxLength: 9 }).map((units) => units.join(''))
    fc.assert(
      fc.property(fc.uniqueArray(id, { maxLength: 300 }), (ids) => {
        const map = new IdMap()
        ids.forEach((each, label) => expect(map.assign(each)).toBe(label))
        const restored = IdMap.restore(ids.slice(), []) as IdMap
        for (const m of [map, restored]) {
          expect(m.size).toBe(ids.length)
          ids.forEach((each, label) => expect(m.labelOf(each)).toBe(label))
          for (const each of ids) {
            // A near miss: the last code unit changed, or one added.
            const other = each.slice(0, -1) + String.fromCharCode((each.charCodeAt(each.length - 1) + 0x8000) & 0xffff)
            expect(m.has(other)).toBe(ids.includes(other))
            expect(m.has(`${each}\u0000`)).toBe(ids.includes(`${each}\u0000`))
          }
        }
      }),
      { numRuns: runs(200) },
    )
  })

  it('hashes an id from its stored bytes (latin1 or UTF-16LE, at any offset) as from the string, and restores with those hashes', () => {
    // A snapshot's reader hashes each id from the bytes it decodes (persist/sections.ts): one byte
    // per code unit when every unit is below 256, else two. Any other number would file the id
    // where a lookup by string never looks.
    const unit = fc.oneof(fc.integer({ min: 0, max: 0xff }), fc.integer({ min: 0, max: 0xffff })).map((c) => String.fromCharCode(c))
    const id = fc.array(unit, { minLength: 0, maxLength: 11 }).map((units) => units.join(''))
    fc.assert(
      fc.property(fc.uniqueArray(id, { minLength: 1, maxLength: 60 }), fc.nat(7), (ids, pad) => {
        const hashes = new Uint32Array(ids.length)
        ids.forEach((each, label) => {
          const wide = [...each].some((c) => c.charCodeAt(0) > 0xff)
          const stored = Buffer.concat([Buffer.alloc(pad, 0xee), Buffer.from(each, wide ? 'utf16le' : 'latin1'), Buffer.alloc(3, 0xee)])
          hashes[label] = hashIdUnits(stored, pad, each.length, wide)
          expect(hashes[label]).toBe(hashId(each))
          // A latin1 id stored two bytes a unit (as a writer may) hashes the same too.
          if (!wide) expect(hashIdUnits(Buffer.from(each, 'utf16le'), 0, each.length, true)).toBe(hashId(each))
        })
        const restored = IdMap.restore(ids.slice(), [], hashes) as IdMap
        ids.forEach((each, label) => expect(restored.labelOf(each)).toBe(label))
      }),
      { numRuns: runs(300) },
    )
    expect(IdMap.restore(['a', 'b', 'a'], [], Uint32Array.from(['a', 'b', 'a'], hashId))).toBeUndefined()
  })

  it('refuses to restore an id held by two labels', () => {
    expect(IdMap.restore(['a', 'b', 'a'], [])).toBeUndefined()
    expect(IdMap.restore(['a', undefined, 'b'], [1])?.labelOf('b')).toBe(2)
  })
})
