import { parseFilter, printLiteral, type FilterExpr } from '../rpc/aip160.js'
import { toCoreFilter, type KeyType } from '../rpc/aip160-filter.js'
import type { Operation } from '../rpc/operations.js'
import { omitUnset } from '../rpc/omit.js'
import { pageOf } from '../rpc/paging.js'
import { checkUpdateMask, type MaskRules } from '../rpc/field-mask.js'
import { readMessage } from '../rpc/proto-json.js'
import { failure, invalidArgument } from '../rpc/status.js'
import { compileFilter, type Filter } from '@quarry/core'
import { USER_ID_RULE, type MemoryContext } from './context.js'
import { readExpiry, readFact, readMetadata, readScope, readTopics, requiredEquals } from './fields.js'
import { readRevisionPlan, recordRevision } from './revisions.js'
import { configuredExpiry } from './engine-config.js'
import { orderedPage, readOrderBy } from './sessions.js'
import { CreateMemoryRequest, DeleteMemoryRequest, GetMemoryRequest, ListMemoriesRequest, ManagedTopic, Memory, UpdateMemoryRequest } from './schema.js'
import { CUSTOM_TOPICS_FIELD, MANAGED_TOPICS_FIELD, SCOPE_FIELD, addMemory, indexMemory, memoriesOfScope, memoryJson, memoryMetadata, removeMemory, scopeField, scopeKeyOf, scopeKeyOfField, type EngineState, type MemoryJson, type MemoryState } from './state.js'

/**
 * What a memory filter reads, by the names Google's REST reference gives them, and the record
 * field holding each. memories.retrieve: "Supported fields: * fact * createTime * updateTime *
 * topics (i.e. topics.custom_memory_topic_label: "example topic" OR
 * topics.managed_memory_topic: USER_PREFERENCES)"; memories.list adds "scope (as a JSON string
 * with equality match only)". `create_time` / `update_time` (the proto names) and bare `topics`
 * (either kind of topic) are read too, and `scope.<key>` compares one scope value.
 */
const FILTER_FIELDS: Readonly<Record<string, { readonly field: string; readonly type: KeyType }>> = {
  fact: { field: 'fact', type: 'string' },
  createTime: { field: 'create_time', type: 'datetime' },
  create_time: { field: 'create_time', type: 'datetime' },
  updateTime: { field: 'update_time', type: 'datetime' },
  update_time: { field: 'update_time', type: 'datetime' },
  topics: { field: 'topics', type: 'list' },
  'topics.custom_memory_topic_label': { field: CUSTOM_TOPICS_FIELD, type: 'list' },
  'topics.managed_memory_topic': { field: MANAGED_TOPICS_FIELD, type: 'list' },
}

const FILTER_HELP = 'fact, createTime, updateTime, topics.custom_memory_topic_label, topics.managed_memory_topic, topics, scope (= a JSON object) or scope.<key>'

/** `scope = "{\"user_id\": \"123\"}"`: the memories of exactly that scope (equality only, as documented). */
function scopeEquals(e: Extract<FilterExpr, { k: 'cmp' }>, field: string): Filter {
  const refuse = (): Error => invalidArgument(field, 'a filter compares scope with = and a JSON object of strings, like scope = "{\\"user_id\\": \\"123\\"}" (scope.<key> compares one value).')
  let parsed: unknown
  try {
    parsed = e.op === '=' && e.value.t === 'string' ? JSON.parse(e.value.v) : undefined
  } catch {
    throw refuse()
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw refuse()
  const scope: Record<string, string> = {}
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v !== 'string') throw refuse()
    Object.defineProperty(scope, k, { value: v, enumerable: true, writable: true, configurable: true })
  }
  if (Object.keys(scope).length === 0) throw refuse()
  return { op: 'eq', field: SCOPE_FIELD, value: scopeKeyOf(scope) }
}

/** An AIP-160 memory filter as a core filter; fields other than those above are INVALID_ARGUMENT. */
export function memoryFilter(filter: string | undefined, field: string): Filter | undefined {
  if (filter === undefined || filter.trim() === '') return undefined
  const expr = parseFilter(filter, field)
  const known = (key: string): { readonly field: string; readonly type: KeyType } | undefined => {
    if (Object.hasOwn(FILTER_FIELDS, key)) return FILTER_FIELDS[key]
    if (key.startsWith('scope.') && key.length > 6) return { field: scopeField(key.slice(6)), type: 'string' }
    return undefined
  }
  const fieldOf = (key: string): string => {
    const f = known(key)
    if (f === undefined) throw invalidArgument(field, `a memory filter reads ${FILTER_HELP}; "${key}" is none of them.`)
    return f.field
  }
  const compare = (e: Extract<FilterExpr, { k: 'cmp' }>): Filter | undefined => {
    if (e.field === 'scope') return scopeEquals(e, field)
    // A list is tested for a member with ":" (the REST reference's form); "=" would compare it as one value and match nothing.
    if (known(e.field)?.type === 'list') throw invalidArgument(field, `${e.field} is a list of topics: test it for one with ${e.field}:${printLiteral(e.value)} ("${e.op}" compares single values).`)
    return undefined
  }
  checkManagedTopics(expr, field)
  return toCoreFilter(expr, { path: field, fieldOf, typeOf: (k) => known(k)?.type, compare, hasOnListsOnly: true })
}

