import { omitUnset } from '../rpc/omit.js'
import type { ContextJson } from '../vertex-rag/resources.js'
import type { ModelSupport, PartJson } from './model.js'

/** google.cloud.aiplatform GroundingMetadata (content.proto) in proto3 JSON: the parts Quarry fills. */
export interface GroundingMetadataJson {
  readonly retrievalQueries?: readonly string[]
  readonly groundingChunks?: readonly { readonly retrievedContext: Readonly<Record<string, unknown>> }[]
  readonly groundingSupports?: readonly Readonly<Record<string, unknown>>[]
}

/** A retrieved context as a grounding chunk: its file's URI and display name, the chunk's text and the RagChunk. */
function chunkOf(context: ContextJson): { retrievedContext: Readonly<Record<string, unknown>> } {
  return { retrievedContext: omitUnset({ uri: context.sourceUri, title: context.sourceDisplayName, text: context.text, ragChunk: context.chunk }) }
}

/** The model's bug, not the caller's: reported as INTERNAL. */
function badSupport(i: number, what: string): Error {
  return new Error(`the generative model's supports[${i}] ${what}`)
}

/** A support checked against the parts and the chunks, its segment's text taken from the part (offsets are UTF-8 bytes, as Google's). */
function supportOf(support: ModelSupport, i: number, parts: readonly PartJson[], chunks: number): Readonly<Record<string, unknown>> {
  const { partIndex = 0, startIndex, endIndex, groundingChunkIndices, confidenceScores } = support
  const text = parts[partIndex]?.['text']
  if (!Number.isInteger(partIndex) || typeof text !== 'string') throw badSupport(i, `names part ${partIndex}, which is not a text part`)
  const bytes = Buffer.from(text, 'utf8')
  if (!Number.isInteger(startIndex) || !Number.isInteger(endIndex) || startIndex < 0 || endIndex > bytes.length || startIndex > endIndex) {
    throw badSupport(i, `[${startIndex}, ${endIndex}) is not a byte span of the ${bytes.length}-byte part ${partIndex}`)
  }
  if (!groundingChunkIndices.every((c) => Number.isInteger(c) && c >= 0 && c < chunks)) throw badSupport(i, `groundingChunkIndices must index the ${chunks} retrieved contexts`)
  if (confidenceScores !== undefined && (confidenceScores.length !== groundingChunkIndices.length || !confidenceScores.every((c) => c >= 0 && c <= 1))) {
    throw badSupport(i, 'confidenceScores must pair with groundingChunkIndices, each in [0, 1]')
  }
  const segment = omitUnset({ partIndex, startIndex, endIndex, text: bytes.subarray(startIndex, endIndex).toString('utf8') })
  return omitUnset({ segment, groundingChunkIndices: [...groundingChunkIndices], confidenceScores: [...(confidenceScores ?? [])] }, ['segment'])
}

/** The candidate's groundingMetadata: the query retrieved for, every context as a chunk (best first), the model's supports. */
export function groundingMetadata(query: string, contexts: readonly ContextJson[], parts: readonly PartJson[], supports: readonly ModelSupport[]): GroundingMetadataJson {
  return omitUnset({ retrievalQueries: [query], groundingChunks: contexts.map(chunkOf), groundingSupports: supports.map((s, i) => supportOf(s, i, parts, contexts.length)) })
}
