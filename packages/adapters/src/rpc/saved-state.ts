import { readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { QuarryError, type GenerationFile, type GenerationWriter, type Steps } from '@quarry/core'

/**
 * An engine's `state.json` (its resources beside the core index snapshots): tagged with a format
 * and version, written as steps (core's steps.ts: a list marked `streamed` goes out item by item,
 * so a checkpoint never builds the whole state as one string), read back with every failure a
 * QuarryError INVALID_SNAPSHOT naming the file, never a parser's message (it would quote the
 * data). Its integrity is the generation's: it is written into one (an engine's `saveTo`,
 * rpc/persistent-engine.ts, or a
 * server's `--data` generation, transport/data-dir.ts) and listed with its sha256, so an edited file is
 * refused before it is parsed.
 */
export interface StateFormat {
  /** e.g. `quarry-semantic-retriever`. */
  readonly format: string
  /** The version written. */
  readonly version: number
  /** Earlier versions this Quarry still reads (the restore tells them apart by the saved `version`); none by default. */
  readonly reads?: readonly number[]
  /** The engine, for messages. */
  readonly engine: string
}

/** A list written item by item into `state.json`, a safe point after each (its items may hold lists marked so too). */
class Streamed {
  readonly items: Iterable<unknown>
  constructor(items: Iterable<unknown>) {
    this.items = items
  }
}

/** Marks a list to be written item by item (see {@link writeState}). */
export function streamed<T>(items: Iterable<T>): Streamed {
  return new Streamed(items)
}

/** Maps an iterable lazily (nothing is built before it is written). */
export function* mapped<T, U>(items: Iterable<T>, map: (item: T, index: number) => U): Generator<U> {
  let i = 0
  for (const item of items) yield map(item, i++)
}

/** `name` inside `folder` of a generation ('' is its top). */
export function within(folder: string, name: string): string {
  return folder === '' ? name : `${folder}/${name}`
}

/** Writes `folder/state.json` of a generation: the format's tag, then the fields, `streamed` lists item by item. */
export function* writeState(out: GenerationWriter, folder: string, format: StateFormat, state: Readonly<Record<string, unknown>>): Steps {
  const file = out.create(within(folder, 'state.json'))
  yield* writeStateInto(file, format, state)
  yield* file.finish()
}

/** The tagged JSON of a state (as {@link writeState} writes it) into a file of a generation, not finished. */
export function* writeStateInto(file: GenerationFile, format: StateFormat, state: Readonly<Record<string, unknown>>): Steps {
  yield* writeJson(file, { format: format.format, version: format.version, ...state })
}

/** JSON.stringify's output for `value`, with `Streamed` lists (and objects holding them) written piece by piece. */
function* writeJson(file: GenerationFile, value: unknown): Steps {
  if (value instanceof Streamed) {
    file.text('[')
    let first = true
    for (const item of value.items) {
      if (!first) file.text(',')
      first = false
      yield* writeJson(file, item === undefined ? null : item)
      yield
    }
    file.text(']')
    return
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).some((v) => v instanceof Streamed)) {
    file.text('{')
    let first = true
    for (const [key, v] of Object.entries(value)) {
      if (v === undefined) continue
      file.text(`${first ? '' : ','}${JSON.stringify(key)}:`)
      first = false
      yield* writeJson(file, v)
    }
    file.text('}')
    return
  }
  file.text(JSON.stringify(value) ?? 'null')
}

/**
 * `dir/state.json` as written by `writeState`, format and version checked; `restore` builds the
 * engine's state from it.
 */
export function readState<T>(dir: string, format: StateFormat, restore: (saved: Record<string, unknown>) => T): T {
  return readStateFile(join(resolve(dir), 'state.json'), format, restore)
}

/** A file written by {@link writeStateInto}, checked as {@link readState} checks `state.json`. */
export function readStateFile<T>(path: string, format: StateFormat, restore: (saved: Record<string, unknown>) => T): T {
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
  const versions = [...(format.reads ?? []), format.version]
  if (!versions.includes(tagged.version as number)) throw fail(`version ${String(tagged.version)} is not supported by this Quarry (reads version ${versions.join(' or ')})`)
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
