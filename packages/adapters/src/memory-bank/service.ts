import { methodNames, serveTable, type ServiceMethods } from '../rpc/methods.js'
import { EngineWrites } from '../rpc/engine-writes.js'
import { toOutcome, type Outcome } from '../rpc/outcome.js'
import { MemoryContext } from './context.js'
import { MEMORY_TABLE, type MemoryApiVersion } from './methods.js'
import { resolveMemoryBankOptions, type MemoryBankOptions } from './options.js'
import { AgentSessions } from './session-service.js'
import { ReasoningEngines } from './engine-service.js'
import { FORMAT, loadMemoryBank, saveMemoryBank } from './persistence.js'
import { PersistentEngine } from '../rpc/persistent-engine.js'
import type { EngineState } from './state.js'

// The methods come from MEMORY_TABLE (methods.ts): one entry per RPC.
export interface MemoryBank extends ServiceMethods<typeof MEMORY_TABLE> {}

/** One API version's MemoryBankService over a Memory Bank's memories (MemoryBank itself is the v1beta1 one). */
export type MemoryBankSurface = ServiceMethods<typeof MEMORY_TABLE>

/**
 * Vertex AI Agent Engine Memory Bank in process (v1beta1 MemoryBankService, and `v1` beside it over
 * the same memories): every method takes the request JSON and resolves to an Outcome. Writes are
 * serialized; retrieval runs beside them. Each reasoning engine has its own memories and index;
 * scopes isolate memories within it.
 */
export class MemoryBank extends PersistentEngine {
  /** The v1 MemoryBankService: the same memories, operations typed `google.cloud.aiplatform.v1`. */
  readonly v1: MemoryBankSurface
  /** Agent Engine Sessions (SessionService, v1beta1 and `.v1`) under the same reasoning engines, saved with them. */
  readonly sessions: AgentSessions
  /** Agent Engine resources (ReasoningEngineService, v1beta1 and `.v1`): the same engines, saved with them. */
  readonly reasoningEngines: ReasoningEngines
  readonly #ctx: MemoryContext
  readonly #writes: EngineWrites

  constructor(options: MemoryBankOptions = {}) {
    const ctx = new MemoryContext(resolveMemoryBankOptions(options))
    const writes = new EngineWrites()
    // A save also defers expiry sweeps: they change the state without a write.
    super({ format: FORMAT, save: (out, folder) => saveMemoryBank(ctx, out, folder), load: (dir, sumOf) => loadMemoryBank(ctx, dir, sumOf), hold: (fn) => ctx.frozen(fn) }, writes)
    this.#ctx = ctx
    this.#writes = writes
    const serve = (version: MemoryApiVersion): MemoryBankSurface => serveTable(MEMORY_TABLE, { ctx, version }, ctx.serveOptions(version, writes))
    Object.assign(this, serve('v1beta1'))
    this.v1 = serve('v1')
    this.sessions = new AgentSessions(ctx, writes)
    this.reasoningEngines = new ReasoningEngines(ctx, writes)
  }

  /** @internal The reasoning engines by name, in creation order, to read only (the console's overview). */
  engines(): ReadonlyMap<string, EngineState> {
    return this.#ctx.state.engines
  }

  /** @internal The engine's clock, in epoch milliseconds (what expiry is measured against). */
  now(): number {
    return this.#ctx.now()
  }

  /**
   * @internal The reasoning engine `parent` names, as listMemories finds it (expired memories swept;
   * undefined before its first memory; NOT_FOUND with `explicitEngines`; INVALID_ARGUMENT for a bad name).
   */
  readEngine(parent: string | undefined): Promise<Outcome<EngineState | undefined>> {
    return toOutcome(async () => this.#ctx.readEngine(parent, 'parent'), this.#ctx.options.onInternalError)
  }

  /** Creates a reasoning engine's memory bank (needed first with `explicitEngines`). Not an RPC of MemoryBankService. */
  createReasoningEngine(name: string): Promise<Outcome<{ name: string }>> {
    return this.#writes.write(() =>
      toOutcome(async () => {
        const made = this.#ctx.createEngine(name)
        this.#ctx.changed()
        return { name: made.name }
      }, this.#ctx.options.onInternalError),
    )
  }
}

/** The method names of MemoryBank, from its table: MemoryBankService's RPCs and the operations, locations and IAM mixins (some UNIMPLEMENTED). */
export const MEMORY_METHODS = methodNames(MEMORY_TABLE)
