import { methodNames, serveTable, type ServiceMethods } from '../rpc/methods.js'
import { Mutex } from '../rpc/mutex.js'
import { RagContext } from './context.js'
import { RAG_DATA_TABLE, RAG_MIXIN_TABLE, RAG_SERVICE_TABLE } from './methods.js'
import { importRootsOf, resolveVertexRagOptions, type ImportRoot, type VertexRagOptions } from './options.js'
import type { GenerationWriter, Steps } from '@quarry/core'
import { FORMAT, loadRag, saveRag } from './persistence.js'
import { loadEngine, saveEngine } from '../rpc/saved-state.js'
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

  constructor(ctx: RagContext, writes: Mutex, version: ApiVersion, importRoots: readonly ImportRoot[] | undefined = ctx.options.importRoots) {
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
export class VertexRagEngine {
  readonly v1: VertexRagSurface
  readonly v1beta1: VertexRagSurface
  readonly #ctx: RagContext
  readonly #writes = new Mutex()

  constructor(options: VertexRagOptions = {}) {
    const ctx = new RagContext(resolveVertexRagOptions(options))
    this.#ctx = ctx
    this.v1 = new VertexRagSurface(ctx, this.#writes, 'v1')
    this.v1beta1 = new VertexRagSurface(ctx, this.#writes, 'v1beta1')
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

  /**
   * Writes every corpus, file, schema, metadata and operation (and the index snapshots) into `dir` as a generation of core's protocol: the
   * folder's lock held, every file checksummed in a sealed manifest, CURRENT switched atomically.
   * Synchronous: one consistent view.
   */
  saveTo(dir: string): void {
    saveEngine(dir, FORMAT, (out, folder) => saveRag(this.#ctx, out, folder))
  }

  /**
   * Replaces the state with the one `saveTo` wrote into `dir` (all or nothing: a failing load
   * leaves the current state; every file is checked before it is read). Call it before serving
   * writes: a write in flight would apply to the replaced state.
   */
  loadFrom(dir: string): void {
    loadEngine(dir, FORMAT, (folder) => loadRag(this.#ctx, folder))
  }

  /** @internal The state as steps into `folder` of a generation being written (a server's data folder); hold writes off with `exclusive`. */
  saveSteps(out: GenerationWriter, folder: string): Steps {
    return saveRag(this.#ctx, out, folder)
  }

  /** @internal Replaces the state with the one `saveSteps` wrote into `dir` (already checked by its generation). */
  loadFolder(dir: string): void {
    loadRag(this.#ctx, dir)
  }

  /** @internal Runs `fn` with this engine's writes held off (queued behind it). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#writes.run(fn)
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
