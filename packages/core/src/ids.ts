import { QuarryError, describe } from './errors.js'

/**
 * An internal slot number. Vector storage, the HNSW graph and filter bitsets are addressed by
 * labels; only this module turns them into the caller's string ids and back. The brand keeps a
 * label from being mixed up with any other number.
 */
export type Label = number & { readonly __brand: 'Label' }

/** Longest id accepted, in UTF-16 code units (Google's resource ids are far shorter). */
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

/**
 * Maps external string ids to dense labels `0..capacity-1`. Labels of removed ids are reused
 * so storage and the HNSW graph do not grow with churn.
 */
export class IdMap {
  readonly #labels = new Map<string, Label>()
  #ids: (string | undefined)[] = []
  /** Labels of removed ids, reused last-freed first (deterministic, O(1)). */
  #free: Label[] = []

  get size(): number {
    return this.#labels.size
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
    return this.#labels.get(id)
  }

  idOf(label: Label): string | undefined {
    return this.#ids[label]
  }

  has(id: string): boolean {
    return this.#labels.has(id)
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
    this.#labels.set(id, label)
    return label
  }

  /** Frees the label of `id` for reuse and returns it, or undefined when the id is unknown. */
  release(id: string): Label | undefined {
    const label = this.#labels.get(id)
    if (label === undefined) return undefined
    this.#labels.delete(id)
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
    ids.forEach((id, label) => {
      if (id === null) {
        map.#ids.push(undefined)
        map.#free.push(label as Label)
      } else {
        map.#ids.push(id)
        map.#labels.set(id, label as Label)
      }
    })
    return map
  }

  /**
   * Rebuilds a map from ids by label (undefined: free) and the free labels in their reuse order;
   * undefined when they do not fit together (a free label twice, or one that holds an id, or a
   * free slot left out, or an id twice).
   */
  static restore(ids: readonly (string | undefined)[], free: ArrayLike<number>): IdMap | undefined {
    const map = new IdMap()
    map.#ids = ids.slice()
    for (let label = 0; label < ids.length; label++) {
      const id = ids[label]
      if (id !== undefined) map.#labels.set(id, label as Label)
    }
    if (map.#labels.size + free.length !== ids.length) return undefined
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
