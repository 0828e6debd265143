#!/usr/bin/env node
// Bundles a package's compiled ESM (dist/, written by tsc) into dist/bundle/: its entry points
// (the package's exports, the `quarry` command, the RAG import worker and file threads) and the chunks they share,
// each with a source map back to the TypeScript. A process then loads a few files instead of the
// ~170 modules tsc writes: `quarry serve` answers about 0.1 s sooner (bench/README.md, startup).
// Dependencies stay imports, resolved from the package's own folder as before. The package ships
// dist/bundle/ and tsc's .d.ts files ("files" in its package.json), not tsc's JavaScript.
//
//   node scripts/bundle.mjs [packageDir]   (default: the current folder; its build and prepack run it)
import { readFileSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { build } from 'esbuild'

/** Each package's entry points, in dist/: what its exports, its bin and its worker threads load from dist/bundle/. */
const ENTRIES = {
  '@quarry/core': ['index.js', 'testing/index.js'],
  '@quarry/adapters': ['index.js', 'testing/index.js', 'cli/main.js', 'vertex-rag/analysis-worker.js', 'vertex-rag/bounded-worker.js'],
}

const dir = resolve(process.argv[2] ?? '.')
const { name } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
const entries = ENTRIES[name]
if (!entries) throw new Error(`scripts/bundle.mjs: no entry points listed for ${name} (${dir})`)
const dist = join(dir, 'dist')
const outdir = join(dist, 'bundle')
rmSync(outdir, { recursive: true, force: true })
await build({
  entryPoints: entries.map((entry) => join(dist, entry)),
  outbase: dist,
  outdir,
  bundle: true,
  // Code shared by entry points goes to chunks (one copy of each module: one QuarryError class);
  // each command's own modules stay behind its dynamic import, as in dist/.
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  logLevel: 'warning',
})
