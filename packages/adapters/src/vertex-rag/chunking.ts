import { invalidArgument } from '../rpc/status.js'
import type { RagFileChunkingInput, RagFileTransformationInput } from './schema.js'

/** Fixed-length chunking of RAG Engine, in tokens: the size when a request gives none (or 0). */
export const CHUNK_SIZE_DEFAULT = 1024
/** The overlap when a request gives neither a size nor an overlap; a size given alone means no overlap (docs/vertex-rag.md). */
export const CHUNK_OVERLAP_DEFAULT = 200

export interface ChunkingPlan {
  readonly size: number
  readonly overlap: number
}

/**
 * The chunking a request asks for: `ragFileTransformationConfig.ragFileChunkingConfig.fixedLengthChunking`,
 * else (v1beta1, deprecated) `ragFileChunkingConfig.fixedLengthChunking` or its `chunkSize` /
 * `chunkOverlap`. Both are int32 without presence, so 0 and unset are one value on the wire:
 * - no size (0 or unset): 1024, and no overlap either: the documented default overlap, 200;
 * - a size given: the overlap given, 0 when none: an overlap of 0 arrives as none (Google's Python
 *   SDK sends its default 200 itself, so a request without one asks for none).
 * The overlap is below the size (else INVALID_ARGUMENT): a chunk always starts past the last one's start.
 */
export function chunkingOf(config: { ragFileTransformationConfig?: RagFileTransformationInput; ragFileChunkingConfig?: RagFileChunkingInput }, path: string): ChunkingPlan {
  const viaTransformation = config.ragFileTransformationConfig?.ragFileChunkingConfig
  const chunking = viaTransformation ?? config.ragFileChunkingConfig
  const at = viaTransformation ? `${path}.ragFileTransformationConfig.ragFileChunkingConfig` : `${path}.ragFileChunkingConfig`
  const fixed = chunking?.fixedLengthChunking
  const sizeGiven = given(fixed?.chunkSize) ?? given(chunking?.chunkSize)
  const overlapGiven = given(fixed?.chunkOverlap) ?? given(chunking?.chunkOverlap)
  const size = sizeGiven ?? CHUNK_SIZE_DEFAULT
  const field = fixed ? `${at}.fixedLengthChunking` : at
  if (size < 1) throw invalidArgument(`${field}.chunkSize`, `chunkSize is a number of tokens, at least 1 (0 or unset: ${CHUNK_SIZE_DEFAULT}); received ${size}.`)
  const overlap = overlapGiven ?? (sizeGiven === undefined ? CHUNK_OVERLAP_DEFAULT : 0)
  if (overlap < 0 || overlap >= size) {
    throw invalidArgument(`${field}.chunkOverlap`, `chunkOverlap must be at least 0 and smaller than chunkSize (${size}); received ${overlap}.`)
  }
  return { size, overlap }
}

/** A field without presence as given: 0 is unset (readMessage drops it; a caller in process may not have read it so). */
function given(value: number | undefined): number | undefined {
  return value === 0 ? undefined : value
}
