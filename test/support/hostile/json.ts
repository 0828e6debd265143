import fc from 'fast-check'

/**
 * JSON as a hostile client writes it: objects as entry lists (so a key may repeat, and
 * `__proto__` is an ordinary key, as on the wire), number literals `JSON.stringify` cannot write
 * (`1e999`, `-0`, 30 digits), text built only when sent (a 40,000-character word prints as
 * `long("q"×40000)` in a counterexample), and names of resources the server made, picked when the
 * request is sent (`Known`), bytes likewise (`Bytes`).
 */
export class Raw {
  /** `json`: the JSON text; `plain`: the same value in a query string (a string's characters, unquoted). */
  constructor(
    readonly label: string,
    readonly json: () => string,
    readonly plain: () => string = json,
  ) {}
  [fc.toStringMethod](): string {
    return this.label
  }
}

export class Obj {
  constructor(readonly entries: ReadonlyArray<readonly [string, J]>) {}
  [fc.toStringMethod](): string {
    return `{${this.entries.map(([k, v]) => `${JSON.stringify(k)}: ${fc.stringify(v)}`).join(', ')}}`
  }
}

/** Bytes built when sent (a label in counterexamples). */
export class Bytes {
  constructor(
    readonly label: string,
    readonly make: () => Buffer,
  ) {}
  [fc.toStringMethod](): string {
    return `bytes(${this.label})`
  }
}

/** A resource name (or its last segment) the server answered earlier: `pick` modulo the names of collection `hint` (any name without one). */
export class Known {
  constructor(
    readonly hint: string | undefined,
    readonly pick: number,
    readonly part: 'name' | 'id' | 'token',
  ) {}
  [fc.toStringMethod](): string {
    return `known(${this.part}${this.hint ? ` of ${this.hint}` : ''} #${this.pick})`
  }
}

export type J = null | boolean | number | string | Raw | Known | Obj | readonly J[]

/** Turns a Known into text, at send time. */
export type Resolve = (k: Known) => string

export function toJson(j: J, resolve: Resolve): string {
  if (j === null || typeof j === 'boolean') return String(j)
  if (typeof j === 'number') return Number.isFinite(j) ? String(j) : 'null'
  if (typeof j === 'string') return JSON.stringify(j)
  if (j instanceof Raw) return j.json()
  if (j instanceof Known) return JSON.stringify(resolve(j))
  if (j instanceof Obj) return `{${j.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJson(v, resolve)}`).join(',')}}`
  return `[${j.map((v) => toJson(v, resolve)).join(',')}]`
}

/** A value as one query-string parameter (text, unencoded), or undefined where a query string cannot say it (objects). */
export function toPlain(j: J, resolve: Resolve): string | undefined {
  if (j === null || typeof j === 'boolean' || typeof j === 'number') return String(j)
  if (typeof j === 'string') return j
  if (j instanceof Raw) return j.plain()
  if (j instanceof Known) return resolve(j)
  return undefined
}

/** `a.b=1&a.c=x&list=1&list=2`: the fields of a message as Google's REST mapping reads query parameters (objects in lists cannot be said). */
export function toQueryPairs(obj: Obj, resolve: Resolve, prefix = ''): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const [k, v] of obj.entries) {
    const key = prefix === '' ? k : `${prefix}.${k}`
    if (v instanceof Obj) out.push(...toQueryPairs(v, resolve, key))
    else if (Array.isArray(v)) {
      for (const item of v as readonly J[]) {
        const text = toPlain(item, resolve)
        if (text !== undefined) out.push([key, text])
      }
    } else {
      const text = toPlain(v as J, resolve)
      if (text !== undefined) out.push([key, text])
    }
  }
  return out
}

export function rawNumber(text: string): Raw {
  return new Raw(text, () => text)
}

/** `unit` repeated `times` times, as a JSON string. */
export function longString(unit: string, times: number, label = `long(${JSON.stringify(unit.slice(0, 12))}×${times})`): Raw {
  return new Raw(label, () => JSON.stringify(unit.repeat(times)), () => unit.repeat(times))
}

/** Text built from parts (some repeated), e.g. `(`×40 + `a = 1` + `)`×40. */
export function composed(parts: ReadonlyArray<string | readonly [string, number]>): Raw {
  const label = parts.map((p) => (typeof p === 'string' ? JSON.stringify(p.slice(0, 20)) : `${JSON.stringify(p[0].slice(0, 12))}×${p[1]}`)).join('+')
  const text = (): string => parts.map((p) => (typeof p === 'string' ? p : p[0].repeat(p[1]))).join('')
  return new Raw(label, () => JSON.stringify(text()), text)
}

/** Lists (`[`) or objects (`{"a":`) nested `depth` levels around `inner`. */
export function nested(kind: 'list' | 'object', depth: number, inner = '1'): Raw {
  const open = kind === 'list' ? '[' : '{"a":'
  const close = kind === 'list' ? ']' : '}'
  return new Raw(`nested(${kind}×${depth})`, () => open.repeat(depth) + inner + close.repeat(depth))
}

/** Every node of a value in pre-order (objects, lists and leaves), with a function writing a replacement there. */
function nodes(root: J): Array<{ node: J; replace: (v: J) => J }> {
  const out: Array<{ node: J; replace: (v: J) => J }> = []
  const walk = (node: J, rebuild: (v: J) => J): void => {
    out.push({ node, replace: rebuild })
    if (node instanceof Obj) {
      node.entries.forEach(([k, v], i) => walk(v, (nv) => rebuild(new Obj(node.entries.map((e, j) => (j === i ? [k, nv] : e))))))
    } else if (Array.isArray(node)) {
      const list = node as readonly J[]
      list.forEach((v, i) => walk(v, (nv) => rebuild(list.map((e, j) => (j === i ? nv : e)))))
    }
  }
  walk(root, (v) => v)
  return out
}

/** How a valid request is broken: at one node (pre-order index modulo the node count). */
export interface Mutation {
  readonly kind: 'replace' | 'add-entry' | 'duplicate-key' | 'snake-case' | 'drop'
  readonly at: number
  readonly value: J
  readonly entry: readonly [string, J]
}

export function mutate(root: J, m: Mutation): J {
  const all = nodes(root)
  const target = all[m.at % all.length] as { node: J; replace: (v: J) => J }
  const objects = all.filter((n) => n.node instanceof Obj)
  const obj = objects[m.at % Math.max(1, objects.length)]
  switch (m.kind) {
    case 'replace':
      return target.replace(m.value)
    case 'add-entry':
      return obj ? obj.replace(new Obj([...(obj.node as Obj).entries, m.entry])) : root
    case 'duplicate-key': {
      const entries = obj ? (obj.node as Obj).entries : []
      const first = entries[0]
      return obj && first ? obj.replace(new Obj([...entries, [first[0], m.value]])) : root
    }
    case 'snake-case':
      return obj ? obj.replace(new Obj((obj.node as Obj).entries.map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]))) : root
    case 'drop':
      return obj ? obj.replace(new Obj((obj.node as Obj).entries.slice(1))) : root
  }
}
