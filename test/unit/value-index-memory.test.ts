import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import type { Filter, Metadata } from '@quarry/core'
import { compileFilter } from '@quarry/core'
import { ValueIndex } from '../../packages/core/src/filter/value-index.js'

// Collections on demand, so what a structure retains is measured and not the garbage around it.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/**
 * Memory in use once the garbage is collected. Twice: V8 frees dead array buffers' memory on a
 * background thread, and the next collection waits for that to finish.
 */
function usage(): NodeJS.MemoryUsage {
  gc()
  gc()
  return process.memoryUsage()
}

/** The bytes (array buffers, JS heap) that what `make` returns keeps alive. */
function retained<T>(make: () => T): { readonly value: T; readonly arrayBuffers: number; readonly heap: number } {
  const before = usage()
  const value = make()
  const after = usage()
  return { value, arrayBuffers: after.arrayBuffers - before.arrayBuffers, heap: after.heapUsed - before.heapUsed }
}

/** Labels `filter` matches in `values`, and by testing every live record. */
function both(values: ValueIndex, live: ReadonlyMap<number, Metadata>, filter: Filter): [number[], number[]] {
  const test = compileFilter(filter)
  const brute = [...live].filter(([, m]) => test(m)).map(([label]) => label).sort((a, b) => a - b)
  return [[...values.match(filter).toArray()], brute]
}

/** Record i's metadata: five fields of its own (one of each kind) and one every record holds. */
const sparse = (i: number): Metadata => ({ [`s${i}`]: 'v', [`n${i}`]: i, [`d${i}`]: new Date(i * 1000), [`l${i}`]: ['a', `m${i}`], [`b${i}`]: i % 2 === 0, common: i % 7 })

describe('a metadata field costs memory in proportion to the records holding it', () => {
  // 3,000 records 16 labels apart: 12,000 fields over 48,000 labels. Anything sized by the labels
  // per field (a bitset, an array of values by label) costs kilobytes a field; what a field held by
  // one record needs is a few hundred bytes on the heap.
  const n = 3000
  const spread = 16
  const fields = 4 * n

  it('fields held by one record each, of every kind, as added and as loaded from a snapshot', () => {
    const live = new Map<number, Metadata>()
    const built = retained(() => {
      const values = new ValueIndex()
      for (let i = 0; i < n; i++) {
        const m = sparse(i)
        values.add(i * spread, m)
        live.set(i * spread, m)
      }
      return values
    })
    expect(built.arrayBuffers).toBeLessThan(1 << 20)
    expect(built.heap / fields).toBeLessThan(2048)
    const loaded = retained(() => ValueIndex.fromSnapshot(built.value.snapshot()) as ValueIndex)
    // The snapshot's own arrays are adopted (12 bytes an entry of the common field's sorted run).
    expect(loaded.arrayBuffers).toBeLessThan(1 << 20)
    expect(loaded.heap / fields).toBeLessThan(2048)
    for (const values of [built.value, loaded.value]) {
      for (const i of [0, 1, 1234, n - 1]) {
        const filters: Filter[] = [
          { op: 'eq', field: `s${i}`, value: 'v' },
          { op: 'gte', field: `n${i}`, value: i },
          { op: 'lt', field: `n${i}`, value: i },
          { op: 'lte', field: `d${i}`, value: { datetime: new Date(i * 1000).toISOString() } },
          { op: 'includes', field: `l${i}`, value: `m${i}` },
          { op: 'excludes', field: `l${i}`, value: 'b' },
          { op: 'ne', field: `b${i}`, value: true },
          { op: 'exists', field: `d${i}` },
          { op: 'nin', field: `n${i}`, values: [i + 1] },
          { op: 'not', filter: { op: 'exists', field: `s${i}` } },
          { op: 'and', filters: [{ op: 'eq', field: 'common', value: i % 7 }, { op: 'lt', field: 'common', value: 3 }] },
        ]
        for (const f of filters) {
          const [indexed, brute] = both(values, live, f)
          expect(indexed, JSON.stringify(f)).toEqual(brute)
        }
      }
    }
  })

  it('removing records gives back what their fields and values took', () => {
    // Every record but ten: their own fields go, and so does the common field's array of values
    // by label and its bitsets (each now held by a few labels out of 48,000).
    const kept = [0, 7, 100, 101, 555, 1000, 2000, 2500, 2998, 2999]
    const addAndRemove = (values: ValueIndex, live: Map<number, Metadata>): void => {
      for (let i = 0; i < n; i++) {
        const m = sparse(i)
        values.add(i * spread, m)
        live.set(i * spread, m)
      }
      for (let i = 0; i < n; i++) {
        if (kept.includes(i)) continue
        values.remove(i * spread, live.get(i * spread) as Metadata)
        live.delete(i * spread)
      }
    }
    // Once first, so that the code it compiles is not counted.
    addAndRemove(new ValueIndex(), new Map())
    const live = new Map<number, Metadata>()
    const values = new ValueIndex()
    const start = usage()
    addAndRemove(values, live)
    const end = usage()
    // The index's bitset of live labels (6 KB) stays as long as the labels. Before fields gave
    // back what they held, this run kept 1.98 GB of array buffers and 40 MB of heap; the bounds sit
    // far above the noise of a process's counters (tens of kilobytes) and far below that.
    expect(end.arrayBuffers - start.arrayBuffers).toBeLessThan(256 << 10)
    expect(end.heapUsed - start.heapUsed).toBeLessThan(2 << 20)
    for (const i of [...kept, 1, 1234]) {
      const filters: Filter[] = [
        { op: 'eq', field: `s${i}`, value: 'v' },
        { op: 'exists', field: `n${i}` },
        { op: 'gte', field: `d${i}`, value: { datetime: new Date(0).toISOString() } },
        { op: 'includes', field: `l${i}`, value: 'a' },
        { op: 'in', field: 'common', values: [i % 7, 3] },
        { op: 'gt', field: 'common', value: i % 7 },
        { op: 'exists', field: 'common' },
      ]
      for (const f of filters) {
        const [indexed, brute] = both(values, live, f)
        expect(indexed, JSON.stringify(f)).toEqual(brute)
      }
    }
  })
})
