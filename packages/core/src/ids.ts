import { QuarryError, describe } from './errors.js'

/**
 * An internal slot number. Vector storage, the HNSW graph and filter bitsets are addressed by
 * labels; only this module turns them into the caller's string ids and back. The brand keeps a
 * label from being mixed up with any other number.
 */
export type Label = number & { readonly __brand: 'Label' }

/** Longest id accepted, in UTF-16 code units. */
export const MAX_ID_LENGTH = 1024

/** hnswlib stores labels as uint32 and silently wraps anything larger: stay below that. */
const MAX_LABEL = 0xffff_fffe

/** Checks an id from the caller and returns it typed. */
export function validateId(id: unknown, path = 'id'): string {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) {
    throw new QuarryError(
      'INVALID_ID',
      `${path} must be a non-empty string of at most ${MAX_ID_LENGTH} characters; received ${describe(id)}.`,
      { path },
    )
  }
  return id
}

/** A slot of the id table that held a label which was released (probing goes on past it). */
const TOMBSTONE = 0xffff_ffff

/** Per-process seed of the id hash, so ids chosen to collide in one process do not collide in another. */
const SEED = (Math.random() * 0x1_0000_0000) >>> 0

/**
 * A 32-bit hash of a string's UTF-16 code units (murmur3's mixing, seeded), two units per round:
 * a chain of half as many multiplies as one per unit (a load hashes every id of a snapshot).
 * {@link hashIdUnits} gives the same number from the units' bytes.
 */
export function hashId(id: string): number {
  const n = id.length
  let h = SEED ^ n
  let i = 0
  for (; i + 1 < n; i += 2) h = mixRound(h, id.charCodeAt(i) | (id.charCodeAt(i + 1) << 16))
  if (i < n) h = mixRound(h, id.charCodeAt(i))
  return finish(h)
}

/**
 * `hashId` of the string whose `units` code units are stored from byte `at` of `bytes`: one byte
 * per unit (latin1), or with `wide` two (UTF-16LE). Lets a snapshot's reader hash ids from the
 * bytes it decodes them from, without reading each string again.
 */
export function hashIdUnits(bytes: Uint8Array, at: number, units: number, wide: boolean): number {
  let h = SEED ^ units
  let i = 0
  if (wide) {
    for (; i + 1 < units; i += 2) {
      const p = at + i * 2
      h = mixRound(h, ((bytes[p] as number) | ((bytes[p + 1] as number) << 8)) | (((bytes[p + 2] as number) | ((bytes[p + 3] as number) << 8)) << 16))
    }
    if (i < units) h = mixRound(h, (bytes[at + i * 2] as number) | ((bytes[at + i * 2 + 1] as number) << 8))
  } else {
    for (; i + 1 < units; i += 2) h = mixRound(h, (bytes[at + i] as number) | ((bytes[at + i + 1] as number) << 16))
    if (i < units) h = mixRound(h, bytes[at + i] as number)
  }
  return finish(h)
}

/** One round of murmur3's mixing of the 32 bits `word` into `h`. */
function mixRound(h: number, word: number): number {
  let k = Math.imul(word, 0xcc9e2d51)
  k = Math.imul((k << 15) | (k >>> 17), 0x1b873593)
  h ^= k
  return Math.imul((h << 13) | (h >>> 19), 5) + 0xe6546b64
}

