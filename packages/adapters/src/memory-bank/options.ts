import { QuarryError, rejectUnknownOptions, type Embedder } from '@quarry/core'
import { systemClock, type Clock } from '../rpc/clock.js'
import { defaultEmbedder } from '../rpc/default-embedder.js'
import { cryptoRandomId, type RandomId } from '../rpc/names.js'
import { replayableClock, replayableRandomId } from '../rpc/replay.js'
import type { FactExtractor } from './extractor.js'
import { localExtractor } from './local-extractor.js'

export type { ExtractEvent, ExtractRequest, FactExtractor } from './extractor.js'

export interface MemoryBankOptions {
  /**
   * Embeds facts and search queries. @defaultValue `defaultEmbedder()`: GloVe SIF, as `quarry serve`
   * (loaded on first use, once per process); `createHashingEmbedder()` for instant word overlap
   */
  embedder?: Embedder
  /**
   * Reasoning engines must be created with `createReasoningEngine` first; unknown ones are
   * NOT_FOUND. Otherwise an engine comes into being on first use. @defaultValue false
   */
  explicitEngines?: boolean
  /**
   * generateMemories consolidates a new fact into an existing memory of the same scope when their
   * normalized texts are equal or their embeddings' cosine similarity is at least this.
   * @defaultValue 0.9
   */
  consolidationSimilarity?: number
  /**
   * Turns the conversation of a generateMemories vertexSessionSource / directContentsSource into
   * facts. @defaultValue `localExtractor`: the user's own first-person statements, word for word
   * (local-extractor.ts); a deterministic local stand-in, not a language model
   */
  extractor?: FactExtractor
  /**
   * How each engine's memories are searched: `'hnsw'` (the graph; needs the native module) or
   * `'exact'` (brute force, the same answers; works where @quarry/hnsw did not build). @defaultValue 'hnsw'
   */
  dense?: 'hnsw' | 'exact'
  clock?: Clock
  randomId?: RandomId
  onInternalError?: (error: unknown) => void
}

/** Every option of the engine: a client given any of them makes a private engine (else it shares the default one). */
export const MEMORY_BANK_OPTION_KEYS: Readonly<Record<keyof MemoryBankOptions, true>> = {
  embedder: true,
  explicitEngines: true,
  consolidationSimilarity: true,
  extractor: true,
  dense: true,
  clock: true,
  randomId: true,
  onInternalError: true,
}

export interface ResolvedMemoryBankOptions {
  readonly embedder: Embedder
  readonly explicitEngines: boolean
  readonly consolidationSimilarity: number
  readonly extractor: FactExtractor
  readonly dense: 'hnsw' | 'exact'
  readonly clock: Clock
  readonly randomId: RandomId
  readonly onInternalError: (error: unknown) => void
}

export function resolveMemoryBankOptions(options: MemoryBankOptions): ResolvedMemoryBankOptions {
  rejectUnknownOptions(options as Record<string, unknown>, Object.keys(MEMORY_BANK_OPTION_KEYS), '')
  const similarity = options.consolidationSimilarity ?? 0.9
  if (!(similarity > -1 && similarity <= 1)) {
    throw new QuarryError('INVALID_OPTION', `consolidationSimilarity is a cosine similarity in (-1, 1]; received ${String(similarity)}.`, { path: 'consolidationSimilarity' })
  }
  if (options.dense !== undefined && options.dense !== 'hnsw' && options.dense !== 'exact') {
    throw new QuarryError('INVALID_OPTION', `dense must be 'hnsw' or 'exact'; received ${String(options.dense)}.`, { path: 'dense' })
  }
  return {
    embedder: options.embedder ?? defaultEmbedder(),
    dense: options.dense ?? 'hnsw',
    explicitEngines: options.explicitEngines ?? false,
    consolidationSimilarity: similarity,
    extractor: options.extractor ?? localExtractor,
    // Read through the write-ahead log's replay (rpc/replay.ts): a replayed write sees the same times and ids.
    clock: replayableClock(options.clock ?? systemClock),
    randomId: replayableRandomId(options.randomId ?? cryptoRandomId),
    onInternalError: options.onInternalError ?? ((error) => console.error('quarry: internal error', error)),
  }
}
