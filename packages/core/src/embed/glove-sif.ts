import { checkOptionsObject, describe, QuarryError } from '../errors.js'
import { Analyzer } from '../text/analyzer.js'
import { checkTexts, type Embedder } from './embedder.js'
import { loadGloveVectors, type WordVectors } from './glove-vectors.js'
import { withRecipe, type EmbedderRecipe } from './recipes.js'
import { hashedDirection } from './hashed-direction.js'

/** Options of the offline GloVe embedder (the adapters' and the `quarry` command's default). */
export interface GloveEmbedderOptions {
  /** Keep the `vocabulary` most frequent GloVe words (more = more memory, fewer unknown words). @defaultValue 100000 */
  vocabulary?: number
  /**
   * SIF smoothing a in a / (a + p(w)): smaller down-weights frequent words more; a word's weight
   * halves where p(w) = a, at rank 1 / (a · H_V) ≈ 3,750 for the default (≈ 75 for the paper's 1e-3).
   * Pass 1e-3 to rebuild an embedder named `a=0.001` (saved before the default changed). @defaultValue 2e-5
   */
  a?: number
}

/** Size of GloVe 6B's vocabulary; word ranks give p(w) by Zipf's law over it. */
const GLOVE_WORDS = 341_479

/**
 * The offline embedder by meaning (the default of the adapters and the `quarry` command;
 * `createIndex` has none): GloVe 6B 100-d word vectors (the package `@quarry/glove`, 8-bit, read
 * when the embedder is created; NATIVE_UNAVAILABLE when it is not installed) combined by smooth
 * inverse frequency with the common component removed (Arora, Liang and Ma, "A Simple but Tough-to-Beat Baseline for
 * Sentence Embeddings", ICLR 2017), over the wink-nlp tokens the text index uses (lowercased, not
 * stemmed: GloVe holds surface forms).
 * - p(w): GloVe lists words by corpus frequency, so p is Zipf's 1 / (rank · H_V).
 * - a = 2e-5, below the paper's 1e-4 … 1e-3 (where it found sentence similarity best): a weight
 *   halves at rank ≈ 3,750, so the general vocabulary ("results", "problem", "study": ranks
 *   575 … 754) is discounted roughly by inverse frequency, as IDF does in retrieval, while rarer
 *   topical words keep nearly full weight. Chosen on Cranfield (nDCG@10: dense 0.202 → 0.230,
 *   hybrid at alpha 0.5 0.375 → 0.381, BM25 0.374); on CISI, held out, hybrid is unchanged
 *   (0.410 → 0.411; dense 0.258 → 0.251). `pnpm bench embed-quality` measures it.
 * - The common component is the first principal direction of the SIF-weighted vectors of the
 *   20,000 most frequent words, computed once: documents and queries share it with no fitting.
 * Offline, deterministic, no API key.
 */
export function createGloveEmbedder(options: GloveEmbedderOptions = {}): Embedder {
  checkOptionsObject(options, ['vocabulary', 'a'], 'vocabulary: 100000')
  const vocabulary = options.vocabulary ?? 100_000
  const a = options.a ?? 2e-5
  // Above GloVe's 341,479 words every word is kept (names an index recorded with such a count still rebuild).
  if (!(Number.isInteger(vocabulary) && vocabulary >= 1)) {
    throw new QuarryError('INVALID_OPTION', `vocabulary must be a positive integer (how many of GloVe's most frequent words to keep; it has ${GLOVE_WORDS}), received ${describe(vocabulary)}.`, { path: 'vocabulary' })
  }
  // a / (a + p(w)) weighs each word: a must be a positive number (0 or NaN made every vector NaN).
  if (typeof a !== 'number' || !Number.isFinite(a) || a <= 0) {
    throw new QuarryError('INVALID_OPTION', `a must be a number above 0 (SIF smoothing: 2e-5 by default, 1e-3 for embedders saved before it changed), received ${describe(a)}.`, { path: 'a' })
  }
  return gloveSifEmbedder(loadGloveVectors({ limit: vocabulary }), { a, vocabulary })
}

/**
 * The SIF embedder over given word vectors (rows in frequency order): {@link createGloveEmbedder}
 * over @quarry/glove's. Not exported from the package: the benchmarks pass the float32 vectors
 * the 8-bit file was made from, to measure what quantizing costs.
 */
