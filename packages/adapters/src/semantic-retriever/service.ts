import { Mutex } from '../rpc/mutex.js'
import { toOutcome, type Outcome } from '../rpc/outcome.js'
import { batchCreateChunks, batchDeleteChunks, batchUpdateChunks, createChunk, deleteChunk, getChunk, listChunks, updateChunk } from './chunks.js'
import { RetrieverContext } from './context.js'
import { createCorpus, deleteCorpus, getCorpus, listCorpora, updateCorpus } from './corpora.js'
import { createDocument, deleteDocument, getDocument, listDocuments, updateDocument } from './documents.js'
import { resolveRetrieverOptions, type SemanticRetrieverOptions } from './options.js'
import { loadRetriever, saveRetriever } from './persistence.js'
import { queryCorpus, queryDocument } from './query.js'
import type {
  BatchChunksResponseJson,
  ChunkJson,
  CorpusJson,
  DocumentJson,
  EmptyJson,
  ListChunksResponseJson,
  ListCorporaResponseJson,
  ListDocumentsResponseJson,
  QueryResponseJson,
} from './resources.js'

type Operation<T> = (ctx: RetrieverContext, request: unknown) => Promise<T>

/**
 * The Semantic Retriever of one project, in process: every method takes the request JSON of
 * google.ai.generativelanguage.v1beta.RetrieverService and resolves to an Outcome — the response
 * JSON or a google.rpc.Status. Methods never throw for bad requests. Writes are serialized;
 * queries and reads run beside them and see each write whole.
 */
export class SemanticRetriever {
  readonly #ctx: RetrieverContext
  readonly #writes = new Mutex()

  constructor(options: SemanticRetrieverOptions = {}) {
    this.#ctx = new RetrieverContext(resolveRetrieverOptions(options))
  }

  /** Writes every corpus, document and chunk (and their index snapshots) into the empty folder `dir`. Synchronous: one consistent view. */
  saveTo(dir: string): void {
    saveRetriever(this.#ctx, dir)
  }

  /**
   * Replaces the state with the one `saveTo` wrote into `dir` (all or nothing: a failing load
   * leaves the current state). Call it before serving writes: a write in flight would apply to
   * the replaced state.
   */
  loadFrom(dir: string): void {
    loadRetriever(this.#ctx, dir)
  }

  #read<T>(op: Operation<T>, request: unknown): Promise<Outcome<T>> {
    return toOutcome(() => op(this.#ctx, request), this.#ctx.options.onInternalError)
  }

  #write<T>(op: Operation<T>, request: unknown): Promise<Outcome<T>> {
    return this.#writes.run(() => this.#read(op, request))
  }

  createCorpus(request: unknown): Promise<Outcome<CorpusJson>> {
    return this.#write(createCorpus, request)
  }
  getCorpus(request: unknown): Promise<Outcome<CorpusJson>> {
    return this.#read(getCorpus, request)
  }
  updateCorpus(request: unknown): Promise<Outcome<CorpusJson>> {
    return this.#write(updateCorpus, request)
  }
  deleteCorpus(request: unknown): Promise<Outcome<EmptyJson>> {
    return this.#write(deleteCorpus, request)
  }
  listCorpora(request: unknown): Promise<Outcome<ListCorporaResponseJson>> {
    return this.#read(listCorpora, request)
  }
  queryCorpus(request: unknown): Promise<Outcome<QueryResponseJson>> {
    return this.#read(queryCorpus, request)
  }
  createDocument(request: unknown): Promise<Outcome<DocumentJson>> {
    return this.#write(createDocument, request)
  }
  getDocument(request: unknown): Promise<Outcome<DocumentJson>> {
    return this.#read(getDocument, request)
  }
  updateDocument(request: unknown): Promise<Outcome<DocumentJson>> {
    return this.#write(updateDocument, request)
  }
  deleteDocument(request: unknown): Promise<Outcome<EmptyJson>> {
    return this.#write(deleteDocument, request)
  }
  listDocuments(request: unknown): Promise<Outcome<ListDocumentsResponseJson>> {
    return this.#read(listDocuments, request)
  }
  queryDocument(request: unknown): Promise<Outcome<QueryResponseJson>> {
    return this.#read(queryDocument, request)
  }
  createChunk(request: unknown): Promise<Outcome<ChunkJson>> {
    return this.#write(createChunk, request)
  }
  batchCreateChunks(request: unknown): Promise<Outcome<BatchChunksResponseJson>> {
    return this.#write(batchCreateChunks, request)
  }
  getChunk(request: unknown): Promise<Outcome<ChunkJson>> {
    return this.#read(getChunk, request)
  }
  updateChunk(request: unknown): Promise<Outcome<ChunkJson>> {
    return this.#write(updateChunk, request)
  }
  batchUpdateChunks(request: unknown): Promise<Outcome<BatchChunksResponseJson>> {
    return this.#write(batchUpdateChunks, request)
  }
  deleteChunk(request: unknown): Promise<Outcome<EmptyJson>> {
    return this.#write(deleteChunk, request)
  }
  batchDeleteChunks(request: unknown): Promise<Outcome<EmptyJson>> {
    return this.#write(batchDeleteChunks, request)
  }
  listChunks(request: unknown): Promise<Outcome<ListChunksResponseJson>> {
    return this.#read(listChunks, request)
  }
}

/** The method names of RetrieverService that SemanticRetriever serves (for routers and clients). */
export const RETRIEVER_METHODS = [
  'createCorpus',
  'getCorpus',
  'updateCorpus',
  'deleteCorpus',
  'listCorpora',
  'queryCorpus',
  'createDocument',
  'getDocument',
  'updateDocument',
  'deleteDocument',
  'listDocuments',
  'queryDocument',
  'createChunk',
  'batchCreateChunks',
  'getChunk',
  'updateChunk',
  'batchUpdateChunks',
  'deleteChunk',
  'batchDeleteChunks',
  'listChunks',
] as const satisfies readonly (keyof SemanticRetriever)[]
