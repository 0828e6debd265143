import { parseFilter } from '../rpc/aip160.js'
import { toCoreFilter, type KeyType } from '../rpc/aip160-filter.js'
import type { FinishedOperation } from '../rpc/operations.js'
import { pageOf } from '../rpc/paging.js'
import { readMessage } from '../rpc/proto-json.js'
import { failure, invalidArgument } from '../rpc/status.js'
import { compileFilter, type Filter } from '@quarry/core'
import { MEMORY_ID, type MemoryContext } from './context.js'
import { readExpiry, readFact, readMetadata, readScope, readTopics } from './fields.js'
import { CreateMemoryRequest, DeleteMemoryRequest, GetMemoryRequest, ListMemoriesRequest, UpdateMemoryRequest } from './schema.js'
import { memoryJson, memoryMetadata, scopeField, scopeKeyOf, type EngineState, type MemoryJson, type MemoryState } from './state.js'

const FILTER_FIELDS: Readonly<Record<string, KeyType>> = { fact: 'string', create_time: 'datetime', update_time: 'datetime', topics: 'list' }

/**
 * An AIP-160 memory filter (over fact, create_time, update_time, topics, and scope.<key>) as a core
 * filter; other fields are INVALID_ARGUMENT.
 */
export function memoryFilter(filter: string | undefined, field: string): Filter | undefined {
  if (filter === undefined || filter.trim() === '') return undefined
  const expr = parseFilter(filter, field)
  const fieldOf = (key: string): string => {
    if (key.startsWith('scope.') && key.length > 6) return scopeField(key.slice(6))
    if (Object.hasOwn(FILTER_FIELDS, key)) return key
    throw invalidArgument(field, `a memory filter reads fact, create_time, update_time, topics or scope.<key>; "${key}" is none of them.`)
  }
  return toCoreFilter(expr, { fieldOf, typeOf: (k) => FILTER_FIELDS[k] ?? (k.startsWith('scope.') ? 'string' : undefined) })
}

/** Writes a memory's record (embedding + filterable metadata) into its engine's index. */
export function indexMemory(engine: EngineState, m: MemoryState, vector: Float32Array): void {
  engine.index.upsert({ id: m.name, vector, metadata: memoryMetadata(m) })
}

export async function createMemory(ctx: MemoryContext, request: unknown): Promise<FinishedOperation> {
  const { parent, memory = {}, memoryId } = readMessage(CreateMemoryRequest, request)
  const engine = ctx.engine(parent, 'parent')
  const fact = readFact(memory.fact, 'memory.fact')
  const scope = readScope(memory.scope, 'memory.scope')
  const topics = readTopics(memory.topics, 'memory.topics')
  const metadata = readMetadata(memory.metadata, 'memory.metadata')
  const now = ctx.now()
  const expireMs = readExpiry(memory, now, 'memory')
  let name: string
  if (memoryId !== undefined && memoryId !== '') {
    if (!MEMORY_ID.test(memoryId)) throw invalidArgument('memoryId', `memoryId is up to 63 of a-z, 0-9 and -, starting with a letter; received "${memoryId}".`)
    name = `${engine.name}/memories/${memoryId}`
    if (engine.memories.has(name)) throw failure('ALREADY_EXISTS', `Memory "${name}" already exists.`, 'memoryId')
  } else {
    do name = `${engine.name}/memories/m${ctx.numericId()}`
    while (engine.memories.has(name))
  }
  const [vector] = await ctx.embed([fact])
  const m: MemoryState = { name, displayName: memory.displayName || undefined, description: memory.description || undefined, fact, scope, scopeKey: scopeKeyOf(scope), topics, metadata, expireMs, ...ctx.stamp(now) }
  engine.memories.set(name, m)
  ctx.expiresAt(engine, expireMs)
  indexMemory(engine, m, vector as Float32Array)
  return ctx.operation(name, 'CreateMemoryOperationMetadata', 'Memory', memoryJson(m))
}

export async function getMemory(ctx: MemoryContext, request: unknown): Promise<MemoryJson> {
  const { name } = readMessage(GetMemoryRequest, request)
  return memoryJson(ctx.memory(name, 'name').memory)
}

