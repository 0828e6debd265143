import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Analyzer, createIndex, type Filter, type QuarryIndex } from '@quarry/core'
import type { Label } from '../../packages/core/src/ids.js'
import { HnswGraph } from '../../packages/core/src/dense/hnsw.js'
import { VectorStore } from '../../packages/core/src/dense/vector-store.js'
import { resolveIndexOptions } from '../../packages/core/src/engine/options.js'
import { queryTerms, sparseDocument } from '../../packages/core/src/engine/sparse-search.js'
import { PostingList } from '../../packages/core/src/sparse/postings.js'
import { SparseIndex } from '../../packages/core/src/sparse/sparse-index.js'
import { runs } from '../support/runs.js'

/**
 * `removeMany` and `SparseIndex.deleteMany` against their oracle, removes one at a time: the same
 * statistics to the last bit, the same postings and bounds, the same answers, the same labels
 * reused by the next adds; and the work they save (no per-label scan of a posting list).
 * `replaceMetadata` against its oracle, an upsert with the same vector and text: the same answers
 * and filters, with no vector, graph or text work. An upsert of the vector a record holds already
 * against the same upsert on an index that re-links the point: the same answers, no graph work.
 */

afterEach(() => {
  vi.restoreAllMocks()
})

const words = fc.constantFrom('desert', 'spice', 'worm', 'sand', 'dune', 'wind', 'water', 'the', 'of')
const text = fc.array(words, { minLength: 0, maxLength: 8 }).map((ws) => ws.join(' '))
const LABELS = 30

/** Each term's postings as sorted (label, tf) pairs with its bounds: what a search can see of a list, whatever its order. */
function postingsOf(index: SparseIndex): unknown[] {
  const { terms, postings } = index.snapshot(LABELS)
  return terms.map((term, id) => {
    const list = postings[id] as PostingList
    const pairs = Array.from(list.labels.subarray(0, list.length), (label, i) => [label, list.tfs[i] as number]).sort((a, b) => (a[0] as number) - (b[0] as number))
    return { term, pairs, maxTf: list.length === 0 ? 0 : list.maxTf, minLength: list.length === 0 ? Infinity : list.minLength }
  })
}

function sameSparse(a: SparseIndex, b: SparseIndex, analyzer: Analyzer, queries: readonly string[]): void {
  expect(a.documents).toBe(b.documents)
  expect(a.totalLength).toBe(b.totalLength)
  expect(a.averageLength).toBe(b.averageLength)
  expect(postingsOf(a)).toEqual(postingsOf(b))
  for (let label = 0; label < LABELS; label++) {
    expect(a.has(label as Label)).toBe(b.has(label as Label))
    expect(a.forward(label as Label)).toEqual(b.forward(label as Label))
    expect(a.lengthOf(label as Label)).toBe(b.lengthOf(label as Label))
  }
  const tie = (x: Label, y: Label): number => x - y
  for (const q of queries) {
    const terms = queryTerms(analyzer, q)
    expect(a.search(terms, 10, tie).hits).toEqual(b.search(terms, 10, tie).hits)
  }
}

describe('SparseIndex.deleteMany equals delete one by one', () => {
  it('same N, lengths (to the bit), postings, bounds and hits, with duplicates, unknown labels, and adds after', () => {
    const label = fc.integer({ min: 0, max: LABELS - 1 })
    fc.assert(
      fc.property(fc.array(fc.tuple(label, text), { minLength: 1, maxLength: 40 }), fc.array(label, { maxLength: 20 }), fc.array(fc.tuple(label, text), { maxLength: 6 }), fc.array(text, { minLength: 1, maxLength: 4 }), (sets, removed, after, queries) => {
        const options = resolveIndexOptions({}).text
        const analyzer = new Analyzer()
        const one = new SparseIndex(options.bm25)
        const many = new SparseIndex(options.bm25)
        for (const [l, t] of sets) {
          one.set(l as Label, sparseDocument(analyzer, t, options))
          many.set(l as Label, sparseDocument(analyzer, t, options))
        }
        let count = 0
        for (const l of removed) if (one.delete(l as Label)) count++
        expect(many.deleteMany(removed as Label[])).toBe(count)
        sameSparse(one, many, analyzer, queries)
        for (const [l, t] of after) {
          one.set(l as Label, sparseDocument(analyzer, t, options))
          many.set(l as Label, sparseDocument(analyzer, t, options))
        }
        sameSparse(one, many, analyzer, queries)
      }),
      { numRuns: runs(300) },
    )
  })
})

