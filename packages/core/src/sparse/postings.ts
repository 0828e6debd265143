import type { Bitset } from '../util/bitset.js'

/**
 * One term's postings: parallel typed arrays of labels and (weighted) term frequencies, in no
 * particular order, with O(1) append and O(df) removal. `maxTf` and `minLength` (the inputs of the
 * term's score upper bound) are kept exact, so they depend only on the documents now indexed:
 * a reloaded index orders its terms, and so sums its scores, exactly like the saved one.
 */
export class PostingList {
  // A load restores one list per term: its arrays are adopted as given, not allocated and replaced.
  private constructor(
    public labels: Uint32Array<ArrayBuffer>,
    public tfs: Float32Array<ArrayBuffer>,
    public length: number,
    public maxTf: number,
    public minLength: number,
  ) {}

  /** An empty list, room for 4 postings. */
  static empty(): PostingList {
    return new PostingList(new Uint32Array(4), new Float32Array(4), 0, 0, Infinity)
  }

  /** A list as a snapshot stored it: the arrays (adopted, exactly `labels.length` postings) and its exact bounds. */
  static restore(labels: Uint32Array<ArrayBuffer>, tfs: Float32Array<ArrayBuffer>, maxTf: number, minLength: number): PostingList {
    return new PostingList(labels, tfs, labels.length, maxTf, minLength)
  }

  add(label: number, tf: number, docLength: number): void {
    if (this.length === this.labels.length) {
      const labels = new Uint32Array(Math.max(4, this.length * 2))
      labels.set(this.labels)
      const tfs = new Float32Array(Math.max(4, this.length * 2))
      tfs.set(this.tfs)
      this.labels = labels
      this.tfs = tfs
    }
    this.labels[this.length] = label
    this.tfs[this.length] = tf
    this.length++
    if (tf > this.maxTf) this.maxTf = tf
    if (docLength < this.minLength) this.minLength = docLength
  }

  /** Removes the posting of `label` (swap with the last); false when absent. */
  remove(label: number, docLength: number, lengths: Float64Array): boolean {
    const labels = this.labels
    for (let i = 0; i < this.length; i++) {
      if (labels[i] !== label) continue
      const tf = this.tfs[i] as number
      const last = this.length - 1
      labels[i] = labels[last] as number
      this.tfs[i] = this.tfs[last] as number
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
    let maxTf = 0
    let minLength = Infinity
    for (let i = 0; i < this.length; i++) {
      const tf = this.tfs[i] as number
      if (tf > maxTf) maxTf = tf
      const length = lengths[this.labels[i] as number] as number
      if (length < minLength) minLength = length
    }
    this.maxTf = maxTf
    this.minLength = minLength
  }
}
