import { invalidArgument } from '../rpc/status.js'
import type { RagFileChunkingInput, RagFileTransformationInput } from './schema.js'

/** Fixed-length chunking of RAG Engine, in tokens. */
export const CHUNK_SIZE_DEFAULT = 1024
export const CHUNK_OVERLAP_DEFAULT = 200

export interface ChunkingPlan {
  readonly size: number
  readonly overlap: number
}

/**
 * The chunking a request asks for: `ragFileTransformationConfig.ragFileChunkingConfig.fixedLengthChunking`,
 * else (v1beta1, deprecated) `ragFileChunkingConfig.fixedLengthChunking` or its `chunkSize` /
 * `chunkOverlap`. Unset (0) size is 1024; unset overlap is 200, or size − 1 for smaller chunks.
 */
export function chunkingOf(config: { ragFileTransformationConfig?: RagFileTransformationInput; ragFileChunkingConfig?: RagFileChunkingInput }, path: string): ChunkingPlan {
  const viaTransformation = config.ragFileTransformationConfig?.ragFileChunkingConfig
  const chunking = viaTransformation ?? config.ragFileChunkingConfig
  const at = viaTransformation ? `${path}.ragFileTransformationConfig.ragFileChunkingConfig` : `${path}.ragFileChunkingConfig`
  const fixed = chunking?.fixedLengthChunking
  const size = fixed?.chunkSize || chunking?.chunkSize || CHUNK_SIZE_DEFAULT
  const overlapGiven = fixed?.chunkOverlap || chunking?.chunkOverlap
  const field = fixed ? `${at}.fixedLengthChunking` : at
  if (size < 1) throw invalidArgument(`${field}.chunkSize`, `chunkSize is a number of tokens, at least 1; received ${size}.`)
  if (overlapGiven !== undefined && (overlapGiven < 0 || overlapGiven >= size)) {
    throw invalidArgument(`${field}.chunkOverlap`, `chunkOverlap must be at least 0 and smaller than chunkSize (${size}); received ${overlapGiven}.`)
  }
  return { size, overlap: overlapGiven ?? Math.min(CHUNK_OVERLAP_DEFAULT, size - 1) }
}
