import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createIndex, type Hit, type QuarryIndex } from '@quarry/core'
import { runs } from '../support/runs.js'

/**
 * BM25 written plainly: Lucene's idf, k1/b saturation, over whitespace-separated terms. N and the
 * average length are over the documents with a term, as Lucene's docCount: an empty text is none.
 */
function referenceBm25(docs: ReadonlyMap<string, string[]>, query: string[], k1: number, b: number, keep: (id: string) => boolean = () => true): { id: string; score: number }[] {
  const withTerms = [...docs.values()].filter((terms) => terms.length > 0)
  const N = withTerms.length
  const avgdl = withTerms.reduce((sum, terms) => sum + terms.length, 0) / N
  const df = (term: string): number => [...docs.values()].filter((terms) => terms.includes(term)).length
  const out: { id: string; score: number }[] = []
  for (const [id, terms] of docs) {
    if (!keep(id)) continue
    let score = 0
    let matched = false
    for (const q of query) {
      const tf = terms.filter((t) => t === q).length
      if (tf === 0) continue
      matched = true
      const idf = Math.log(1 + (N - df(q) + 0.5) / (df(q) + 0.5))
      score += (idf * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * terms.length) / avgdl))
    }
    if (matched) out.push({ id, score })
  }
  return out.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
}

/** Terms are the words themselves: no stemming or stop words, so the reference needs no analyzer. */
const plain = { tokenizer: 'unicode', stem: false, stopWords: false } as const
const word = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta')
// Empty texts too: they must count in neither N nor the average length.
const doc = fc.oneof({ arbitrary: fc.array(word, { minLength: 1, maxLength: 12 }), weight: 5 }, { arbitrary: fc.constant([] as string[]), weight: 1 })
const corpus = fc.uniqueArray(fc.tuple(fc.string({ minLength: 1, maxLength: 3 }), doc), { selector: ([id]) => id, minLength: 1, maxLength: 40 })
const params = fc.record({ k1: fc.double({ min: 0, max: 3, noNaN: true }), b: fc.double({ min: 0, max: 1, noNaN: true }) })

function build(entries: readonly (readonly [string, string[]])[], k1: number, b: number): QuarryIndex {
  const index = createIndex({ text: { analyzer: plain, bm25: { k1, b } } })
  for (const [id, terms] of entries) index.add({ id, text: terms.join(' ') })
  return index
}

/** Same ids in the same order, scores within 1e-9; ties (within 1e-9) may be ordered either way only if the scores differ below float noise. */
function expectRanking(hits: readonly Hit[], expected: readonly { id: string; score: number }[], k: number): void {
  const want = expected.slice(0, k)
  expect(hits.length).toBe(want.length)
  hits.forEach((hit, i) => {
    const w = want[i] as { id: string; score: number }
    expect(Math.abs(hit.score - w.score)).toBeLessThanOrEqual(1e-9)
    const prev = expected[i - 1]
    const next = expected[i + 1]
    const clear = (!prev || prev.score - w.score > 1e-9) && (!next || w.score - next.score > 1e-9)
    if (clear) expect(hit.id).toBe(w.id)
  })
}

describe('BM25 against a plain reference', () => {
  it('scores and ranks like the reference (ids, order, scores within 1e-9), any k1 and b', () => {
    fc.assert(
      fc.property(corpus, fc.array(word, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 45 }), params, (entries, query, k, { k1, b }) => {
        const index = build(entries, k1, b)
        const { hits } = index.search({ text: query.join(' '), topK: k })
        expectRanking(hits, referenceBm25(new Map(entries), query, k1, b), k)
      }),
      { numRuns: runs(300) },
    )
  })

  it('pruned top-k equals the exhaustive ranking cut at k, and pruning does happen', () => {
    let pruned = 0
    fc.assert(
      fc.property(corpus, fc.array(word, { minLength: 2, maxLength: 6 }), fc.integer({ min: 1, max: 5 }), (entries, query, k) => {
        const index = build(entries, 1.2, 0.75)
        const text = query.join(' ')
        const top = index.search({ text, topK: k })
        const all = index.search({ text, topK: 10_000 })
        expect(top.hits.map((h) => [h.id, h.score])).toEqual(all.hits.slice(0, k).map((h) => [h.id, h.score]))
        const s = top.stats.bm25
        if (s && s.essentialTerms < s.terms) pruned++
      }),
      { numRuns: runs(300) },
    )
    expect(pruned).toBeGreaterThan(0)
  })

  it('filters keep exactly the passing documents, for narrow and broad filters', () => {
    fc.assert(
      fc.property(corpus, fc.array(word, { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 9 }), (entries, query, modulo) => {
        const index = createIndex({ text: { analyzer: plain } })
        entries.forEach(([id, terms], i) => index.add({ id, text: terms.join(' '), metadata: { n: i } }))
        const pos = new Map(entries.map(([id], i) => [id, i]))
        const keep = (id: string): boolean => (pos.get(id) as number) % modulo === 0
        const { hits } = index.search({ text: query.join(' '), topK: 10, filter: (m) => (m.n as number) % modulo === 0 })
        expectRanking(hits, referenceBm25(new Map(entries), query, 1.2, 0.75, keep), 10)
      }),
      { numRuns: runs(200) },
    )
  })

  it('add then remove restores N, df and the average length exactly', () => {
    fc.assert(
      fc.property(corpus, corpus, fc.array(word, { minLength: 1, maxLength: 3 }), (base, extra, query) => {
        const ids = new Set(base.map(([id]) => id))
        const added = extra.filter(([id]) => !ids.has(id))
        const index = build(base, 1.2, 0.75)
        const before = index.textStats
        const hitsBefore = index.search({ text: query.join(' '), topK: 50 })
        for (const [id, terms] of added) index.add({ id, text: terms.join(' ') })
        for (const [id] of added) index.remove(id)
        expect(index.textStats).toEqual(before)
        expect(index.search({ text: query.join(' '), topK: 50 }).hits).toEqual(hitsBefore.hits)
      }),
      { numRuns: runs(150) },
    )
  })

  it('explains each hit: the per-term parts add up to the score', () => {
    fc.assert(
      fc.property(corpus, fc.array(word, { minLength: 1, maxLength: 4 }), (entries, query) => {
        const { hits } = build(entries, 1.2, 0.75).search({ text: query.join(' '), topK: 5, explain: true })
        for (const hit of hits) {
          const parts = hit.explain?.bm25 ?? []
          expect(Math.abs(parts.reduce((s, p) => s + p.score, 0) - hit.score)).toBeLessThanOrEqual(1e-9)
          for (const p of parts) if (p.tf > 0) expect(p.idf).toBeGreaterThan(0)
        }
      }),
      { numRuns: runs(100) },
    )
  })
})

