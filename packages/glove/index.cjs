'use strict'
// The package holds data only: @quarry/core reads the file (its embed/glove-vectors.ts owns the format).
const { join } = require('node:path')

/** Absolute path of the GloVe 6B 100-d vectors in Quarry's 8-bit format. */
exports.vectorsFile = join(__dirname, 'glove-6b-100d.q8')
