/**
 * `$alt=json;enum-encoding=int`: Google's clients ask for enums as numbers. Each rule names a
 * response field by the last keys of its path (`fileStatus.state`) and gives the values' numbers.
 */
export type EnumRules = ReadonlyArray<{ readonly path: readonly string[]; readonly values: Readonly<Record<string, number>> }>

function matches(stack: readonly string[], path: readonly string[]): boolean {
  if (stack.length < path.length) return false
  const offset = stack.length - path.length
  return path.every((p, i) => stack[offset + i] === p)
}

/** A copy of `value` with the enum names the rules cover replaced by their numbers. */
export function encodeEnums(value: unknown, rules: EnumRules, stack: string[] = []): unknown {
  if (Array.isArray(value)) return value.map((v) => encodeEnums(v, rules, stack))
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      stack.push(k)
      const rule = typeof v === 'string' ? rules.find((r) => matches(stack, r.path)) : undefined
      const encoded = rule && Object.hasOwn(rule.values, v as string) ? rule.values[v as string] : encodeEnums(v, rules, stack)
      // defineProperty: a map key named "__proto__" (user data) stays an ordinary key.
      Object.defineProperty(out, k, { value: encoded, enumerable: true, writable: true, configurable: true })
      stack.pop()
    }
    return out
  }
  return value
}
