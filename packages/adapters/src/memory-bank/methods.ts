import { UNARY, longRunningShape, method, pagedShape, type HttpBinding, type HttpVerb } from '../rpc/methods.js'
import { locationAndIamMixin, operationsMixin } from '../rpc/mixins.js'
import type { MemoryContext } from './context.js'
import { generateMemories, purgeMemories } from './generate.js'
import { createMemory, deleteMemory, getMemory, listMemories, updateMemory } from './memories.js'
import { retrieveMemories } from './retrieve.js'
import type { MemoryJson } from './state.js'

/** Each method is bound under projects/*\/locations/* and, as Google's additional binding, under reasoningEngines/* alone. */
function bindings(verb: HttpVerb, path: (engine: string) => string, body?: string): readonly HttpBinding[] {
  return ['projects/*/locations/*/reasoningEngines/*', 'reasoningEngines/*'].map((engine) => ({ verb, path: path(engine), ...(body === undefined ? {} : { body }) }))
}

const read = false
const write = true

/**
 * google.cloud.aiplatform.v1beta1.MemoryBankService, every method once, and the mixins its client
 * carries (operations served; locations and IAM UNIMPLEMENTED; bound over HTTP by http/routes.ts).
 * generateMemories from sessions or raw contents needs a model: the `extractor` hook.
 */
export const MEMORY_TABLE = {
  createMemory: method({ rpc: 'CreateMemory', run: createMemory, write, shape: longRunningShape<MemoryJson>(), http: bindings('POST', (E) => `{parent=${E}}/memories`, 'memory') }),
  getMemory: method({ rpc: 'GetMemory', run: getMemory, write: read, shape: UNARY, http: bindings('GET', (E) => `{name=${E}/memories/*}`) }),
  updateMemory: method({ rpc: 'UpdateMemory', run: updateMemory, write, shape: longRunningShape<MemoryJson>(), http: bindings('PATCH', (E) => `{memory.name=${E}/memories/*}`, 'memory') }),
  listMemories: method({ rpc: 'ListMemories', run: listMemories, write: read, shape: pagedShape('memories'), http: bindings('GET', (E) => `{parent=${E}}/memories`) }),
  deleteMemory: method({ rpc: 'DeleteMemory', run: deleteMemory, write, shape: longRunningShape<Record<string, never>>(), http: bindings('DELETE', (E) => `{name=${E}/memories/*}`) }),
  generateMemories: method({ rpc: 'GenerateMemories', run: generateMemories, write, shape: longRunningShape<{ generatedMemories?: { memory: MemoryJson; action: string }[] }>(), http: bindings('POST', (E) => `{parent=${E}}/memories:generate`, '*') }),
  retrieveMemories: method({ rpc: 'RetrieveMemories', run: retrieveMemories, write: read, shape: UNARY, http: bindings('POST', (E) => `{parent=${E}}/memories:retrieve`, '*') }),
  purgeMemories: method({ rpc: 'PurgeMemories', run: purgeMemories, write, shape: longRunningShape<{ purgeCount?: string }>(), http: bindings('POST', (E) => `{parent=${E}}/memories:purge`, '*') }),
  ...operationsMixin((ctx: MemoryContext) => ctx.state.operations),
  ...locationAndIamMixin(),
} as const
