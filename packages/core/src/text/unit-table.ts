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

/**
 * A hash table from units of text to values, looked up by a range of a string and its hash
 * ({@link hashRange}): open addressing with linear probing over typed arrays, so a lookup
 * allocates nothing (a Map would need the unit as a string of its own: a slice, and its hash).
 */
export class UnitTable<V> {
  #slots = new Int32Array(1 << 12)
  #hashes: number[] = []
  #keys: string[] = []
  #values: V[] = []

  get size(): number {
    return this.#keys.length
  }

  /** The value filed under text[start, end) (whose hash is `hash`), or undefined. */
  find(text: string, start: number, end: number, hash: number): V | undefined {
    const slots = this.#slots
    const mask = slots.length - 1
    const length = end - start
    for (let s = hash & mask; ; s = (s + 1) & mask) {
      const e = slots[s] as number
      if (e === 0) return undefined
      const k = e - 1
      if (this.#hashes[k] !== hash) continue
      const key = this.#keys[k] as string
      if (key.length !== length) continue
      let i = 0
      while (i < length && key.charCodeAt(i) === text.charCodeAt(start + i)) i++
      if (i === length) return this.#values[k]
    }
  }

  /** Files `value` under `key` (not filed yet), whose {@link hashRange} is `hash`. */
  add(key: string, hash: number, value: V): void {
    if ((this.#keys.length + 1) * 2 > this.#slots.length) this.#grow()
    this.#keys.push(key)
    this.#hashes.push(hash)
    this.#values.push(value)
    this.#place(hash, this.#keys.length)
  }

  clear(): void {
    this.#slots = new Int32Array(1 << 12)
    this.#hashes = []
    this.#keys = []
    this.#values = []
  }

  #place(hash: number, entry: number): void {
    const mask = this.#slots.length - 1
    let s = hash & mask
    while (this.#slots[s] !== 0) s = (s + 1) & mask
    this.#slots[s] = entry
  }

  #grow(): void {
    this.#slots = new Int32Array(this.#slots.length * 2)
    for (let k = 0; k < this.#hashes.length; k++) this.#place(this.#hashes[k] as number, k + 1)
  }
}
