import { paged, pagedAsync, type PageCallOptions } from '../rpc/paged.js'
import { unary } from '../rpc/unary.js'
import { SemanticRetriever } from './service.js'
import type { SemanticRetrieverOptions } from './options.js'
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

/** Options of the in-process client: an engine to share, or options to make one. */
export type RetrieverServiceClientOptions = SemanticRetrieverOptions & { retriever?: SemanticRetriever }

/**
 * An in-process stand-in for `v1beta.RetrieverServiceClient` of `@google-ai/generativelanguage`:
 * the same method names and request objects; each method resolves to `[response]` and rejects
 * with an ApiError carrying the numeric gRPC `code` and `statusDetails` (google.rpc.BadRequest),
 * as the Google client does. List methods page like google-gax: `[resources, nextRequest, response]`,
 * every page by default, one page with `{ autoPaginate: false }`; `listXAsync` iterates.
 */
export class RetrieverServiceClient {
  readonly retriever: SemanticRetriever

  constructor(options: RetrieverServiceClientOptions = {}) {
    const { retriever, ...engineOptions } = options
    this.retriever = retriever ?? new SemanticRetriever(engineOptions)
  }

  createCorpus(request: unknown): Promise<[CorpusJson]> {
    return unary(this.retriever.createCorpus(request))
  }
  getCorpus(request: unknown): Promise<[CorpusJson]> {
    return unary(this.retriever.getCorpus(request))
  }
  updateCorpus(request: unknown): Promise<[CorpusJson]> {
    return unary(this.retriever.updateCorpus(request))
  }
  deleteCorpus(request: unknown): Promise<[EmptyJson]> {
    return unary(this.retriever.deleteCorpus(request))
  }
  listCorpora(request: unknown = {}, options?: PageCallOptions): Promise<[CorpusJson[], Record<string, unknown> | null, ListCorporaResponseJson]> {
    return paged((r) => this.retriever.listCorpora(r), (r) => r.corpora, request, options)
  }
  listCorporaAsync(request: unknown = {}): AsyncIterable<CorpusJson> {
    return pagedAsync((r) => this.retriever.listCorpora(r), (r) => r.corpora, request)
  }
  queryCorpus(request: unknown): Promise<[QueryResponseJson]> {
    return unary(this.retriever.queryCorpus(request))
  }
  createDocument(request: unknown): Promise<[DocumentJson]> {
    return unary(this.retriever.createDocument(request))
  }
  getDocument(request: unknown): Promise<[DocumentJson]> {
    return unary(this.retriever.getDocument(request))
  }
  updateDocument(request: unknown): Promise<[DocumentJson]> {
    return unary(this.retriever.updateDocument(request))
  }
  deleteDocument(request: unknown): Promise<[EmptyJson]> {
    return unary(this.retriever.deleteDocument(request))
  }
  listDocuments(request: unknown, options?: PageCallOptions): Promise<[DocumentJson[], Record<string, unknown> | null, ListDocumentsResponseJson]> {
    return paged((r) => this.retriever.listDocuments(r), (r) => r.documents, request, options)
  }
  listDocumentsAsync(request: unknown): AsyncIterable<DocumentJson> {
    return pagedAsync((r) => this.retriever.listDocuments(r), (r) => r.documents, request)
  }
  queryDocument(request: unknown): Promise<[QueryResponseJson]> {
    return unary(this.retriever.queryDocument(request))
  }
  createChunk(request: unknown): Promise<[ChunkJson]> {
    return unary(this.retriever.createChunk(request))
  }
  batchCreateChunks(request: unknown): Promise<[BatchChunksResponseJson]> {
    return unary(this.retriever.batchCreateChunks(request))
  }
  getChunk(request: unknown): Promise<[ChunkJson]> {
    return unary(this.retriever.getChunk(request))
  }
  updateChunk(request: unknown): Promise<[ChunkJson]> {
    return unary(this.retriever.updateChunk(request))
  }
  batchUpdateChunks(request: unknown): Promise<[BatchChunksResponseJson]> {
    return unary(this.retriever.batchUpdateChunks(request))
  }
  deleteChunk(request: unknown): Promise<[EmptyJson]> {
    return unary(this.retriever.deleteChunk(request))
  }
  batchDeleteChunks(request: unknown): Promise<[EmptyJson]> {
    return unary(this.retriever.batchDeleteChunks(request))
  }
  listChunks(request: unknown, options?: PageCallOptions): Promise<[ChunkJson[], Record<string, unknown> | null, ListChunksResponseJson]> {
    return paged((r) => this.retriever.listChunks(r), (r) => r.chunks, request, options)
  }
  listChunksAsync(request: unknown): AsyncIterable<ChunkJson> {
    return pagedAsync((r) => this.retriever.listChunks(r), (r) => r.chunks, request)
  }
}
