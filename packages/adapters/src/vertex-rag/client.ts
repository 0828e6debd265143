import { longRunning, type LongRunningOperation, type OperationLike } from '../rpc/long-running.js'
import { paged, pagedAsync, type PageCallOptions } from '../rpc/paged.js'
import { unary } from '../rpc/unary.js'
import type { UploadContent } from './files.js'
import type { VertexRagOptions } from './options.js'
import type {
  ImportRagFilesResponseJson,
  ListRagCorporaResponseJson,
  ListRagDataSchemasResponseJson,
  ListRagFilesResponseJson,
  ListRagMetadataResponseJson,
  OperationJson,
  RagCorpusJson,
  RagDataSchemaJson,
  RagFileJson,
  RagMetadataJson,
  RetrieveContextsResponseJson,
  UploadRagFileResponseJson,
} from './resources.js'
import type { ApiVersion } from './schema.js'
import { VertexRagEngine, type VertexRagSurface } from './service.js'

/** Options of the in-process RAG clients: an engine to share (or options to make one) and the API version. */
export type VertexRagClientOptions = VertexRagOptions & { engine?: VertexRagEngine; version?: ApiVersion }

type Empty = Record<string, never>
type Lro<T> = Promise<[LongRunningOperation<T>, OperationLike]>

function surfaceOf(options: VertexRagClientOptions): { engine: VertexRagEngine; surface: VertexRagSurface } {
  const { engine: given, version = 'v1beta1', ...rest } = options
  const engine = given ?? new VertexRagEngine(rest)
  return { engine, surface: version === 'v1' ? engine.v1 : engine.v1beta1 }
}

/**
 * In-process stand-in for `VertexRagServiceClient` of `@google-cloud/aiplatform` (`v1` or
 * `v1beta1`): `retrieveContexts` resolves to `[response]`, failures reject with an ApiError.
 */
export class VertexRagServiceClient {
  readonly engine: VertexRagEngine
  readonly #surface: VertexRagSurface

  constructor(options: VertexRagClientOptions = {}) {
    const { engine, surface } = surfaceOf(options)
    this.engine = engine
    this.#surface = surface
  }

  retrieveContexts(request: unknown): Promise<[RetrieveContextsResponseJson]> {
    return unary(this.#surface.retrieveContexts(request))
  }
}

/**
 * In-process stand-in for `VertexRagDataServiceClient`: mutations resolve to
 * `[operation, rawOperation]` with `operation.promise()` → `[result, metadata, raw]`, as google-gax
 * gives them; lists page like the Google client.
 */
export class VertexRagDataServiceClient {
  readonly engine: VertexRagEngine
  readonly #s: VertexRagSurface

  constructor(options: VertexRagClientOptions = {}) {
    const { engine, surface } = surfaceOf(options)
    this.engine = engine
    this.#s = surface
  }

  createRagCorpus(request: unknown): Lro<RagCorpusJson> {
    return longRunning(this.#s.createRagCorpus(request))
  }
  updateRagCorpus(request: unknown): Lro<RagCorpusJson> {
    return longRunning(this.#s.updateRagCorpus(request))
  }
  deleteRagCorpus(request: unknown): Lro<Empty> {
    return longRunning(this.#s.deleteRagCorpus(request))
  }
  getRagCorpus(request: unknown): Promise<[RagCorpusJson]> {
    return unary(this.#s.getRagCorpus(request))
  }
  listRagCorpora(request: unknown, options?: PageCallOptions): Promise<[RagCorpusJson[], Record<string, unknown> | null, ListRagCorporaResponseJson]> {
    return paged((r) => this.#s.listRagCorpora(r), (r) => r.ragCorpora, request, options)
  }
  listRagCorporaAsync(request: unknown): AsyncIterable<RagCorpusJson> {
    return pagedAsync((r) => this.#s.listRagCorpora(r), (r) => r.ragCorpora, request)
  }
  /** `content`: the file's bytes or text (Google's client cannot send them; its REST upload is multipart). */
  uploadRagFile(request: unknown, content?: UploadContent): Promise<[UploadRagFileResponseJson]> {
    return unary(this.#s.uploadRagFile(request, content))
  }
  importRagFiles(request: unknown): Lro<ImportRagFilesResponseJson> {
    return longRunning(this.#s.importRagFiles(request))
  }
  getRagFile(request: unknown): Promise<[RagFileJson]> {
    return unary(this.#s.getRagFile(request))
  }
  listRagFiles(request: unknown, options?: PageCallOptions): Promise<[RagFileJson[], Record<string, unknown> | null, ListRagFilesResponseJson]> {
    return paged((r) => this.#s.listRagFiles(r), (r) => r.ragFiles, request, options)
  }
  listRagFilesAsync(request: unknown): AsyncIterable<RagFileJson> {
    return pagedAsync((r) => this.#s.listRagFiles(r), (r) => r.ragFiles, request)
  }
  deleteRagFile(request: unknown): Lro<Empty> {
    return longRunning(this.#s.deleteRagFile(request))
  }
  getOperation(request: unknown): Promise<[OperationJson]> {
    return unary(this.#s.getOperation(request))
  }
  createRagDataSchema(request: unknown): Promise<[RagDataSchemaJson]> {
    return unary(this.#s.createRagDataSchema(request))
  }
  batchCreateRagDataSchemas(request: unknown): Lro<{ ragDataSchemas: RagDataSchemaJson[] }> {
    return longRunning(this.#s.batchCreateRagDataSchemas(request))
  }
  getRagDataSchema(request: unknown): Promise<[RagDataSchemaJson]> {
    return unary(this.#s.getRagDataSchema(request))
  }
  listRagDataSchemas(request: unknown, options?: PageCallOptions): Promise<[RagDataSchemaJson[], Record<string, unknown> | null, ListRagDataSchemasResponseJson]> {
    return paged((r) => this.#s.listRagDataSchemas(r), (r) => r.ragDataSchemas, request, options)
  }
  deleteRagDataSchema(request: unknown): Promise<[Empty]> {
    return unary(this.#s.deleteRagDataSchema(request))
  }
  batchDeleteRagDataSchemas(request: unknown): Lro<Empty> {
    return longRunning(this.#s.batchDeleteRagDataSchemas(request))
  }
  createRagMetadata(request: unknown): Promise<[RagMetadataJson]> {
    return unary(this.#s.createRagMetadata(request))
  }
  batchCreateRagMetadata(request: unknown): Lro<{ ragMetadata: RagMetadataJson[] }> {
    return longRunning(this.#s.batchCreateRagMetadata(request))
  }
  updateRagMetadata(request: unknown): Promise<[RagMetadataJson]> {
    return unary(this.#s.updateRagMetadata(request))
  }
  getRagMetadata(request: unknown): Promise<[RagMetadataJson]> {
    return unary(this.#s.getRagMetadata(request))
  }
  listRagMetadata(request: unknown, options?: PageCallOptions): Promise<[RagMetadataJson[], Record<string, unknown> | null, ListRagMetadataResponseJson]> {
    return paged((r) => this.#s.listRagMetadata(r), (r) => r.ragMetadata, request, options)
  }
  deleteRagMetadata(request: unknown): Promise<[Empty]> {
    return unary(this.#s.deleteRagMetadata(request))
  }
  batchDeleteRagMetadata(request: unknown): Lro<Empty> {
    return longRunning(this.#s.batchDeleteRagMetadata(request))
  }
}
