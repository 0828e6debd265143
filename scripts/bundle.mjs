#!/usr/bin/env node
// Bundles a package's compiled ESM (dist/, written by tsc) into dist/bundle/: its entry points
// (the package's exports, the `quarry` command, the RAG import worker and file threads) and the chunks they share,
// each with a source map back to the TypeScript. A process then loads a few files instead of the
// ~170 modules tsc writes: `quarry serve` answers about 0.1 s sooner (bench/README.md, startup).
// Dependencies stay imports, resolved from the package's own folder as before, but for the few
// listed in BUNDLED below. The package ships
// dist/bundle/ and tsc's .d.ts files ("files" in its package.json), not tsc's JavaScript.
//
//   node scripts/bundle.mjs [packageDir]   (default: the current folder; its build and prepack run it)
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve, sep } from 'node:path'
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
/**
 * Dependencies built into a package's bundle rather than installed beside it. protobuf.js (with
 * its @protobufjs/* parts and long) and proto3-json-serializer: every protobuf.js 7 release has a
 * postinstall script, which npm would run in every app that installs the adapters, and the
 * serializer asks for protobuf.js 7. Their licenses go with the bundle (THIRD-PARTY-LICENSES.md).
 */
const BUNDLED = {
  '@quarry/adapters': ['protobufjs', '@protobufjs/', 'long', 'proto3-json-serializer'],
}
const bundled = BUNDLED[name] ?? []
const isBundled = (specifier) => bundled.some((p) => (p.endsWith('/') ? specifier.startsWith(p) : specifier === p || specifier.startsWith(`${p}/`)))

const dist = join(dir, 'dist')
const outdir = join(dist, 'bundle')
rmSync(outdir, { recursive: true, force: true })
const result = await build({
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
  // Every other package stays an import, resolved from the package's own folder.
  plugins: [
    {
      name: 'external-packages',
      setup(b) {
        const inside = (args) => args.path.startsWith('node:') || isBundled(args.path) || (bundled.length > 0 && insideBundled(args.importer))
        b.onResolve({ filter: /^[^./]/ }, (args) => (inside(args) ? undefined : { path: args.path, external: true }))
        // A built-in package's JavaScript is mapped as it is, not through its own source maps:
        // those point to sources its package does not ship (the maps would carry no content) and
        // lose the files' copyright headers.
        b.onLoad({ filter: /[\\/]node_modules[\\/].*\.[cm]?js$/ }, (args) => ({ contents: readFileSync(args.path, 'utf8').replace(/^\/\/# sourceMappingURL=.*$/gm, ''), loader: 'js' }))
      },
    },
  ],
  metafile: bundled.length > 0,
  sourcemap: true,
  logLevel: 'warning',
})

/** Whether a file is part of a package built into the bundle (its own imports are bundled too). */
function insideBundled(file) {
  const root = packageRootOf(file)
  return root !== undefined && isBundled(root.name)
}

/** The package a file in node_modules belongs to: its folder and name; undefined outside node_modules. */
function packageRootOf(file) {
  const parts = file.split(sep)
  const at = parts.lastIndexOf('node_modules')
  if (at < 0) return undefined
  const scoped = parts[at + 1]?.startsWith('@')
  const name = scoped ? `${parts[at + 1]}/${parts[at + 2]}` : parts[at + 1]
  return { name, folder: parts.slice(0, at + (scoped ? 3 : 2)).join(sep) }
}

// The licenses of what was built in, one section per package: every package the bundle's inputs
// come from (a dependency the listed ones bring is built in too), with its license file and the
// copyright lines of the files built in, which their headers hold and a minifier-free bundle
// keeps only in the source maps.
if (bundled.length > 0) {
  const packages = new Map()
  for (const input of Object.keys(result.metafile.inputs)) {
    const root = packageRootOf(resolve(input))
    if (!root) continue
    const entry = packages.get(root.name) ?? { folder: root.folder, copyrights: new Set() }
    for (const line of readFileSync(resolve(input), 'utf8').split('\n')) {
      const found = /copyright\s+(?:\(c\)\s*|©\s*)?\d{4}.*$/i.exec(line)
      if (found) entry.copyrights.add(found[0].replace(/\s*\*\/\s*$/, '').replace(/[.\s]+$/, ''))
    }
    packages.set(root.name, entry)
  }
  const sections = [...packages].sort(([a], [b]) => a.localeCompare(b)).map(([pkg, { folder, copyrights }]) => {
    const { version, license } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'))
    const file = readdirSync(folder).find((f) => /^licen[cs]e/i.test(f))
    if (!file) throw new Error(`scripts/bundle.mjs: ${pkg} has no license file to ship with the bundle`)
    const notices = copyrights.size === 0 ? '' : `The files built in say: ${[...copyrights].sort().join('; ')}.\n\n`
    return `## ${pkg} ${version} (${license})\n\n${notices}\`\`\`text\n${readFileSync(join(folder, file), 'utf8').trim()}\n\`\`\`\n`
  })
  writeFileSync(join(outdir, 'THIRD-PARTY-LICENSES.md'), `# Third-party code in this bundle\n\nBuilt into these modules by scripts/bundle.mjs, under their own licenses:\n\n${sections.join('\n')}`)
}
