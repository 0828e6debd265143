import { methodNames, serveTable, type ServiceMethods } from '../rpc/methods.js'
import { Mutex } from '../rpc/mutex.js'
import { toOutcome, type Outcome } from '../rpc/outcome.js'
import { MemoryContext } from './context.js'
import { MEMORY_TABLE, type MemoryApiVersion } from './methods.js'
import { resolveMemoryBankOptions, type MemoryBankOptions } from './options.js'
import { AgentSessions } from './session-service.js'
import { ReasoningEngines } from './engine-service.js'
import type { GenerationWriter, Steps } from '@quarry/core'
import { FORMAT, loadMemoryBank, saveMemoryBank } from './persistence.js'
import { loadEngine, saveEngine } from '../rpc/saved-state.js'
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
export class MemoryBank {
  /** The v1 MemoryBankService: the same memories, operations typed `google.cloud.aiplatform.v1`. */
  readonly v1: MemoryBankSurface
  /** Agent Engine Sessions (SessionService, v1beta1 and `.v1`) under the same reasoning engines, saved with them. */
  readonly sessions: AgentSessions
  /** Agent Engine resources (ReasoningEngineService, v1beta1 and `.v1`): the same engines, saved with them. */
  readonly reasoningEngines: ReasoningEngines
  readonly #ctx: MemoryContext
  readonly #writes = new Mutex()

  constructor(options: MemoryBankOptions = {}) {
    this.#ctx = new MemoryContext(resolveMemoryBankOptions(options))
    const serve = (version: MemoryApiVersion): MemoryBankSurface => serveTable(MEMORY_TABLE, { ctx: this.#ctx, version }, { version, writes: this.#writes, onInternalError: this.#ctx.options.onInternalError })
    Object.assign(this, serve('v1beta1'))
    this.v1 = serve('v1')
    this.sessions = new AgentSessions(this.#ctx, this.#writes)
    this.reasoningEngines = new ReasoningEngines(this.#ctx, this.#writes)
  }

  /**
   * Writes every reasoning engine's memories and operations (and the index snapshots) into `dir` as a generation of core's protocol: the
   * folder's lock held, every file checksummed in a sealed manifest, CURRENT switched atomically.
   * Synchronous: one consistent view.
   */
  saveTo(dir: string): void {
    saveEngine(dir, FORMAT, (out, folder) => saveMemoryBank(this.#ctx, out, folder))
  }

  /**
   * Replaces the state with the one `saveTo` wrote into `dir` (all or nothing: a failing load
   * leaves the current state; every file is checked before it is read). Call it before serving
   * writes: a write in flight would apply to the replaced state.
   */
  loadFrom(dir: string): void {
    loadEngine(dir, FORMAT, (folder) => loadMemoryBank(this.#ctx, folder))
  }

  /** @internal The state as steps into `folder` of a generation being written (a server's data folder); hold writes off with `exclusive`. */
  saveSteps(out: GenerationWriter, folder: string): Steps {
    return saveMemoryBank(this.#ctx, out, folder)
  }

  /** @internal Replaces the state with the one `saveSteps` wrote into `dir` (already checked by its generation). */
  loadFolder(dir: string): void {
    loadMemoryBank(this.#ctx, dir)
  }

  /** @internal Runs `fn` with this engine's writes held off (queued behind it), expiry sweeps deferred. */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.#writes.run(() => this.#ctx.frozen(fn))
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
    return this.#writes.run(() => toOutcome(async () => ({ name: this.#ctx.createEngine(name).name }), this.#ctx.options.onInternalError))
  }
}

/** The method names of MemoryBank, from its table: MemoryBankService's RPCs and the operations, locations and IAM mixins (some UNIMPLEMENTED). */
export const MEMORY_METHODS = methodNames(MEMORY_TABLE)
