import { Mutex } from '../rpc/mutex.js'
import { toOutcome, type Outcome } from '../rpc/outcome.js'
import { readMessage, message, string } from '../rpc/proto-json.js'
import { failure } from '../rpc/status.js'
import { RagContext } from './context.js'
import { createRagCorpus, deleteRagCorpus, getRagCorpus, listRagCorpora, updateRagCorpus } from './corpora.js'
import { deleteRagFile, getRagFile, importRagFiles, listRagFiles, uploadRagFile, type UploadContent } from './files.js'
import * as metadata from './metadata.js'
import { resolveVertexRagOptions, type VertexRagOptions } from './options.js'
import type {
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
import { loadRag, saveRag } from './persistence.js'
import { retrieveContexts } from './retrieve.js'
import type { ApiVersion } from './schema.js'

const GetOperationRequest = message('google.longrunning.GetOperationRequest', { name: string })
type Empty = Record<string, never>

/**
 * One API surface (v1 or v1beta1) of the RAG Engine: every method takes the request JSON of
 * VertexRagService / VertexRagDataService and resolves to an Outcome (response JSON or a
 * google.rpc.Status). Mutations return finished long-running Operations. Writes are serialized;
 * retrieval runs beside them.
 */
export class VertexRagSurface {
  readonly version: ApiVersion
  readonly #ctx: RagContext
  readonly #writes: Mutex

  constructor(ctx: RagContext, writes: Mutex, version: ApiVersion) {
    this.#ctx = ctx
    this.#writes = writes
    this.version = version
  }

  #read<T>(op: () => Promise<T>): Promise<Outcome<T>> {
    return toOutcome(op, this.#ctx.options.onInternalError)
  }
  #write<T>(op: () => Promise<T>): Promise<Outcome<T>> {
    return this.#writes.run(() => this.#read(op))
  }
  #beta<T>(op: () => Promise<T>): () => Promise<T> {
    return async () => {
      if (this.version !== 'v1beta1') throw failure('UNIMPLEMENTED', 'RagDataSchema and RagMetadata methods exist in v1beta1 only.')
      return op()
    }
  }

  retrieveContexts(request: unknown): Promise<Outcome<RetrieveContextsResponseJson>> {
    return this.#read(() => retrieveContexts(this.#ctx, this.version, request))
  }
  createRagCorpus(request: unknown): Promise<Outcome<OperationJson>> {
    return this.#write(() => createRagCorpus(this.#ctx, this.version, request))
  }
  getRagCorpus(request: unknown): Promise<Outcome<RagCorpusJson>> {
    return this.#read(() => getRagCorpus(this.#ctx, this.version, request))
  }
  listRagCorpora(request: unknown): Promise<Outcome<ListRagCorporaResponseJson>> {
    return this.#read(() => listRagCorpora(this.#ctx, this.version, request))
  }
  updateRagCorpus(request: unknown): Promise<Outcome<OperationJson>> {
    return this.#write(() => updateRagCorpus(this.#ctx, this.version, request))
  }
  deleteRagCorpus(request: unknown): Promise<Outcome<OperationJson>> {
    return this.#write(() => deleteRagCorpus(this.#ctx, this.version, request))
  }
  /** `content` is the file itself: the multipart part of Google's upload endpoint. */
  uploadRagFile(request: unknown, content?: UploadContent): Promise<Outcome<UploadRagFileResponseJson>> {
    return this.#write(() => uploadRagFile(this.#ctx, this.version, request, content))
  }
  importRagFiles(request: unknown): Promise<Outcome<OperationJson>> {
    return this.#write(() => importRagFiles(this.#ctx, this.version, request))
  }
  getRagFile(request: unknown): Promise<Outcome<RagFileJson>> {
    return this.#read(() => getRagFile(this.#ctx, this.version, request))
  }
  listRagFiles(request: unknown): Promise<Outcome<ListRagFilesResponseJson>> {
    return this.#read(() => listRagFiles(this.#ctx, this.version, request))
  }
  deleteRagFile(request: unknown): Promise<Outcome<OperationJson>> {
    return this.#write(() => deleteRagFile(this.#ctx, this.version, request))
  }
  /** google.longrunning.Operations.GetOperation: operations are done when returned, so this only reads them back. */
  getOperation(request: unknown): Promise<Outcome<OperationJson>> {
    return this.#read(async () => {
      const { name } = readMessage(GetOperationRequest, request)
      const op = name === undefined ? undefined : this.#ctx.state.operations.get(name)
      if (!op) throw failure('NOT_FOUND', `Operation "${name ?? ''}" not found.`, 'name')
      return op
    })
  }

  createRagDataSchema(request: unknown): Promise<Outcome<RagDataSchemaJson>> {
    return this.#write(this.#beta(() => metadata.createRagDataSchema(this.#ctx, request)))
  }
  batchCreateRagDataSchemas(request: unknown): Promise<Outcome<OperationJson>> {
    return this.#write(this.#beta(() => metadata.batchCreateRagDataSchemas(this.#ctx, request)))
  }
  getRagDataSchema(request: unknown): Promise<Outcome<RagDataSchemaJson>> {
    return this.#read(this.#beta(() => metadata.getRagDataSchema(this.#ctx, request)))
  }
  listRagDataSchemas(request: unknown): Promise<Outcome<ListRagDataSchemasResponseJson>> {
    return this.#read(this.#beta(() => metadata.listRagDataSchemas(this.#ctx, request)))
  }
  deleteRagDataSchema(request: unknown): Promise<Outcome<Empty>> {
    return this.#write(this.#beta(() => metadata.deleteRagDataSchema(this.#ctx, request)))
  }
  batchDeleteRagDataSchemas(request: unknown): Promise<Outcome<OperationJson>> {
    return this.#write(this.#beta(() => metadata.batchDeleteRagDataSchemas(this.#ctx, request)))
  }
  createRagMetadata(request: unknown): Promise<Outcome<RagMetadataJson>> {
    return this.#write(this.#beta(() => metadata.createRagMetadata(this.#ctx, request)))
  }
  batchCreateRagMetadata(request: unknown): Promise<Outcome<OperationJson>> {
    return this.#write(this.#beta(() => metadata.batchCreateRagMetadata(this.#ctx, request)))
  }
  updateRagMetadata(request: unknown): Promise<Outcome<RagMetadataJson>> {
    return this.#write(this.#beta(() => metadata.updateRagMetadata(this.#ctx, request)))
  }
  getRagMetadata(request: unknown): Promise<Outcome<RagMetadataJson>> {
    return this.#read(this.#beta(() => metadata.getRagMetadata(this.#ctx, request)))
  }
  listRagMetadata(request: unknown): Promise<Outcome<ListRagMetadataResponseJson>> {
    return this.#read(this.#beta(() => metadata.listRagMetadata(this.#ctx, request)))
  }
  deleteRagMetadata(request: unknown): Promise<Outcome<Empty>> {
    return this.#write(this.#beta(() => metadata.deleteRagMetadata(this.#ctx, request)))
  }
  batchDeleteRagMetadata(request: unknown): Promise<Outcome<OperationJson>> {
    return this.#write(this.#beta(() => metadata.batchDeleteRagMetadata(this.#ctx, request)))
  }
}

