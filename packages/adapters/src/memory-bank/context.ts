import { createIndex, LinkableFile } from '@quarry/core'
import { EngineContext } from '../rpc/engine-context.js'
import type { ServeOptions } from '../rpc/methods.js'
import type { EngineWrites } from '../rpc/engine-writes.js'
import { parseName, type IdRule, type ResourceName } from '../rpc/names.js'
import { finishedOperation, remember, type Operation } from '../rpc/operations.js'
import { failure } from '../rpc/status.js'
import type { ResolvedMemoryBankOptions } from './options.js'
import { removeMemory, type EngineState, type MemoryBankState, type MemoryState } from './state.js'

export const ENGINE = 'projects/{project}/locations/{location}/reasoningEngines/{reasoning_engine}'
/** The short form Google's API also binds (`reasoningEngines/123`). */
export const SHORT_ENGINE = 'reasoningEngines/{reasoning_engine}'
const MEMORY = `${ENGINE}/memories/{memory}`
const SHORT_MEMORY = `${SHORT_ENGINE}/memories/{memory}`

/**
 * An id a user gives a memory or a session: "This value may be up to 63 characters, and valid
 * characters are `[a-z0-9-]`. The first character must be a letter, and the last character must
 * be a letter or number" (memory_bank_service.proto, CreateMemoryRequest.memory_id; the same
 * words for session_service.proto's session_id).
 */
