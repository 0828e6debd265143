import { methodNames, serveTable, type ServiceMethods } from '../rpc/methods.js'
import { EngineWrites } from '../rpc/engine-writes.js'
import { RagContext } from './context.js'
import { RAG_DATA_TABLE, RAG_MIXIN_TABLE, RAG_SERVICE_TABLE } from './methods.js'
import { importRootsOf, resolveVertexRagOptions, type ImportRoot, type VertexRagOptions } from './options.js'
import { FORMAT, loadRag, saveRag } from './persistence.js'
import { PersistentEngine } from '../rpc/persistent-engine.js'
import type { ApiVersion } from './schema.js'
import { toOutcome, type Outcome } from '../rpc/outcome.js'
import { retrieve, type Retrieval } from './retrieve.js'
import type { RagCorpusState, RagFileState } from './state.js'

// The methods come from RAG_SERVICE_TABLE, RAG_DATA_TABLE and RAG_MIXIN_TABLE (methods.ts): one entry per RPC.
export interface VertexRagSurface extends ServiceMethods<typeof RAG_SERVICE_TABLE>, ServiceMethods<typeof RAG_DATA_TABLE>, ServiceMethods<typeof RAG_MIXIN_TABLE> {}

/**
 * One API surface (v1 or v1beta1) of the RAG Engine: every method takes the request JSON of
 * VertexRagService / VertexRagDataService and resolves to an Outcome (response JSON or a
 * google.rpc.Status). Mutations return finished long-running Operations. Writes are serialized;
 * retrieval runs beside them. Methods of v1beta1 alone answer UNIMPLEMENTED on v1, and so do
 * askContexts / corroborateContent without the `generativeModel` option (saying how to supply it).
 * Operations (get, list, cancel, delete, wait) are served.
 */
export class VertexRagSurface {
  readonly version: ApiVersion

  constructor(ctx: RagContext, writes: EngineWrites, version: ApiVersion, importRoots: readonly ImportRoot[] | undefined = ctx.options.importRoots) {
    this.version = version
    const serve = { version, writes, onInternalError: ctx.options.onInternalError }
    const call = { ctx, version, importRoots }
    Object.assign(this, serveTable(RAG_SERVICE_TABLE, call, serve), serveTable(RAG_DATA_TABLE, call, serve), serveTable(RAG_MIXIN_TABLE, call, serve))
  }
}

/** The request-JSON methods of a surface (for routers and golden tests), from the tables: both services' RPCs and the mixins (some UNIMPLEMENTED). */
export const RAG_METHODS = [...methodNames(RAG_SERVICE_TABLE), ...methodNames(RAG_DATA_TABLE), ...methodNames(RAG_MIXIN_TABLE)]

/**
 * Vertex AI RAG Engine in process: all projects' and locations' corpora in one engine, served
 * through the `v1` and `v1beta1` surfaces (the same corpora, each answered in its version's fields).
 */
export class VertexRagEngine extends PersistentEngine {
  readonly v1: VertexRagSurface
  readonly v1beta1: VertexRagSurface
  readonly #ctx: RagContext
  readonly #writes: EngineWrites

  constructor(options: VertexRagOptions = {}) {
    const ctx = new RagContext(resolveVertexRagOptions(options))
    const writes = new EngineWrites()
    super({ format: FORMAT, save: (out, folder) => saveRag(ctx, out, folder), load: (dir) => loadRag(ctx, dir) }, writes)
    this.#ctx = ctx
    this.#writes = writes
    this.v1 = new VertexRagSurface(ctx, writes, 'v1')
    this.v1beta1 = new VertexRagSurface(ctx, writes, 'v1beta1')
  }

  /**
   * Both surfaces again over the same corpora, but with file:// imports limited to `importRoots`
   * (`[]`: none) whatever the engine's own option: how a server serves an engine that in-process
   * code may trust (`createServer({ engines })`), since trust belongs to the caller, not the data.
   */
  served(importRoots: readonly string[]): { readonly v1: VertexRagSurface; readonly v1beta1: VertexRagSurface } {
    const roots = importRootsOf(importRoots) ?? []
    return { v1: new VertexRagSurface(this.#ctx, this.#writes, 'v1', roots), v1beta1: new VertexRagSurface(this.#ctx, this.#writes, 'v1beta1', roots) }
  }

  /** @internal The corpora of every project and location by name, in creation order, to read only (the console's overview). */
  corpora(): ReadonlyMap<string, RagCorpusState> {
    return this.#ctx.state.corpora
  }

  /** @internal The corpus `name` names, found as listRagFiles finds its parent (the same INVALID_ARGUMENT / NOT_FOUND): the console's chunk counts. */
  readCorpus(name: string | undefined): Promise<Outcome<RagCorpusState>> {
    return toOutcome(async () => this.#ctx.corpus(name, 'parent'), this.#ctx.options.onInternalError)
  }

  /** @internal The file `name` names and its corpus, found as getRagFile finds it (the same INVALID_ARGUMENT / NOT_FOUND): the console's chunk list. */
  readFile(name: string | undefined): Promise<Outcome<{ readonly corpus: RagCorpusState; readonly file: RagFileState }>> {
    return toOutcome(async () => this.#ctx.file(name, 'name'), this.#ctx.options.onInternalError)
  }

  /** @internal retrieveContexts of `version` with each context's core hit explained (the console's explain): the same response, or the same Status. */
  explainRetrieval(version: ApiVersion, request: unknown): Promise<Outcome<Retrieval>> {
    return toOutcome(() => retrieve(this.#ctx, version, request, true), this.#ctx.options.onInternalError)
  }
}
