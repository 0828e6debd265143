import { UNARY, longRunningShape, method, pagedShape, type HttpBinding, type HttpVerb } from '../rpc/methods.js'
import { locationAndIamMixin, operationsMixin } from '../rpc/mixins.js'
import { appendEvent, listEvents } from './events.js'
import type { MemoryApiVersion, MemoryCall } from './methods.js'
import type { SessionJson } from './session-state.js'
import { createSession, deleteSession, getSession, listSessions, updateSession } from './sessions.js'

const read = false
const write = true

/**
 * Google's bindings: under projects/*\/locations/* and, in v1beta1 only, the additional
 * `reasoningEngines/*` alone (session_service.proto of each version).
 */
function bindings(version: MemoryApiVersion, verb: HttpVerb, path: (engine: string) => string, body?: string): readonly HttpBinding[] {
  const engines = version === 'v1beta1' ? ['projects/*/locations/*/reasoningEngines/*', 'reasoningEngines/*'] : ['projects/*/locations/*/reasoningEngines/*']
  return engines.map((engine) => ({ verb, path: path(engine), ...(body === undefined ? {} : { body }) }))
}

/**
 * google.cloud.aiplatform.{v1,v1beta1}.SessionService, every method once, and the mixins its
 * client carries: sessions and their events under Memory Bank's reasoning engines (sessions.ts,
 * events.ts). The two versions differ only in their HTTP bindings and their operations' types.
 */
function sessionTable(version: MemoryApiVersion) {
  return {
    createSession: method({ rpc: 'CreateSession', run: (c: MemoryCall, r) => c.ctx.applied(() => createSession(c.ctx, r, c.version)), write, shape: longRunningShape<SessionJson>(), http: bindings(version, 'POST', (E) => `{parent=${E}}/sessions`, 'session') }),
    getSession: method({ rpc: 'GetSession', run: (c: MemoryCall, r) => getSession(c.ctx, r), write: read, shape: UNARY, http: bindings(version, 'GET', (E) => `{name=${E}/sessions/*}`) }),
    listSessions: method({ rpc: 'ListSessions', run: (c: MemoryCall, r) => listSessions(c.ctx, r), write: read, shape: pagedShape('sessions'), http: bindings(version, 'GET', (E) => `{parent=${E}}/sessions`) }),
    updateSession: method({ rpc: 'UpdateSession', run: (c: MemoryCall, r) => updateSession(c.ctx, r), write, shape: UNARY, http: bindings(version, 'PATCH', (E) => `{session.name=${E}/sessions/*}`, 'session') }),
    deleteSession: method({ rpc: 'DeleteSession', run: (c: MemoryCall, r) => deleteSession(c.ctx, r, c.version), write, shape: longRunningShape<Record<string, never>>(), http: bindings(version, 'DELETE', (E) => `{name=${E}/sessions/*}`) }),
    listEvents: method({ rpc: 'ListEvents', run: (c: MemoryCall, r) => listEvents(c.ctx, r), write: read, shape: pagedShape('sessionEvents'), http: bindings(version, 'GET', (E) => `{parent=${E}/sessions/*}/events`) }),
    appendEvent: method({ rpc: 'AppendEvent', run: (c: MemoryCall, r) => appendEvent(c.ctx, r), write, shape: UNARY, http: bindings(version, 'POST', (E) => `{name=${E}/sessions/*}:appendEvent`, 'event') }),
    // The mixins its client carries: the engine's operations (bound over HTTP and gRPC once, by transport/bound-methods.ts).
    ...operationsMixin((c: MemoryCall) => c.ctx.state.operations),
    ...locationAndIamMixin(),
  } as const
}

/** SessionService of v1beta1 (with the short `reasoningEngines/*` bindings). */
export const SESSION_TABLE = sessionTable('v1beta1')
/** SessionService of v1: the same methods, bound under projects/*\/locations/* only. */
export const SESSION_TABLE_V1: typeof SESSION_TABLE = sessionTable('v1')
