import type { Label } from '../ids.js'

/** Orders two labels whose keys are equal; negative when `a` ranks first (ties by id ascending). */
export type TieBreak = (a: Label, b: Label) => number

/**
 * Keeps the k smallest keys seen, as a binary max-heap over parallel typed arrays (no object per
 * entry). Equal keys are ordered by `tieBreak`, so the result is the exact top-k of a full sort.
 */
export class TopK {
  readonly k: number
  #size = 0
  readonly #keys: Float64Array
  readonly #labels: Uint32Array
  readonly #tie: TieBreak

  constructor(k: number, tieBreak: TieBreak) {
    this.k = k
    this.#keys = new Float64Array(Math.max(1, k))
    this.#labels = new Uint32Array(Math.max(1, k))
    this.#tie = tieBreak
  }

  get size(): number {
    return this.#size
  }

  /** The key a candidate must beat (or tie) to enter; Infinity until the heap is full. */
  get bound(): number {
    return this.#size < this.k ? Infinity : (this.#keys[0] as number)
  }

  /** True when (ka, la) ranks after (kb, lb). */
  #worse(ka: number, la: number, kb: number, lb: number): boolean {
    return ka > kb || (ka === kb && this.#tie(la as Label, lb as Label) > 0)
  }

  push(key: number, label: Label): void {
    if (this.k === 0) return
    const keys = this.#keys
    const labels = this.#labels
    if (this.#size < this.k) {
      let i = this.#size++
      while (i > 0) {
        const parent = (i - 1) >> 1
        if (!this.#worse(key, label, keys[parent] as number, labels[parent] as number)) break
        keys[i] = keys[parent] as number
        labels[i] = labels[parent] as number
        i = parent
      }
      keys[i] = key
      labels[i] = label
      return
    }
    if (!this.#worse(keys[0] as number, labels[0] as number, key, label)) return
    const n = this.#size
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) break
      const right = left + 1
      let child = left
      if (right < n && this.#worse(keys[right] as number, labels[right] as number, keys[left] as number, labels[left] as number)) {
        child = right
      }
      if (!this.#worse(keys[child] as number, labels[child] as number, key, label)) break
      keys[i] = keys[child] as number
      labels[i] = labels[child] as number
      i = child
    }
    keys[i] = key
    labels[i] = label
  }

  /** The entries best first. */
  sorted(): { key: number; label: Label }[] {
    const out: { key: number; label: Label }[] = []
    for (let i = 0; i < this.#size; i++) {
      out.push({ key: this.#keys[i] as number, label: this.#labels[i] as Label })
    }
    return out.sort((a, b) => a.key - b.key || this.#tie(a.label, b.label))
  }
}
