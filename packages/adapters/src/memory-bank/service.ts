import { methodNames, serveTable, type ServiceMethods } from '../rpc/methods.js'
import { Mutex } from '../rpc/mutex.js'
import { toOutcome, type Outcome } from '../rpc/outcome.js'
import { MemoryContext } from './context.js'
import { MEMORY_TABLE } from './methods.js'
import { resolveMemoryBankOptions, type MemoryBankOptions } from './options.js'
import { loadMemoryBank, saveMemoryBank } from './persistence.js'

// The methods come from MEMORY_TABLE (methods.ts): one entry per RPC.
export interface MemoryBank extends ServiceMethods<typeof MEMORY_TABLE> {}

/**
 * Vertex AI Agent Engine Memory Bank in process (v1beta1 MemoryBankService): every method takes
 * the request JSON and resolves to an Outcome. Writes are serialized; retrieval runs beside them.
 * Each reasoning engine has its own memories and index; scopes isolate memories within it.
 */
export class MemoryBank {
  readonly #ctx: MemoryContext
  readonly #writes = new Mutex()

  constructor(options: MemoryBankOptions = {}) {
    this.#ctx = new MemoryContext(resolveMemoryBankOptions(options))
    Object.assign(this, serveTable(MEMORY_TABLE, this.#ctx, { writes: this.#writes, onInternalError: this.#ctx.options.onInternalError }))
  }

  /** Writes every reasoning engine's memories and operations (and the index snapshots) into the empty folder `dir`. */
  saveTo(dir: string): void {
    saveMemoryBank(this.#ctx, dir)
  }

  /**
   * Replaces the state with the one `saveTo` wrote into `dir` (all or nothing: a failing load
   * leaves the current state). Call it before serving writes: a write in flight would apply to
   * the replaced state.
   */
  loadFrom(dir: string): void {
    loadMemoryBank(this.#ctx, dir)
  }

  /** Creates a reasoning engine's memory bank (needed first with `explicitEngines`). Not an RPC of MemoryBankService. */
  createReasoningEngine(name: string): Promise<Outcome<{ name: string }>> {
    return this.#writes.run(() => toOutcome(async () => ({ name: this.#ctx.createEngine(name).name }), this.#ctx.options.onInternalError))
  }
}

/** The method names of MemoryBank, from its table: MemoryBankService's RPCs and the operations, locations and IAM mixins (some UNIMPLEMENTED). */
export const MEMORY_METHODS = methodNames(MEMORY_TABLE)
