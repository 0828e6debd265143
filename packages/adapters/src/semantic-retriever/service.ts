import { methodNames, serveTable, type ServiceMethods } from '../rpc/methods.js'
import { Mutex } from '../rpc/mutex.js'
import { RetrieverContext } from './context.js'
import { RETRIEVER_TABLE } from './methods.js'
import { resolveRetrieverOptions, type SemanticRetrieverOptions } from './options.js'
import { loadRetriever, saveRetriever } from './persistence.js'

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

  constructor(options: SemanticRetrieverOptions = {}) {
    this.#ctx = new RetrieverContext(resolveRetrieverOptions(options))
    Object.assign(this, serveTable(RETRIEVER_TABLE, this.#ctx, { writes: new Mutex(), onInternalError: this.#ctx.options.onInternalError }))
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
}

/** The method names of RetrieverService, from SemanticRetriever's table (every RPC of the service). */
export const RETRIEVER_METHODS = methodNames(RETRIEVER_TABLE)
