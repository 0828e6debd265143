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

/** Random ids from the platform's CSPRNG, over [a-z0-9]. */
export const cryptoRandomId: RandomId = (length) => {
  const bytes = randomBytes(length)
  let out = ''
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length]
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

/**
 * Parses `name` against a pattern like "corpora/{corpus}/documents/{document}" and returns the ids;
 * throws INVALID_ARGUMENT at `field` when it does not match.
 */
export function parseName(name: string | undefined, pattern: string, field: string): string[] {
  const collections = pattern.split('/').filter((_, i) => i % 2 === 0)
  const parts = (name ?? '').split('/')
  const ok = parts.length === collections.length * 2 && collections.every((c, i) => parts[2 * i] === c && RESOURCE_ID.test(parts[2 * i + 1] ?? ''))
  if (!ok) {
    const example = pattern.replace(/\{[^}]+\}/g, (m) => `my-${m.slice(1, -1).replace(/_/g, '-')}`)
    const described = name === undefined || name === '' ? 'it is empty' : `received "${name}"`
    throw invalidArgument(field, `${field} must be a resource name like "${example}" (ids: up to 40 of a-z, 0-9 and -, not starting or ending with -); ${described}.`)
  }
  return parts.filter((_, i) => i % 2 === 1)
}
