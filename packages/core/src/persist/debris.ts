import { closeSync, fsyncSync, openSync, readdirSync, rmSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * Leftovers of saves that died before their generation was switched in: temporary generation
 * folders (`.snapshot-N.tmp-PID`, and `.tmp-snapshot-N-PID` of older data folders) and temporary
 * CURRENT files, and a LOCK's temporary file (`LOCK.<token>`, lock.ts). Removed only by the holder
 * of the folder's lock, so never a live writer's (a would-be writer whose temporary LOCK is removed
 * simply tries again).
 */
const DEBRIS = /^(\.snapshot-\d+\.tmp-\d+|\.tmp-snapshot-.*|CURRENT\.tmp.*|LOCK\.[0-9a-f]{24})$/

export function removeDebris(root: string): void {
  let entries: string[]
  try {
    entries = readdirSync(root)
  } catch {
    return
  }
  for (const entry of entries) if (DEBRIS.test(entry)) rmSync(join(root, entry), { recursive: true, force: true })
}

/** Makes a folder's entries (creations, renames, removals) durable; a no-op where folders cannot be fsynced. */
export function fsyncDir(dir: string): void {
  let fd: number
  try {
    fd = openSync(dir, 'r')
  } catch {
    return
  }
  try {
    fsyncSync(fd)
  } catch {
    // Windows and some file systems refuse fsync on a folder.
  } finally {
    closeSync(fd)
  }
}

/** {@link fsyncDir} off the main thread. */
export async function fsyncDirAsync(dir: string): Promise<void> {
  let handle
  try {
    handle = await open(dir, 'r')
  } catch {
    return
  }
  try {
    await handle.sync()
  } catch {
    // Windows and some file systems refuse fsync on a folder.
  } finally {
    await handle.close()
  }
}
