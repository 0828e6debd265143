import { methodNames, serveTable, type ServiceMethods } from '../rpc/methods.js'
import type { EngineWrites } from '../rpc/engine-writes.js'
import type { MemoryContext } from './context.js'
import type { MemoryApiVersion } from './methods.js'
import { SESSION_TABLE, SESSION_TABLE_V1 } from './session-methods.js'

/** One API version's SessionService: request JSON → Outcome, from SESSION_TABLE (session-methods.ts). */
export type SessionSurface = ServiceMethods<typeof SESSION_TABLE>

// The methods come from SESSION_TABLE: one entry per RPC.
export interface AgentSessions extends SessionSurface {}

/**
 * Vertex AI Agent Engine Sessions in process (v1beta1 SessionService, and `v1` beside it): the
 * sessions of a Memory Bank's reasoning engines, sharing its engines, its write lock, its
 * operations and its saved state (`memoryBank.sessions`).
 */
export class AgentSessions {
  /** The v1 SessionService: the same sessions, operations typed `google.cloud.aiplatform.v1`. */
  readonly v1: SessionSurface

  /** @internal Made by MemoryBank over its context and write lock. */
  constructor(ctx: MemoryContext, writes: EngineWrites) {
    const serve = (version: MemoryApiVersion): SessionSurface =>
      serveTable(version === 'v1' ? SESSION_TABLE_V1 : SESSION_TABLE, { ctx, version }, ctx.serveOptions(version, writes))
    Object.assign(this, serve('v1beta1'))
    this.v1 = serve('v1')
  }
}

/** The method names of SessionService, from its table. */
export const SESSION_METHODS = methodNames(SESSION_TABLE)
