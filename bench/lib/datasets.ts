import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createIndex, defaultCacheDir, loadGloveVectors, type Metric } from '@quarry/core'
import { gaussian, prng } from '../../test/support/random.js'

/** A benchmark dataset: base vectors and held-out queries, row-major Float32Arrays. */
export interface Dataset {
  readonly name: string
  readonly metric: Metric
  readonly dim: number
  readonly n: number
  readonly base: Float32Array
  readonly nq: number
  readonly queries: Float32Array
}

export function row(data: Float32Array, dim: number, i: number): Float32Array {
  return data.subarray(i * dim, (i + 1) * dim)
}

/** Seeded gaussian clusters (the usual synthetic ANN workload). */
export function clusteredDataset(n: number, nq: number, dim = 128, clusters = 100, seed = 42): Dataset {
  const rand = prng(seed)
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: dim }, () => gaussian(rand)))
  const all = new Float32Array((n + nq) * dim)
  for (let i = 0; i < n + nq; i++) {
    const c = centres[Math.floor(rand() * clusters)] as Float32Array
    for (let j = 0; j < dim; j++) all[i * dim + j] = (c[j] as number) + 0.35 * gaussian(rand)
  }
  return { name: `clustered-${dim}d-${n / 1000}k`, metric: 'l2', dim, n, base: all.subarray(0, n * dim), nq, queries: all.subarray(n * dim) }
}

/**
 * GloVe 6B 100-d from @quarry/glove (cosine; 8-bit components, dequantized). With `n` below the
 * vocabulary size the base is the n most frequent words and queries are drawn from the rest; at full size, `nq`
 * random words are held out as queries.
 */
export function gloveDataset(n: number | 'full', nq: number, seed = 7): Dataset {
  const glove = loadGloveVectors()
  const dim = glove.dimensions
  const total = glove.words.length
  const rand = prng(seed)
  const held = new Set<number>()
  const size = n === 'full' ? total - nq : n
  const lo = n === 'full' ? 0 : n
  while (held.size < nq) held.add(lo + Math.floor(rand() * (total - lo)))
  const base = new Float32Array(size * dim)
  const queries = new Float32Array(nq * dim)
  let b = 0
  for (let i = 0; i < total && b < size; i++) if (!held.has(i)) base.set(row(glove.vectors, dim, i), b++ * dim)
  ;[...held].forEach((i, q) => queries.set(row(glove.vectors, dim, i), q * dim))
  // Zero vectors (none in GloVe, but guard) have no cosine direction.
  return { name: n === 'full' ? `glove-100d-full` : `glove-100d-${n / 1000}k`, metric: 'cosine', dim, n: size, base, nq, queries }
}

/**
 * Exact top-k ids per query (filtered when `keep` is given), from Quarry's exact path, which the
 * test suite checks against a plainly written brute force. Cached on disk by dataset and filter.
 */
export function groundTruth(ds: Dataset, k: number, filterName = 'all', keep?: (i: number) => boolean): number[][] {
  const dir = join(defaultCacheDir(), 'bench')
  const file = join(dir, `gt-${ds.name}-${ds.nq}-${k}-${filterName}.json`)
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as number[][]
  const index = createIndex({ dimensions: ds.dim, metric: ds.metric, dense: 'exact' })
  for (let i = 0; i < ds.n; i++) index.add({ id: String(i), vector: row(ds.base, ds.dim, i), metadata: {} })
  const truth: number[][] = []
  for (let q = 0; q < ds.nq; q++) {
    const filter = keep ? (_m: unknown, id: string) => keep(Number(id)) : undefined
    const { hits } = index.search(filter ? { vector: row(ds.queries, ds.dim, q), topK: k, filter } : { vector: row(ds.queries, ds.dim, q), topK: k })
    truth.push(hits.map((h) => Number(h.id)))
  }
  mkdirSync(dir, { recursive: true })
  writeFileSync(file, JSON.stringify(truth))
  return truth
}