/** An index of `n` records with vectors, text and metadata, the same for the same n. */
function filled(n: number): QuarryIndex {
  const index = createIndex({ dimensions: 4, metric: 'cosine', planner: { exactBelow: 0 } })
  const pick = ['desert', 'spice', 'worm', 'sand', 'dune']
  for (let i = 0; i < n; i++) {
    index.add({ id: `r${i}`, vector: [Math.sin(i + 1), Math.cos(i * 3), ((i * 7) % 5) - 2, 1], text: `common ${pick[i % 5]} ${pick[(i * 3) % 5]} n${i}`, metadata: { group: `g${i % 3}`, n: i } })
  }
  return index
}

/** What a caller can observe: every record, and dense, text and filtered answers. */
function observe(index: QuarryIndex, n: number): unknown {
  const filter: Filter = { op: 'eq', field: 'group', value: 'g1' }
  const hits = (r: ReturnType<QuarryIndex['search']>): unknown => r.hits.map((h) => [h.id, h.score])
  return {
    size: index.size,
    textStats: index.textStats,
    records: Array.from({ length: n + 5 }, (_, i) => index.get(`r${i}`) ?? null),
    dense: hits(index.search({ vector: [1, 0.5, 0, 1], topK: 10, exact: true })),
    graph: hits(index.search({ vector: [1, 0.5, 0, 1], topK: 10 })),
    text: hits(index.search({ text: 'common spice worm', topK: 10 })),
    filtered: hits(index.search({ vector: [1, 0.5, 0, 1], topK: 10, filter })),
    hybrid: hits(index.search({ vector: [0, 1, 0, 1], text: 'dune', topK: 10 })),
  }
}

describe('QuarryIndex.removeMany equals remove one by one', () => {
  it('same records, answers and the same labels for the next adds, for any list of ids', () => {
    const N = 40
    const id = fc.integer({ min: 0, max: N + 4 }).map((i) => `r${i}`)
    fc.assert(
      fc.property(fc.array(id, { maxLength: 30 }), (ids) => {
        const one = filled(N)
        const many = filled(N)
        const count = ids.filter((x) => one.remove(x)).length
        expect(many.removeMany(ids)).toBe(count)
        expect(observe(many, N)).toEqual(observe(one, N))
        // Labels are freed in the same order: the next adds take the same ones.
        for (const index of [one, many]) for (let i = 0; i < 3; i++) index.add({ id: `new${i}`, vector: [1, i, 0, 1], text: 'common dune', metadata: { group: 'g1', n: -i } })
        for (let i = 0; i < 3; i++) expect(many.state.ids.labelOf(`new${i}`)).toBe(one.state.ids.labelOf(`new${i}`))
        expect(observe(many, N)).toEqual(observe(one, N))
      }),
      { numRuns: runs(60) },
    )
  })

  it('checks every id before removing any, and refuses what is not a list', () => {
    const index = filled(5)
    expect(() => index.removeMany(['r1', '', 'r2'])).toThrowError(expect.objectContaining({ code: 'INVALID_ID', path: 'ids[1]' }) as Error)
    expect(() => index.removeMany(['r1', 7 as unknown as string])).toThrowError(expect.objectContaining({ code: 'INVALID_ID', path: 'ids[1]' }) as Error)
    expect(() => index.removeMany('r1' as unknown as string[])).toThrowError(expect.objectContaining({ code: 'INVALID_ID', path: 'ids' }) as Error)
    expect(index.size).toBe(5)
    expect(index.removeMany([])).toBe(0)
  })

  it('compacts each posting list it touches once: no scan per removed record', () => {
    const N = 2000
    const index = filled(N)
    const ids = Array.from({ length: N / 2 }, (_, i) => `r${i * 2}`)
    const sparse = index.state.sparse
    // What one pass reads: the postings of each distinct term of the removed records, once.
    const terms = new Set<number>()
    for (const id of ids) for (const t of sparse.forward(index.state.ids.labelOf(id) as Label)?.ids ?? []) terms.add(t)
    const once = [...terms].reduce((sum, t) => sum + sparse.df(sparse.terms[t] as string), 0)
    // One by one, "common" alone (in every record) would be read N/2 times: about N²/4 postings.
    expect(once).toBeLessThan(4 * N)
    const original = PostingList.prototype.removeAll
    let read = 0
    const all = vi.spyOn(PostingList.prototype, 'removeAll').mockImplementation(function (this: PostingList, dead, lengths) {
      read += this.length
      return original.call(this, dead, lengths)
    })
    const one = vi.spyOn(PostingList.prototype, 'remove')
    expect(index.removeMany(ids)).toBe(N / 2)
    expect(one).not.toHaveBeenCalled()
    expect(all).toHaveBeenCalledTimes(terms.size)
    expect(read).toBe(once)
    expect(index.textStats.documents).toBe(N / 2)
  })
})

