/**
 * Objects without their unset fields, in one place instead of a conditional spread per field.
 *
 * `omitUnset` writes a proto3 JSON message: a field is left out when it is unset — undefined, or,
 * for a field without presence, its default: '' / 0 / false, an empty list (repeated fields never
 * have presence), an empty object (a map without entries). Fields with presence are named in
 * `present` and are left out only when undefined: proto3 `optional` scalars and oneof members
 * whose zero is a value (`score: 0`), and messages that are set though empty (`{}`). ProtoJSON
 * (https://protobuf.dev/programming-guides/json/#presence): "if a field supports presence,
 * serializers must emit the field value if and only if the corresponding hazzer would return
 * true. If the field doesn't support field presence and has the default value (for example any
 * empty repeated field) serializers should omit it from the output."
 *
 * `omitUndefined` only drops undefined values: building option objects and requests whose
 * optional properties must be absent rather than undefined (`exactOptionalPropertyTypes`).
 *
 * The result type keeps a key required where its value type excludes undefined: pass such values
 * only where they are never a default (a resource name, a time), or type the field optional.
 */
type Simplify<T> = { [K in keyof T]: T[K] } & {}

type Omitted<T> = Simplify<
  { readonly [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & { readonly [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined> }
>

function isDefault(value: unknown): boolean {
  if (value === '' || value === 0 || value === false) return true
  if (Array.isArray(value)) return value.length === 0
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0
}

function pick<T extends object>(fields: T, keep: (key: string, value: unknown) => boolean): Omitted<T> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined && keep(key, value)) out[key] = value
  }
  // `out` holds the fields of T that are set.
  return out as Omitted<T>
}

/** A proto3 JSON message of `fields`: unset ones omitted; `present` names the fields with presence. */
export function omitUnset<const T extends object>(fields: T, present: readonly (keyof T & string)[] = []): Omitted<T> {
  return pick(fields, (key, value) => !isDefault(value) || (present as readonly string[]).includes(key))
}

/** `fields` without its undefined values. */
export function omitUndefined<const T extends object>(fields: T): Omitted<T> {
  return pick(fields, () => true)
}
