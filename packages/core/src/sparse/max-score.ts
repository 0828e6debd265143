/**
 * MaxScore, term at a time: the running state of one search over the index's shared score
 * accumulator, and the two ways a term is scored.
 */
import type { Label } from '../ids.js'
import { TopK, type TieBreak } from '../util/top-k.js'
import { tfPart, type Bm25Params } from './bm25.js'
import { Candidates } from './candidates.js'
import { KthBest } from './kth-best.js'
import type { PostingList } from './postings.js'

/** A query term found in the vocabulary: its postings, weight (idf × query weight) and score upper bound. */
export interface ScoredTerm {
  readonly id: number
  readonly term: string
  readonly list: PostingList
  readonly w: number
  readonly ub: number
}

/** A document of the top k and its score. */
export interface SparseHit {
  readonly label: Label
  readonly score: number
}

/** Work done by one search, for `stats` and for checking the pruning in tests. */
export interface SparseSearchStats {
  /** Query terms found in the vocabulary. */
  readonly terms: number
  /** Terms scored in full (their postings could admit new documents). */
  readonly essentialTerms: number
  /** Postings read in total. */
  readonly postingsScored: number
  /** Documents that received any score. */
  readonly candidates: number
}

/** rest[t]: the sum of the score bounds of terms t and after (rest[terms.length] = 0). */
function remainingBounds(terms: readonly ScoredTerm[]): Float64Array {
  const rest = new Float64Array(terms.length + 1)
  for (let i = terms.length - 1; i >= 0; i--) rest[i] = (rest[i + 1] as number) + (terms[i]?.ub ?? 0)
  return rest
}

/** What one search reads: the index's arrays and statistics, k and the filter. */
export interface RunInput {
  /** The index's shared score accumulator by label (all zero between searches). */
  readonly acc: Float64Array
  readonly lengths: Float64Array
  readonly avg: number
  readonly params: Bm25Params
  readonly k: number
  readonly accept: ((label: Label) => boolean) | undefined
  /** A document's tf for a term id, from the forward index. */
  readonly tf: (label: number, id: number) => number
}

/**
 * Exact top-k by BM25 over `terms` (highest score bound first), best first, ties by `tie`.
 * Term-at-a-time MaxScore: once the bounds of the remaining terms sum below the current k-th
 * score, no unseen document can enter the top k, so the remaining terms only update existing
 * candidates, by forward-index lookup when that is cheaper than their postings, and candidates
 * that can no longer reach the k-th score are dropped.
 */
export function maxScore(terms: readonly ScoredTerm[], input: RunInput, tie: TieBreak): { hits: SparseHit[]; stats: SparseSearchStats } {
  const rest = remainingBounds(terms)
  const run = new MaxScoreRun(input)
  // The accumulator is shared between searches: always leave it zeroed, even if the filter throws.
  try {
    for (let t = 0; t < terms.length; t++) {
      const reach = rest[t] as number
      // Essential: a document not seen yet could still reach the top k through this term.
      if (reach >= run.theta) run.scoreEssential(terms[t] as ScoredTerm)
      else run.scoreNonEssential(terms[t] as ScoredTerm, reach)
      run.updateTheta()
    }
    return {
      hits: run.top(tie),
      stats: { terms: terms.length, essentialTerms: run.essentialTerms, postingsScored: run.postingsScored, candidates: run.candidates },
    }
  } finally {
    run.clear()
  }
}

/**
 * One MaxScore search in progress: the candidates (documents with a score in the accumulator),
 * the documents the filter rejected (marked -1 in the accumulator until the search ends), the
 * current k-th score and the work done. Every score change goes through {@link KthBest}, so the
 * k-th score costs each term the postings it scores, not a pass over every candidate.
 */
class MaxScoreRun {
  readonly #in: RunInput
  readonly #candidates = new Candidates()
  readonly #rejected: number[] = []
  readonly #kth: KthBest
  /** The current k-th score: a document must reach it to enter the top k. */
  theta = -Infinity
  essentialTerms = 0
  postingsScored = 0

  constructor(input: RunInput) {
    this.#in = input
    this.#kth = new KthBest(input.k)
  }

  get candidates(): number {
    return this.#candidates.size
  }

  /** Scores every posting of the term; a document seen for the first time becomes a candidate if the filter accepts it. */
  scoreEssential(term: ScoredTerm): void {
    const { acc, lengths, avg, params, accept } = this.#in
    const { list, w } = term
    const candidates = this.#candidates
    const kth = this.#kth
    this.essentialTerms++
    const { labels, tfs } = list
    for (let i = 0; i < list.length; i++) {
      const label = labels[i] as number
      const previous = acc[label] as number
      if (previous < 0) continue // rejected by the filter earlier in this search
      if (previous === 0 && accept && !accept(label as Label)) {
        acc[label] = -1
        this.#rejected.push(label)
        continue
      }
      const score = previous + w * tfPart(tfs[i] as number, lengths[label] as number, avg, params)
      acc[label] = score
      if (previous === 0) candidates.add(label, score)
      kth.raise(label, previous, score)
    }
    this.postingsScored += list.length
  }

  /**
   * Only candidates that can still reach the k-th score matter: the others are dropped, and the
   * term's part is added to the rest, by forward-index lookup when there are far fewer
   * candidates than postings. `reach` bounds what this and the later terms can still add.
   */
  scoreNonEssential(term: ScoredTerm, reach: number): void {
    const { acc, lengths, avg, params, tf: tfOf } = this.#in
    const { id, list, w } = term
    const candidates = this.#candidates
    const kth = this.#kth
    candidates.dropBelow(acc, reach, this.theta)
    const n = candidates.size
    if (n * 12 < list.length) {
      for (let i = 0; i < n; i++) {
        const label = candidates.at(i)
        const tf = tfOf(label, id)
        if (tf <= 0) continue
        const previous = acc[label] as number
        const score = previous + w * tfPart(tf, lengths[label] as number, avg, params)
        acc[label] = score
        kth.raise(label, previous, score)
      }
      this.postingsScored += n
    } else {
      const { labels, tfs } = list
      for (let i = 0; i < list.length; i++) {
        const label = labels[i] as number
        const previous = acc[label] as number
        if (previous <= 0) continue
        const score = previous + w * tfPart(tfs[i] as number, lengths[label] as number, avg, params)
        acc[label] = score
        kth.raise(label, previous, score)
      }
      this.postingsScored += list.length
    }
  }

  /** The k-th score over the candidates (-Infinity while there are fewer than k), for the next term. */
  updateTheta(): void {
    this.theta = this.#kth.value
  }

  /** The k best candidates, best first, ties by `tie`. */
  top(tie: TieBreak): SparseHit[] {
    const { acc, k } = this.#in
    const top = new TopK(k, tie)
    const candidates = this.#candidates
    for (let i = 0; i < candidates.size; i++) {
      const label = candidates.at(i)
      const score = acc[label] as number
      if (score > 0) top.push(-score, label as Label)
    }
    return top.sorted().map(({ key, label }) => ({ label, score: -key }))
  }

  /** Leaves the accumulator zeroed for the next search. */
  clear(): void {
    const acc = this.#in.acc
    const candidates = this.#candidates
    for (let i = 0; i < candidates.size; i++) acc[candidates.at(i)] = 0
    for (const label of this.#rejected) acc[label] = 0
  }
}
