/**
 * The k-th best score among one search's documents while their scores rise: a min-heap of the k
 * best (score, label) pairs with each label's place in it. Scores only grow during a search, so a
 * document scoring below the heap's minimum before a rise is not in it, and one comparison settles
 * it; only documents reaching the top k touch the heap (O(log k)).
 */
export class KthBest {
  readonly #k: number
  readonly #scores: Float64Array
  readonly #labels: Uint32Array
  /** Place in the heap by label, for the labels in it. */
  readonly #at = new Map<number, number>()
  #size = 0

  /** `k` ≥ 1. */
  constructor(k: number) {
    this.#k = k
    this.#scores = new Float64Array(k)
    this.#labels = new Uint32Array(k)
  }

  /** The k-th best score; -Infinity while fewer than k documents have one. */
  get value(): number {
    return this.#size < this.#k ? -Infinity : (this.#scores[0] as number)
  }

  /** `label`'s score rose from `previous` (0: it had none) to `score`. */
  raise(label: number, previous: number, score: number): void {
    const scores = this.#scores
    if (this.#size === this.#k) {
      const min = scores[0] as number
      // Every label in the heap scores at least its minimum: one that scored less is outside.
      if (previous < min) {
        if (score > min) this.#replaceMin(label, score)
        return
      }
    }
    const at = this.#at.get(label)
    if (at !== undefined) {
      scores[at] = score
      this.#down(at)
    } else if (this.#size < this.#k) {
      this.#up(this.#size++, label, score)
    } else if (score > (scores[0] as number)) {
      this.#replaceMin(label, score)
    }
  }

  #replaceMin(label: number, score: number): void {
    this.#at.delete(this.#labels[0] as number)
    this.#scores[0] = score
    this.#labels[0] = label
    this.#at.set(label, 0)
    this.#down(0)
  }

  /** Moves the entry at `i`, whose score rose, down to its place. */
  #down(i: number): void {
    const scores = this.#scores
    const labels = this.#labels
    const n = this.#size
    const score = scores[i] as number
    const label = labels[i] as number
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      const child = right < n && (scores[right] as number) < (scores[left] as number) ? right : left
      if ((scores[child] as number) >= score) break
      scores[i] = scores[child] as number
      labels[i] = labels[child] as number
      this.#at.set(labels[i] as number, i)
      i = child
    }
    scores[i] = score
    labels[i] = label
    this.#at.set(label, i)
  }

  /** Places a new entry, starting from the free slot `i`. */
  #up(i: number, label: number, score: number): void {
    const scores = this.#scores
    const labels = this.#labels
    while (i > 0) {
      const parent = (i - 1) >> 1
      if ((scores[parent] as number) <= score) break
      scores[i] = scores[parent] as number
      labels[i] = labels[parent] as number
      this.#at.set(labels[i] as number, i)
      i = parent
    }
    scores[i] = score
    labels[i] = label
    this.#at.set(label, i)
  }
}
