import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Bytes on disk of a file or, recursively, a folder. */
export function sizeOf(path: string): number {
  const st = statSync(path)
  return st.isDirectory() ? readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0) : st.size
}
