import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

/** A file of a generation: its inode (the same one in two generations means it was hard-linked), modification time and sha256. */
export interface GenerationFileInfo {
  readonly ino: number
  readonly mtimeMs: number
  readonly sha256: string
}

/** The data files of `dir`'s current generation (not its manifest), by path inside it (`/`-separated). */
export function current(dir: string): Map<string, GenerationFileInfo> {
  const generation = join(dir, readFileSync(join(dir, 'CURRENT'), 'latin1').trim())
  const out = new Map<string, GenerationFileInfo>()
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, e.name)
      if (e.isDirectory()) walk(path)
      else if (e.name !== 'manifest.json') out.set(relative(generation, path).split('\\').join('/'), { ino: statSync(path).ino, mtimeMs: statSync(path).mtimeMs, sha256: createHash('sha256').update(readFileSync(path)).digest('hex') })
    }
  }
  walk(generation)
  return out
}

/** The names whose file is the same inode in both listings. */
export function shared(a: ReadonlyMap<string, { readonly ino: number }>, b: ReadonlyMap<string, { readonly ino: number }>): string[] {
  return [...a].filter(([name, f]) => b.get(name)?.ino === f.ino).map(([name]) => name)
}
