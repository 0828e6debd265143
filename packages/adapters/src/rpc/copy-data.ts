/**
 * A deep copy of request or response JSON for a caller in this process (rpc/methods.ts): plain
 * objects and arrays are copied, without recursion (a request may nest thousands of levels deep
 * before its reader refuses it with a path) and with an object met twice (or a cycle) copied once.
 * Anything else is kept as it is: primitives, and values that are not JSON data (a function, a
 * Date, a typed array), which the request's reader refuses or reads as before.
 */
export function copyData<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value
  const copies = new Map<object, object>()
  const pending: [source: object, target: Record<string, unknown> | unknown[]][] = []
  const copyOf = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v
    const seen = copies.get(v)
    if (seen !== undefined) return seen
    let target: Record<string, unknown> | unknown[]
    if (Array.isArray(v)) target = new Array<unknown>(v.length)
    else if (isPlainObject(v)) target = {}
    else return v
    copies.set(v, target)
    pending.push([v, target])
    return target
  }
  const copy = copyOf(value)
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [source, target] = next
    if (Array.isArray(target)) {
      const items = source as readonly unknown[]
      for (let i = 0; i < items.length; i++) target[i] = copyOf(items[i])
      continue
    }
    const fields = source as Readonly<Record<string, unknown>>
    for (const key of Object.keys(fields)) {
      const item = copyOf(fields[key])
      // An own "__proto__" (JSON.parse makes one) stays a field: assigning it would set the prototype.
      if (key === '__proto__') Object.defineProperty(target, key, { value: item, enumerable: true, writable: true, configurable: true })
      else target[key] = item
    }
  }
  return copy as T
}

function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}
