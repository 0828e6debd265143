/** A set of small non-negative integers (labels), one bit each, with the set algebra filters need. */
export class Bitset {
  words: Uint32Array

  constructor(capacity: number) {
    this.words = new Uint32Array(Math.max(1, Math.ceil(capacity / 32)))
  }

  /** Bits addressable without growing. */
  get capacity(): number {
    return this.words.length * 32
  }

  add(i: number): void {
    const w = i >>> 5
    if (w >= this.words.length) this.#grow(w + 1)
    this.words[w] = (this.words[w] as number) | (1 << (i & 31))
  }

  delete(i: number): void {
    const w = i >>> 5
    if (w < this.words.length) this.words[w] = (this.words[w] as number) & ~(1 << (i & 31))
  }

  has(i: number): boolean {
    const w = i >>> 5
    return w < this.words.length && ((this.words[w] as number) & (1 << (i & 31))) !== 0
  }

  /** A copy with at least `capacity` bits. */
  clone(capacity = this.capacity): Bitset {
    const out = new Bitset(Math.max(capacity, this.capacity))
    out.words.set(this.words)
    return out
  }

  /** this ∩= other */
  and(other: Bitset): this {
    const n = this.words.length
    for (let i = 0; i < n; i++) this.words[i] = (this.words[i] as number) & (other.words[i] ?? 0)
    return this
  }

  /** this ∪= other */
  or(other: Bitset): this {
    if (other.words.length > this.words.length) this.#grow(other.words.length)
    for (let i = 0; i < other.words.length; i++) this.words[i] = (this.words[i] as number) | (other.words[i] as number)
    return this
  }

  /** this −= other */
  andNot(other: Bitset): this {
    const n = Math.min(this.words.length, other.words.length)
    for (let i = 0; i < n; i++) this.words[i] = (this.words[i] as number) & ~(other.words[i] as number)
    return this
  }

  /** True when there is no member (stops at the first set word). */
  isEmpty(): boolean {
    const words = this.words
    for (let i = 0; i < words.length; i++) if (words[i] !== 0) return false
    return true
  }

  /** Number of members. */
  count(): number {
    const words = this.words
    let c = 0
    for (let i = 0; i < words.length; i++) {
      let v = words[i] as number
      // A narrow filter's bitset is mostly zero words: skipping them halves the count.
      if (v === 0) continue
      v = v - ((v >>> 1) & 0x55555555)
      v = (v & 0x33333333) + ((v >>> 2) & 0x33333333)
      c += (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
    }
    return c
  }

  /** Members ascending; `count`, when the caller has it, must be {@link count}'s (it sizes the array). */
  toArray(count = this.count()): Uint32Array {
    const words = this.words
    const out = new Uint32Array(count)
    let k = 0
    for (let w = 0; w < words.length; w++) {
      let v = words[w] as number
      while (v !== 0) {
        const t = v & -v
        out[k++] = (w << 5) + (31 - Math.clz32(t))
        v ^= t
      }
    }
    return out
  }

  #grow(minWords: number): void {
    let n = this.words.length
    while (n < minWords) n *= 2
    const words = new Uint32Array(n)
    words.set(this.words)
    this.words = words
  }
}
