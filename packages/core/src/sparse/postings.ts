import type { Bitset } from '../util/bitset.js'

/** A load's postings, every term's in a row (persist/indexes.ts `readSparse`). */
export interface LoadedColumns {
  readonly labels: Uint32Array<ArrayBuffer>
  readonly tfs: Float32Array<ArrayBuffer>
}

/**
 * One term's postings: parallel typed arrays of labels and (weighted) term frequencies, in no
 * particular order, with O(1) append and O(df) removal. `maxTf` and `minLength` (the inputs of the
 * term's score upper bound) are kept exact, so they depend only on the documents now indexed:
 * a reloaded index orders its terms, and so sums its scores, exactly like the saved one.
 */
export class PostingList {
  /**
   * The list's own arrays (their length is its capacity); a loaded list has none until it grows:
   * its postings are a range of the load's two columns, read through views made on each use. A load
   * restores one list per term (hundreds of thousands at a million records), and two typed-array
   * objects kept per term were a fifth of the loaded heap, copied by every collection the load set
   * off.
   */
  #labels: Uint32Array<ArrayBuffer> | undefined
  #tfs: Float32Array<ArrayBuffer> | undefined
  readonly #columns: LoadedColumns | undefined
  /** Where a loaded list's postings start in its columns (it holds exactly its stored `length` there). */
  readonly #at: number
  readonly #stored: number

  private constructor(
    labels: Uint32Array<ArrayBuffer> | undefined,
    tfs: Float32Array<ArrayBuffer> | undefined,
    columns: LoadedColumns | undefined,
    at: number,
    public length: number,
    public maxTf: number,
    public minLength: number,
  ) {
    this.#labels = labels
    this.#tfs = tfs
    this.#columns = columns
    this.#at = at
    this.#stored = length
  }

  /** An empty list, room for 4 postings. */
  static empty(): PostingList {
    return new PostingList(new Uint32Array(4), new Float32Array(4), undefined, 0, 0, 0, Infinity)
  }

  /**
   * A list as a snapshot stored it: `length` postings from `at` in the load's columns (shared by
   * every list of the load, and written in place by removals, as the list's own arrays would be)
   * and its exact bounds.
   */
  static restore(columns: LoadedColumns, at: number, length: number, maxTf: number, minLength: number): PostingList {
    return new PostingList(undefined, undefined, columns, at, length, maxTf, minLength)
  }

  /**
   * The labels of the postings: the first `length` (beyond them, room to grow in the list's own
   * arrays, or postings removed from a loaded list's range). Read it once per pass: a loaded list
   * makes a view on each read.
   */
  get labels(): Uint32Array<ArrayBuffer> {
    return this.#labels ?? (this.#columns as LoadedColumns).labels.subarray(this.#at, this.#at + this.#stored)
  }

  /** The postings' term frequencies, parallel to {@link labels}. */
  get tfs(): Float32Array<ArrayBuffer> {
    return this.#tfs ?? (this.#columns as LoadedColumns).tfs.subarray(this.#at, this.#at + this.#stored)
  }

  add(label: number, tf: number, docLength: number): void {
    let labels = this.#labels
    let tfs = this.#tfs
    // The two are set together (`tfs` is checked for the type checker): none yet on a loaded list.
    if (labels === undefined || tfs === undefined || this.length === labels.length) {
      const grown = new Uint32Array(Math.max(4, this.length * 2))
      grown.set(this.labels.subarray(0, this.length))
      const grownTfs = new Float32Array(Math.max(4, this.length * 2))
      grownTfs.set(this.tfs.subarray(0, this.length))
      labels = this.#labels = grown
      tfs = this.#tfs = grownTfs
    }
    labels[this.length] = label
    tfs[this.length] = tf
    this.length++
    if (tf > this.maxTf) this.maxTf = tf
    if (docLength < this.minLength) this.minLength = docLength
  }

  /** Removes the posting of `label` (swap with the last); false when absent. */
  remove(label: number, docLength: number, lengths: Float64Array): boolean {
    const labels = this.labels
    const tfs = this.tfs
    for (let i = 0; i < this.length; i++) {
      if (labels[i] !== label) continue
      const tf = tfs[i] as number
      const last = this.length - 1
      labels[i] = labels[last] as number
      tfs[i] = tfs[last] as number
      this.length = last
      if (tf === this.maxTf || docLength === this.minLength) this.#recomputeBounds(lengths)
      return true
    }
    return false
  }

  /**
   * Removes the postings of every label in `dead` in one pass (the others keep their order) and
   * returns how many went: a batch of k labels costs O(df) here, not k scans of the list.
   */
  removeAll(dead: Bitset, lengths: Float64Array): number {
    const labels = this.labels
    const tfs = this.tfs
    let kept = 0
    for (let i = 0; i < this.length; i++) {
      const label = labels[i] as number
      if (dead.has(label)) continue
      labels[kept] = label
      tfs[kept] = tfs[i] as number
      kept++
    }
    const removed = this.length - kept
    this.length = kept
    if (removed > 0) this.#recomputeBounds(lengths)
    return removed
  }

  #recomputeBounds(lengths: Float64Array): void {
    const labels = this.labels
    const tfs = this.tfs
    let maxTf = 0
    let minLength = Infinity
    for (let i = 0; i < this.length; i++) {
      const tf = tfs[i] as number
      if (tf > maxTf) maxTf = tf
      const length = lengths[labels[i] as number] as number
      if (length < minLength) minLength = length
    }
    this.maxTf = maxTf
    this.minLength = minLength
  }
}
