import { realpathSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { QuarryError, rejectUnknownOptions, type Embedder } from '@quarry/core'
import { systemClock, type Clock } from '../rpc/clock.js'
import { defaultEmbedder } from '../rpc/default-embedder.js'
import { cryptoRandomId, type RandomId } from '../rpc/names.js'
import { DISTANCE_METRICS, type DistanceMetric } from './metric.js'
import { FILE_BOUNDS_DEFAULT, type FileBounds } from './file-bounds.js'
import type { ClaimJson, ContextJson, FactJson } from './resources.js'
import { replayableClock, replayableRandomId } from '../rpc/replay.js'

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

/** What {@link RagModelHook.generate} gets: AskContexts' query text and the contexts retrieved for it, best first. */
export interface GenerateRequest {
  readonly prompt: string
  readonly contexts: readonly ContextJson[]
}

/** What {@link RagModelHook.corroborate} gets: CorroborateContent's text (its content's text parts joined by newlines) and facts. */
export interface CorroborateRequest {
  readonly text: string
  readonly facts: readonly FactJson[]
}

/** What {@link RagModelHook.corroborate} answers: the claims found in the text (offsets into it, indexes into the facts) and an overall score in [0, 1]. */
export interface CorroborateResult {
  readonly corroborationScore?: number
  readonly claims: readonly ClaimJson[]
}

/**
 * The generative model RAG Engine's model-backed RPCs need, supplied by the caller (Quarry has no
 * model). Results are recorded like embeddings: a replayed write gets the same answer.
 */
export interface RagModelHook {
  /** Serves `askContexts`: answers `prompt` from `contexts` (the text becomes the response's `response`). */
  readonly generate?: (request: GenerateRequest) => Promise<string>
  /**
   * Serves `corroborateContent`: finds the claims of `text` and the facts supporting each. Claims
   * at or below the request's `parameters.citationThreshold` are dropped; offsets and fact indexes
   * are checked (a bad one is an INTERNAL error, reported to onInternalError).
   */
  readonly corroborate?: (request: CorroborateRequest) => Promise<CorroborateResult>
}

export interface VertexRagOptions {
  /**
   * Embeds chunks and queries. @defaultValue `defaultEmbedder()`: GloVe SIF, as `quarry serve`
   * (loaded on first use, once per process); `createHashingEmbedder()` for instant word overlap
   */
  embedder?: Embedder
  /**
   * The distance metric of every corpus. The RagCorpus message of the Node clients (aiplatform
   * 6.11) has no metric field, so it is set here. @defaultValue 'COSINE_DISTANCE'
   */
  distanceMetric?: DistanceMetric
  /**
   * Local folder standing in for Cloud Storage: `gs://bucket/path` is read from
   * `<gcsRoot>/bucket/path` (links followed, but never out of the folder). Without it, gs://
   * imports are refused. It must exist.
   */
  gcsRoot?: string
  /**
   * Folders `file://` imports may read (links followed, but never out of them). Without this
   * option the calling code is trusted, as with `fs`: any readable path imports. `[]` turns
   * file:// imports off — what `quarry serve` does unless started with `--import-root DIR`.
   * Each folder must exist. @defaultValue undefined (in process: any path)
   */
  importRoots?: readonly string[]
  /** Serves `ranking` (rankService / llmRanker); without it ranking keeps the retrieval order. */
  reranker?: Reranker
  /**
   * The model behind `askContexts` (`generate`) and `corroborateContent` (`corroborate`); without
   * it (or without the member) those RPCs answer UNIMPLEMENTED saying to pass this option.
   * augmentPrompt needs no model. @defaultValue undefined
   */
  generativeModel?: RagModelHook
  /** Files per import request, at most. @defaultValue 10000 */
  maxImportFiles?: number
  /** Bytes of one file, at most: a larger imported file fails alone (the others go on), a larger upload is refused. @defaultValue 50 MiB */
  maxFileBytes?: number
  /** Folder levels an import walks below each URI; deeper folders fail alone. @defaultValue 32 */
  maxImportDepth?: number
  /**
   * What one file may expand to: a PDF's compressed streams inflated (counted before it is parsed)
   * and any file's extracted text. Over it, an imported file fails alone, an upload is refused.
   * @defaultValue 64 MiB
   */
  maxInflatedBytes?: number
  /** Pages of one PDF, at most (over: the file fails alone, as above). @defaultValue 2000 */
  maxFilePages?: number
  /**
   * Milliseconds one file's text extraction and chunking may take. PDFs and files over 256 KiB
   * are read on a thread of their own, stopped at this limit (the file fails alone, as above).
   * @defaultValue 60000
   */
  fileTimeoutMs?: number
  /**
   * Read, hash, chunk and embed an import's files on a worker thread (one per process, started by
   * the first import of 16 files or more, or the 16th upload, and kept; it holds the process open
   * only while it has work) while the calling thread indexes; an upload's chunks are embedded there
   * while the calling thread analyzes them for the index. Embedding moves to the thread only with
   * core's own embedders (the default GloVe, `createGloveEmbedder`, `createHashingEmbedder`: they
   * have a recipe the thread rebuilds them from); any other embedder runs on the calling thread. false does it all on
   * the calling thread. The result is the same either way, bit for bit. @defaultValue true
   */
  importWorker?: boolean
  clock?: Clock
  randomId?: RandomId
  onInternalError?: (error: unknown) => void
}

/** Every option of the engine: a client given any of them makes a private engine (else it shares the default one). */
export const VERTEX_RAG_OPTION_KEYS: Readonly<Record<keyof VertexRagOptions, true>> = {
  embedder: true,
  distanceMetric: true,
  gcsRoot: true,
  importRoots: true,
  reranker: true,
  generativeModel: true,
  maxImportFiles: true,
  maxFileBytes: true,
  maxImportDepth: true,
  maxInflatedBytes: true,
  maxFilePages: true,
  fileTimeoutMs: true,
  importWorker: true,
  clock: true,
  randomId: true,
  onInternalError: true,
}

export interface ResolvedVertexRagOptions {
  readonly embedder: Embedder
  readonly distanceMetric: DistanceMetric
  /** Real path (links resolved). */
  readonly gcsRoot: string | undefined
  /** Each root as given (resolved) and as its real path (links resolved); undefined: any path. */
  readonly importRoots: readonly ImportRoot[] | undefined
  readonly reranker: Reranker | undefined
  readonly generativeModel: RagModelHook | undefined
  readonly maxImportFiles: number
  readonly maxFileBytes: number
  readonly maxImportDepth: number
  readonly fileBounds: FileBounds
  readonly importWorker: boolean
  readonly clock: Clock
  readonly randomId: RandomId
  readonly onInternalError: (error: unknown) => void
}

/** A folder imports may read: as the caller named it (absolute) and as its real path. */
export interface ImportRoot {
  readonly given: string
  readonly real: string
}

export function resolveVertexRagOptions(options: VertexRagOptions): ResolvedVertexRagOptions {
  rejectUnknownOptions(options as Record<string, unknown>, Object.keys(VERTEX_RAG_OPTION_KEYS), '')
  const metric = options.distanceMetric ?? 'COSINE_DISTANCE'
  if (!DISTANCE_METRICS.includes(metric)) {
    throw new QuarryError('INVALID_OPTION', `distanceMetric must be one of ${DISTANCE_METRICS.join(', ')}; received ${String(metric)}.`, { path: 'distanceMetric' })
  }
  for (const key of ['maxImportFiles', 'maxFileBytes', 'maxImportDepth', 'maxInflatedBytes', 'maxFilePages', 'fileTimeoutMs'] as const) {
    const v = options[key]
    if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) throw new QuarryError('INVALID_OPTION', `${key} must be a positive integer; received ${String(v)}.`, { path: key })
  }
  if (options.importWorker !== undefined && typeof options.importWorker !== 'boolean') {
    throw new QuarryError('INVALID_OPTION', `importWorker must be true or false; received ${String(options.importWorker)}.`, { path: 'importWorker' })
  }
  return {
    embedder: options.embedder ?? defaultEmbedder(),
    distanceMetric: metric,
    gcsRoot: options.gcsRoot === undefined ? undefined : realFolder(options.gcsRoot, 'gcsRoot'),
    importRoots: importRootsOf(options.importRoots),
    reranker: options.reranker,
    generativeModel: options.generativeModel,
    maxImportFiles: options.maxImportFiles ?? 10_000,
    maxFileBytes: options.maxFileBytes ?? 50 * 1024 * 1024,
    maxImportDepth: options.maxImportDepth ?? 32,
    fileBounds: {
      maxInflatedBytes: options.maxInflatedBytes ?? FILE_BOUNDS_DEFAULT.maxInflatedBytes,
      maxPages: options.maxFilePages ?? FILE_BOUNDS_DEFAULT.maxPages,
      timeoutMs: options.fileTimeoutMs ?? FILE_BOUNDS_DEFAULT.timeoutMs,
    },
    importWorker: options.importWorker ?? true,
    // Read through the write-ahead log's replay (rpc/replay.ts): a replayed write sees the same times and ids.
    clock: replayableClock(options.clock ?? systemClock),
    randomId: replayableRandomId(options.randomId ?? cryptoRandomId),
    onInternalError: options.onInternalError ?? ((error) => console.error('quarry: internal error', error)),
  }
}

/** A folder option as its real path (so links inside it can be checked against it); it must exist. */
function realFolder(folder: unknown, path: string): string {
  if (typeof folder !== 'string' || folder === '') throw new QuarryError('INVALID_OPTION', `${path} must be a folder path; received ${String(folder)}.`, { path })
  let real: string
  try {
    real = realpathSync(folder)
  } catch {
    throw new QuarryError('INVALID_OPTION', `${path}: the folder ${folder} does not exist; create it or name another.`, { path })
  }
  if (!statSync(real).isDirectory()) throw new QuarryError('INVALID_OPTION', `${path}: ${folder} is not a folder.`, { path })
  return real
}

/** Import roots as given and as real paths; each must exist. */
export function importRootsOf(roots: readonly string[] | undefined): readonly ImportRoot[] | undefined {
  if (roots === undefined) return undefined
  if (!Array.isArray(roots)) throw new QuarryError('INVALID_OPTION', 'importRoots must be a list of folder paths.', { path: 'importRoots' })
  return roots.map((root: string, i) => ({ given: resolve(root), real: realFolder(root, `importRoots[${i}]`) }))
}
