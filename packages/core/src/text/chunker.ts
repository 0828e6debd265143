import { QuarryError, describe, rejectUnknownOptions } from '../errors.js'
import type { Analyzer, TokenizedText } from './analyzer.js'

/** A piece of a text: its characters and where they sit in the source. */
export interface TextChunk {
  readonly text: string
  /** Character offsets in the source: text === source.slice(start, end). */
  readonly start: number
  readonly end: number
  /** Index of the chunk's first token among the source's tokens, and the token count. */
  readonly firstToken: number
  readonly tokens: number
}

/**
 * Splits text into chunks of `size` tokens where consecutive chunks share `overlap` tokens
 * (fixed-length chunking). Tokens are the analyzer's kept tokens, stop words included;
 * whitespace and punctuation between tokens stay inside a chunk.
 */
export function chunkText(analyzer: Analyzer, source: string, options: { size: number; overlap: number }): TextChunk[] {
  // Unchecked, an analyzer of another shape threw a TypeError and a text that is no string gave no chunks.
  if (typeof analyzer !== 'object' || analyzer === null || typeof (analyzer as Partial<Analyzer>).tokenOffsets !== 'function') {
    throw new QuarryError('INVALID_OPTION', `chunkText takes an Analyzer first (new Analyzer(), with the options of the index the chunks go to); received ${describe(analyzer)}.`, { path: 'analyzer' })
  }
  if (typeof source !== 'string') throw new QuarryError('INVALID_OPTION', `chunkText takes the text to chunk as a string; received ${describe(source)}.`, { path: 'text' })
  checkChunking(options)
  return chunksOf(source, analyzer.tokenOffsets(source), options)
}

/**
 * {@link chunkText} of a text tokenized already (`Analyzer.tokenized`): the same chunks. An index
 * with the same analyzer options can then count each chunk's terms from the tokens
 * (`QuarryIndex.prepareText`'s `within`) instead of reading its words again.
 */
export function chunkTokenized(tokenized: TokenizedText, options: { size: number; overlap: number }): TextChunk[] {
  const given = tokenized as Partial<TokenizedText> | null
  if (typeof given !== 'object' || given === null || typeof given.source !== 'string' || !(given.offsets instanceof Int32Array)) {
    throw new QuarryError('INVALID_OPTION', `chunkTokenized takes what Analyzer.tokenized(text) returns; received ${describe(tokenized)}.`, { path: 'tokenized' })
  }
  checkChunking(options)
  return chunksOf(tokenized.source, tokenized.offsets, options)
}

function checkChunking(options: { size: number; overlap: number }): void {
  if (typeof options !== 'object' || options === null) throw new QuarryError('INVALID_OPTION', `chunking needs options { size, overlap }: tokens per chunk, and tokens each chunk shares with the one before; received ${describe(options)}.`, { path: 'options' })
  rejectUnknownOptions(options, ['size', 'overlap'], '')
  const { size, overlap } = options
  if (!Number.isInteger(size) || size < 1) throw new QuarryError('INVALID_OPTION', `chunk size must be a positive integer; received ${describe(size)}.`, { path: 'size' })
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= size) {
    throw new QuarryError('INVALID_OPTION', `chunk overlap must be an integer from 0 to size - 1 (${size - 1}); received ${describe(overlap)}.`, { path: 'overlap' })
  }
}

/** The chunks of `source` whose token i spans offsets[2i] .. offsets[2i + 1]. */
function chunksOf(source: string, offsets: Int32Array, { size, overlap }: { size: number; overlap: number }): TextChunk[] {
  const count = offsets.length / 2
  const chunks: TextChunk[] = []
  for (let first = 0; first < count; first += size - overlap) {
    const last = Math.min(count, first + size) - 1
    const start = offsets[2 * first] as number
    const end = offsets[2 * last + 1] as number
    chunks.push({ text: source.slice(start, end), start, end, firstToken: first, tokens: last - first + 1 })
    if (last === count - 1) break
  }
  return chunks
}
