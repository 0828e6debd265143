import { execFileSync } from 'node:child_process'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..')
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
/** Bundles a built package's dist/ into dist/bundle/, as its build and prepack scripts do. */
const BUNDLE = join(ROOT, 'scripts', 'bundle.mjs')

/** What `import '@quarry/core'` loads from an installed package (its exports' default). */
export const DIST_CORE = join(ROOT, 'packages', 'core', 'dist', 'bundle', 'index.js')
/** What `import '@quarry/adapters'` loads from an installed package. */
export const DIST_ADAPTERS = join(ROOT, 'packages', 'adapters', 'dist', 'bundle', 'index.js')
/** What an installed package's `quarry` loads (bin/quarry.mjs outside the workspace): the bundled CLI, whose runCli it calls. */
export const DIST_CLI = join(ROOT, 'packages', 'adapters', 'dist', 'bundle', 'cli', 'main.js')

/**
 * Builds the packages' dist/ and dist/bundle/ as `pnpm build` does (tsc is incremental: quick when
 * nothing changed); `core` alone, or `adapters`, which builds core too.
 */
export function buildDist(last: 'core' | 'adapters'): void {
  execFileSync(process.execPath, [TSC, '-b', join(ROOT, 'packages', last, 'tsconfig.build.json')], { stdio: 'inherit' })
  for (const name of last === 'core' ? ['core'] : ['core', 'adapters']) execFileSync(process.execPath, [BUNDLE, join(ROOT, 'packages', name)], { stdio: 'inherit' })
}
