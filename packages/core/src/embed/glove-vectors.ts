import { createHash } from 'node:crypto'
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { createRequire } from 'node:module'
import { describe, QuarryError } from '../errors.js'

/**
 * GloVe 6B 100-d word vectors (341,479 words, most frequent first), from the package
 * `@quarry/glove` (an optional peer dependency: installed with @quarry/adapters, or by the app).
 * The package holds one file that this module reads directly, with no conversion.
 *
 * The file (little-endian; written only by packages/glove/scripts/build.mjs):
 * - header, 64 bytes: "QRYGLOVE", then u32 version (1), dimensions, count, wordBytes, blockRows,
 *   blocks, then the sha256 of the words section (32 bytes);
 * - `blocks` sha256 digests (32 bytes each), block b holding rows [b·blockRows, (b+1)·blockRows);
 * - words, UTF-8, each followed by "\n", most frequent first (`wordBytes` bytes);
 * - `count` rows of 8 + dimensions bytes: a float32 scale s and offset o, then `dimensions` uint8
 *   values q; component j is o + q[j] · s (o = the word's smallest component, s = its range / 255).
 * Quantizing moves a component by at most s / 2; the embedder's nDCG@10 on Cranfield and CISI
 * stays within 0.002 of the float32 vectors' (docs/embedders.md, bench embed-quality).
 */
export interface WordVectors {
  readonly dimensions: number
  /** Words, most frequent first; row i of `vectors` belongs to words[i]. */
  readonly words: readonly string[]
  /** Row-major, words.length × dimensions, in a SharedArrayBuffer (worker threads read it without a copy). */
  readonly vectors: Float32Array
}

export interface WordVectorOptions {
  /** Keep only the `limit` most frequent words; only the blocks of rows holding them are read (the word list is read whole). @defaultValue all 341,479 */
  limit?: number
  /** A vectors file in @quarry/glove's format. @defaultValue the file of the installed `@quarry/glove` */
  file?: string
}

const MAGIC = 'QRYGLOVE'
const VERSION = 1
const HEADER_BYTES = 64
const DIGEST_BYTES = 32

const REINSTALL = 'reinstall @quarry/glove (`npm install @quarry/glove`; in a clone of the Quarry repository, `node scripts/setup.mjs` rebuilds it)'

/**
 * Loads the GloVe vectors (dequantized to float32) from @quarry/glove, checking the checksum of
 * every part it reads. Throws NATIVE_UNAVAILABLE when the package is absent or its file damaged.
 */
export function loadGloveVectors(options: WordVectorOptions = {}): WordVectors {
  const { limit } = options
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1)) {
    throw new QuarryError('INVALID_OPTION', `limit must be a positive integer (the number of most frequent words to keep), received ${describe(limit)}.`, { path: 'limit' })
  }
  const file = options.file ?? installedFile()
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (cause) {
    throw new QuarryError('NATIVE_UNAVAILABLE', `the GloVe vectors file of @quarry/glove cannot be opened; ${REINSTALL}.`, { cause })
  }
  try {
    return readVectors(fd, limit)
  } finally {
    closeSync(fd)
  }
}

/** The file of the installed @quarry/glove, resolved only now: core does not depend on the package. */
function installedFile(): string {
  let exported: unknown
  try {
    exported = createRequire(import.meta.url)('@quarry/glove')
  } catch (cause) {
    throw new QuarryError(
      'NATIVE_UNAVAILABLE',
      // From tarballs, install.md's setup maps @quarry/glove in "overrides", and npm refuses to
      // install a package it overrides by name (EOVERRIDE): the override goes first.
      'the GloVe embedder needs the package @quarry/glove (its word vectors), which is not installed: run `npm install @quarry/glove`; from tarballs, first remove "@quarry/glove" from your package.json\'s "overrides" (npm refuses to install an overridden package: EOVERRIDE), then `npm install` its tarball by path (docs/install.md). Or use createHashingEmbedder() instead.',
      { cause },
    )
  }
  const file = typeof exported === 'object' && exported !== null && 'vectorsFile' in exported ? exported.vectorsFile : undefined
  if (typeof file !== 'string') throw new QuarryError('NATIVE_UNAVAILABLE', `the installed @quarry/glove exports no vectorsFile; ${REINSTALL}.`)
  return file
}

