import type { Label } from '../ids.js'
import { Bitset } from '../util/bitset.js'
import type { TieBreak } from '../util/top-k.js'
import { idf, tfPart, upperBound, type Bm25Params } from './bm25.js'
import { maxScore, type ScoredTerm, type SparseHit, type SparseSearchStats } from './max-score.js'
import { ForwardEntries, type ForwardEntry } from './forward.js'
import { PostingList } from './postings.js'
import type { TermCounts, TermVocabulary } from '../text/term-counts.js'

export type { SparseSearchStats } from './max-score.js'

/**
 * A document as the sparse index sees it: weighted term frequencies and weighted length, by term
 * (`terms`) or as an Analyzer counted them (`counts`: ids of its vocabulary, read at once).
 */
export type SparseDocument = { readonly terms: ReadonlyMap<string, number>; readonly length: number } | { readonly counts: TermCounts; readonly length: number }

/**
 * A document as {@link SparseIndex.prepare} made it: the forward entry of its terms the index
 * knew then (term ids ascending, their tfs), its other terms by name with their weights (numbered
 * when it is indexed), and its length.
 */
export interface PreparedSparse {
  readonly entry: { readonly ids: Uint32Array; readonly tfs: Float32Array }
  readonly fresh: readonly string[]
  readonly freshWeights: readonly number[]
  readonly length: number
}

/** A query term with its weight (how often it occurs in the query). */
export interface QueryTerm {
  readonly term: string
  readonly weight: number
}

/** One query term's contribution to a hit's score. */
export interface TermExplanation {
  readonly term: string
  readonly tf: number
  readonly df: number
  readonly idf: number
  readonly queryWeight: number
  readonly documentLength: number
  readonly averageLength: number
  readonly score: number
}

/** A text index as a snapshot stores it: everything search reads, nothing derived again on load. */
interface SparseSnapshot<P extends 'parts' | 'whole' = 'whole'> {
  /** The vocabulary by term id (terms without postings included: ids are kept). */
  readonly terms: readonly string[]
  /** Postings by term id, in their in-memory order, with their exact bounds. */
  readonly postings: readonly PostingList[]
  /**
   * Forward entries by label: each label's number of terms (NO_TEXT: none), then every entry's
   * term ids and tfs one after the other in label order, as one array or consecutive parts.
   */
  readonly forward: {
    readonly counts: Uint32Array
    readonly ids: P extends 'parts' ? readonly Uint32Array[] : Uint32Array
    readonly tfs: P extends 'parts' ? readonly Float32Array[] : Float32Array
  }
  /** Document lengths by label (0 where none), at least as long as the forward counts. */
  readonly lengths: Float64Array
  readonly totalLength: number
}

/**
 * An inverted index with exact BM25 statistics under add and remove. Postings are typed arrays
 * per term; a forward index (per document: sorted term ids and tfs) makes removal exact and lets
 * pruned search look up a candidate's tf without scanning a long posting list.
 */
export class SparseIndex {
  readonly params: Bm25Params
  readonly #termIds = new Map<string, number>()
  readonly #terms: string[] = []
  readonly #postings: PostingList[] = []
  /** Forward index by label: term ids ascending and their tfs. */
  #forward = ForwardEntries.empty()
  #lengths = new Float64Array(1024)
  #documents = 0
  #totalLength = 0
  /** Reused score accumulator by label, and the labels touched in the current search. */
  #acc = new Float64Array(1024)
  /** Reused by {@link set}. */
  #scratch = scratchOf(256)
  /** For counted documents: term id + 1 by id of {@link #vocabularyEpoch}'s vocabulary (0: not looked up yet). */
  #fromVocabulary = new Int32Array(1024)
  #vocabularyEpoch: object | undefined

  constructor(params: Bm25Params) {
    this.params = params
  }

  /** Indexed documents (N). */
  get documents(): number {
    return this.#documents
  }

  /** Average (weighted) document length. */
  get averageLength(): number {
    return this.#documents === 0 ? 0 : this.#totalLength / this.#documents
  }

