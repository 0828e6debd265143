import { UNARY, longRunningShape, method, pagedShape, unimplemented, type HttpBinding, type HttpVerb } from '../rpc/methods.js'
import { locationAndIamMixin, operationsMixin } from '../rpc/mixins.js'
import type { MemoryApiVersion, MemoryCall } from './methods.js'
import { createReasoningEngine, deleteReasoningEngine, getReasoningEngine, listReasoningEngines, updateReasoningEngine, type ReasoningEngineJson } from './reasoning-engines.js'

const read = false
const write = true

/**
 * Google's bindings (reasoning_engine_service.proto of each version): under projects/*\/locations/*
 * and, in v1beta1 only, the additional ones without it. `path` gets the collection's parent
 * pattern (`projects/*\/locations/*`, or '' for the short form).
 */
function bindings(version: MemoryApiVersion, verb: HttpVerb, path: (location: string) => string, body?: string): readonly HttpBinding[] {
  const locations = version === 'v1beta1' ? ['projects/*/locations/*/', ''] : ['projects/*/locations/*/']
  return locations.map((location) => ({ verb, path: path(location), ...(body === undefined ? {} : { body }) }))
}

const NO_AGENT_CODE = 'Quarry serves the resources of Agent Engine (reasoning engines, their memories and sessions) but runs no deployed agent code; call your agent in process.'

/**
 * google.cloud.aiplatform.{v1,v1beta1}.ReasoningEngineService (reasoning-engines.ts), and
 * ReasoningEngineExecutionService's query methods answering UNIMPLEMENTED: there is no deployed
 * agent to run.
 */
function reasoningEngineTable(version: MemoryApiVersion) {
  const query = (rpc: string, suffix: string) =>
    method({ rpc, service: 'ReasoningEngineExecutionService', run: unimplemented(`ReasoningEngineExecutionService.${rpc}`, NO_AGENT_CODE), write: read, shape: UNARY, http: bindings(version, 'POST', (L) => `{name=${L}reasoningEngines/*}:${suffix}`, '*') })
  return {
    createReasoningEngine: method({ rpc: 'CreateReasoningEngine', run: (c: MemoryCall, r) => c.ctx.applied(() => createReasoningEngine(c.ctx, r, c.version)), write, shape: longRunningShape<ReasoningEngineJson>(), http: bindings(version, 'POST', (L) => (L === '' ? 'reasoningEngines' : `{parent=${L.slice(0, -1)}}/reasoningEngines`), 'reasoningEngine') }),
    getReasoningEngine: method({ rpc: 'GetReasoningEngine', run: (c: MemoryCall, r) => getReasoningEngine(c.ctx, r), write: read, shape: UNARY, http: bindings(version, 'GET', (L) => `{name=${L}reasoningEngines/*}`) }),
    listReasoningEngines: method({ rpc: 'ListReasoningEngines', run: (c: MemoryCall, r) => listReasoningEngines(c.ctx, r), write: read, shape: pagedShape('reasoningEngines'), http: bindings(version, 'GET', (L) => (L === '' ? 'reasoningEngines' : `{parent=${L.slice(0, -1)}}/reasoningEngines`)) }),
    updateReasoningEngine: method({ rpc: 'UpdateReasoningEngine', run: (c: MemoryCall, r) => updateReasoningEngine(c.ctx, r, c.version), write, shape: longRunningShape<ReasoningEngineJson>(), http: bindings(version, 'PATCH', (L) => `{reasoningEngine.name=${L}reasoningEngines/*}`, 'reasoningEngine') }),
    deleteReasoningEngine: method({ rpc: 'DeleteReasoningEngine', run: (c: MemoryCall, r) => deleteReasoningEngine(c.ctx, r, c.version), write, shape: longRunningShape<Record<string, never>>(), http: bindings(version, 'DELETE', (L) => `{name=${L}reasoningEngines/*}`) }),
    queryReasoningEngine: query('QueryReasoningEngine', 'query'),
    streamQueryReasoningEngine: query('StreamQueryReasoningEngine', 'streamQuery'),
    asyncQueryReasoningEngine: query('AsyncQueryReasoningEngine', 'asyncQuery'),
    cancelAsyncQueryReasoningEngine: query('CancelAsyncQueryReasoningEngine', 'cancelAsyncQuery'),
    // The mixins its client carries (bound over HTTP and gRPC once, by transport/bound-methods.ts).
    ...operationsMixin((c: MemoryCall) => c.ctx.state.operations),
    ...locationAndIamMixin(),
  } as const
}

/** ReasoningEngineService of v1beta1 (with the bindings without projects/*\/locations/*). */
export const REASONING_ENGINE_TABLE = reasoningEngineTable('v1beta1')
/** ReasoningEngineService of v1: the same methods, bound under projects/*\/locations/* only. */
export const REASONING_ENGINE_TABLE_V1: typeof REASONING_ENGINE_TABLE = reasoningEngineTable('v1')
