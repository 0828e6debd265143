import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createIndex, QuarryError, type Metric, type QuarryIndex } from '@quarry/core'
import { expectSameRanking, oracleDistances, oracleSearch } from '../support/oracle.js'
import { runs } from '../support/runs.js'

/** The model: a plain Map from id to vector and metadata. */
interface Model {
  records: Map<string, { vector: number[]; tag: number }>
}
interface Real {
  index: QuarryIndex
  metric: Metric
}

const DIM = 4
const ids = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j')
const vector = fc.array(fc.integer({ min: -3, max: 3 }), { minLength: DIM, maxLength: DIM }).filter((v) => v.some((x) => x !== 0))
const tag = fc.integer({ min: 0, max: 2 })

class Add implements fc.Command<Model, Real> {
  constructor(readonly id: string, readonly vector: number[], readonly tag: number) {}
  check = (): boolean => true
  run(m: Model, r: Real): void {
    if (m.records.has(this.id)) {
      expect(() => r.index.add({ id: this.id, vector: this.vector })).toThrowError(expect.objectContaining({ code: 'DUPLICATE_ID' }) as Error)
    } else {
      r.index.add({ id: this.id, vector: this.vector, metadata: { tag: this.tag } })
      m.records.set(this.id, { vector: this.vector, tag: this.tag })
    }
    expect(r.index.size).toBe(m.records.size)
  }
  toString = (): string => `add(${this.id}, [${this.vector.join(',')}], ${this.tag})`
}

class Upsert implements fc.Command<Model, Real> {
  constructor(readonly id: string, readonly vector: number[], readonly tag: number) {}
  check = (): boolean => true
  run(m: Model, r: Real): void {
    r.index.upsert({ id: this.id, vector: this.vector, metadata: { tag: this.tag } })
    m.records.set(this.id, { vector: this.vector, tag: this.tag })
    const stored = r.index.get(this.id)
    expect(stored?.vector && [...stored.vector]).toEqual(this.vector)
    expect(stored?.metadata).toEqual({ tag: this.tag })
  }
  toString = (): string => `upsert(${this.id}, [${this.vector.join(',')}], ${this.tag})`
}

class Remove implements fc.Command<Model, Real> {
  constructor(readonly id: string) {}
  check = (): boolean => true
  run(m: Model, r: Real): void {
    expect(r.index.remove(this.id)).toBe(m.records.delete(this.id))
    expect(r.index.has(this.id)).toBe(false)
    expect(r.index.get(this.id)).toBeUndefined()
  }
  toString = (): string => `remove(${this.id})`
}

class RemoveMany implements fc.Command<Model, Real> {
  constructor(readonly ids: string[]) {}
  check = (): boolean => true
  run(m: Model, r: Real): void {
    const count = this.ids.filter((id) => m.records.delete(id)).length
    expect(r.index.removeMany(this.ids)).toBe(count)
    expect(r.index.size).toBe(m.records.size)
    for (const id of this.ids) expect(r.index.has(id)).toBe(false)
  }
  toString = (): string => `removeMany([${this.ids.join(',')}])`
}

class ReplaceMetadata implements fc.Command<Model, Real> {
  constructor(readonly id: string, readonly tag: number) {}
  check = (m: Readonly<Model>): boolean => m.records.has(this.id)
  run(m: Model, r: Real): void {
    const record = m.records.get(this.id) as { vector: number[]; tag: number }
    r.index.replaceMetadata(this.id, { tag: this.tag })
    m.records.set(this.id, { vector: record.vector, tag: this.tag })
    const stored = r.index.get(this.id)
    expect(stored?.vector && [...stored.vector]).toEqual(record.vector)
    expect(stored?.metadata).toEqual({ tag: this.tag })
  }
  toString = (): string => `replaceMetadata(${this.id}, ${this.tag})`
}

class Search implements fc.Command<Model, Real> {
  constructor(readonly query: number[], readonly k: number, readonly onlyTag: number | undefined) {}
  check = (): boolean => true
  run(m: Model, r: Real): void {
    const vectors = new Map([...m.records].map(([id, rec]) => [id, rec.vector]))
    const keep = (id: string): boolean => this.onlyTag === undefined || m.records.get(id)?.tag === this.onlyTag
    const only = this.onlyTag
    const request = only === undefined ? { vector: this.query, topK: this.k } : { vector: this.query, topK: this.k, filter: (md: Readonly<Record<string, unknown>>) => md.tag === only }
    const { hits } = r.index.search(request)
    expectSameRanking(hits, oracleSearch(r.metric, vectors, this.query, Infinity, keep), this.k, oracleDistances(r.metric, vectors, this.query))
  }
  toString = (): string => `search([${this.query.join(',')}], ${this.k}, ${String(this.onlyTag)})`
}

const commands = [
  fc.tuple(ids, vector, tag).map(([id, v, t]) => new Add(id, v, t)),
  fc.tuple(ids, vector, tag).map(([id, v, t]) => new Upsert(id, v, t)),
  ids.map((id) => new Remove(id)),
  fc.array(ids, { maxLength: 4 }).map((list) => new RemoveMany(list)),
  fc.tuple(ids, tag).map(([id, t]) => new ReplaceMetadata(id, t)),
  fc.tuple(vector, fc.integer({ min: 1, max: 12 }), fc.option(tag, { nil: undefined })).map(([q, k, t]) => new Search(q, k, t)),
]

describe.each([
  ['exact', 'l2'],
  ['exact', 'cosine'],
  ['hnsw', 'l2'],
  ['hnsw', 'dot'],
  ['hnsw', 'cosine'],
] as const)('model-based: %s index (%s) behaves like a Map with brute-force search', (dense, metric) => {
  it('agrees with the model after any sequence of add / upsert / remove / removeMany / replaceMetadata / search', () => {
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 60 }), (cmds) => {
        // exactBelow 0 sends every unfiltered search through the graph; with at most 10 records
        // and M = 16 the graph is complete, so graph search must be exact too.
        const index = createIndex({ dimensions: DIM, metric, dense, planner: { exactBelow: 0, exactFilterMax: 0 } })
        fc.modelRun(() => ({ model: { records: new Map() }, real: { index, metric } }), cmds)
      }),
      { numRuns: runs(120) },
    )
  })
})

describe('errors from the model run are QuarryErrors', () => {
  it('DUPLICATE_ID is a QuarryError', () => {
    const index = createIndex({ dimensions: 2 })
    index.add({ id: 'x', vector: [1, 0] })
    expect(() => index.add({ id: 'x', vector: [0, 1] })).toThrow(QuarryError)
  })
})
