import { UNARY, longRunningShape, method, pagedShape, unimplemented, type HttpBinding, type HttpVerb } from '../rpc/methods.js'
import { locationAndIamMixin, operationsMixin } from '../rpc/mixins.js'
import type { MemoryContext } from './context.js'
import { generateMemories, purgeMemories } from './generate.js'
import { createMemory, deleteMemory, getMemory, listMemories, updateMemory } from './memories.js'
import { retrieveMemories } from './retrieve.js'
import { getMemoryRevision, listMemoryRevisions, rollbackMemory } from './revisions.js'
import type { MemoryJson } from './state.js'

/** The API versions Memory Bank is served in: the same memories through either. */
export type MemoryApiVersion = 'v1' | 'v1beta1'

/** What a Memory Bank method runs on: the engine's state and the API version it was called through (its operations' types). */
export interface MemoryCall {
  readonly ctx: MemoryContext
  readonly version: MemoryApiVersion
}

/** Each method is bound under projects/*\/locations/* and, as Google's additional binding, under reasoningEngines/* alone. */
function bindings(verb: HttpVerb, path: (engine: string) => string, body?: string): readonly HttpBinding[] {
  return ['projects/*/locations/*/reasoningEngines/*', 'reasoningEngines/*'].map((engine) => ({ verb, path: path(engine), ...(body === undefined ? {} : { body }) }))
}

const read = false
const write = true

/**
 * google.cloud.aiplatform.{v1,v1beta1}.MemoryBankService, every method once, and the mixins its
 * client carries (operations served; locations and IAM UNIMPLEMENTED; bound over HTTP by
 * http/routes.ts). generateMemories from sessions or raw contents needs a model: the `extractor`
 * hook. Purge and the revisions (list, get, rollback) are newer than the shipped protos: REST and
 * in process only.
 */
export const MEMORY_TABLE = {
  createMemory: method({ rpc: 'CreateMemory', run: (c: MemoryCall, r) => c.ctx.applied(() => createMemory(c.ctx, r, c.version)), write, shape: longRunningShape<MemoryJson>(), http: bindings('POST', (E) => `{parent=${E}}/memories`, 'memory') }),
  getMemory: method({ rpc: 'GetMemory', run: (c: MemoryCall, r) => getMemory(c.ctx, r), write: read, shape: UNARY, http: bindings('GET', (E) => `{name=${E}/memories/*}`) }),
  updateMemory: method({ rpc: 'UpdateMemory', run: (c: MemoryCall, r) => updateMemory(c.ctx, r, c.version), write, shape: longRunningShape<MemoryJson>(), http: bindings('PATCH', (E) => `{memory.name=${E}/memories/*}`, 'memory') }),
  listMemories: method({ rpc: 'ListMemories', run: (c: MemoryCall, r) => listMemories(c.ctx, r), write: read, shape: pagedShape('memories'), http: bindings('GET', (E) => `{parent=${E}}/memories`) }),
  deleteMemory: method({ rpc: 'DeleteMemory', run: (c: MemoryCall, r) => deleteMemory(c.ctx, r, c.version), write, shape: longRunningShape<Record<string, never>>(), http: bindings('DELETE', (E) => `{name=${E}/memories/*}`) }),
  generateMemories: method({
    rpc: 'GenerateMemories',
    run: (c: MemoryCall, r) => c.ctx.applied(() => generateMemories(c.ctx, r, c.version)),
    write,
    shape: longRunningShape<{ generatedMemories?: { memory: MemoryJson; action: string; previousRevision?: string }[] }>(),
    http: bindings('POST', (E) => `{parent=${E}}/memories:generate`, '*'),
  }),
  retrieveMemories: method({ rpc: 'RetrieveMemories', run: (c: MemoryCall, r) => retrieveMemories(c.ctx, r), write: read, shape: UNARY, http: bindings('POST', (E) => `{parent=${E}}/memories:retrieve`, '*') }),
  purgeMemories: method({ rpc: 'PurgeMemories', run: (c: MemoryCall, r) => purgeMemories(c.ctx, r, c.version), write, shape: longRunningShape<{ purgeCount?: string }>(), http: bindings('POST', (E) => `{parent=${E}}/memories:purge`, '*') }),
  rollbackMemory: method({ rpc: 'RollbackMemory', run: (c: MemoryCall, r) => rollbackMemory(c.ctx, r, c.version), write, shape: longRunningShape<Record<string, never>>(), http: bindings('POST', (E) => `{name=${E}/memories/*}:rollback`, '*') }),
  listMemoryRevisions: method({ rpc: 'ListMemoryRevisions', run: (c: MemoryCall, r) => listMemoryRevisions(c.ctx, r), write: read, shape: pagedShape('memoryRevisions'), http: bindings('GET', (E) => `{parent=${E}/memories/*}/revisions`) }),
  getMemoryRevision: method({ rpc: 'GetMemoryRevision', run: (c: MemoryCall, r) => getMemoryRevision(c.ctx, r), write: read, shape: UNARY, http: bindings('GET', (E) => `{name=${E}/memories/*/revisions/*}`) }),
  // Newer methods Google's clients carry (@google-cloud/vertexai's ingestEventsInternal, retrieveProfiles), not served:
  // answered 501 UNIMPLEMENTED saying what to call instead, never a 404 that reads as a wrong path.
  ingestEvents: method({ rpc: 'IngestEvents', run: unimplemented('IngestEvents', 'Quarry does not serve memories:ingestEvents; write memories from events with memories:generate (directContentsSource or vertexSessionSource).'), write: read, shape: UNARY, http: bindings('POST', (E) => `{parent=${E}}/memories:ingestEvents`, '*') }),
  retrieveProfiles: method({ rpc: 'RetrieveProfiles', run: unimplemented('RetrieveProfiles', 'Quarry does not serve memories:retrieveProfiles; read a scope\'s memories with memories:retrieve.'), write: read, shape: UNARY, http: bindings('POST', (E) => `{parent=${E}}/memories:retrieveProfiles`, '*') }),
  ...operationsMixin((c: MemoryCall) => c.ctx.state.operations),
  ...locationAndIamMixin(),
} as const
