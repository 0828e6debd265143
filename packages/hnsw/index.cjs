'use strict'
// The graph build this process uses, chosen once at the first require (see load.cjs): the native
// addon where one loads, else WebAssembly; QUARRY_HNSW=native|wasm forces one.
const { existsSync } = require('node:fs')
const { join } = require('node:path')
const { loadGraph } = require('./load.cjs')

const localBuild = join(__dirname, 'src', 'build', 'Release', 'quarry_hnsw.node')

/** glibc or not (musl), as Node's own report says; napi-rs and esbuild decide the same way. */
function glibc() {
  if (process.platform !== 'linux') return false
  const header = process.report && typeof process.report.getReport === 'function' ? process.report.getReport().header : undefined
  return Boolean(header && header.glibcVersionRuntime)
}

module.exports = loadGraph({
  env: process.env,
  platform: process.platform,
  arch: process.arch,
  glibc,
  localBuild: existsSync(localBuild) ? localBuild : undefined,
  resolve: (name) => require.resolve(name),
  requirePath: (file) => require(file),
  requireWasm: () => require('./wasm/index.cjs'),
})
