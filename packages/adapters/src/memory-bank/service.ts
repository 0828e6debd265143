import { Mutex } from '../rpc/mutex.js'
import type { FinishedOperation } from '../rpc/operations.js'
import { toOutcome, type Outcome } from '../rpc/outcome.js'
import { message, readMessage, string } from '../rpc/proto-json.js'
import { failure } from '../rpc/status.js'
import { MemoryContext } from './context.js'
import { generateMemories, purgeMemories } from './generate.js'
import { createMemory, deleteMemory, getMemory, listMemories, updateMemory } from './memories.js'
import { resolveMemoryBankOptions, type MemoryBankOptions } from './options.js'
import { loadMemoryBank, saveMemoryBank } from './persistence.js'
import { retrieveMemories, type RetrieveMemoriesResponseJson } from './retrieve.js'
import type { MemoryJson } from './state.js'

const GetOperationRequest = message('google.longrunning.GetOperationRequest', { name: string })

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
  }

  #read<T>(op: (ctx: MemoryContext, request: unknown) => Promise<T>, request: unknown): Promise<Outcome<T>> {
    return toOutcome(() => op(this.#ctx, request), this.#ctx.options.onInternalError)
  }
  #write<T>(op: (ctx: MemoryContext, request: unknown) => Promise<T>, request: unknown): Promise<Outcome<T>> {
    return this.#writes.run(() => this.#read(op, request))
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

  /** Creates a reasoning engine's memory bank (needed first with `explicitEngines`). */
  createReasoningEngine(name: string): Promise<Outcome<{ name: string }>> {
    return this.#write(async (ctx) => ({ name: ctx.createEngine(name).name }), undefined)
  }
  createMemory(request: unknown): Promise<Outcome<FinishedOperation>> {
    return this.#write(createMemory, request)
  }
  getMemory(request: unknown): Promise<Outcome<MemoryJson>> {
    return this.#read(getMemory, request)
  }
  updateMemory(request: unknown): Promise<Outcome<FinishedOperation>> {
    return this.#write(updateMemory, request)
  }
  deleteMemory(request: unknown): Promise<Outcome<FinishedOperation>> {
    return this.#write(deleteMemory, request)
  }
  listMemories(request: unknown): Promise<Outcome<{ memories?: MemoryJson[]; nextPageToken?: string }>> {
    return this.#read(listMemories, request)
  }
  retrieveMemories(request: unknown): Promise<Outcome<RetrieveMemoriesResponseJson>> {
    return this.#read(retrieveMemories, request)
  }
  generateMemories(request: unknown): Promise<Outcome<FinishedOperation>> {
    return this.#write(generateMemories, request)
  }
  purgeMemories(request: unknown): Promise<Outcome<FinishedOperation>> {
    return this.#write(purgeMemories, request)
  }
  getOperation(request: unknown): Promise<Outcome<FinishedOperation>> {
    return this.#read(async (ctx) => {
      const { name } = readMessage(GetOperationRequest, request)
      const op = name === undefined ? undefined : ctx.state.operations.get(name)
      if (!op) throw failure('NOT_FOUND', `Operation "${name ?? ''}" not found.`, 'name')
      return op
    }, request)
  }
}

export const MEMORY_METHODS = [
  'createMemory',
  'getMemory',
  'updateMemory',
  'deleteMemory',
  'listMemories',
  'retrieveMemories',
  'generateMemories',
  'purgeMemories',
  'getOperation',
] as const satisfies readonly (keyof MemoryBank)[]
