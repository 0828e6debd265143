import { methodNames, serveTable, type ServiceMethods } from '../rpc/methods.js'
import type { EngineWrites } from '../rpc/engine-writes.js'
import type { MemoryContext } from './context.js'
import { REASONING_ENGINE_TABLE, REASONING_ENGINE_TABLE_V1 } from './engine-methods.js'
import type { MemoryApiVersion } from './methods.js'

/** One API version's ReasoningEngineService: request JSON → Outcome, from REASONING_ENGINE_TABLE (engine-methods.ts). */
export type ReasoningEngineSurface = ServiceMethods<typeof REASONING_ENGINE_TABLE>

// The methods come from REASONING_ENGINE_TABLE: one entry per RPC.
export interface ReasoningEngines extends ReasoningEngineSurface {}

/**
 * Vertex AI Agent Engine resources in process (v1beta1 ReasoningEngineService, and `v1` beside
 * it): the engines of a Memory Bank, sharing its write lock, its operations and its saved state
 * (`memoryBank.reasoningEngines`).
 */
export class ReasoningEngines {
  /** The v1 ReasoningEngineService: the same engines, operations typed `google.cloud.aiplatform.v1`. */
  readonly v1: ReasoningEngineSurface

  /** @internal Made by MemoryBank over its context and write lock. */
  constructor(ctx: MemoryContext, writes: EngineWrites) {
    const serve = (version: MemoryApiVersion): ReasoningEngineSurface =>
      serveTable(version === 'v1' ? REASONING_ENGINE_TABLE_V1 : REASONING_ENGINE_TABLE, { ctx, version }, ctx.serveOptions(version, writes))
    Object.assign(this, serve('v1beta1'))
    this.v1 = serve('v1')
  }
}

/** The method names of ReasoningEngineService (and the execution service's query methods), from its table. */
export const REASONING_ENGINE_METHODS = methodNames(REASONING_ENGINE_TABLE)
