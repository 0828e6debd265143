import { describe, expect, it } from 'vitest'
import type { Label } from '../../packages/core/src/ids.js'
import { BM25_DEFAULTS, idf, tfPart, upperBound } from '../../packages/core/src/sparse/bm25.js'
import { maxScore, type RunInput, type ScoredTerm } from '../../packages/core/src/sparse/max-score.js'
import { PostingList } from '../../packages/core/src/sparse/postings.js'
import { prng } from '../support/random.js'

/**
 * A long query over documents of 20 words of a 400-word vocabulary: every document matches many
 * of its terms, so nearly every term stays essential and thousands of documents are candidates
 * while the k-th score moves after each term.
 */
function corpus(seed: number, documents: number, queryTerms: number): { terms: ScoredTerm[]; input: Omit<RunInput, 'acc' | 'k' | 'accept'>; docs: Map<number, number>[] } {
  const rand = prng(seed)
  const vocabulary = 400
  const docs = Array.from({ length: documents }, () => {
    const tfs = new Map<number, number>()
    for (let i = 0; i < 20; i++) {
      const t = Math.floor(rand() * vocabulary)
      tfs.set(t, (tfs.get(t) ?? 0) + 1)
    }
    return tfs
  })
  const lengths = new Float64Array(documents).fill(20)
  const lists = Array.from({ length: vocabulary }, () => PostingList.empty())
  docs.forEach((tfs, label) => {
    for (const [t, tf] of tfs) (lists[t] as PostingList).add(label, tf, 20)
  })
  const chosen = new Set<number>()
  while (chosen.size < queryTerms) chosen.add(Math.floor(rand() * vocabulary))
  const terms = [...chosen]
    .filter((id) => (lists[id] as PostingList).length > 0)
    .map((id) => {
      const list = lists[id] as PostingList
      const w = idf(documents, list.length)
      return { id, term: `t${id}`, list, w, ub: upperBound(w, list.maxTf, list.minLength, 20, BM25_DEFAULTS) }
    })
    .sort((a, b) => b.ub - a.ub || a.id - b.id)
  const tf = (label: number, id: number): number => docs[label]?.get(id) ?? 0
  return { terms, input: { lengths, avg: 20, params: BM25_DEFAULTS, tf }, docs }
}

/** Each document's full sum in term order (the arithmetic of a search), best first, ties by label. */
function exhaustive(terms: readonly ScoredTerm[], docs: readonly Map<number, number>[], keep: (label: number) => boolean): { label: Label; score: number }[] {
  const out: { label: Label; score: number }[] = []
  docs.forEach((tfs, label) => {
    if (!keep(label)) return
    let score = 0
    for (const t of terms) {
      const tf = tfs.get(t.id) ?? 0
      if (tf > 0) score += t.w * tfPart(tf, 20, 20, BM25_DEFAULTS)
    }
    if (score > 0) out.push({ label: label as Label, score })
  })
  return out.sort((a, b) => b.score - a.score || a.label - b.label)
}

/** An accumulator that counts its element reads. */
function counted(size: number): { acc: Float64Array; target: Float64Array; reads: () => number } {
  const target = new Float64Array(size)
  let reads = 0
  const acc = new Proxy(target, {
    get(t, key) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++
      return Reflect.get(t, key) as unknown
    },
    set: (t, key, value) => Reflect.set(t, key, value),
  })
  return { acc, target, reads: () => reads }
}

describe('MaxScore over long queries', () => {
  for (const { k, filtered } of [
    { k: 1, filtered: false },
    { k: 10, filtered: false },
    { k: 10, filtered: true },
    { k: 200, filtered: false },
  ]) {
    it(`reads each score a bounded number of times per posting scored, not per candidate and term (k ${k}${filtered ? ', filtered' : ''})`, () => {
      const documents = 3000
      const { terms, input, docs } = corpus(k, documents, 300)
      const { acc, target, reads } = counted(documents)
      const keep = (label: number): boolean => !filtered || label % 3 !== 0
      const { hits, stats } = maxScore(terms, { ...input, acc, k, accept: filtered ? (label) => keep(label) : undefined }, (a, b) => a - b)
      expect(hits).toEqual(exhaustive(terms, docs, keep).slice(0, k))
      // The pruning ran: some terms were not essential, and the accumulator is zero again.
      expect(stats.essentialTerms).toBeLessThan(stats.terms)
      expect(target.every((x) => x === 0)).toBe(true)
      // Per term: its postings (or its candidates' forward lookups), then, at most once each, a
      // dropped candidate's or a raised score's heap refresh; once at the end, the top k.
      expect(reads()).toBeLessThanOrEqual(3 * stats.postingsScored + 2 * documents)
    })
  }
})