export function gloveSifEmbedder(glove: WordVectors, settings: { a: number; vocabulary: number }): Embedder {
  const { a, vocabulary } = settings
  const dim = glove.dimensions
  let harmonic = 0
  for (let r = 1; r <= GLOVE_WORDS; r++) harmonic += 1 / r
  const weight = new Float32Array(glove.words.length)
  for (let i = 0; i < glove.words.length; i++) weight[i] = a / (a + 1 / ((i + 1) * harmonic))
  const common = commonComponent(glove.vectors, weight, dim, Math.min(20_000, glove.words.length))
  return sifEmbedder({ kind: 'glove-sif', name: `glove-6b-100d-sif(a=${a},vocabulary=${vocabulary})`, dimensions: dim, words: glove.words, vectors: glove.vectors, weight, common })
}

/** The SIF embedder of a recipe: what {@link createGloveEmbedder} returns, and what a worker rebuilds from its recipe. */
export function sifEmbedder(recipe: Extract<EmbedderRecipe, { kind: 'glove-sif' }>): Embedder {
  const { dimensions: dim, vectors, weight, common: u } = recipe
  const rowOf = new Map<string, number>()
  recipe.words.forEach((w, i) => rowOf.set(w, i))
  // cjkBigrams false: GloVe's vocabulary has no character pairs, and vectors saved under this name must stay what a query makes.
  const analyzer = new Analyzer({ stem: false, stopWords: false, foldAccents: false, cjkBigrams: false })
  return withRecipe({
    name: recipe.name,
    dimensions: dim,
    embed: async (texts) => {
      checkTexts(texts, 'embed')
      return texts.map((text) => {
        const v = new Float64Array(dim)
        let n = 0
        const terms = analyzer.terms(text)
        for (const term of terms) {
          const row = rowOf.get(term)
          if (row === undefined) continue
          const w = weight[row] as number
          const base = row * dim
          for (let j = 0; j < dim; j++) v[j] = (v[j] as number) + w * (vectors[base + j] as number)
          n++
        }
        // No known word (a part number, another language, only punctuation): a direction of its
        // own from its words, so that it matches texts with the same words, not every such text.
        if (n === 0) return hashedDirection(terms, text, dim)
        const out = new Float32Array(dim)
        let dot = 0
        for (let j = 0; j < dim; j++) dot += ((v[j] as number) / n) * (u[j] as number)
        for (let j = 0; j < dim; j++) out[j] = (v[j] as number) / n - dot * (u[j] as number)
        return out
      })
    },
  }, recipe)
}

/** First principal direction (uncentered, as in the paper) by power iteration on XᵀX. */
function commonComponent(vectors: Float32Array, weight: Float32Array, dim: number, rows: number): Float64Array {
  const c = new Float64Array(dim * dim)
  // The row read once into float64 and (w·xᵢ)·w hoisted: the same products, in the same order, as
  // w·xᵢ·w·xⱼ written out, so the direction found is unchanged; this loop is most of a first use.
  const row = new Float64Array(dim)
  for (let r = 0; r < rows; r++) {
    const w = weight[r] as number
    for (let i = 0; i < dim; i++) row[i] = vectors[r * dim + i] as number
    for (let i = 0; i < dim; i++) {
      const t = w * (row[i] as number) * w
      const base = i * dim
      for (let j = i; j < dim; j++) c[base + j] = (c[base + j] as number) + t * (row[j] as number)
    }
  }
  for (let i = 0; i < dim; i++) for (let j = 0; j < i; j++) c[i * dim + j] = c[j * dim + i] as number
  let u = new Float64Array(dim).fill(1 / Math.sqrt(dim))
  for (let iter = 0; iter < 100; iter++) {
    const next = new Float64Array(dim)
    for (let i = 0; i < dim; i++) {
      let s = 0
      for (let j = 0; j < dim; j++) s += (c[i * dim + j] as number) * (u[j] as number)
      next[i] = s
    }
    const norm = Math.sqrt(next.reduce((s, x) => s + x * x, 0))
    for (let i = 0; i < dim; i++) next[i] = (next[i] as number) / norm
    u = next
  }
  return u
}
