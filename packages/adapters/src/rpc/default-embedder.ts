import { createGloveEmbedder, lazyEmbedder, type Embedder } from '@quarry/core'

/** What `createGloveEmbedder()` calls itself with its defaults (checked when it loads). */
const GLOVE_NAME = 'glove-6b-100d-sif(a=0.00002,vocabulary=100000)'
const GLOVE_DIMENSIONS = 100

/** Loads GloVe: ~0.5 s from the binary cache, ~15 s the very first time (the cache is made). lazyEmbedder calls it once per process. */
function loadGlove(): Embedder {
  let told = false
  return createGloveEmbedder({
    onProgress: () => {
      if (told) return
      told = true
      console.error('quarry: converting the GloVe word vectors into a binary cache for the default embedder (first use on this machine only, about 15 s)')
    },
  })
}

/** One object per process, so GloVe loads once. Its recipe is GloVe's (the import worker embeds with it): lazyEmbedder checks the name and dimensions when GloVe loads. */
const DEFAULT_EMBEDDER: Embedder = lazyEmbedder(GLOVE_NAME, GLOVE_DIMENSIONS, loadGlove)

/**
 * The embedder of every engine and client that names none, as `quarry serve`'s: GloVe SIF
 * (`createGloveEmbedder()` of @quarry/core: 100-d, offline, similarity by meaning). It is one
 * object per process and loads the word vectors on its first `embed` (not when an engine is made),
 * once for every engine; that first call blocks for about half a second (about 15 s on a machine
 * without the binary cache, which it then writes). Pass `createHashingEmbedder()` for an instant,
 * deterministic word-overlap embedder (tests).
 */
export function defaultEmbedder(): Embedder {
  return DEFAULT_EMBEDDER
}
