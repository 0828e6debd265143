'use strict'
// What wasm/quarry_hnsw.wasm is built from: scripts/build-wasm.mjs compiles with these flags and
// records inputsDigest() in inputs.sha256, which a test compares with the sources.
const { createHash } = require('node:crypto')
const { readdirSync, readFileSync } = require('node:fs')
const { join } = require('node:path')

/**
 * -ffp-contract=off: no fused multiply-add, so distances round as the native SSE kernels do.
 * -fwasm-exceptions: hnswlib's refusals are C++ exceptions, caught in graph.cc.
 * Up to 4 GB of memory: a graph of 1M 128-d vectors takes about 700 MB.
 */
const WASM_FLAGS = [
  '-O3', '-msimd128', '-ffp-contract=off', '-std=c++17', '-fwasm-exceptions',
  '-sSTANDALONE_WASM', '--no-entry', '-sALLOW_MEMORY_GROWTH=1', '-sMAXIMUM_MEMORY=4GB',
  '-sINITIAL_MEMORY=16MB', '-sEXPORTED_FUNCTIONS=_malloc,_free',
  // quarry_read and quarry_write are imports that wasm/index.cjs gives; it refuses any other.
  '-sERROR_ON_UNDEFINED_SYMBOLS=0',
]

/** The folders build-wasm.mjs gives emcc with -I: the headers graph.cc includes. */
const INCLUDE_DIRS = ['src', 'vendor/hnswlib']

/** sha256 over graph.cc, every header of INCLUDE_DIRS (by name: src/saved-graph.h, hnswlib's) and the flags. */
function inputsDigest() {
  const root = join(__dirname, '..')
  const hash = createHash('sha256')
  const headers = INCLUDE_DIRS.flatMap((dir) => readdirSync(join(root, dir)).filter((f) => f.endsWith('.h')).sort().map((f) => join(root, dir, f)))
  const files = [join(root, 'wasm', 'graph.cc'), ...headers]
  for (const file of files) {
    hash.update(file.slice(root.length).replaceAll('\\', '/') + '\0')
    hash.update(readFileSync(file))
    hash.update('\0')
  }
  hash.update(WASM_FLAGS.join(' '))
  return hash.digest('hex')
}

module.exports = { INCLUDE_DIRS, WASM_FLAGS, inputsDigest }