/** The request-JSON methods of a surface (for routers and golden tests). */
export const RAG_METHODS = [
  'retrieveContexts',
  'createRagCorpus',
  'getRagCorpus',
  'listRagCorpora',
  'updateRagCorpus',
  'deleteRagCorpus',
  'uploadRagFile',
  'importRagFiles',
  'getRagFile',
  'listRagFiles',
  'deleteRagFile',
  'getOperation',
  'createRagDataSchema',
  'batchCreateRagDataSchemas',
  'getRagDataSchema',
  'listRagDataSchemas',
  'deleteRagDataSchema',
  'batchDeleteRagDataSchemas',
  'createRagMetadata',
  'batchCreateRagMetadata',
  'updateRagMetadata',
  'getRagMetadata',
  'listRagMetadata',
  'deleteRagMetadata',
  'batchDeleteRagMetadata',
] as const satisfies readonly (keyof VertexRagSurface)[]

/**
 * Vertex AI RAG Engine in process: all projects' and locations' corpora in one engine, served
 * through the `v1` and `v1beta1` surfaces (the same corpora, each answered in its version's fields).
 */
export class VertexRagEngine {
  readonly v1: VertexRagSurface
  readonly v1beta1: VertexRagSurface
  readonly #ctx: RagContext

  constructor(options: VertexRagOptions = {}) {
    const ctx = new RagContext(resolveVertexRagOptions(options))
    this.#ctx = ctx
    const writes = new Mutex()
    this.v1 = new VertexRagSurface(ctx, writes, 'v1')
    this.v1beta1 = new VertexRagSurface(ctx, writes, 'v1beta1')
  }

  /** Writes every corpus, file, schema, metadata and operation (and the index snapshots) into the empty folder `dir`. */
  saveTo(dir: string): void {
    saveRag(this.#ctx, dir)
  }

  /**
   * Replaces the state with the one `saveTo` wrote into `dir` (all or nothing: a failing load
   * leaves the current state). Call it before serving writes: a write in flight would apply to
   * the replaced state.
   */
  loadFrom(dir: string): void {
    loadRag(this.#ctx, dir)
  }
}
