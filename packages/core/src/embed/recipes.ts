import type { Embedder } from './embedder.js'

/**
 * How another thread rebuilds one of Quarry's own embedders: a structured-cloneable value whose
 * large arrays live in shared memory (a worker holds no copy of the word vectors). The embedder
 * rebuilt from it runs the same code on the same data, so it gives the same bits for the same
 * texts. A user's embedder has no recipe: it runs where it was made.
 */
export type EmbedderRecipe =
  | {
      readonly kind: 'glove-sif'
      readonly name: string
      readonly dimensions: number
      /** GloVe words by row (frequency rank). */
      readonly words: readonly string[]
      /** Row-major word vectors, `words.length × dimensions`, in a SharedArrayBuffer. */
      readonly vectors: Float32Array
      /** SIF weight a / (a + p(w)) by row. */
      readonly weight: Float32Array
      /** The common component removed from every embedding. */
      readonly common: Float64Array
    }
  | { readonly kind: 'hashing'; readonly dimensions: number }

const recipes = new WeakMap<Embedder, EmbedderRecipe>()

/** Records how `embedder` is rebuilt on another thread; returns it. */
export function withRecipe<E extends Embedder>(embedder: E, recipe: EmbedderRecipe): E {
  recipes.set(embedder, recipe)
  return embedder
}

/**
 * The recipe of an embedder made by {@link createGloveEmbedder} or {@link createHashingEmbedder}
 * (undefined for any other): what a worker thread needs to embed as it does, bit for bit.
 */
export function embedderRecipe(embedder: Embedder): EmbedderRecipe | undefined {
  return recipes.get(embedder)
}
