import { existsSync, readdirSync, statSync } from 'node:fs'
import { isAbsolute, join, relative, resolve } from 'node:path'
import { loadIndex, QuarryError, type QuarryIndex } from '@quarry/core'
import { CliError } from './fail.js'

/**
 * The index `quarry index` builds and `quarry search` reads: one core index saved in a folder
 * (crash-safe generations), whose records are the chunks of the user's files. Every chunk carries
 * its file's bookkeeping in its metadata, so the index is the only thing written:
 *
 * - `source`  the file's path relative to the folder holding the index (the working directory for
 *             the default `.quarry`), with `/` separators
 * - `ext`     the file's extension, lowercase, without the dot (`md`)
 * - `sha256`  the file's bytes' hash: a re-run reads again only files whose hash changed
 * - `chunk`   the chunk's number in its file (0, 1, ...); `start`, `end` its character offsets in
 *             the file's text; `page` (PDFs) the page it starts on
 */
export const DEFAULT_INDEX_DIR = '.quarry'

/** The index folder named by --index (default `.quarry` in the working directory), absolute. */
export function indexDir(flag: string | undefined): string {
  return resolve(flag ?? DEFAULT_INDEX_DIR)
}

/** A path as messages show it: relative to the working directory when inside it. */
export function shown(path: string): string {
  const rel = relative(process.cwd(), path)
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? path : rel
}

/** A value as typed in a shell command hint: as is when plain, else double-quoted. */
export function shellWord(value: string): string {
  return /^[\w./:@-]+$/.test(value) ? value : JSON.stringify(value)
}

/** Whether `dir` holds a saved index (its CURRENT pointer). */
export function hasIndex(dir: string): boolean {
  return existsSync(join(dir, 'CURRENT'))
}

/**
 * Whether a new index may be written in `dir`: it is missing, or a folder holding nothing but
 * what a first run stopped before its save committed leaves (its LOCK, a half-written snapshot),
 * which the next save's lock takes over and clears.
 */
export function isFreshDir(dir: string): boolean {
  if (!existsSync(dir)) return true
  // Without CURRENT, a renamed snapshot-N and CURRENT.tmp-PID are a first save stopped before its switch too.
  return statSync(dir).isDirectory() && readdirSync(dir).every((entry) => /^LOCK(\.[\w-]+)?$|^\.snapshot-\d+\.tmp-\d+$|^snapshot-\d+$|^CURRENT\.tmp-\d+$/.test(entry))
}

/**
 * Loads the index in `dir`, or fails with one line: `missing` says what to run when there is no
 * index; a damaged one is named with its problem.
 */
export function openIndex(dir: string, missing: string): QuarryIndex {
  if (!hasIndex(dir)) throw new CliError(`no index in ${shown(dir)}: ${missing}`)
  try {
    return loadIndex(dir)
  } catch (error) {
    if (error instanceof QuarryError && error.code === 'INVALID_SNAPSHOT') {
      const problem = /is not a readable Quarry index: (.*?)\. Restore it/.exec(error.message)?.[1] ?? error.message
      throw new CliError(`the index in ${shown(dir)} is damaged (${problem}); delete the folder and build it again`)
    }
    throw error
  }
}

/** One indexed file, from its chunks' metadata. */
export interface IndexedFile {
  readonly source: string
  readonly sha256: string
  /** Its chunk records' ids. */
  readonly ids: readonly string[]
}

/**
 * The files of an index built by `quarry index`, by source. Throws when a record lacks the file
 * bookkeeping (an index some other program built: re-indexing could not tell its files apart).
 */
export function indexedFiles(index: QuarryIndex, dir: string): Map<string, IndexedFile> {
  const files = new Map<string, { source: string; sha256: string; ids: string[] }>()
  for (const id of index.ids()) {
    const metadata = index.get(id)?.metadata
    const source = metadata?.source
    const sha256 = metadata?.sha256
    if (typeof source !== 'string' || typeof sha256 !== 'string') {
      throw new CliError(`the index in ${shown(dir)} was not built by quarry index (record "${id}" names no source file and hash); pass another --index folder`)
    }
    const file = files.get(source) ?? { source, sha256, ids: [] }
    file.ids.push(id)
    files.set(source, file)
  }
  return files
}
