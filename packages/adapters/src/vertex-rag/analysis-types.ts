import type { TextChunk, TokenizedText } from '@quarry/core'
import type { ChunkingPlan } from './chunking.js'
import type { FileBounds } from './file-bounds.js'
import type { RagFileTypeName } from './resources.js'

/**
 * The shapes a file's analysis takes (analysis.ts), apart from the code, so the bounded thread's
 * module (bounded-analysis.ts) and analysis.ts can both use them without importing each other.
 */

/** A file's text and chunks: what embedding needs, a function of its bytes, name and chunking alone. */
export type Analysis =
  | {
      readonly ok: true
      readonly text: string
      readonly type: RagFileTypeName
      readonly pageStarts: readonly number[] | undefined
      readonly pieces: readonly TextChunk[]
      /** The text's tokens, when chunked on this thread with `keepTokens` (never sent between threads): the index counts each chunk's terms from them. */
      readonly tokens?: TokenizedText
    }
  /** `bound`: over a bound of file-bounds.ts. */
  | { readonly ok: false; readonly message: string; readonly bound?: true }

/** What `analyzeFile` reads of a file. */
export interface AnalysisInput {
  /** Name whose extension says how to read the bytes. */
  readonly readAs: string
  /** How messages name the file (its URI or display name; never a local path). */
  readonly label: string
  readonly bytes: Uint8Array
  readonly chunking: ChunkingPlan
  readonly bounds: FileBounds
}

/** An {@link Analysis} as it crosses between threads: the chunks as offsets into the text. */
export type WireOfAnalysis = Exclude<Analysis, { ok: true }> | { readonly ok: true; readonly text: string; readonly type: RagFileTypeName; readonly pageStarts: readonly number[] | undefined; readonly pieces: Int32Array }
