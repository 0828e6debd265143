/**
 * The documents one search has scored (its candidates), and the dropping of those that can no
 * longer reach the k-th score. They are appended while terms are essential; at the first drop they
 * become a min-heap by score, so each later drop costs the documents dropped and the scores that
 * rose since, not a pass over every candidate per term. Scores only rise, so a key may lag its
 * document's score: it is refreshed when it reaches the top.
 */
export class Candidates {
  #labels = new Uint32Array(256)
  /** Each label's score when last read (heap keys once {@link dropBelow} has run). */
  #keys = new Float64Array(256)
  #size = 0
  #heap = false

  get size(): number {
    return this.#size
  }

  /** The i-th candidate, for 0 ≤ i < size (in no particular order). */
  at(i: number): number {
    return this.#labels[i] as number
  }

  add(label: number, score: number): void {
    if (this.#size === this.#labels.length) {
      const labels = new Uint32Array(this.#size * 2)
      labels.set(this.#labels)
      this.#labels = labels
      const keys = new Float64Array(this.#size * 2)
      keys.set(this.#keys)
      this.#keys = keys
    }
    const i = this.#size++
    this.#labels[i] = label
    this.#keys[i] = score
    if (this.#heap) this.#up(i)
  }

  /**
   * Drops, zeroing their score in `acc`, exactly the candidates with `acc[label] + reach < theta`.
   * A float sum never falls as one of its terms grows, so they are the lowest scores: popped from
   * the heap until its (refreshed) minimum stays.
   */
  dropBelow(acc: Float64Array, reach: number, theta: number): void {
    const labels = this.#labels
    const keys = this.#keys
    if (!this.#heap) {
      for (let i = 0; i < this.#size; i++) keys[i] = acc[labels[i] as number] as number
      for (let i = (this.#size >> 1) - 1; i >= 0; i--) this.#down(i)
      this.#heap = true
    }
    while (this.#size > 0) {
      const label = labels[0] as number
      const score = acc[label] as number
      if (score !== keys[0]) {
        keys[0] = score
        this.#down(0)
        continue
      }
      if (score + reach >= theta) return
      acc[label] = 0
      const last = --this.#size
      labels[0] = labels[last] as number
      keys[0] = keys[last] as number
      this.#down(0)
    }
  }

  #down(i: number): void {
    const labels = this.#labels
    const keys = this.#keys
    const n = this.#size
    const key = keys[i] as number
    const label = labels[i] as number
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && (keys[right] as number) < (keys[left] as number) ? right : left
      if ((keys[child] as number) >= key) break
      keys[i] = keys[child] as number
      labels[i] = labels[child] as number
      i = child
    }
    keys[i] = key
    labels[i] = label
  }

  #up(i: number): void {
    const labels = this.#labels
    const keys = this.#keys
    const key = keys[i] as number
    const label = labels[i] as number
    while (i > 0) {
      const parent = (i - 1) >> 1
      if ((keys[parent] as number) <= key) break
      keys[i] = keys[parent] as number
      labels[i] = labels[parent] as number
      i = parent
    }
    keys[i] = key
    labels[i] = label
  }
}
