import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { QuarryError } from '@quarry/core'

/**
 * An engine's `state.json` (its resources beside the core index snapshots): tagged with a format
 * and version, read back with every failure a QuarryError INVALID_SNAPSHOT naming the file, never
 * a parser's message (it would quote the data). Its integrity is the data folder's business: a
 * server's `--data` generation (http/data-dir.ts) lists it with its sha256, so an edited file is
 * refused before it is parsed.
 */
export interface StateFormat {
  /** e.g. `quarry-semantic-retriever`. */
  readonly format: string
  readonly version: number
  /** The engine, for messages. */
  readonly engine: string
}

export function writeState(dir: string, format: StateFormat, state: Readonly<Record<string, unknown>>): void {
  writeFileSync(join(dir, 'state.json'), JSON.stringify({ format: format.format, version: format.version, ...state }))
}

/** `dir/state.json` as written by `writeState`, format and version checked; `restore` builds the engine's state from it. */
export function readState<T>(dir: string, format: StateFormat, restore: (saved: Record<string, unknown>) => T): T {
  const path = join(resolve(dir), 'state.json')
  const fail = (what: string): QuarryError =>
    new QuarryError('INVALID_SNAPSHOT', `${path} is not a readable ${format.engine} state: ${what}. Restore the folder from a backup, or start empty without it.`)
  let text: string
  try {
    if (!statSync(path).isFile()) throw fail('it is not a file')
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if (error instanceof QuarryError) throw error
    throw fail(`it is missing or unreadable (${(error as NodeJS.ErrnoException).code ?? 'error'})`)
  }
  let saved: unknown
  try {
    saved = JSON.parse(text)
  } catch {
    throw fail('it is not JSON (truncated?)')
  }
  if (typeof saved !== 'object' || saved === null || Array.isArray(saved)) throw fail('it is not an object')
  const tagged = saved as Record<string, unknown>
  if (tagged.format !== format.format) throw fail(`it is not a ${format.engine} state`)
  if (tagged.version !== format.version) throw fail(`version ${String(tagged.version)} is not supported by this Quarry (reads version ${format.version})`)
  try {
    return restore(tagged)
  } catch (error) {
    if (error instanceof QuarryError) throw error
    // A shape this Quarry does not know (a TypeError while rebuilding): its message may hold data.
    throw fail(`its content has an unexpected shape (${error instanceof Error ? error.name : 'error'})`)
  }
}

/** An array field of the saved state, or a TypeError (turned into INVALID_SNAPSHOT by readState). */
export function arrayField(saved: Readonly<Record<string, unknown>>, key: string): readonly Record<string, unknown>[] {
  const value = saved[key]
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v))) throw new TypeError(`${key} is not a list of objects`)
  return value as Record<string, unknown>[]
}

/** The saved sequence number (a TypeError otherwise: readState refuses the file). */
export function seqOf(saved: Readonly<Record<string, unknown>>): number {
  const seq = saved['seq']
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) throw new TypeError('seq is not a count')
  return seq
}

/** The folder of a saved index inside `dir` (`corpus-3`, `engine-0`): nothing else, never outside `dir`. */
export function indexDirOf(dir: string, indexDir: unknown): string {
  if (typeof indexDir !== 'string' || !/^[a-z]+-\d{1,9}$/.test(indexDir)) throw new TypeError('indexDir is not an index folder name')
  return join(dir, indexDir)
}
