import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'

/**
 * Folders for one test file's tests: each call makes a new empty folder under the system's temp
 * folder (`prefix` names it), removed with everything in it after the test that made it.
 */
export function scratchFolders(prefix: string): () => string {
  const made: string[] = []
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`))
    made.push(dir)
    return dir
  }
}
