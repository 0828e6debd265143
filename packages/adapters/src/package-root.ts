import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The folder of the @quarry/adapters package (holding its package.json, console/ and dist/): the
 * nearest folder above this module whose package.json names it. The same answer from the sources
 * (src/), the compiled modules (dist/) and the bundle (dist/bundle/, where this code may sit in an
 * entry file or in a chunk, at other depths), in the workspace and installed.
 */
export const PACKAGE_ROOT = packageRoot(dirname(fileURLToPath(import.meta.url)))

function packageRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === '@quarry/adapters') return dir
    if (dirname(dir) === dir) throw new Error(`internal error: no package.json of @quarry/adapters above ${start}`)
  }
}

/** The package's version, read from its package.json when asked (`quarry --version`). */
export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: unknown }
  if (typeof manifest.version !== 'string') throw new Error('internal error: the package.json of @quarry/adapters has no version')
  return manifest.version
}
