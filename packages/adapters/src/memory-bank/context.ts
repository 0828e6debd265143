import { createIndex } from '@quarry/core'
import { EngineContext } from '../rpc/engine-context.js'
import { parseName } from '../rpc/names.js'
import { finishedOperation, remember, type FinishedOperation } from '../rpc/operations.js'
import { failure, invalidArgument } from '../rpc/status.js'
import type { ResolvedMemoryBankOptions } from './options.js'
import type { EngineState, MemoryBankState, MemoryState } from './state.js'

export const ENGINE = 'projects/{project}/locations/{location}/reasoningEngines/{reasoning_engine}'
/** The short form Google's API also binds (`reasoningEngines/123`). */
export const SHORT_ENGINE = 'reasoningEngines/{reasoning_engine}'

/** Checks a reasoning engine name in either form; throws the full form's INVALID_ARGUMENT. */
function parseEngine(name: string | undefined, field: string): void {
  if (name !== undefined && name.startsWith('reasoningEngines/')) parseName(name, SHORT_ENGINE, field)
  else parseName(name, ENGINE, field)
}
/** Memory ids: up to 63 of [a-z0-9-], starting with a letter. */
export const MEMORY_ID = /^[a-z](?:[a-z0-9-]{0,62})$/

/** What every Memory Bank operation works on. */
export class MemoryContext extends EngineContext<ResolvedMemoryBankOptions> {
  readonly state: MemoryBankState = { engines: new Map(), operations: new Map(), seq: 0 }
  protected readonly sequence = this.state






  /** Creates a reasoning engine's memory bank (idempotent). */
  createEngine(name: string): EngineState {
    parseEngine(name, 'name')
    let engine = this.state.engines.get(name)
    if (!engine) {
      const { embedder } = this.options
      engine = { name, memories: new Map(), index: createIndex({ dimensions: embedder.dimensions, metric: 'cosine', dense: this.options.dense, embedder }), nextExpiryMs: Number.POSITIVE_INFINITY }
      this.state.engines.set(name, engine)
    }
    return engine
  }

  /**
   * The reasoning engine named by `parent` with its expired memories swept out; created on first
   * use unless engines are explicit (then NOT_FOUND).
   */
  engine(parent: string | undefined, field: string): EngineState {
    return this.readEngine(parent, field) ?? this.createEngine(parent as string)
  }

  /**
   * The reasoning engine for a read: undefined when it has no memory bank yet (reads never create
   * one, so unknown names cost nothing); NOT_FOUND when engines are explicit.
   */
  readEngine(parent: string | undefined, field: string): EngineState | undefined {
    parseEngine(parent, field)
    const found = this.state.engines.get(parent as string)
    if (!found && this.options.explicitEngines) throw failure('NOT_FOUND', `ReasoningEngine "${parent}" not found.`, field)
    if (found) this.sweep(found)
    return found
  }

  memory(name: string | undefined, field: string): { engine: EngineState; memory: MemoryState } {
    const at = (name ?? '').lastIndexOf('/memories/')
    const id = at < 0 ? '' : (name as string).slice(at + '/memories/'.length)
    if (at < 0 || !MEMORY_ID.test(id)) {
      throw invalidArgument(field, `${field} must be a memory name like "projects/p/locations/l/reasoningEngines/123/memories/456"; received "${name ?? ''}".`)
    }
    const engine = this.readEngine((name as string).slice(0, at), field)
    const memory = engine?.memories.get(name as string)
    if (!engine || !memory) throw failure('NOT_FOUND', `Memory "${name}" not found.`, field)
    return { engine, memory }
  }

  /**
   * Removes memories whose expireTime has passed: they are never returned. A pass over the
   * memories runs only once the earliest known expiry is due.
   */
  sweep(engine: EngineState): void {
    const now = this.now()
    if (now < engine.nextExpiryMs) return
    let next = Number.POSITIVE_INFINITY
    for (const m of engine.memories.values()) {
      if (m.expireMs === undefined) continue
      if (m.expireMs <= now) {
        engine.memories.delete(m.name)
        engine.index.remove(m.name)
      } else next = Math.min(next, m.expireMs)
    }
    engine.nextExpiryMs = next
  }

  /** Notes a memory's expiry so the sweep comes in time. */
  expiresAt(engine: EngineState, expireMs: number | undefined): void {
    if (expireMs !== undefined) engine.nextExpiryMs = Math.min(engine.nextExpiryMs, expireMs)
  }

  operation(resource: string, metadataType: string, responseType: string, response: object): FinishedOperation {
    const op = finishedOperation({ version: 'v1beta1', resource, id: this.numericId(), atMs: this.now(), metadataType, responseType, response })
    remember(this.state.operations, op)
    return op
  }
}
