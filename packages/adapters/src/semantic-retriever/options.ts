import { QuarryError, rejectUnknownOptions, type Embedder, type HnswOptions, type PlannerOptions } from '@quarry/core'
import { systemClock, type Clock } from '../rpc/clock.js'
import { defaultEmbedder } from '../rpc/default-embedder.js'
import { cryptoRandomId, type RandomId } from '../rpc/names.js'
import { DOCUMENTED } from './schema.js'
import { replayableClock, replayableRandomId } from '../rpc/replay.js'

/**
 * The documented limits of the Semantic Retriever; each can be changed (e.g. lowered in tests).
 * customMetadata, batchSize and displayName are also limits of the request schemas (schema.ts),
 * which refuse more than Google documents: they can be lowered, not raised.
 */
export interface RetrieverLimits {
  /** Corpora one engine (a project) holds. @defaultValue 5 */
  readonly corpora: number
  /** Documents per corpus. @defaultValue 10000 */
  readonly documentsPerCorpus: number
  /** Chunks per corpus. @defaultValue 1000000 */
  readonly chunksPerCorpus: number
  /** customMetadata entries per document and per chunk. @defaultValue 20 */
  readonly customMetadata: number
  /** Tokens in one chunk's text (word tokens of Quarry's analyzer, see docs/semantic-retriever.md). @defaultValue 2043 */
  readonly tokensPerChunk: number
  /** Requests in one chunks:batchCreate / batchUpdate / batchDelete. @defaultValue 100 */
  readonly batchSize: number
  /** Characters of a displayName. @defaultValue 512 */
  readonly displayName: number
}

export const RETRIEVER_LIMITS: RetrieverLimits = {
  corpora: 5,
  documentsPerCorpus: 10_000,
  chunksPerCorpus: 1_000_000,
  customMetadata: DOCUMENTED.chunkCustomMetadata.max,
  tokensPerChunk: 2043,
  batchSize: DOCUMENTED.batchCreate.max,
  displayName: DOCUMENTED.corpusDisplayName.max,
}

/** Limits the request schemas also hold: an option above them would never be reached. */
const SCHEMA_BOUND: Partial<Record<keyof RetrieverLimits, number>> = {
  customMetadata: RETRIEVER_LIMITS.customMetadata,
  batchSize: RETRIEVER_LIMITS.batchSize,
  displayName: RETRIEVER_LIMITS.displayName,
}

export interface SemanticRetrieverOptions {
  /**
   * Embeds chunk text and queries. @defaultValue `defaultEmbedder()`: GloVe SIF, as `quarry serve`
   * (similarity by meaning, offline; loaded on first use, once per process). Pass
   * `createHashingEmbedder()` for an instant, deterministic word-overlap one, or your own model.
   */
  embedder?: Embedder
  /** Dense index of every corpus: 'hnsw' (exact below planner.exactBelow chunks) or always 'exact'. @defaultValue 'hnsw' */
  dense?: 'hnsw' | 'exact'
  hnsw?: Partial<HnswOptions>
  planner?: Partial<PlannerOptions>
  limits?: Partial<RetrieverLimits>
  /** Source of createTime / updateTime. @defaultValue the system clock */
  clock?: Clock
  /** Source of generated ids. @defaultValue crypto-random */
  randomId?: RandomId
  /** Told about unexpected errors (answered as INTERNAL without details). @defaultValue console.error */
  onInternalError?: (error: unknown) => void
}

/** Every option of the engine: a client given any of them makes a private engine (else it shares the default one). */
export const RETRIEVER_OPTION_KEYS: Readonly<Record<keyof SemanticRetrieverOptions, true>> = {
  embedder: true,
  dense: true,
  hnsw: true,
  planner: true,
  limits: true,
  clock: true,
  randomId: true,
  onInternalError: true,
}

export interface ResolvedRetrieverOptions {
  readonly embedder: Embedder
  readonly dense: 'hnsw' | 'exact'
  readonly hnsw: Partial<HnswOptions> | undefined
  readonly planner: Partial<PlannerOptions> | undefined
  readonly limits: RetrieverLimits
  readonly clock: Clock
  readonly randomId: RandomId
  readonly onInternalError: (error: unknown) => void
}

export function resolveRetrieverOptions(options: SemanticRetrieverOptions): ResolvedRetrieverOptions {
  rejectUnknownOptions(options as Record<string, unknown>, Object.keys(RETRIEVER_OPTION_KEYS), '')
  const limits = { ...RETRIEVER_LIMITS, ...options.limits }
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new QuarryError('INVALID_OPTION', `limits.${key} must be a positive integer; received ${String(value)}.`, { path: `limits.${key}` })
    }
    const bound = SCHEMA_BOUND[key as keyof RetrieverLimits]
    if (bound !== undefined && value > bound) {
      throw new QuarryError('INVALID_OPTION', `limits.${key} can lower Google's documented limit of ${bound}, not raise it; received ${value}.`, { path: `limits.${key}` })
    }
  }
  if (options.dense !== undefined && options.dense !== 'hnsw' && options.dense !== 'exact') {
    throw new QuarryError('INVALID_OPTION', `dense must be 'hnsw' or 'exact'; received ${String(options.dense)}.`, { path: 'dense' })
  }
  return {
    embedder: options.embedder ?? defaultEmbedder(),
    dense: options.dense ?? 'hnsw',
    hnsw: options.hnsw,
    planner: options.planner,
    limits,
    // Read through the write-ahead log's replay (rpc/replay.ts): a replayed write sees the same times and ids.
    clock: replayableClock(options.clock ?? systemClock),
    randomId: replayableRandomId(options.randomId ?? cryptoRandomId),
    onInternalError: options.onInternalError ?? ((error) => console.error('quarry: internal error', error)),
  }
}
