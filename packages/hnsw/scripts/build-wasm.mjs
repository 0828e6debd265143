#!/usr/bin/env node
// Builds wasm/quarry_hnsw.wasm from wasm/graph.cc, src/saved-graph.h and the vendored hnswlib with
// Emscripten, and records the sha256 of those inputs and the flags in wasm/inputs.sha256 (a test
// fails when the sources change and the .wasm was not rebuilt). Needs emcc (Debian's emscripten
// 3.1.6 was used: `apt-get install emscripten`); users and CI never run this, the .wasm is committed.
//
//   node packages/hnsw/scripts/build-wasm.mjs          build, then write inputs.sha256
//   node packages/hnsw/scripts/build-wasm.mjs --check  only compare inputs.sha256 with the sources
import { execFileSync } from 'node:child_process'
import { chmodSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { INCLUDE_DIRS, WASM_FLAGS, inputsDigest } from '../wasm/inputs.cjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const recorded = join(root, 'wasm', 'inputs.sha256')

if (process.argv.includes('--check')) {
  const { readFileSync } = await import('node:fs')
  const want = readFileSync(recorded, 'utf8').trim()
  const have = inputsDigest()
  if (want !== have) {
    console.error(`wasm/quarry_hnsw.wasm is stale: inputs are ${have}, it was built from ${want}; run node packages/hnsw/scripts/build-wasm.mjs`)
    process.exit(1)
  }
  console.log(`wasm/quarry_hnsw.wasm matches its inputs (${have})`)
  process.exit(0)
}

const emcc = process.env.EMCC ?? 'emcc'
// Debian's emscripten finds acorn (for its JS optimizer) only through NODE_PATH; it runs this Node.
const env = { ...process.env, EM_NODE_JS: process.execPath, NODE_PATH: [process.env.NODE_PATH, '/usr/share/nodejs'].filter(Boolean).join(':') }
const includes = INCLUDE_DIRS.flatMap((dir) => ['-I', join(root, dir)])
const args = [...WASM_FLAGS, ...includes, join(root, 'wasm', 'graph.cc'), '-o', join(root, 'wasm', 'quarry_hnsw.wasm')]
console.log([emcc, ...args].join(' '))
execFileSync(emcc, args, { cwd: root, env, stdio: 'inherit' })
// emcc marks its output executable; a .wasm is data.
chmodSync(join(root, 'wasm', 'quarry_hnsw.wasm'), 0o644)
writeFileSync(recorded, `${inputsDigest()}\n`)
console.log(`wrote wasm/quarry_hnsw.wasm and wasm/inputs.sha256`)
