import { QuarryError, createHashingEmbedder, type Embedder } from '@quarry/core'
import { systemClock, type Clock } from '../rpc/clock.js'
import { cryptoRandomId, type RandomId } from '../rpc/names.js'
import { DISTANCE_METRICS, type DistanceMetric } from './metric.js'
import type { ContextJson } from './resources.js'

/** What a reranker gets: the query, the ranking config of the request, and the contexts best first. */
export interface RerankRequest {
  readonly query: string
  /** `rankService.modelName` or `llmRanker.modelName` of the request. */
  readonly model: string | undefined
  readonly kind: 'rankService' | 'llmRanker'
  readonly contexts: readonly ContextJson[]
}

/** Serves `ragRetrievalConfig.ranking`: returns the contexts reordered (and possibly fewer). */
export type Reranker = (request: RerankRequest) => Promise<readonly ContextJson[]>

export interface VertexRagOptions {
  /** Embeds chunks and queries. @defaultValue a 256-dimensional hashing embedder */
  embedder?: Embedder
  /**
   * The distance metric of every corpus. The RagCorpus message of the Node clients (aiplatform
   * 6.11) has no metric field, so it is set here. @defaultValue 'COSINE_DISTANCE'
   */
  distanceMetric?: DistanceMetric
  /**
   * Local folder standing in for Cloud Storage: `gs://bucket/path` is read from
   * `<gcsRoot>/bucket/path`. Without it, gs:// imports are refused. `file://` URIs always work.
   */
  gcsRoot?: string
  /** Serves `ranking` (rankService / llmRanker); without it ranking keeps the retrieval order. */
  reranker?: Reranker
  /** Files per import request, at most. @defaultValue 10000 */
  maxImportFiles?: number
  /** Bytes of one file, at most (larger files fail the import, the others go on). @defaultValue 50 MiB */
  maxFileBytes?: number
  clock?: Clock
  randomId?: RandomId
  onInternalError?: (error: unknown) => void
}

export interface ResolvedVertexRagOptions {
  readonly embedder: Embedder
  readonly distanceMetric: DistanceMetric
  readonly gcsRoot: string | undefined
  readonly reranker: Reranker | undefined
  readonly maxImportFiles: number
  readonly maxFileBytes: number
  readonly clock: Clock
  readonly randomId: RandomId
  readonly onInternalError: (error: unknown) => void
}

export function resolveVertexRagOptions(options: VertexRagOptions): ResolvedVertexRagOptions {
  const metric = options.distanceMetric ?? 'COSINE_DISTANCE'
  if (!DISTANCE_METRICS.includes(metric)) {
    throw new QuarryError('INVALID_OPTION', `distanceMetric must be one of ${DISTANCE_METRICS.join(', ')}; received ${String(metric)}.`, { path: 'distanceMetric' })
  }
  for (const key of ['maxImportFiles', 'maxFileBytes'] as const) {
    const v = options[key]
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) throw new QuarryError('INVALID_OPTION', `${key} must be a positive integer; received ${String(v)}.`, { path: key })
  }
  return {
    embedder: options.embedder ?? createHashingEmbedder({ dimensions: 256 }),
    distanceMetric: metric,
    gcsRoot: options.gcsRoot,
    reranker: options.reranker,
    maxImportFiles: options.maxImportFiles ?? 10_000,
    maxFileBytes: options.maxFileBytes ?? 50 * 1024 * 1024,
    clock: options.clock ?? systemClock,
    randomId: options.randomId ?? cryptoRandomId,
    onInternalError: options.onInternalError ?? ((error) => console.error('quarry: internal error', error)),
  }
}
