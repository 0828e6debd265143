'use strict'
// What a native binary is built from, for scripts/build-native.mjs (which records each file's
// sha256 beside the binary) and the drift test (which checks the record against the tree).
const { readdirSync } = require('node:fs')
const { join } = require('node:path')

/** The files, relative to the package, sorted: binding.gyp, graph.cc and the headers in src/, hnswlib's headers. */
function nativeInputs(pkg = join(__dirname, '..')) {
  const headers = (dir) => readdirSync(join(pkg, dir)).filter((f) => f.endsWith('.h')).map((f) => `${dir}/${f}`)
  return ['src/binding.gyp', 'src/graph.cc', ...headers('src'), ...headers('vendor/hnswlib')].sort()
}

module.exports = { nativeInputs }
