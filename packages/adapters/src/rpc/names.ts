import { randomBytes } from 'node:crypto'
import { invalidArgument } from './status.js'

/**
 * Resource ids of the Semantic Retriever and RAG Engine kinds: up to 40 characters of [a-z0-9-],
 * not starting or ending with a dash.
 */
export const RESOURCE_ID = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** A source of random ids; pass a seeded one for reproducible names in tests. */
export type RandomId = (length: number) => string

/** CSPRNG bytes drawn 4 kB at a time: one call to the platform serves hundreds of ids (an import names a file each). */
let pool = Buffer.alloc(0)
let drawn = 0

/** Random ids from the platform's CSPRNG, over [a-z0-9]. */
export const cryptoRandomId: RandomId = (length) => {
  if (drawn + length > pool.length) {
    pool = randomBytes(Math.max(4096, length))
    drawn = 0
  }
  let out = ''
  for (let i = 0; i < length; i++) out += ALPHABET[(pool[drawn + i] as number) % ALPHABET.length]
  drawn += length
  return out
}

/** A deterministic RandomId (mulberry32 over a seed) for tests and reproducible demos. */
export function seededRandomId(seed: number): RandomId {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return (length) => {
    let out = ''
    for (let i = 0; i < length; i++) out += ALPHABET[Math.floor(next() * ALPHABET.length)]
    return out
  }
}

/**
 * An id derived from a display name plus a random suffix, as Google derives one when a create
 * request leaves the name empty: "My Corpus!" → "my-corpus-" + 12 random characters.
 */
export function derivedId(displayName: string | undefined, random: RandomId, suffixLength = 12): string {
  const suffix = random(suffixLength)
  const room = 40 - suffixLength - 1
  const base = (displayName ?? '')
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, room)
    .replace(/^-+|-+$/g, '')
  return base === '' ? suffix : `${base}-${suffix}`
}

/** What an id of a resource name may be, and how an error message says it. */
export interface IdRule {
  readonly test: RegExp
  readonly says: string
}

/** The ids of Semantic Retriever and RAG Engine resources (and of the projects, locations and engines above them). */
const RESOURCE_ID_RULE: IdRule = { test: RESOURCE_ID, says: 'up to 40 of a-z, 0-9 and -, not starting or ending with -' }

/** The variables of a pattern: `"corpora/{corpus}/documents/{document}"` → `"corpus" | "document"`. */
type VariablesOf<P extends string> = P extends `${string}{${infer V}}${infer Rest}` ? V | VariablesOf<Rest> : never

/**
 * A resource name, parsed: what a name is made of, so nothing downstream splits, slices or
 * rebuilds it. For `corpora/c/documents/d` (pattern `corpora/{corpus}/documents/{document}`):
 * `name` "corpora/c/documents/d", `parent` "corpora/c", `id` "d", `ids` { corpus: "c",
 * document: "d" }, `names` { corpus: "corpora/c", document: "corpora/c/documents/d" }.
 */
export interface ResourceName<V extends string> {
  /** The whole name. */
  readonly name: string
  /** The name of the resource it is under ("" for a top-level one). */
  readonly parent: string
  /** Its own id (the last variable's). */
  readonly id: string
  /** Each variable's id. */
  readonly ids: { readonly [K in V]: string }
  /** The name of the resource each variable identifies (its ancestors, and itself). */
  readonly names: { readonly [K in V]: string }
}

/**
 * Parses `name` against a pattern like "corpora/{corpus}/documents/{document}" and returns it
 * typed; throws INVALID_ARGUMENT at `field` when it does not match. Every id follows
 * `RESOURCE_ID_RULE` unless `rules` gives a variable its own.
 */
export function parseName<const P extends string>(
  name: string | undefined,
  pattern: P,
  field: string,
  rules: { readonly [K in VariablesOf<P>]?: IdRule } = {},
): ResourceName<VariablesOf<P>> {
  const segments = pattern.split('/')
  const parts = (name ?? '').split('/')
  const ruleOf = (segment: string): IdRule => (rules as Readonly<Record<string, IdRule | undefined>>)[segment.slice(1, -1)] ?? RESOURCE_ID_RULE
  const ok = parts.length === segments.length && segments.every((s, i) => (i % 2 === 0 ? parts[i] === s : ruleOf(s).test.test(parts[i] ?? '')))
  if (!ok) {
    const example = pattern.replace(/\{[^}]+\}/g, (m) => `my-${m.slice(1, -1).replace(/_/g, '-')}`)
    const described = name === undefined || name === '' ? 'it is empty' : `received "${name}"`
    const own = segments.filter((s, i) => i % 2 === 1 && ruleOf(s) !== RESOURCE_ID_RULE).map((s) => `${s.slice(1, -1).replace(/_/g, ' ')} ids: ${ruleOf(s).says}`)
    const ids = own.length === 0 ? `ids: ${RESOURCE_ID_RULE.says}` : `${own.join('; ')}; other ids: ${RESOURCE_ID_RULE.says}`
    throw invalidArgument(field, `${field} must be a resource name like "${example}" (${ids}); ${described}.`)
  }
  const ids: Record<string, string> = {}
  const names: Record<string, string> = {}
  for (let i = 1; i < segments.length; i += 2) {
    const variable = (segments[i] ?? '').slice(1, -1)
    ids[variable] = parts[i] ?? ''
    names[variable] = parts.slice(0, i + 1).join('/')
  }
  // The records hold exactly the pattern's variables.
  return { name: parts.join('/'), parent: parts.slice(0, -2).join('/'), id: parts[parts.length - 1] ?? '', ids, names } as ResourceName<VariablesOf<P>>
}
