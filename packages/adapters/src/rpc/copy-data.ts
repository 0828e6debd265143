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
  readonly #copies = new Map<object, unknown>()

  constructor(bounds: CopyBounds) {
    this.#maxDepth = bounds.depth
    this.#maxEntries = bounds.entries ?? Number.POSITIVE_INFINITY
  }

  copy(value: unknown, depth: number): unknown {
    if (typeof value !== 'object' || value === null || depth > this.#maxDepth) return value
    const known = this.#copies.get(value)
    if (known !== undefined) return known
    if (Array.isArray(value)) {
      if (value.length > this.#maxEntries) return value
      const items = value as readonly unknown[]
      const copy = new Array<unknown>(items.length)
      this.#copies.set(value, copy)
      for (let i = 0; i < items.length; i++) copy[i] = this.copy(items[i], depth + 1)
      return copy
    }
    const proto: unknown = Object.getPrototypeOf(value)
    let copy: Record<string, unknown>
    if (proto === null) copy = Object.create(null) as Record<string, unknown>
    else if (proto === Object.prototype || Object.getPrototypeOf(proto) === null) copy = {}
    else return value
    this.#copies.set(value, copy)
    const fields = value as Readonly<Record<string, unknown>>
    for (const key of Object.keys(fields)) {
      const item = this.copy(fields[key], depth + 1)
      // An own "__proto__" (JSON.parse makes one) stays a field: assigning it would set the prototype.
      if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true })
      else copy[key] = item
    }
    return copy
  }
}