export const USER_ID_RULE: IdRule = { test: /^[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/, says: 'up to 63 of a-z, 0-9 and -, starting with a letter and ending with a letter or digit' }
/**
 * Memory and session ids in names: a user's id or a generated one (Google generates numbers, as
 * `memories/123`), so a name of this form that names nothing is NOT_FOUND, not INVALID_ARGUMENT.
 * A trailing "-" is read too: an id an earlier Quarry accepted (`tea-`) stays addressable.
 */
export const NAMED_ID_RULE: IdRule = { test: /^[a-z0-9][a-z0-9-]{0,62}$/, says: 'up to 63 of a-z, 0-9 and -, not starting with -' }

/** A reasoning engine name in either form (the full form's message when it is neither). */
function parseEngine(name: string | undefined, field: string): ResourceName<'reasoning_engine'> {
  return name?.startsWith('reasoningEngines/') === true ? parseName(name, SHORT_ENGINE, field) : parseName(name, ENGINE, field)
}

/** A memory name under an engine name of either form. */
function parseMemory(name: string | undefined, field: string): ResourceName<'reasoning_engine' | 'memory'> {
  return name?.startsWith('reasoningEngines/') === true ? parseName(name, SHORT_MEMORY, field, { memory: NAMED_ID_RULE }) : parseName(name, MEMORY, field, { memory: NAMED_ID_RULE })
}

/** Revision ids: the decimal numbers Quarry gives a memory's revisions in order. */
const REVISION_ID_RULE: IdRule = { test: /^[1-9][0-9]{0,15}$/, says: 'a decimal number' }

/** A memory revision name under a memory name of either form. */
export function parseRevision(name: string | undefined, field: string): ResourceName<'reasoning_engine' | 'memory' | 'revision'> {
  const rules = { memory: NAMED_ID_RULE, revision: REVISION_ID_RULE }
  return name?.startsWith('reasoningEngines/') === true ? parseName(name, `${SHORT_MEMORY}/revisions/{revision}`, field, rules) : parseName(name, `${MEMORY}/revisions/{revision}`, field, rules)
}

/** What every Memory Bank operation works on. */
export class MemoryContext extends EngineContext<ResolvedMemoryBankOptions> {
  readonly state: MemoryBankState = { engines: new Map(), operations: new Map(), seq: 0 }
  /**
   * `state.json` as last saved or loaded: a checkpoint links that copy while nothing changed the
   * state since ({@link changed}), so one after writes to other engines does not write it again.
   * Replaced by a load that succeeds (persistence.ts).
   */
  stateFile = new LinkableFile()
  /** Checkpoints under way (see `frozen`). */
  #frozen = 0
  /** Engines made on first use by the write under way (see `applied`); undefined outside one. */
  #made: string[] | undefined
  protected readonly sequence = this.state

  /**
   * Runs a write that may make its reasoning engine on first use; if the write fails, an engine it
   * made is taken back. A failed write is not in the write-ahead log: an engine it left would be
   * missing after a replay, and as an engine's expiry sweep reads the clock only where the engine
   * exists, the next write's replay would ask for its outside values in another order. Writes are
   * serialized (one mutex for the three services), so an engine made meanwhile is this write's.
   */
  async applied<T>(write: () => Promise<T>): Promise<T> {
    const made: string[] = []
    this.#made = made
    try {
      return await write()
    } catch (error) {
      for (const name of made) this.state.engines.delete(name)
      throw error
    } finally {
      this.#made = undefined
    }
  }

  /**
   * Notes a change to the state: every write once it has run (the services' tables call it inside
   * the write lock, see {@link serveOptions}) and every expiry sweep that removes a memory. The
   * next save writes `state.json` anew.
   */
  changed(): void {
    this.stateFile.changed()
  }

  /** How the Memory Bank's services serve their tables: writes under `writes`, each noted as a change. */
  serveOptions(version: string, writes: EngineWrites): ServeOptions {
    return { version, writes, onWrite: () => this.changed(), onInternalError: this.options.onInternalError }
  }

  /** Creates a reasoning engine's memory bank (idempotent). */
  createEngine(name: string | undefined): EngineState {
    return this.#created(parseEngine(name, 'name').name)
  }

  #created(name: string): EngineState {
    let engine = this.state.engines.get(name)
    if (!engine) {
      const { embedder } = this.options
      engine = { name, memories: new Map(), index: createIndex({ dimensions: embedder.dimensions, metric: 'cosine', dense: this.options.dense, embedder }), nextExpiryMs: Number.POSITIVE_INFINITY, sessions: new Map(), nextSessionExpiryMs: Number.POSITIVE_INFINITY }
      this.state.engines.set(name, engine)
      this.#made?.push(name)
    }
    return engine
  }

  /**
   * The reasoning engine named by `parent` with its expired memories swept out; created on first
   * use unless engines are explicit (then NOT_FOUND).
   */
  engine(parent: string | undefined, field: string): EngineState {
    const found = this.findEngine(parent, field)
    return found.engine ?? this.#created(found.name)
  }

  /**
   * The reasoning engine for a read: undefined when it has no memory bank yet (reads never create
   * one, so unknown names cost nothing); NOT_FOUND when engines are explicit.
   */
  readEngine(parent: string | undefined, field: string): EngineState | undefined {
    return this.findEngine(parent, field).engine
  }

  /** The engine's name, parsed, and its memory bank if it has one (as `readEngine`). */
  findEngine(parent: string | undefined, field: string): { readonly name: string; readonly engine: EngineState | undefined } {
    const { name } = parseEngine(parent, field)
    return { name, engine: this.#found(name, field) }
  }

  #found(name: string, field: string): EngineState | undefined {
    const found = this.state.engines.get(name)
    if (!found && this.options.explicitEngines) throw failure('NOT_FOUND', `ReasoningEngine "${name}" not found.`, field)
    if (found) this.sweep(found)
    return found
  }

  memory(name: string | undefined, field: string): { engine: EngineState; memory: MemoryState } {
    const parsed = parseMemory(name, field)
    const engine = this.#found(parsed.names.reasoning_engine, field)
    const memory = engine?.memories.get(parsed.name)
    if (!engine || !memory || !this.visible(memory)) throw failure('NOT_FOUND', `Memory "${parsed.name}" not found.`, field)
    return { engine, memory }
  }

  /**
   * Removes memories whose expireTime has passed: they are never returned. A pass over the
   * memories runs only once the earliest known expiry is due.
   */
  sweep(engine: EngineState): void {
    // While a checkpoint writes the state out, nothing may change it: reads hide expired memories instead.
    if (this.#frozen > 0) return
    const now = this.now()
    if (now < engine.nextExpiryMs) return
    let next = Number.POSITIVE_INFINITY
    for (const m of engine.memories.values()) {
      if (m.expireMs === undefined) continue
      if (m.expireMs <= now) {
        this.changed()
        removeMemory(engine, m)
        engine.index.remove(m.name)
      } else next = Math.min(next, m.expireMs)
    }
    engine.nextExpiryMs = next
  }

  /**
   * Runs `fn` (a checkpoint writing the state out, writes held off by the caller) with expiry sweeps
   * deferred: meanwhile reads hide what has expired ({@link visible}) and the next sweep removes it.
   */
  async frozen<T>(fn: () => Promise<T>): Promise<T> {
    this.#frozen++
    try {
      return await fn()
    } finally {
      this.#frozen--
    }
  }

  /** Whether a read may return the memory: always, except one expired while sweeps are deferred. */
  visible(m: MemoryState): boolean {
    return this.#frozen === 0 || m.expireMs === undefined || m.expireMs > this.now()
  }

  /** Notes a memory's expiry so the sweep comes in time. */
  expiresAt(engine: EngineState, expireMs: number | undefined): void {
    if (expireMs !== undefined) engine.nextExpiryMs = Math.min(engine.nextExpiryMs, expireMs)
  }

  /** A finished operation of the API `version` the call came through (its types are that version's). */
  operation(resource: string, metadataType: string, responseType: string, response: object, version = 'v1beta1'): Operation {
    const op = finishedOperation({ version, resource, id: this.numericId(), atMs: this.now(), metadataType, responseType, response })
    remember(this.state.operations, op)
    return op
  }
}
