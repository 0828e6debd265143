'use strict'
// @quarry/hnsw's WebAssembly graph for Node: the Graph class of ../index.d.ts, built from the same
// vendored hnswlib (graph.cc, scripts/build-wasm.mjs), ready as soon as this file is required. Its
// distances and saved bytes are the native build's, bit for bit. A browser cannot read the .wasm
// from disk: it passes the file's bytes to `instantiate` from graph.cjs (see ../README.md).
const fs = require('node:fs')
const { join } = require('node:path')
const { instantiate, instantiateSync } = require('./graph.cjs')

const { Graph, memoryBytes } = instantiateSync(fs.readFileSync(join(__dirname, 'quarry_hnsw.wasm')), fs)

module.exports = { Graph, instantiate, memoryBytes }