describe('named fields with boosts', () => {
  it('a boosted field counts its terms boost times (simple BM25F)', () => {
    const index = createIndex({ text: { analyzer: plain, fields: { title: { boost: 3 } } } })
    index.add({ id: 'a', text: { title: 'gamma', body: 'alpha beta' } })
    index.add({ id: 'b', text: { title: 'alpha', body: 'gamma gamma' } })
    index.add({ id: 'c', text: { body: 'delta' } })
    // The reference sees the boosted title repeated three times.
    const docs = new Map([
      ['a', ['gamma', 'gamma', 'gamma', 'alpha', 'beta']],
      ['b', ['alpha', 'alpha', 'alpha', 'gamma', 'gamma']],
      ['c', ['delta']],
    ])
    for (const q of [['gamma'], ['alpha'], ['alpha', 'gamma'], ['delta', 'beta']]) {
      expectRanking(index.search({ text: q.join(' ') }).hits, referenceBm25(docs, q, 1.2, 0.75), 10)
    }
  })
})

describe('long queries', () => {
  /** Words of letters only (the unicode tokenizer splits on anything else), one per index. */
  const wordOf = (i: number): string => `w${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}`
  const VOCABULARY = 520
  const text = fc.array(fc.nat({ max: VOCABULARY - 1 }), { minLength: 1, maxLength: 16 }).map((ws) => ws.map(wordOf))
  // A text given to several ids scores the same under each: ties at and around the k-th place.
  const corpus = fc.array(fc.tuple(text, fc.integer({ min: 1, max: 3 })), { minLength: 1, maxLength: 120 }).map((texts) => texts.flatMap(([terms, copies], t) => Array.from({ length: copies }, (_, c) => [`d${t}-${c}`, terms] as const)))
  const query = fc.array(fc.nat({ max: VOCABULARY - 1 }), { minLength: 150, maxLength: 700 }).map((ws) => ws.map(wordOf))

  /** BM25 like {@link referenceBm25}, with df counted once per term (hundreds of query terms). */
  function reference(entries: readonly (readonly [string, readonly string[]])[], q: readonly string[]): { id: string; score: number }[] {
    const df = new Map<string, number>()
    for (const [, terms] of entries) for (const t of new Set(terms)) df.set(t, (df.get(t) ?? 0) + 1)
    const N = entries.length
    const avgdl = entries.reduce((sum, [, terms]) => sum + terms.length, 0) / N
    const weights = new Map<string, number>()
    for (const t of q) weights.set(t, (weights.get(t) ?? 0) + 1)
    const out: { id: string; score: number }[] = []
    for (const [id, terms] of entries) {
      const tfs = new Map<string, number>()
      for (const t of terms) tfs.set(t, (tfs.get(t) ?? 0) + 1)
      let score = 0
      let matched = false
      for (const [t, weight] of weights) {
        const tf = tfs.get(t) ?? 0
        if (tf === 0) continue
        matched = true
        const n = df.get(t) as number
        score += weight * Math.log(1 + (N - n + 0.5) / (n + 0.5)) * ((tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * terms.length) / avgdl)))
      }
      if (matched) out.push({ id, score })
    }
    return out.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
  }

  it('hundreds of terms with ties: the exhaustive ranking cut at k to the last bit, and the reference', () => {
    let pruned = 0
    fc.assert(
      fc.property(corpus, query, fc.integer({ min: 1, max: 12 }), (entries, q, k) => {
        const index = build(entries.map(([id, terms]) => [id, [...terms]] as const), 1.2, 0.75)
        const top = index.search({ text: q.join(' '), topK: k })
        // k becomes the number of documents: each one's full sum, in the same term order.
        const all = index.search({ text: q.join(' '), topK: 10_000 })
        expect(top.hits.map((h) => [h.id, h.score])).toEqual(all.hits.slice(0, k).map((h) => [h.id, h.score]))
        expectRanking(top.hits, reference(entries, q), k)
        const s = top.stats.bm25
        if (s && s.essentialTerms < s.terms && s.candidates < (all.stats.bm25?.candidates ?? 0)) pruned++
      }),
      { numRuns: runs(60) },
    )
    expect(pruned).toBeGreaterThan(0)
  })
})
