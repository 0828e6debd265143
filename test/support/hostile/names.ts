import { Known } from './json.js'

/** Names and page tokens from the server's answers, in the order first seen. */
export class NamePool {
  readonly names: string[] = []
  readonly tokens: string[] = []
  readonly #seen = new Set<string>()

  add(name: string): void {
    if (name.length > 300 || this.#seen.has(name) || !/^[A-Za-z0-9][\w./-]*$/.test(name)) return
    this.#seen.add(name)
    this.names.push(name)
  }

  /** Collects every `name` string and `nextPageToken` of an answer. */
  collect(value: unknown, depth = 0): void {
    if (depth > 20 || typeof value !== 'object' || value === null) return
    if (Array.isArray(value)) {
      for (const v of value) this.collect(v, depth + 1)
      return
    }
    for (const [k, v] of Object.entries(value)) {
      if (k === 'name' && typeof v === 'string') this.add(v)
      else if (k === 'nextPageToken' && typeof v === 'string' && v.length < 2000 && !this.tokens.includes(v)) this.tokens.push(v)
      else this.collect(v, depth + 1)
    }
  }

  /** Forgets a name (and the names below it) the server says does not exist. */
  forget(name: string): void {
    const gone = (n: string): boolean => n === name || n.startsWith(`${name}/`)
    const kept = this.names.filter((n) => !gone(n))
    for (const n of this.names) if (gone(n)) this.#seen.delete(n)
    this.names.length = 0
    this.names.push(...kept)
  }

  /** Reads a NOT_FOUND answer (`RagCorpus "projects/..." not found.`) and forgets its name. */
  learn(status: number, json: unknown): void {
    const message = (json as { error?: { message?: unknown } } | undefined)?.error?.message
    if (status !== 404 || typeof message !== 'string') return
    const m = /"([^"]+)" (?:not found|was deleted)/.exec(message)
    if (m?.[1]) this.forget(m[1])
  }

  matching(regex: RegExp): string[] {
    return this.names.filter((n) => regex.test(n))
  }

  /** A name of collection `k.hint`, preferably below `scope` (the resource the request's path names). */
  resolve(k: Known, scope = ''): string {
    if (k.part === 'token') return this.tokens.length === 0 ? 'no-token-yet' : (this.tokens[k.pick % this.tokens.length] as string)
    const kind = k.hint === undefined ? this.names : this.names.filter((n) => n.split('/').at(-2) === k.hint)
    const below = scope === '' ? [] : kind.filter((n) => n.startsWith(`${scope}/`))
    const of = below.length > 0 ? below : kind
    if (of.length === 0) return k.part === 'id' ? 'unknown-id' : `${k.hint ?? 'things'}/unknown`
    const name = of[k.pick % of.length] as string
    return k.part === 'id' ? (name.split('/').at(-1) as string) : name
  }
}
