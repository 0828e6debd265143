/** Bounds of {@link copyData}. */
export interface CopyBounds {
  /**
   * Levels copied (the recursion stops there): deeper values are kept as they are. A request's
   * reader refuses anything nested deeper than 100 levels (limits.ts), so a request is copied as
   * deep as it reads it, and a value that loops back on itself ends in a refusal, not in a copy
   * without end.
   */
  readonly depth: number
  /** A list longer than this is kept as it is (a request's reader refuses it before any work): never walked, however sparse. */
  readonly entries?: number
}

/**
 * A deep copy of request or response JSON for a caller in this process (rpc/methods.ts): plain
 * objects (of any realm, or without a prototype) and arrays are copied, as JSON would copy them
 * (an object met twice is copied twice), down to `bounds.depth` levels: the recursion stops
 * there, however deep or cyclic the value. Anything else is kept as it is: primitives, and values
 * that are not JSON data (a function, a Date, a class instance), which a request's reader refuses
 * or reads as before. Holes in a list read as undefined, as they do in the original.
 */
export function copyData<T>(value: T, bounds: CopyBounds): T {
  return copyLevel(value, 1, bounds.depth, bounds.entries ?? Number.POSITIVE_INFINITY) as T
}

function copyLevel(value: unknown, depth: number, maxDepth: number, maxEntries: number): unknown {
  if (typeof value !== 'object' || value === null || depth > maxDepth) return value
  if (Array.isArray(value)) {
    if (value.length > maxEntries) return value
    const items = value as readonly unknown[]
    const copy = new Array<unknown>(items.length)
    for (let i = 0; i < items.length; i++) copy[i] = copyLevel(items[i], depth + 1, maxDepth, maxEntries)
    return copy
  }
  const proto: unknown = Object.getPrototypeOf(value)
  let copy: Record<string, unknown>
  if (proto === null) copy = Object.create(null) as Record<string, unknown>
  else if (proto === Object.prototype || Object.getPrototypeOf(proto) === null) copy = {}
  else return value
  const fields = value as Readonly<Record<string, unknown>>
  for (const key of Object.keys(fields)) {
    const item = copyLevel(fields[key], depth + 1, maxDepth, maxEntries)
    // An own "__proto__" (JSON.parse makes one) stays a field: assigning it would set the prototype.
    if (key === '__proto__') Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true })
    else copy[key] = item
  }
  return copy
}
