import { describe, expect, it } from 'vitest'
import { IdMap } from '../../packages/core/src/ids.js'

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
