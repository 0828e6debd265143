/**
 * One term's postings: parallel typed arrays of labels and (weighted) term frequencies, in no
 * particular order, with O(1) append and swap-removal. `maxTf` and `minLength` only ever widen
 * (removal keeps them), so they stay valid upper-bound inputs.
 */
export class PostingList {
  labels = new Uint32Array(4)
  tfs = new Float32Array(4)
  length = 0
  maxTf = 0
  minLength = Infinity

  add(label: number, tf: number, docLength: number): void {
    if (this.length === this.labels.length) {
      const labels = new Uint32Array(this.length * 2)
      labels.set(this.labels)
      const tfs = new Float32Array(this.length * 2)
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
  remove(label: number): boolean {
    const labels = this.labels
    for (let i = 0; i < this.length; i++) {
      if (labels[i] !== label) continue
      const last = this.length - 1
      labels[i] = labels[last] as number
      this.tfs[i] = this.tfs[last] as number
      this.length = last
      return true
    }
    return false
  }
}
