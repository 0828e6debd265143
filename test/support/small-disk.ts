import { execFileSync } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A 4 MiB tmpfs mounted at `root/small-disk`, for tests that fill a disk; undefined (with a
 * warning naming `what`) where it cannot be mounted: mounting needs root (CI runs as root).
 * `unmount` it in afterAll.
 */
export function mountSmallDisk(root: string, what: string): string | undefined {
  const at = join(root, 'small-disk')
  mkdirSync(at)
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', at], { stdio: 'ignore' })
    return at
  } catch {
    console.warn(`${what} skipped: mounting a small tmpfs needs root (CI runs as root)`)
    return undefined
  }
}

/** Unmounts what {@link mountSmallDisk} mounted (lazily: a process may still hold a file there). */
export function unmountSmallDisk(at: string | undefined): void {
  if (at) execFileSync('umount', ['-l', at])
}
