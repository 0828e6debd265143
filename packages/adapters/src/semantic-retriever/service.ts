import { methodNames, serveTable, type ServiceMethods } from '../rpc/methods.js'
import { Mutex } from '../rpc/mutex.js'
import { RetrieverContext } from './context.js'
import { RETRIEVER_TABLE } from './methods.js'
import { resolveRetrieverOptions, type SemanticRetrieverOptions } from './options.js'
import type { GenerationWriter, Steps } from '@quarry/core'
import { FORMAT, loadRetriever, saveRetriever } from './persistence.js'
import { loadEngine, saveEngine } from '../rpc/saved-state.js'
import { toOutcome, type Outcome } from '../rpc/outcome.js'
import { searchCorpus, type CorpusSearch } from './query.js'
import type { CorpusState } from './state.js'

// The methods come from RETRIEVER_TABLE (methods.ts): one entry per RPC.
export interface SemanticRetriever extends ServiceMethods<typeof RETRIEVER_TABLE> {}

/**
 * The Semantic Retriever of one project, in process: every method of
 * google.ai.generativelanguage.v1beta.RetrieverService takes the request JSON and resolves to an
 * Outcome — the response JSON or a google.rpc.Status. Methods never throw for bad requests.
 * Writes are serialized; queries and reads run beside them and see each write whole.
 */
export class SemanticRetriever {
  readonly #ctx: RetrieverContext
  readonly #writes = new Mutex()

  constructor(options: SemanticRetrieverOptions = {}) {
    this.#ctx = new RetrieverContext(resolveRetrieverOptions(options))
    Object.assign(this, serveTable(RETRIEVER_TABLE, this.#ctx, { writes: this.#writes, onInternalError: this.#ctx.options.onInternalError }))
  }

  /**
   * Writes every corpus, document and chunk (and the index snapshots) into `dir` as a generation of core's protocol: the
   * folder's lock held, every file checksummed in a sealed manifest, CURRENT switched atomically.
   * Synchronous: one consistent view.
   */
  saveTo(dir: string): void {
    saveEngine(dir, FORMAT, (out, folder) => saveRetriever(this.#ctx, out, folder))
  }

  /**
   * Replaces the state with the one `saveTo` wrote into `dir` (all or nothing: a failing load
   * leaves the current state; every file is checked before it is read). Call it before serving
   * writes: a write in flight would apply to the replaced state.
   */
  loadFrom(dir: string): void {
    loadEngine(dir, FORMAT, (folder) => loadRetriever(this.#ctx, folder))
  }

  /** @internal The state as steps into `folder` of a generation being written (a server's data folder); hold writes off with `exclusive`. */
  saveSteps(out: GenerationWriter, folder: string): Steps {
    return saveRetriever(this.#ctx, out, folder)
  }

  /** @internal Replaces the state with the one `saveSteps` wrote into `dir` (already checked by its generation). */
  loadFolder(dir: string): void {
    loadRetriever(this.#ctx, dir)
  }

  /** @internal Runs `fn` with this engine's writes held off (queued behind it). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#writes.run(fn)
  }

  /** @internal The corpora by name, in creation order, to read only (the console's overview). */
  corpora(): ReadonlyMap<string, CorpusState> {
    return this.#ctx.state.corpora
  }

  /** @internal queryCorpus with each result's core hit (the console's explain): the same response, or the same Status. */
  searchCorpus(request: unknown): Promise<Outcome<CorpusSearch>> {
    return toOutcome(() => searchCorpus(this.#ctx, request), this.#ctx.options.onInternalError)
  }
}

/** The method names of RetrieverService, from SemanticRetriever's table (every RPC of the service). */
export const RETRIEVER_METHODS = methodNames(RETRIEVER_TABLE)