  /** Distinct terms with at least one posting. */
  get vocabularySize(): number {
    let n = 0
    for (const p of this.#postings) if (p.length > 0) n++
    return n
  }

  /** The vocabulary by term id (for snapshots). */
  get terms(): readonly string[] {
    return this.#terms
  }

  /** A label's forward entry: term ids ascending and their tfs (views, valid until the next change). */
  forward(label: Label): ForwardEntry | undefined {
    return this.#forward.get(label)
  }

  /** A document's (weighted) length. */
  lengthOf(label: Label): number {
    return this.#lengths[label] ?? 0
  }

  /** The running total of document lengths (saved verbatim so a reload averages identically). */
  get totalLength(): number {
    return this.#totalLength
  }

  /**
   * The index's data, for a snapshot (live arrays: write them before the index changes). The
   * forward ids and tfs come as parts (runs of the forward columns).
   */
  snapshot(extent: number): SparseSnapshot<'parts'> {
    const forward = this.#forward
    return {
      terms: this.#terms,
      postings: this.#postings,
      // Built only when read (a writer of the postings alone does not need it).
      get forward() {
        return forward.columns(extent)
      },
      lengths: this.#lengths.subarray(0, extent),
      totalLength: this.#totalLength,
    }
  }

  /**
   * An index holding exactly what {@link snapshot} gave (its arrays adopted, not copied: the
   * forward entries stay in the given columns until an entry is added); undefined when they do not
   * fit together (a term twice, forward counts that do not sum to the length of its ids and tfs).
   */
  static fromSnapshot(params: Bm25Params, data: SparseSnapshot): SparseIndex | undefined {
    const index = new SparseIndex(params)
    data.terms.forEach((term, id) => {
      index.#termIds.set(term, id)
      index.#terms.push(term)
    })
    if (index.#termIds.size !== data.terms.length) return undefined
    index.#postings.push(...data.postings)
    const forward = ForwardEntries.fromColumns(data.forward.counts, data.forward.ids, data.forward.tfs)
    if (!forward) return undefined
    index.#forward = forward
    let size = 1024
    while (size < data.lengths.length) size *= 2
    index.#lengths = new Float64Array(size)
    index.#lengths.set(data.lengths)
    index.#acc = new Float64Array(size)
    index.#documents = forward.withTerms(data.forward.counts.length)
    index.#totalLength = data.totalLength
    return index
  }

  /** Document frequency of a term. */
  df(term: string): number {
    const id = this.#termIds.get(term)
    return id === undefined ? 0 : (this.#postings[id] as PostingList).length
  }

  has(label: Label): boolean {
    return this.#forward.has(label)
  }

  /** Indexes a document under `label` (replacing what the label had). */
  set(label: Label, doc: SparseDocument): void {
    this.#insertSorted(label, 'counts' in doc ? this.#countedKeys(doc.counts) : this.#mappedKeys(doc.terms, (term) => this.#termId(term)), doc.length)
  }

  /**
   * A document's analysis for {@link setPrepared} now or later, changing nothing: terms the index
   * does not know yet are kept by name and numbered when the document is indexed, in the order
   * {@link set} would number them then. The counts of `doc` are read at once.
   */
  prepare(doc: SparseDocument): PreparedSparse {
    const fresh: string[] = []
    const freshWeights: number[] = []
    const known = this.#termIds
    const n = 'counts' in doc ? this.#countedKeys(doc.counts, fresh, freshWeights) : this.#mappedKeys(doc.terms, (term) => known.get(term), fresh, freshWeights)
    return { entry: this.#sortedEntry(n), fresh, freshWeights, length: doc.length }
  }

  /**
   * Indexes a document {@link prepare}d by this index under `label` (replacing what the label had):
   * the same postings, forward entry and term ids as {@link set} of the same document now. A
   * prepared document is only read, so it may serve several labels.
   */
  setPrepared(label: Label, doc: PreparedSparse): void {
    if (doc.fresh.length === 0) return this.#insert(label, doc.entry.ids, doc.entry.tfs, doc.entry.ids.length, doc.length)
    // Its known terms and its fresh ones (numbered now, in their order in the document), sorted by id.
    const { ids, tfs } = doc.entry
    const { keys, weights } = this.#scratchFor(ids.length + doc.fresh.length)
    let n = 0
    for (; n < ids.length; n++) {
      weights[n] = tfs[n] as number
      keys[n] = (ids[n] as number) * PACKED_POSITIONS + n
    }
    doc.fresh.forEach((term, i) => {
      weights[n] = doc.freshWeights[i] as number
      keys[n] = this.#termId(term) * PACKED_POSITIONS + n
      n++
    })
    this.#insertSorted(label, n, doc.length)
  }

  /** Indexes the first `n` scratch keys and weights under `label`, sorted by term id in the scratch. */
  #insertSorted(label: Label, n: number, length: number): void {
    const { keys, weights, ids, tfs } = this.#scratch
    ascendingOrder(keys, n, ids, tfs, weights)
    this.#insert(label, ids, tfs, n, length)
  }

  /** The forward entry of the first `n` scratch keys and weights, in arrays of its own. */
  #sortedEntry(n: number): ForwardEntry {
    const { keys, weights, ids, tfs } = this.#scratch
    ascendingOrder(keys, n, ids, tfs, weights)
    return { ids: ids.slice(0, n), tfs: tfs.slice(0, n) }
  }

  /** Indexes the first `n` term ids (ascending) and tfs under `label`. */
  #insert(label: Label, ids: Uint32Array, tfs: Float32Array, n: number, length: number): void {
    if (this.has(label)) this.delete(label)
    if (label >= this.#lengths.length) this.#grow(label + 1)
    for (let i = 0; i < n; i++) (this.#postings[ids[i] as number] as PostingList).add(label, tfs[i] as number, length)
    this.#forward.set(label, ids, tfs, n)
    this.#lengths[label] = length
    // As Lucene's docCount: a text with no term (empty, or only stop words) is no document of
    // the field, and counts in neither N nor the average length.
    if (n > 0) {
      this.#documents++
      this.#totalLength += length
    }
  }

  /** The id of a term, numbered on first sight (with an empty posting list). */
  #termId(term: string): number {
    let id = this.#termIds.get(term)
    if (id === undefined) {
      id = this.#terms.length
      this.#termIds.set(term, id)
      this.#terms.push(term)
      this.#postings.push(PostingList.empty())
    }
    return id
  }

  /** Fills the scratch keys and weights with a document's terms of positive weight, in the Map's order; returns their number. */
  #mappedKeys(terms: ReadonlyMap<string, number>, idOf: (term: string) => number | undefined, fresh?: string[], freshWeights?: number[]): number {
    const { keys, weights } = this.#scratchFor(terms.size)
    let n = 0
    for (const [term, tf] of terms) {
      if (!(tf > 0)) continue
      const id = idOf(term)
      if (id === undefined) {
        fresh?.push(term)
        freshWeights?.push(tf)
        continue
      }
      weights[n] = tf
      keys[n] = id * PACKED_POSITIONS + n
      n++
    }
    return n
  }

  /**
   * {@link #mappedKeys} for counts over an Analyzer's vocabulary, in the counts' order (a term's
   * first occurrence, as in the Map the counts stand for, so new terms get the same ids): each of
   * its ids is translated once into the index's, by one string lookup, then by an array read.
   * With `fresh`, terms the index does not know are listed there (with their weights) instead of
   * numbered.
   */
  #countedKeys(counts: TermCounts, fresh?: string[], freshWeights?: number[]): number {
    this.#useVocabulary(counts.vocabulary)
    const { keys, weights } = this.#scratchFor(counts.size)
    let n = 0
    for (let i = 0; i < counts.size; i++) {
      const tf = counts.weights[i] as number
      if (!(tf > 0)) continue
      const from = counts.ids[i] as number
      const table = this.#fromVocabulary
      let id = (from < table.length ? (table[from] as number) : 0) - 1
      if (id < 0) {
        const term = fresh ? counts.vocabulary.termOf(from) : undefined
        if (term !== undefined && !this.#termIds.has(term)) {
          fresh?.push(term)
          freshWeights?.push(tf)
          continue
        }
        id = this.#translate(counts.vocabulary, from)
      }
      weights[n] = tf
      keys[n] = id * PACKED_POSITIONS + n
      n++
    }
    return n
  }

