import { homedir } from 'node:os'
import { join } from 'node:path'

/**
 * The folder for files Quarry can rebuild (the demo's index, the benchmarks' ground truth), outside
 * any repository: $QUARRY_CACHE_DIR, else $XDG_CACHE_HOME/quarry, else ~/.cache/quarry.
 */
export function defaultCacheDir(): string {
  return process.env.QUARRY_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'quarry')
}
