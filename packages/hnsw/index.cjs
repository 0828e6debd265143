'use strict'
// The addon node-gyp builds at install (`node-gyp rebuild`, see README.md). A package whose build
// never ran (pnpm without the build allowed, npm --ignore-scripts) says so, without local paths.
let addon
try {
  addon = require('./build/Release/quarry_hnsw.node')
} catch (cause) {
  if (cause && cause.code === 'MODULE_NOT_FOUND') {
    throw Object.assign(new Error('@quarry/hnsw is installed but its addon was never built (its install script, node-gyp rebuild, did not run)', { cause }), { code: 'QUARRY_HNSW_NOT_BUILT' })
  }
  throw cause
}
module.exports = addon