/** murmur3's finalizer: every bit of `h` spread over the result. */
function finish(h: number): number {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/**
 * Maps external string ids to dense labels `0..capacity-1`. Labels of removed ids are reused
 * so storage and the HNSW graph do not grow with churn. The id → label direction is an
 * open-addressing table of labels in one Uint32Array (the ids themselves stay in the by-label
 * list): no per-id entry on the heap, and a snapshot's map is rebuilt by hashing each id once.
 */
export class IdMap {
  #ids: (string | undefined)[] = []
  /** label + 1 per slot; 0 empty, TOMBSTONE released. Its length is a power of two. */
  #table = new Uint32Array(16)
  /** Live ids. */
  #size = 0
  /** Slots not empty (live + tombstones), kept under 1/2 of the table. */
  #used = 0
  /** Labels of removed ids, reused last-freed first (deterministic, O(1)). */
  #free: Label[] = []

  get size(): number {
    return this.#size
  }

  /** One past the highest label ever handed out: the length storage must cover. */
  get extent(): number {
    return this.#ids.length
  }

  /** ids by label (undefined for free labels), read-only, for tight loops over all records. */
  get byLabel(): readonly (string | undefined)[] {
    return this.#ids
  }

  labelOf(id: string): Label | undefined {
    const slot = this.#find(id)
    return slot < 0 ? undefined : (((this.#table[slot] as number) - 1) as Label)
  }

  idOf(label: Label): string | undefined {
    return this.#ids[label]
  }

  has(id: string): boolean {
    return this.#find(id) >= 0
  }

  /** The slot holding `id`, or -1. */
  #find(id: string): number {
    const table = this.#table
    const mask = table.length - 1
    for (let slot = hashId(id) & mask; ; slot = (slot + 1) & mask) {
      const entry = table[slot] as number
      if (entry === 0) return -1
      if (entry !== TOMBSTONE && this.#ids[entry - 1] === id) return slot
    }
  }

  /** Puts `label` (holding `id`, known to be absent) into the table, growing it first when needed. */
  #insert(id: string, label: number): void {
    if ((this.#used + 1) * 2 > this.#table.length) this.#rehash(Math.max(16, this.#size + 1))
    const table = this.#table
    const mask = table.length - 1
    let slot = hashId(id) & mask
    while (table[slot] !== 0) slot = (slot + 1) & mask
    table[slot] = label + 1
    this.#used++
    this.#size++
  }

  /** A fresh table with room for `live` ids below half full (tombstones dropped). */
  #rehash(live: number): void {
    let length = 16
    while (length < live * 4) length *= 2
    const table = new Uint32Array(length)
    const mask = length - 1
    const ids = this.#ids
    for (let label = 0; label < ids.length; label++) {
      const id = ids[label]
      if (id === undefined) continue
      let slot = hashId(id) & mask
      while (table[slot] !== 0) slot = (slot + 1) & mask
      table[slot] = label + 1
    }
    this.#table = table
    this.#used = this.#size
  }

  /** Assigns a label to a new id; the caller has checked that the id is absent. */
  assign(id: string): Label {
    let label = this.#free.pop()
    if (label === undefined) {
      if (this.#ids.length > MAX_LABEL) {
        throw new QuarryError('INVALID_OPTION', `an index holds at most ${MAX_LABEL + 1} records.`)
      }
      label = this.#ids.length as Label
      this.#ids.push(id)
    } else {
      this.#ids[label] = id
    }
    this.#insert(id, label)
    return label
  }

  /** Frees the label of `id` for reuse and returns it, or undefined when the id is unknown. */
  release(id: string): Label | undefined {
    const slot = this.#find(id)
    if (slot < 0) return undefined
    const label = ((this.#table[slot] as number) - 1) as Label
    this.#table[slot] = TOMBSTONE
    this.#size--
    this.#ids[label] = undefined
    this.#free.push(label)
    return label
  }

  /** Live labels in ascending order. */
  *labels(): IterableIterator<Label> {
    for (let label = 0; label < this.#ids.length; label++) {
      if (this.#ids[label] !== undefined) yield label as Label
    }
  }

  /** Snapshot form: `ids[label]`, with null for free slots. */
  toJSON(): (string | null)[] {
    return this.#ids.map((id) => id ?? null)
  }

  /** Free labels in the order they will be reused (the last first), for a snapshot. */
  get free(): readonly Label[] {
    return this.#free
  }

  /** Rebuilds a map from its snapshot form. */
  static fromJSON(ids: readonly (string | null)[]): IdMap {
    const map = new IdMap()
    const free: number[] = []
    ids.forEach((id, label) => {
      if (id === null) free.push(label)
    })
    const restored = IdMap.restore(ids.map((id) => id ?? undefined), free)
    if (restored) return restored
    // An id twice: the later label holds it, as assigning them in order did.
    ids.forEach((id, label) => {
      if (id === null) {
        map.#ids.push(undefined)
        map.#free.push(label as Label)
      } else {
        map.#ids.push(id)
        const slot = map.#find(id)
        if (slot >= 0) map.#table[slot] = label + 1
        else map.#insert(id, label)
      }
    })
    return map
  }

  /**
   * Rebuilds a map from ids by label (undefined: free) and the free labels in their reuse order;
   * undefined when they do not fit together (a free label twice, or one that holds an id, or a
   * free slot left out, or an id twice). `ids` is adopted, not copied. `hashes`, when given, holds
   * `hashId` of each id by label (a snapshot's reader computes them from the bytes: hashIdUnits).
   */
  static restore(ids: (string | undefined)[], free: ArrayLike<number>, hashes?: Uint32Array): IdMap | undefined {
    const map = new IdMap()
    map.#ids = ids
    let live = 0
    for (let label = 0; label < ids.length; label++) if (ids[label] !== undefined) live++
    if (live + free.length !== ids.length) return undefined
    let length = 16
    while (length < live * 4) length *= 2
    const table = new Uint32Array(length)
    const mask = length - 1
    for (let label = 0; label < ids.length; label++) {
      const id = ids[label]
      if (id === undefined) continue
      let slot = (hashes === undefined ? hashId(id) : (hashes[label] as number)) & mask
      for (let entry = table[slot] as number; entry !== 0; entry = table[slot] as number) {
        if (ids[entry - 1] === id) return undefined
        slot = (slot + 1) & mask
      }
      table[slot] = label + 1
    }
    map.#table = table
    map.#size = live
    map.#used = live
    const seen = new Uint8Array(ids.length)
    for (let i = 0; i < free.length; i++) {
      const label = free[i] as number
      if (label >= ids.length || ids[label] !== undefined || seen[label] === 1) return undefined
      seen[label] = 1
      map.#free.push(label as Label)
    }
    return map
  }
}
