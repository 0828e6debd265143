import { createGloveEmbedder, createHashingEmbedder, type Embedder, type QuarryIndex } from '@quarry/core'
import { CliError, usageError } from './fail.js'

/**
 * The embedders the command line builds: `glove` (the default: offline GloVe SIF, 100-d) and
 * `hashing` (instant, word overlap only; for tests and quick trials).
 */
export type EmbedderKind = 'glove' | 'hashing'

const HASHING_DIMENSIONS = 256

/** Reads an --embedder value. */
export function embedderKind(value: string | undefined, usage: string, fallback: EmbedderKind = 'glove'): EmbedderKind {
  if (value === undefined) return fallback
  if (value !== 'glove' && value !== 'hashing') throw usageError(`--embedder is glove or hashing; received ${value}`, usage)
  return value
}

/**
 * Builds an embedder. `glove` takes GloVe's settings when an index recorded others (an index built
 * before a default changed).
 */
export function createCliEmbedder(kind: EmbedderKind, glove: { a?: number; vocabulary?: number } = {}): Embedder {
  if (kind === 'hashing') return createHashingEmbedder({ dimensions: HASHING_DIMENSIONS })
  return createGloveEmbedder(glove)
}

/** GloVe's settings from the name it records, `glove-6b-100d-sif(a=0.001,vocabulary=100000)`. */
function gloveSettings(name: string): { a?: number; vocabulary?: number } {
  const match = /\(a=([0-9.e+-]+),vocabulary=(\d+)\)$/.exec(name)
  if (!match) return {}
  const a = Number(match[1])
  const vocabulary = Number(match[2])
  return Number.isFinite(a) && a > 0 && Number.isInteger(vocabulary) && vocabulary > 0 ? { a, vocabulary } : {}
}

/** Which kind built an index (by the name it recorded), if one of ours did. */
export function kindOfIndex(index: QuarryIndex): EmbedderKind | undefined {
  const name = index.options.embedder?.name
  if (name === undefined) return undefined
  if (name === `hashing-${HASHING_DIMENSIONS}`) return 'hashing'
  if (name.startsWith('glove-')) return 'glove'
  return undefined
}

/**
 * The embedder that built a saved index (built again: only the name is saved), or undefined for a
 * text-only index. An index built by another program's embedder cannot be queried by meaning here.
 */
export function embedderOfIndex(index: QuarryIndex, shownDir: string): Embedder | undefined {
  const recorded = index.options.embedder
  if (recorded === undefined) return undefined
  const kind = kindOfIndex(index)
  const embedder = kind === undefined ? undefined : createCliEmbedder(kind, kind === 'glove' ? gloveSettings(recorded.name) : {})
  if (!embedder || embedder.name !== recorded.name || embedder.dimensions !== recorded.dimensions) {
    throw new CliError(`the index in ${shownDir} was built with the embedder "${recorded.name}", which the quarry command cannot rebuild; search it with --alpha 0 (BM25 only) or from your own code`)
  }
  return embedder
}