function damaged(what: string): QuarryError {
  return new QuarryError('NATIVE_UNAVAILABLE', `the GloVe vectors file of @quarry/glove is damaged (${what}); ${REINSTALL}.`)
}

function readAt(fd: number, position: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(length)
  readInto(fd, out, position)
  return out
}

function readInto(fd: number, out: Uint8Array, position: number): void {
  let filled = 0
  while (filled < out.byteLength) {
    const got = readSync(fd, out, filled, out.byteLength - filled, position + filled)
    if (got === 0) throw damaged('truncated')
    filled += got
  }
}

function sha256(bytes: Uint8Array): Buffer {
  return createHash('sha256').update(bytes).digest()
}

function readVectors(fd: number, limit: number | undefined): WordVectors {
  const size = fstatSync(fd).size
  if (size < HEADER_BYTES) throw damaged('no header')
  const header = readAt(fd, 0, HEADER_BYTES)
  if (header.toString('latin1', 0, 8) !== MAGIC) throw damaged('not a Quarry GloVe file')
  const version = header.readUInt32LE(8)
  if (version !== VERSION) throw damaged(`format version ${version}, this @quarry/core reads ${VERSION}: install the @quarry/glove of the same release`)
  const dim = header.readUInt32LE(12)
  const count = header.readUInt32LE(16)
  const wordBytes = header.readUInt32LE(20)
  const blockRows = header.readUInt32LE(24)
  const blocks = header.readUInt32LE(28)
  const rowBytes = 8 + dim
  const wordsAt = HEADER_BYTES + blocks * DIGEST_BYTES
  const rowsAt = wordsAt + wordBytes
  if (dim === 0 || blockRows === 0 || blocks !== Math.ceil(count / blockRows) || size !== rowsAt + count * rowBytes) throw damaged('its size does not match its header')
  const digests = readAt(fd, HEADER_BYTES, blocks * DIGEST_BYTES)

  const n = Math.min(count, limit ?? count)
  const wordSection = readAt(fd, wordsAt, wordBytes)
  if (!sha256(wordSection).equals(header.subarray(32, 64))) throw damaged('checksum of the word list')
  const words: string[] = new Array<string>(n)
  let start = 0
  for (let i = 0; i < n; i++) {
    const end = wordSection.indexOf(10, start)
    if (end < 0) throw damaged('short word list')
    words[i] = wordSection.toString('utf8', start, end)
    start = end + 1
  }

  // Shared memory: an embedder's worker threads read the same vectors (embed/recipes.ts), no copy.
  const vectors = new Float32Array(new SharedArrayBuffer(n * dim * 4))
  // Block by block (each read whole, to check it, up to the last row wanted): one block in memory.
  const block = Buffer.allocUnsafe(blockRows * rowBytes)
  for (let b = 0; b * blockRows < n; b++) {
    const first = b * blockRows
    const last = Math.min(count, first + blockRows)
    const bytes = block.subarray(0, (last - first) * rowBytes)
    readInto(fd, bytes, rowsAt + first * rowBytes)
    if (!sha256(bytes).equals(digests.subarray(b * DIGEST_BYTES, (b + 1) * DIGEST_BYTES))) throw damaged(`checksum of rows ${first}–${last - 1}`)
    for (let i = first; i < Math.min(n, last); i++) {
      const at = (i - first) * rowBytes
      const scale = block.readFloatLE(at)
      const offset = block.readFloatLE(at + 4)
      for (let j = 0; j < dim; j++) vectors[i * dim + j] = offset + (block[at + 8 + j] as number) * scale
    }
  }
  return { dimensions: dim, words, vectors }
}