describe('replaceMetadata equals an upsert with the same vector and text, without their work', () => {
  it('same records, answers and filters; no vector, graph or text write', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 39 }), fc.constantFrom('g0', 'g1', 'g2', 'g9')), { minLength: 1, maxLength: 20 }), (changes) => {
        const N = 40
        const replaced = filled(N)
        const upserted = filled(N)
        const writes = [vi.spyOn(HnswGraph.prototype, 'set'), vi.spyOn(VectorStore.prototype, 'set'), vi.spyOn(SparseIndex.prototype, 'set'), vi.spyOn(SparseIndex.prototype, 'setPrepared'), vi.spyOn(SparseIndex.prototype, 'delete')]
        for (const [i, group] of changes) replaced.replaceMetadata(`r${i}`, { group, n: i, changed: true })
        for (const spy of writes) expect(spy).not.toHaveBeenCalled()
        for (const [i, group] of changes) {
          const stored = upserted.get(`r${i}`)
          upserted.upsert({ id: `r${i}`, vector: stored?.vector as Float32Array, text: stored?.text as string, metadata: { group, n: i, changed: true } })
        }
        vi.restoreAllMocks()
        const a = observe(replaced, N) as Record<string, unknown>
        const b = observe(upserted, N) as Record<string, unknown>
        // The graph answers approximately and the upsert re-linked its points: compared exactly elsewhere.
        expect({ ...a, graph: undefined }).toEqual({ ...b, graph: undefined })
        expect(replaced.search({ vector: [1, 0, 0, 1], topK: 40, filter: { op: 'eq', field: 'changed', value: true } }).hits.map((h) => h.id).sort()).toEqual([...new Set(changes.map(([i]) => `r${i}`))].sort())
      }),
      { numRuns: runs(40) },
    )
  })
})

describe('an upsert of the vector a record holds already leaves its point as it is', () => {
  it('same records and answers as re-linking it; a graph write only for vectors that changed', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 44 }), fc.boolean(), fc.constantFrom('g0', 'g1')), { minLength: 1, maxLength: 20 }), (upserts) => {
        const N = 40
        const kept = filled(N)
        const relinked = filled(N)
        let changed = 0
        let sets = 0
        const set = HnswGraph.prototype.set
        const spy = vi.spyOn(HnswGraph.prototype, 'set').mockImplementation(function (this: HnswGraph, label, vector) {
          sets++
          set.call(this, label, vector)
        })
        try {
          for (const [i, move, group] of upserts) {
            const id = `r${i}`
            const stored = kept.get(id)
            // A new id, or a moved vector, is a graph write; the same vector is not.
            const vector = stored === undefined || move ? [i, 1, -i, 2] : (stored.vector as Float32Array)
            if (stored === undefined || ![...(stored.vector as Float32Array)].every((x, j) => Object.is(x, Math.fround(vector[j] as number)))) changed++
            kept.upsert({ id, vector, text: `common dune n${i}`, metadata: { group, n: i } })
          }
        } finally {
          spy.mockRestore()
        }
        expect(sets).toBe(changed)
        // The oracle re-links every point it is given, as upserts did before: remove, then add.
        for (const [i, move, group] of upserts) {
          const id = `r${i}`
          const stored = relinked.get(id)
          const vector = stored === undefined || move ? [i, 1, -i, 2] : stored.vector as Float32Array
          relinked.remove(id)
          relinked.add({ id, vector, text: `common dune n${i}`, metadata: { group, n: i } })
        }
        const a = observe(kept, N + 5) as Record<string, unknown>
        const b = observe(relinked, N + 5) as Record<string, unknown>
        // The answers that do not go through the graph (whose links differ by design: the oracle re-links every point;
        // the filtered and hybrid searches here walk it), BM25 scores to 9 digits (remove-then-add sums lengths in another order).
        const digits = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (_, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(9)) : v)))
        const exactly = (o: Record<string, unknown>): unknown => digits({ size: o['size'], textStats: o['textStats'], records: o['records'], dense: o['dense'], text: o['text'] })
        expect(exactly(a)).toEqual(exactly(b))
      }),
      { numRuns: runs(40) },
    )
  })

  it('a vector equal in value but not in bits (0 and -0) is written', () => {
    const index = createIndex({ dimensions: 2, metric: 'l2' })
    index.add({ id: 'a', vector: [0, 1] })
    const set = vi.spyOn(HnswGraph.prototype, 'set')
    index.upsert({ id: 'a', vector: [0, 1] })
    expect(set).not.toHaveBeenCalled()
    index.upsert({ id: 'a', vector: [-0, 1] })
    expect(set).toHaveBeenCalledTimes(1)
    expect(Object.is(index.get('a')?.vector?.[0], -0)).toBe(true)
  })
})
