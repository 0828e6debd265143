import type { Embedder } from './embedder.js'
import { sifEmbedder } from './glove-sif.js'
import { createHashingEmbedder } from './hashing.js'
import type { EmbedderRecipe } from './recipes.js'

/** The embedder a recipe ({@link embedderRecipe}) describes, rebuilt on this thread: same texts, same bits. */
export function embedderFromRecipe(recipe: EmbedderRecipe): Embedder {
  return recipe.kind === 'glove-sif' ? sifEmbedder(recipe) : createHashingEmbedder({ dimensions: recipe.dimensions })
}
