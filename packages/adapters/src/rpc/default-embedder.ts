import { createGloveEmbedder, lazyEmbedder, type Embedder } from '@quarry/core'

/** What `createGloveEmbedder()` calls itself with its defaults (checked when it loads). */
const GLOVE_NAME = 'glove-6b-100d-sif(a=0.00002,vocabulary=100000)'
const GLOVE_DIMENSIONS = 100

/** One object per process, so GloVe loads once. Its recipe is GloVe's (the import worker embeds with it): lazyEmbedder checks the name and dimensions when GloVe loads. */
const DEFAULT_EMBEDDER: Embedder = lazyEmbedder(GLOVE_NAME, GLOVE_DIMENSIONS, () => createGloveEmbedder())

/**
 * The embedder of every engine and client that names none, as `quarry serve`'s: GloVe SIF
 * (`createGloveEmbedder()` of @quarry/core: 100-d, offline, similarity by meaning). It is one
 * object per process and loads the word vectors on its first `embed` (not when an engine is made),
 * once for every engine; that first call blocks while @quarry/glove's file is read (well under a
 * second: docs/embedders.md). Pass `createHashingEmbedder()` for an instant,
 * deterministic word-overlap embedder (tests).
 */
export function defaultEmbedder(): Embedder {
  return DEFAULT_EMBEDDER
}