const UPDATABLE = ['displayName', 'description', 'fact', 'expireTime', 'ttl', 'topics', 'metadata']

export async function updateMemory(ctx: MemoryContext, request: unknown): Promise<FinishedOperation> {
  const { memory = {}, updateMask } = readMessage(UpdateMemoryRequest, request)
  const { engine, memory: target } = ctx.memory(memory.name, 'memory.name')
  // Without a mask, every updatable field the request sets is updated (AIP-134).
  const paths = updateMask && updateMask.length > 0 ? updateMask : UPDATABLE.filter((p) => (memory as Record<string, unknown>)[p] !== undefined)
  for (const [i, p] of paths.entries()) {
    if (p === 'scope') throw invalidArgument(`updateMask.paths[${i}]`, 'scope is immutable: create a memory in the other scope instead.')
    if (!UPDATABLE.includes(p)) throw invalidArgument(`updateMask.paths[${i}]`, `"${p}" cannot be updated; updatable fields: ${UPDATABLE.join(', ')}.`)
  }
  // Google's clients send an empty map for an unset scope.
  if (memory.scope !== undefined && Object.keys(memory.scope).length > 0 && !updateMask?.length && scopeKeyOf(memory.scope) !== target.scopeKey) {
    throw invalidArgument('memory.scope', 'scope is immutable: create a memory in the other scope instead.')
  }
  const has = (p: string): boolean => paths.includes(p)
  const fact = has('fact') ? readFact(memory.fact, 'memory.fact') : target.fact
  const topics = has('topics') ? readTopics(memory.topics, 'memory.topics') : target.topics
  const metadata = has('metadata') ? readMetadata(memory.metadata, 'memory.metadata') : target.metadata
  const now = ctx.now()
  const expireMs = has('expireTime') || has('ttl') ? readExpiry(memory, now, 'memory') : target.expireMs
  const vector = fact !== target.fact ? (await ctx.embed([fact]))[0] : engine.index.get(target.name)?.vector
  if (!engine.memories.has(target.name)) throw failure('NOT_FOUND', `Memory "${target.name}" was deleted meanwhile.`, 'memory.name')
  if (has('displayName')) target.displayName = memory.displayName || undefined
  if (has('description')) target.description = memory.description || undefined
  target.fact = fact
  target.topics = topics
  target.metadata = metadata
  target.expireMs = expireMs
  ctx.expiresAt(engine, expireMs)
  target.updateMs = now
  indexMemory(engine, target, vector as Float32Array)
  return ctx.operation(target.name, 'UpdateMemoryOperationMetadata', 'Memory', memoryJson(target))
}

export async function deleteMemory(ctx: MemoryContext, request: unknown): Promise<FinishedOperation> {
  const { name } = readMessage(DeleteMemoryRequest, request)
  const { engine, memory } = ctx.memory(name, 'name')
  engine.memories.delete(memory.name)
  engine.index.remove(memory.name)
  return ctx.operation(memory.name, 'DeleteMemoryOperationMetadata', 'google.protobuf.Empty', {})
}

/** Lists an engine's memories, newest first (createTime descending), optionally filtered. */
export async function listMemories(ctx: MemoryContext, request: unknown): Promise<{ memories?: MemoryJson[]; nextPageToken?: string }> {
  const req = readMessage(ListMemoriesRequest, request)
  const engine = ctx.readEngine(req.parent, 'parent')
  const filter = memoryFilter(req.filter, 'filter')
  if (!engine) return {}
  const test = filter ? compileFilter(filter) : undefined
  const all = [...engine.memories.values()].reverse().filter((m) => !test || test(memoryMetadata(m)))
  const page = pageOf(all, (m) => -m.seq, `listMemories ${engine.name} ${req.filter ?? ''}`, req, { defaultSize: 100, maxSize: 1000 })
  return {
    ...(page.items.length > 0 ? { memories: page.items.map(memoryJson) } : {}),
    ...(page.nextPageToken ? { nextPageToken: page.nextPageToken } : {}),
  }
}
