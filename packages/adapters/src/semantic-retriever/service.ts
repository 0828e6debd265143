import { methodNames, serveTable, type ServiceMethods } from '../rpc/methods.js'
import { EngineWrites } from '../rpc/engine-writes.js'
import { RetrieverContext } from './context.js'
import { RETRIEVER_TABLE } from './methods.js'
import { resolveRetrieverOptions, type SemanticRetrieverOptions } from './options.js'
import { FORMAT, loadRetriever, saveRetriever } from './persistence.js'
import { PersistentEngine } from '../rpc/persistent-engine.js'
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
export class SemanticRetriever extends PersistentEngine {
  readonly #ctx: RetrieverContext

  constructor(options: SemanticRetrieverOptions = {}) {
    const ctx = new RetrieverContext(resolveRetrieverOptions(options))
    const writes = new EngineWrites()
    super({ format: FORMAT, save: (out, folder) => saveRetriever(ctx, out, folder), load: (dir, sumOf) => loadRetriever(ctx, dir, sumOf) }, writes)
    this.#ctx = ctx
    Object.assign(this, serveTable(RETRIEVER_TABLE, ctx, { writes, onInternalError: ctx.options.onInternalError }))
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