/** A managed topic tested for must be one of the enum's values: a misspelt one would match nothing, and its NOT everything. */
function checkManagedTopics(e: FilterExpr, field: string): void {
  if (e.k === 'and' || e.k === 'or') for (const item of e.items) checkManagedTopics(item, field)
  else if (e.k === 'not') checkManagedTopics(e.expr, field)
  else if (e.k === 'has' && e.field === 'topics.managed_memory_topic' && e.value !== '*' && !MANAGED_TOPICS.includes(String(e.value.v))) {
    throw invalidArgument(field, `topics.managed_memory_topic is one of ${MANAGED_TOPICS.join(', ')}; received ${printLiteral(e.value)}.`)
  }
}

const MANAGED_TOPICS: readonly string[] = Object.keys(ManagedTopic.values).filter((name) => name !== 'MANAGED_TOPIC_ENUM_UNSPECIFIED')

export async function createMemory(ctx: MemoryContext, request: unknown, version?: string): Promise<Operation> {
  const { parent, memory = {}, memoryId } = readMessage(CreateMemoryRequest, request)
  const engine = ctx.engine(parent, 'parent')
  const fact = readFact(memory.fact, 'memory.fact')
  const scope = readScope(memory.scope, 'memory.scope')
  const topics = readTopics(memory.topics, 'memory.topics')
  const metadata = readMetadata(memory.metadata, 'memory.metadata')
  const now = ctx.now()
  const expireMs = readExpiry(memory, now, 'memory') ?? configuredExpiry(engine, 'create', now)
  const revision = readRevisionPlan(memory, () => now, 'memory')
  let name: string
  if (memoryId !== undefined) {
    if (!USER_ID_RULE.test.test(memoryId)) throw invalidArgument('memoryId', `memoryId is ${USER_ID_RULE.says}; received "${memoryId}".`)
    name = `${engine.name}/memories/${memoryId}`
    if (engine.memories.has(name)) throw failure('ALREADY_EXISTS', `Memory "${name}" already exists.`, 'memoryId')
  } else {
    do name = `${engine.name}/memories/m${ctx.numericId()}`
    while (engine.memories.has(name))
  }
  const [vector] = await ctx.embed([fact])
  const m: MemoryState = { name, displayName: memory.displayName, description: memory.description, fact, scope, scopeKey: scopeKeyOf(scope), topics, metadata, expireMs, ...ctx.stamp(now) }
  // Everything that can fail is done before the memory is stored: a failed create writes nothing.
  const json = memoryJson(m)
  addMemory(engine, m)
  ctx.expiresAt(engine, expireMs)
  indexMemory(engine, m, vector as Float32Array)
  recordRevision(m, revision)
  return ctx.operation(name, 'CreateMemoryOperationMetadata', 'Memory', json, version)
}

export async function getMemory(ctx: MemoryContext, request: unknown): Promise<MemoryJson> {
  const { name } = readMessage(GetMemoryRequest, request)
  return memoryJson(ctx.memory(name, 'name').memory)
}

/** What an update's mask may name: whole fields (rpc/field-mask.ts). */
const MASK: MaskRules = { updatable: ['displayName', 'description', 'fact', 'expireTime', 'ttl', 'topics', 'metadata'], immutable: { scope: 'scope is immutable: create a memory in the other scope instead.' }, subPaths: false }

export async function updateMemory(ctx: MemoryContext, request: unknown, version?: string): Promise<Operation> {
  const { memory = {}, updateMask } = readMessage(UpdateMemoryRequest, request)
  const { engine, memory: target } = ctx.memory(memory.name, 'memory.name')
  // Without a mask, every updatable field the request sets is updated (AIP-134).
  const paths = updateMask && updateMask.length > 0 ? updateMask : MASK.updatable.filter((p) => (memory as Record<string, unknown>)[p] !== undefined)
  checkUpdateMask(Memory, paths, MASK)
  // Google's clients send an empty map for an unset scope.
  if (memory.scope !== undefined && Object.keys(memory.scope).length > 0 && !updateMask?.length && scopeKeyOf(memory.scope) !== target.scopeKey) {
    throw invalidArgument('memory.scope', 'scope is immutable: create a memory in the other scope instead.')
  }
  const has = (p: string): boolean => paths.includes(p)
  const fact = has('fact') ? readFact(memory.fact, 'memory.fact') : target.fact
  const topics = has('topics') ? readTopics(memory.topics, 'memory.topics') : target.topics
  const metadata = has('metadata') ? readMetadata(memory.metadata, 'memory.metadata') : target.metadata
  const now = ctx.now()
  const expireMs = has('expireTime') || has('ttl') ? readExpiry(memory, now, 'memory') : (configuredExpiry(engine, 'update', now) ?? target.expireMs)
  const revision = readRevisionPlan(memory, () => now, 'memory')
  const vector = fact !== target.fact ? (await ctx.embed([fact]))[0] : engine.index.get(target.name)?.vector
  if (!engine.memories.has(target.name)) throw failure('NOT_FOUND', `Memory "${target.name}" was deleted meanwhile.`, 'memory.name')
  const updated: MemoryState = {
    ...target,
    displayName: has('displayName') ? memory.displayName : target.displayName,
    description: has('description') ? memory.description : target.description,
    fact,
    topics,
    metadata,
    expireMs,
    updateMs: now,
  }
  // Everything that can fail is done before the memory changes: a failed update writes nothing.
  const json = memoryJson(updated)
  Object.assign(target, updated)
  ctx.expiresAt(engine, expireMs)
  indexMemory(engine, target, vector as Float32Array)
  recordRevision(target, revision)
  return ctx.operation(target.name, 'UpdateMemoryOperationMetadata', 'Memory', json, version)
}

