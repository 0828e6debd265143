/** A fixed-size set of small non-negative integers (labels), one bit each. */
export class Bitset {
  readonly words: Uint32Array
  readonly capacity: number

  constructor(capacity: number) {
    this.capacity = capacity
    this.words = new Uint32Array(Math.ceil(capacity / 32))
  }

  add(i: number): void {
    const w = i >>> 5
    this.words[w] = (this.words[w] as number) | (1 << (i & 31))
  }

  has(i: number): boolean {
    return i < this.capacity && ((this.words[i >>> 5] as number) & (1 << (i & 31))) !== 0
  }
}
