import { readdirSync, realpathSync, statSync } from 'node:fs'
import { extname, join, relative, resolve, sep } from 'node:path'
import { TEXT_EXTENSIONS } from '../vertex-rag/extract.js'
import { CliError } from './fail.js'

/** Extensions `quarry index` picks up inside folders (a file named on the command line is tried whatever its extension). */
export const INDEXED_EXTENSIONS: readonly string[] = [...TEXT_EXTENSIONS, '.pdf']

/** Folders skipped inside the folders given: hidden ones (.git, .quarry) and installed packages. */
function skippedFolder(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules'
}

export interface FoundFile {
  /** The path relative to `base`, `/`-separated: how the index names the file. */
  readonly source: string
  /** The real path (links resolved): what is read. */
  readonly real: string
}

/** A folder whose entries could not be listed (permissions): its path as `source` names files, and why. */
export interface UnreadableFolder {
  readonly source: string
  readonly code: string
}

interface WalkLimits {
  readonly maxFiles: number
  readonly maxDepth: number
}

const WALK_LIMITS: WalkLimits = { maxFiles: 100_000, maxDepth: 64 }

/** `path` relative to `base`, with `/` separators. */
function sourceOf(base: string, path: string): string {
  return relative(base, path).split(sep).join('/')
}

/**
 * The files under the given paths, in order (folders sorted by name, depth first): files of the
 * indexed types, hidden folders and node_modules skipped, `exclude` (the index itself) skipped,
 * each real file once, links followed (a loop is visited once). A given path that does not exist
 * fails the whole walk before anything is read.
 */
export function findFiles(paths: readonly string[], options: { base: string; exclude: readonly string[]; limits?: WalkLimits }): { files: FoundFile[]; unreadable: UnreadableFolder[] } {
  const limits = options.limits ?? WALK_LIMITS
  const excluded = new Set(options.exclude.map((p) => resolve(p)))
  const starts = paths.map((p) => {
    const path = resolve(p)
    try {
      return { path, real: realpathSync(path), info: statSync(path) }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new CliError(code === 'ENOENT' ? `${p}: no such file or folder` : `${p}: cannot be read (${code ?? 'error'})`)
    }
  })
  const files: FoundFile[] = []
  const unreadable: UnreadableFolder[] = []
  const seenFiles = new Set<string>()
  const seenDirs = new Set<string>()
  const add = (path: string, real: string): void => {
    if (seenFiles.has(real)) return
    seenFiles.add(real)
    if (files.length >= limits.maxFiles) throw new CliError(`more than ${limits.maxFiles} files to index; index fewer folders at a time`)
    files.push({ source: sourceOf(options.base, path), real })
  }
  const visitDir = (path: string, real: string, depth: number): void => {
    if (seenDirs.has(real) || excluded.has(real) || excluded.has(path)) return
    seenDirs.add(real)
    if (depth > limits.maxDepth) throw new CliError(`${sourceOf(options.base, path)}: folders nest deeper than ${limits.maxDepth} levels`)
    let names: string[]
    try {
      names = readdirSync(real).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    } catch (error) {
      // Said, and what the index holds from it kept: its files are not known to be gone.
      unreadable.push({ source: sourceOf(options.base, path), code: (error as NodeJS.ErrnoException).code ?? 'error' })
      return
    }
    for (const name of names) {
      const child = join(path, name)
      let childReal: string
      let isDir: boolean
      let isFile: boolean
      try {
        childReal = realpathSync(child)
        const info = statSync(childReal)
        isDir = info.isDirectory()
        isFile = info.isFile()
      } catch {
        continue // a dangling link or an entry gone meanwhile
      }
      if (isDir && !skippedFolder(name)) visitDir(child, childReal, depth + 1)
      else if (isFile && INDEXED_EXTENSIONS.includes(extname(name).toLowerCase())) add(child, childReal)
    }
  }
  for (const start of starts) {
    if (start.info.isDirectory()) visitDir(start.path, start.real, 0)
    else if (start.info.isFile()) add(start.path, start.real)
    else throw new CliError(`${start.path}: not a regular file or folder`)
  }
  return { files, unreadable }
}
