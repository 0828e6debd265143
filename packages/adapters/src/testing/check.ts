import { QuarryError } from '@quarry/core'
import { characterCount } from '../rpc/limits.js'
import { parseName } from '../rpc/names.js'
import { RpcFailure } from '../rpc/status.js'

/**
 * Option checks of the request arbitraries: refused when the arbitrary is built, with a message
 * that says how to fix the option (a QuarryError INVALID_OPTION, as every options object of
 * Quarry).
 */
export function invalidOption(path: string, message: string): QuarryError {
  return new QuarryError('INVALID_OPTION', `${path} ${message}`, { path })
}

/** A resource name matching `pattern` (as the services parse it), or INVALID_OPTION with the services' own explanation. */
export function checkName(name: unknown, pattern: string, path: string): string {
  if (typeof name !== 'string') throw invalidOption(path, `must be a resource name like "${pattern}"; received ${typeof name}.`)
  try {
    parseName(name, pattern, path)
  } catch (error) {
    if (error instanceof RpcFailure) throw new QuarryError('INVALID_OPTION', error.status.message, { path })
    throw error
  }
  return name
}

/** Entries of a key → kind option: non-empty keys of at most `maxKey` characters, kinds among `kinds`. */
export function checkKinds<K extends string>(value: unknown, kinds: readonly K[], maxKey: number, path: string): [string, K][] {
  if (value === undefined) return []
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidOption(path, `must be an object of metadata keys to kinds (${kinds.join(', ')}).`)
  const entries = Object.entries(value as Record<string, unknown>)
  for (const [key, kind] of entries) {
    if (key === '' || characterCount(key) > maxKey) throw invalidOption(path, `keys must have 1 to ${maxKey} characters; received "${key.slice(0, 40)}".`)
    if (!(kinds as readonly unknown[]).includes(kind)) throw invalidOption(`${path}.${key}`, `must be one of ${kinds.join(', ')}; received ${JSON.stringify(kind)}.`)
  }
  return entries as [string, K][]
}