/** Deletes a memory; its revisions go with it. */
export async function deleteMemory(ctx: MemoryContext, request: unknown, version?: string): Promise<Operation> {
  const { name } = readMessage(DeleteMemoryRequest, request)
  const { engine, memory } = ctx.memory(name, 'name')
  removeMemory(engine, memory)
  engine.index.remove(memory.name)
  return ctx.operation(memory.name, 'DeleteMemoryOperationMetadata', 'google.protobuf.Empty', {}, version)
}

/**
 * What a filter's scope equalities (`scope = "{...}"`, `scope.<key> = "v"`, at its top) say of a
 * memory before its metadata is made: the scope it names, whose memories are looked up rather
 * than the engine's scanned, and a test of the memory's own scope. Both only pass over memories
 * the filter refuses.
 */
function scopeOfFilter(filter: Filter | undefined): { readonly scopeKey: string | undefined; readonly test: ((m: MemoryState) => boolean) | undefined } {
  let scopeKey: string | undefined
  const tests: ((m: MemoryState) => boolean)[] = []
  for (const [field, value] of requiredEquals(filter)) {
    const key = scopeKeyOfField(field)
    if (field === SCOPE_FIELD) {
      scopeKey ??= value
      tests.push((m) => m.scopeKey === value)
    } else if (key !== undefined) tests.push((m) => Object.hasOwn(m.scope, key) && m.scope[key] === value)
  }
  return { scopeKey, test: tests.length === 0 ? undefined : (m) => tests.every((t) => t(m)) }
}

/** What a memories.list `orderBy` sorts by ("Supported fields: * `create_time` * `update_time`"), by either spelling. */
const MEMORY_ORDER: Readonly<Record<string, (m: MemoryState) => number>> = {
  create_time: (m) => m.createMs,
  createTime: (m) => m.createMs,
  update_time: (m) => m.updateMs,
  updateTime: (m) => m.updateMs,
}

/**
 * Lists an engine's memories, optionally filtered: newest first (createTime descending) by
 * default, or by `orderBy` (ascending unless "desc", as documented; ties in creation order).
 */
export async function listMemories(ctx: MemoryContext, request: unknown): Promise<{ memories?: MemoryJson[]; nextPageToken?: string }> {
  const req = readMessage(ListMemoriesRequest, request)
  const engine = ctx.readEngine(req.parent, 'parent')
  const filter = memoryFilter(req.filter, 'filter')
  const order = req.orderBy === undefined || req.orderBy.trim() === '' ? undefined : readOrderBy(req.orderBy, MEMORY_ORDER, 'create_time desc')
  const test = filter ? compileFilter(filter) : undefined
  const scope = scopeOfFilter(filter)
  const all: MemoryState[] = []
  // An engine that holds nothing yet has no memories, but its page size and token are read all the same.
  const held = engine === undefined ? [] : scope.scopeKey === undefined ? engine.memories.values() : memoriesOfScope(engine, scope.scopeKey)
  for (const m of held) {
    if ((!scope.test || scope.test(m)) && ctx.visible(m) && (!test || test(memoryMetadata(m)))) all.push(m)
  }
  // Newest first: both iterate in creation order.
  all.reverse()
  if (order) {
    const ordered = orderedPage(all, order, `listMemories ${engine?.name ?? req.parent} ${req.filter ?? ''} ${req.orderBy ?? ''}`, req)
    return omitUnset({ memories: ordered.items.map(memoryJson), nextPageToken: ordered.nextPageToken })
  }
  const page = pageOf(all, (m) => -m.seq, `listMemories ${engine?.name ?? req.parent} ${req.filter ?? ''}`, req, { defaultSize: 100, maxSize: 1000 })
  return omitUnset({ memories: page.items.map(memoryJson), nextPageToken: page.nextPageToken })
}
