import { isPlainObject, setOwn } from './json-object.js'
import { failure } from './status.js'

/** Bounds of {@link copyData}. */
export interface CopyBounds {
  /**
   * Levels copied (the recursion stops there): deeper values are kept as they are. A request's
   * reader refuses anything nested deeper than 100 levels (limits.ts), so a request is copied as
   * deep as it reads it.
   */
  readonly depth: number
  /** A list longer than this is kept as it is (a request's reader refuses it before any work): never walked, however sparse. */
  readonly entries?: number
  /**
   * At most this many values, an object counted once for each place it appears (as a reader walks
   * it, and as JSON would write it): more throws INVALID_ARGUMENT.
   * Copying a shared object is one visit, but reading the copy is one per place.
   */
  readonly values?: number
}

/**
 * A deep copy of request or response JSON for a caller in this process (rpc/methods.ts): plain
 * objects (of any realm, or without a prototype) and arrays are copied down to `bounds.depth`
 * levels, an object met twice (or a cycle) copied once, so the copy has the original's shape and
 * costs one visit per object. Anything else is kept as it is: primitives, and values that are not
 * JSON data (a function, a Date, a class instance), which a request's reader refuses where it
 * reads such a value (an opaque field) or reads as before. Holes in a list read as undefined, as
 * they do in the original.
 */
export function copyData<T>(value: T, bounds: CopyBounds): T {
  return new Copier(bounds).copy(value, 1) as T
}

class Copier {
  readonly #maxDepth: number
  readonly #maxEntries: number
  readonly #maxValues: number
  readonly #copies = new Map<object, unknown>()
  /** The values under each object copied (itself included), once its copy is done: what meeting it again adds. */
  readonly #sizes = new Map<object, number>()
  #values = 0

  constructor(bounds: CopyBounds) {
    this.#maxDepth = bounds.depth
    this.#maxEntries = bounds.entries ?? Number.POSITIVE_INFINITY
    this.#maxValues = bounds.values ?? Number.POSITIVE_INFINITY
  }

  copy(value: unknown, depth: number): unknown {
    this.#count(1)
    if (typeof value !== 'object' || value === null || depth > this.#maxDepth) return value
    const known = this.#copies.get(value)
    if (known !== undefined) {
      // Met again: as many values again as it held (one, if its copy is still under way: a cycle, refused by depth).
      this.#count((this.#sizes.get(value) ?? 1) - 1)
      return known
    }
    const before = this.#values
    let copy: Record<string, unknown> | unknown[]
    if (Array.isArray(value)) {
      if (value.length > this.#maxEntries) return value
      const items = value as readonly unknown[]
      const list = new Array<unknown>(items.length)
      this.#copies.set(value, list)
      for (let i = 0; i < items.length; i++) list[i] = this.copy(items[i], depth + 1)
      copy = list
    } else {
      if (!isPlainObject(value)) return value
      // A copy without a prototype when the original has none; else this realm's plain object.
      const object = (Object.getPrototypeOf(value) === null ? Object.create(null) : {}) as Record<string, unknown>
      this.#copies.set(value, object)
      const fields = value as Readonly<Record<string, unknown>>
      for (const key of Object.keys(fields)) setOwn(object, key, this.copy(fields[key], depth + 1))
      copy = object
    }
    if (this.#maxValues !== Number.POSITIVE_INFINITY) this.#sizes.set(value, this.#values - before + 1)
    return copy
  }

  #count(n: number): void {
    this.#values += n
    if (this.#values > this.#maxValues) {
      throw failure('INVALID_ARGUMENT', `The request holds more than ${this.#maxValues.toLocaleString('en-US')} values, counting an object once for each place it appears (as it is read, and as JSON would write it); send less, or fewer references to the same objects.`)
    }
  }
}
