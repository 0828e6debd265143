import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Bytes on disk of a file or, recursively, a folder. */
export function sizeOf(path: string): number {
  const st = statSync(path)
  return st.isDirectory() ? readdirSync(path).reduce((sum, entry) => sum + sizeOf(join(path, entry)), 0) : st.size
}

/** Reads a file or, recursively, every file of a folder (into the page cache), keeping nothing. */
export function readAll(path: string, buffer: Buffer = Buffer.allocUnsafe(8 << 20)): void {
  if (statSync(path).isDirectory()) {
    for (const entry of readdirSync(path)) readAll(join(path, entry), buffer)
    return
  }
  const fd = openSync(path, 'r')
  try {
    while (readSync(fd, buffer, 0, buffer.length, null) > 0);
  } finally {
    closeSync(fd)
  }
}