  /** Translates from `vocabulary`'s current epoch from now on (the table is emptied when the epoch changes). */
  #useVocabulary(vocabulary: TermVocabulary): void {
    if (vocabulary.epoch === this.#vocabularyEpoch) return
    this.#vocabularyEpoch = vocabulary.epoch
    this.#fromVocabulary = new Int32Array(1024)
  }

  /** The index's id of `vocabulary`'s term `from`, remembered in the translation table. */
  #translate(vocabulary: TermVocabulary, from: number): number {
    const id = this.#termId(vocabulary.termOf(from))
    if (from >= this.#fromVocabulary.length) {
      let size = this.#fromVocabulary.length
      while (size <= from) size *= 2
      const table = new Int32Array(size)
      table.set(this.#fromVocabulary)
      this.#fromVocabulary = table
    }
    this.#fromVocabulary[from] = id + 1
    return id
  }

  /** Buffers for one document's terms, reused from one set to the next (grown to `n`). */
  #scratchFor(n: number): Scratch {
    if (this.#scratch.weights.length < n) {
      let size = this.#scratch.weights.length
      while (size < n) size *= 2
      this.#scratch = scratchOf(size)
    }
    return this.#scratch
  }

  /** Removes a document; N, df and the average length return to what they were without it. */
  delete(label: Label): boolean {
    const fwd = this.#forward.get(label)
    if (!fwd) return false
    const length = this.#lengths[label] as number
    for (let i = 0; i < fwd.ids.length; i++) (this.#postings[fwd.ids[i] as number] as PostingList).remove(label, length, this.#lengths)
    this.#forward.delete(label)
    if (fwd.ids.length > 0) {
      this.#documents--
      this.#totalLength -= length
    }
    if (this.#documents === 0) this.#totalLength = 0
    this.#lengths[label] = 0
    return true
  }

  /**
   * Removes many documents at once, as {@link delete} one by one would (N, df, lengths and the
   * exact bounds are the same; postings left keep their order): each posting list touched is
   * compacted once, so a batch costs its forward entries plus the lists they name, where one
   * delete at a time rescans a common term's list for every document. Returns how many were
   * indexed.
   */
  deleteMany(labels: readonly Label[]): number {
    const dead = new Bitset(this.#lengths.length)
    const touched = new Set<number>()
    let removed = 0
    // Lengths leave the total in the order given, as deletes one by one subtract them.
    for (const label of labels) {
      const fwd = this.#forward.get(label)
      if (!fwd) continue
      dead.add(label)
      removed++
      for (let i = 0; i < fwd.ids.length; i++) touched.add(fwd.ids[i] as number)
      this.#forward.delete(label)
      if (fwd.ids.length > 0) {
        this.#documents--
        this.#totalLength -= this.#lengths[label] as number
      }
      if (this.#documents === 0) this.#totalLength = 0
    }
    for (const id of touched) (this.#postings[id] as PostingList).removeAll(dead, this.#lengths)
    for (const label of labels) if (dead.has(label)) this.#lengths[label] = 0
    return removed
  }

  /** The tf of term id `id` in document `label` (binary search in its forward entry). */
  #tf(label: number, id: number): number {
    return this.#forward.tf(label, id)
  }

  /** Exact top-k by BM25, best first, ties by `tie`: {@link maxScore} over the query's terms, highest score bound first. */
  search(query: readonly QueryTerm[], k: number, tie: TieBreak, accept?: (label: Label) => boolean): { hits: SparseHit[]; stats: SparseSearchStats } {
    const avg = this.averageLength
    const input = { acc: this.#acc, lengths: this.#lengths, avg, params: this.params, k, accept, tf: (label: number, id: number) => this.#tf(label, id) }
    return maxScore(this.#scoredTerms(query, avg), input, tie)
  }

  /** The query's terms found in the vocabulary, with their weights and score bounds, highest bound first. */
  #scoredTerms(query: readonly QueryTerm[], avg: number): ScoredTerm[] {
    const N = this.#documents
    return query
      .map(({ term, weight }) => {
        const id = this.#termIds.get(term)
        const list = id === undefined ? undefined : this.#postings[id]
        if (id === undefined || !list || list.length === 0) return undefined
        const w = idf(N, list.length) * weight
        return { id, term, list, w, ub: upperBound(w, list.maxTf, list.minLength, avg, this.params) }
      })
      .filter((t) => t !== undefined)
      // Ties by the term itself, not its id: ids depend on insertion history, terms do not.
      .sort((a, b) => b.ub - a.ub || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
  }

  /**
   * Exact BM25 scores of single documents for one query (0 when no term matches): the same terms,
   * order and arithmetic as search, so a document search returns gets the same score to the last bit.
   */
  scorer(query: readonly QueryTerm[]): (label: Label) => number {
    const avg = this.averageLength
    const terms = this.#scoredTerms(query, avg)
    return (label) => {
      if (!this.has(label)) return 0
      const length = this.#lengths[label] as number
      let score = 0
      for (const t of terms) {
        const tf = this.#tf(label, t.id)
        if (tf > 0) score += t.w * tfPart(tf, length, avg, this.params)
      }
      return score
    }
  }

  /** Per-term parts of a document's score for a query (the same arithmetic as search). */
  explain(label: Label, query: readonly QueryTerm[]): TermExplanation[] {
    const N = this.#documents
    const avg = this.averageLength
    const length = this.#lengths[label] ?? 0
    return query.map(({ term, weight }) => {
      const id = this.#termIds.get(term)
      const df = id === undefined ? 0 : (this.#postings[id] as PostingList).length
      const tf = id === undefined ? 0 : this.#tf(label, id)
      const idfValue = df === 0 ? 0 : idf(N, df)
      const score = tf > 0 ? idfValue * weight * tfPart(tf, length, avg, this.params) : 0
      return { term, tf, df, idf: idfValue, queryWeight: weight, documentLength: length, averageLength: avg, score }
    })
  }

  #grow(min: number): void {
    let size = this.#lengths.length
    while (size < min) size *= 2
    const lengths = new Float64Array(size)
    lengths.set(this.#lengths)
    this.#lengths = lengths
    const acc = new Float64Array(size)
    acc.set(this.#acc)
    this.#acc = acc
  }
}

/**
 * One document's terms while it is indexed: (term id, position) keys and the weights by position,
 * then its forward entry (ids ascending, their tfs) sorted from them.
 */
interface Scratch {
  readonly keys: Float64Array
  readonly weights: Float64Array
  readonly ids: Uint32Array
  readonly tfs: Float32Array
}

function scratchOf(size: number): Scratch {
  return { keys: new Float64Array(size), weights: new Float64Array(size), ids: new Uint32Array(size), tfs: new Float32Array(size) }
}

/** Positions below this fit beside a uint32 id in one float64 key, exactly (2^32 · 2^21 = 2^53). */
const PACKED_POSITIONS = 2 ** 21

/**
 * Writes the first `n` (term id, position) keys' ids in ascending order into `ids`, and the
 * weight at each one's position into `tfs`: the keys are sorted natively as float64s, several
 * times faster than sorting pairs with a comparator. A document of 2^21 distinct terms or more
 * (its positions would not fit beside the id) is sorted with a comparator instead.
 */
function ascendingOrder(keys: Float64Array, n: number, ids: Uint32Array, tfs: Float32Array, weights: Float64Array): void {
  if (n >= PACKED_POSITIONS) {
    const at = Array.from({ length: n }, (_, i) => i)
    const id = (i: number): number => Math.round(((keys[i] as number) - i) / PACKED_POSITIONS)
    at.sort((a, b) => id(a) - id(b))
    for (let i = 0; i < n; i++) {
      ids[i] = id(at[i] as number)
      tfs[i] = weights[at[i] as number] as number
    }
    return
  }
  const sorted = keys.subarray(0, n).sort()
  for (let i = 0; i < n; i++) {
    const key = sorted[i] as number
    const position = key % PACKED_POSITIONS
    ids[i] = (key - position) / PACKED_POSITIONS
    tfs[i] = weights[position] as number
  }
}
