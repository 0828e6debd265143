/**
 * FNV-1a over the UTF-16 code units of text[start, end): the hash {@link UnitTable} files a unit
 * under, computed while the text is scanned, so a lookup needs no substring.
 */
export function hashRange(text: string, start: number, end: number): number {
  let h = 0x811c9dc5
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

/** The first FNV-1a step, for scanners that hash as they go (see {@link hashRange}). */
export const HASH_SEED = 0x811c9dc5
export const HASH_PRIME = 0x01000193

/** Int32s per slot: entry + 1 (0: empty), hash, offset of the key's characters, key length. */
const STRIDE = 4

/**
 * A hash table from units of text to values, looked up by a range of a string and its hash
 * ({@link hashRange}): open addressing with linear probing. A slot holds the key's hash, length
 * and place in one array of characters, so a lookup reads one slot and the key's characters, side
 * by side in memory, and allocates nothing (a Map would need the unit as a string of its own: a
 * slice, and its hash); the keys are copied there, so no key keeps a caller's text alive.
 */
export class UnitTable<V> {
  #slots: Int32Array
  #chars = new Uint16Array(1 << 14)
  #used = 0
  #values: V[] = []

  /** `expected`: how many keys to make room for up front (the table grows past it as needed). */
  constructor(expected = 0) {
    let slots = 1 << 12
    while (slots < expected * 2) slots *= 2
    this.#slots = new Int32Array(STRIDE * slots)
  }

  get size(): number {
    return this.#values.length
  }

  /** The value filed under text[start, end) (whose hash is `hash`), or undefined. */
  find(text: string, start: number, end: number, hash: number): V | undefined {
    const slots = this.#slots
    const mask = slots.length / STRIDE - 1
    const length = end - start
    const h = hash | 0
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const at = s * STRIDE
      const e = slots[at] as number
      if (e === 0) return undefined
      if (slots[at + 1] !== h || slots[at + 3] !== length) continue
      const chars = this.#chars
      const offset = slots[at + 2] as number
      let i = 0
      while (i < length && chars[offset + i] === text.charCodeAt(start + i)) i++
      if (i === length) return this.#values[e - 1]
    }
  }

  /** Files `value` under text[start, end) (not filed yet), whose {@link hashRange} is `hash`. */
  add(text: string, start: number, end: number, hash: number, value: V): void {
    if ((this.#values.length + 1) * 2 * STRIDE > this.#slots.length) this.#grow()
    const length = end - start
    if (this.#used + length > this.#chars.length) {
      let size = this.#chars.length * 2
      while (this.#used + length > size) size *= 2
      const chars = new Uint16Array(size)
      chars.set(this.#chars.subarray(0, this.#used))
      this.#chars = chars
    }
    const chars = this.#chars
    for (let i = 0; i < length; i++) chars[this.#used + i] = text.charCodeAt(start + i)
    this.#values.push(value)
    this.#place(this.#slots, this.#values.length, hash | 0, this.#used, length)
    this.#used += length
  }

  clear(): void {
    this.#slots = new Int32Array(STRIDE << 12)
    this.#chars = new Uint16Array(1 << 14)
    this.#used = 0
    this.#values = []
  }

  #place(slots: Int32Array, entry: number, hash: number, offset: number, length: number): void {
    const mask = slots.length / STRIDE - 1
    let s = hash & mask
    while (slots[s * STRIDE] !== 0) s = (s + 1) & mask
    const at = s * STRIDE
    slots[at] = entry
    slots[at + 1] = hash
    slots[at + 2] = offset
    slots[at + 3] = length
  }

  #grow(): void {
    const old = this.#slots
    const slots = new Int32Array(old.length * 2)
    for (let at = 0; at < old.length; at += STRIDE) {
      const e = old[at] as number
      if (e !== 0) this.#place(slots, e, old[at + 1] as number, old[at + 2] as number, old[at + 3] as number)
    }
    this.#slots = slots
  }
}
