/**
 * Whether an object is a plain JSON object, as JSON.parse and the gRPC conversion make them: its
 * prototype is some realm's `Object.prototype`, or it has none. A Date, a Map, a typed array or a
 * class instance is not (an array is not either: callers test for arrays first).
 */
export function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === null || Object.getPrototypeOf(proto) === null
}

/**
 * Sets `key` as the object's own field. A plain assignment of "__proto__" (a key JSON.parse and
 * protobufjs both keep as a field) would set the object's prototype instead, and lose the key.
 */
export function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true })
  else object[key] = value
}
