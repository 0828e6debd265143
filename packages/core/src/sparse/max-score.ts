/**
 * MaxScore, term at a time (see `SparseIndex.search`): the running state of one search over the
 * index's shared score accumulator, and the two ways a term is scored.
 */
import type { Label } from '../ids.js'
import { TopK, type TieBreak } from '../util/top-k.js'
import { tfPart, type Bm25Params } from './bm25.js'
import type { PostingList } from './postings.js'

/** A query term found in the vocabulary: its postings, weight (idf × query weight) and score upper bound. */
export interface ScoredTerm {
  readonly id: number
  readonly term: string
  readonly list: PostingList
  readonly w: number
  readonly ub: number
}

/** rest[t]: the sum of the score bounds of terms t and after (rest[terms.length] = 0). */
export function remainingBounds(terms: readonly ScoredTerm[]): Float64Array {
  const rest = new Float64Array(terms.length + 1)
  for (let i = terms.length - 1; i >= 0; i--) rest[i] = (rest[i + 1] as number) + (terms[i]?.ub ?? 0)
  return rest
}

interface RunInput {
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
 * One MaxScore search in progress: the candidates (documents with a score in the accumulator),
 * the documents the filter rejected (marked -1 in the accumulator until the search ends), the
 * current k-th score and the work done.
 */
export class MaxScoreRun {
  readonly #in: RunInput
  #candidates: number[] = []
  readonly #rejected: number[] = []
  /** The current k-th score: a document must reach it to enter the top k. */
  theta = -Infinity
  essentialTerms = 0
  postingsScored = 0

  constructor(input: RunInput) {
    this.#in = input
  }

  get candidates(): number {
    return this.#candidates.length
  }

  /** Scores every posting of the term; a document seen for the first time becomes a candidate if the filter accepts it. */
  scoreEssential(term: ScoredTerm): void {
    const { acc, lengths, avg, params, accept } = this.#in
    const { list, w } = term
    const candidates = this.#candidates
    this.essentialTerms++
    for (let i = 0; i < list.length; i++) {
      const label = list.labels[i] as number
      const previous = acc[label] as number
      if (previous < 0) continue // rejected by the filter earlier in this search
      if (previous === 0) {
        if (accept && !accept(label as Label)) {
          acc[label] = -1
          this.#rejected.push(label)
          continue
        }
        candidates.push(label)
      }
      acc[label] = previous + w * tfPart(list.tfs[i] as number, lengths[label] as number, avg, params)
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
    const theta = this.theta
    const candidates = this.#candidates.filter((l) => {
      if ((acc[l] as number) + reach >= theta) return true
      acc[l] = 0
      return false
    })
    this.#candidates = candidates
    if (candidates.length * 12 < list.length) {
      for (const label of candidates) {
        const tf = tfOf(label, id)
        if (tf > 0) acc[label] = (acc[label] as number) + w * tfPart(tf, lengths[label] as number, avg, params)
      }
      this.postingsScored += candidates.length
    } else {
      for (let i = 0; i < list.length; i++) {
        const label = list.labels[i] as number
        const previous = acc[label] as number
        if (previous > 0) acc[label] = previous + w * tfPart(list.tfs[i] as number, lengths[label] as number, avg, params)
      }
      this.postingsScored += list.length
    }
  }

  /** Recomputes the k-th score over the candidates (-Infinity while there are fewer than k). */
  updateTheta(): void {
    const { acc, k } = this.#in
    const candidates = this.#candidates
    this.theta = candidates.length < k ? -Infinity : quickSelectDesc(candidates.map((l) => acc[l] as number), k - 1)
  }

  /** The k best candidates, best first, ties by `tie`. */
  top(tie: TieBreak): { label: Label; score: number }[] {
    const { acc, k } = this.#in
    const top = new TopK(k, tie)
    for (const label of this.#candidates) {
      const score = acc[label] as number
      if (score > 0) top.push(-score, label as Label)
    }
    return top.sorted().map(({ key, label }) => ({ label, score: -key }))
  }

  /** Leaves the accumulator zeroed for the next search. */
  clear(): void {
    const acc = this.#in.acc
    for (const label of this.#candidates) acc[label] = 0
    for (const label of this.#rejected) acc[label] = 0
  }
}

/** The (n+1)-th largest value (n from 0), reordering `xs` in place. */
function quickSelectDesc(xs: number[], n: number): number {
  let lo = 0
  let hi = xs.length - 1
  while (lo < hi) {
    const pivot = xs[(lo + hi) >> 1] as number
    let i = lo
    let j = hi
    while (i <= j) {
      while ((xs[i] as number) > pivot) i++
      while ((xs[j] as number) < pivot) j--
      if (i <= j) {
        const tmp = xs[i] as number
        xs[i] = xs[j] as number
        xs[j] = tmp
        i++
        j--
      }
    }
    if (n <= j) hi = j
    else if (n >= i) lo = i
    else return xs[n] as number
  }
  return xs[lo] as number
}
