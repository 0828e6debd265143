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

/**
 * Makes a folder's entries (creations, renames, removals) durable. Where folders cannot be
 * fsynced (Windows; file systems answering EINVAL or ENOTSUP) it does nothing; any other failure
 * (EIO, EMFILE, ...) is thrown: the entries may not be on disk.
 */
export function fsyncDir(dir: string): void {
  if (process.platform === 'win32') return
  let fd: number
  try {
    fd = openSync(dir, 'r')
  } catch (error) {
    if (unsyncable(error)) return
    throw error
  }
  try {
    fsyncSync(fd)
  } catch (error) {
    if (!unsyncable(error)) throw error
  } finally {
    closeSync(fd)
  }
}

/** {@link fsyncDir} off the main thread. */
export async function fsyncDirAsync(dir: string): Promise<void> {
  if (process.platform === 'win32') return
  let handle
  try {
    handle = await open(dir, 'r')
  } catch (error) {
    if (unsyncable(error)) return
    throw error
  }
  try {
    await handle.sync()
  } catch (error) {
    if (!unsyncable(error)) throw error
  } finally {
    await handle.close()
  }
}

/** A file system's answer that folders cannot be fsynced there (not a failure to write). */
function unsyncable(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'EINVAL' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EISDIR'
}
