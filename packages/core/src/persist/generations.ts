import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs'
import { join } from 'node:path'

/** Which snapshot generation `dir/CURRENT` names, or undefined when there is none. */
export function readCurrent(dir: string): { name: string; number: number } | undefined {
  let name: string
  try {
    name = readFileSync(join(dir, 'CURRENT'), 'utf8').trim()
  } catch {
    return undefined
  }
  const match = /^snapshot-(\d+)$/.exec(name)
  return match ? { name, number: Number(match[1]) } : undefined
}

/** Points `dir/CURRENT` at a generation: write a temporary file, fsync, rename over (atomic). */
export function writeCurrent(dir: string, generation: string): void {
  const tmp = join(dir, `CURRENT.tmp-${process.pid}`)
  const fd = openSync(tmp, 'w')
  writeSync(fd, `${generation}\n`)
  fsyncSync(fd)
  closeSync(fd)
  renameSync(tmp, join(dir, 'CURRENT'))
}
