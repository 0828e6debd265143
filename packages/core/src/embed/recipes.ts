import { QuarryError } from '../errors.js'
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

/** Recipes by embedder: given, or the recipe of the embedder a {@link lazyEmbedder} loads. */
const recipes = new WeakMap<Embedder, EmbedderRecipe | (() => EmbedderRecipe | undefined)>()

/** Records how `embedder` is rebuilt on another thread; returns it. */
export function withRecipe<E extends Embedder>(embedder: E, recipe: EmbedderRecipe): E {
  recipes.set(embedder, recipe)
  return embedder
}

/**
 * The recipe of an embedder made by {@link createGloveEmbedder} or {@link createHashingEmbedder},
 * or of a {@link lazyEmbedder} of one (loading it), undefined for any other: what a worker thread
 * needs to embed as it does, bit for bit.
 */
export function embedderRecipe(embedder: Embedder): EmbedderRecipe | undefined {
  const recipe = recipes.get(embedder)
  return typeof recipe === 'function' ? recipe() : recipe
}

/**
 * An embedder that makes its model on first use: `load` runs once, on the first `embed` (or
 * {@link embedderRecipe}), not now, so an engine given it starts at once. Its name and dimensions
 * are known ahead; the loaded embedder must have them (INVALID_OPTION otherwise). Its recipe is the
 * loaded embedder's. The adapters' default embedder is GloVe made this way.
 */
export function lazyEmbedder(name: string, dimensions: number, load: () => Embedder): Embedder {
  let loaded: Embedder | undefined
  const model = (): Embedder => {
    if (loaded) return loaded
    const made = load()
    if (made.name !== name || made.dimensions !== dimensions) {
      throw new QuarryError('INVALID_OPTION', `the lazy embedder "${name}" (${dimensions}-d) loaded "${made.name}" (${made.dimensions}-d); give lazyEmbedder the name and dimensions of the embedder it loads.`)
    }
    return (loaded = made)
  }
  const embedder: Embedder = { name, dimensions, embed: async (texts) => model().embed(texts) }
  recipes.set(embedder, () => embedderRecipe(model()))
  return embedder
}
