import type { Metadata, QuarryIndex } from '@quarry/core'
import { rfc3339 } from '../rpc/clock.js'
import { omitUnset } from '../rpc/omit.js'
import type { Operation } from '../rpc/operations.js'
import type { ContextSpecInput } from './engine-schema.js'
import type { SessionState } from './session-state.js'

/** A topic as stored: a managed topic's enum name, or a custom label. */
export type TopicJson = { readonly managedMemoryTopic: string } | { readonly customMemoryTopicLabel: string }

export type MetadataValueJson = { readonly stringValue: string } | { readonly doubleValue: number } | { readonly boolValue: boolean } | { readonly timestampValue: string }

export interface MemoryJson {
  readonly name: string
  readonly displayName?: string
  readonly description?: string
  readonly fact: string
  readonly scope: Readonly<Record<string, string>>
  readonly topics?: readonly TopicJson[]
  readonly metadata?: Readonly<Record<string, MetadataValueJson>>
  readonly createTime: string
  readonly updateTime: string
  readonly expireTime?: string
}

/** A memory revision as Google's REST reference gives it (projects.locations.reasoningEngines.memories.revisions). */
export interface MemoryRevisionJson {
  readonly name: string
  readonly createTime: string
  readonly expireTime: string
  readonly fact: string
  readonly labels?: Readonly<Record<string, string>>
  readonly extractedMemories?: readonly { readonly fact: string }[]
}

/**
 * One immutable revision of a memory: the fact as the write left it, the write's labels, and (for
 * generateMemories) the fact extracted before consolidation. Plain JSON: it is saved with its memory.
 */
export interface RevisionState {
  /** A decimal number, increasing with each revision of the memory (its order). */
  readonly id: string
  readonly createMs: number
  readonly expireMs: number
  readonly fact: string
  readonly labels: Readonly<Record<string, string>>
  readonly extracted?: readonly string[]
}

export interface MemoryState {
  readonly name: string
  readonly seq: number
  readonly createMs: number
  updateMs: number
  displayName: string | undefined
  description: string | undefined
  fact: string
  readonly scope: Readonly<Record<string, string>>
  /** Canonical form of the scope (sorted keys): equal scopes, equal keys. */
  readonly scopeKey: string
  topics: readonly TopicJson[]
  metadata: Readonly<Record<string, MetadataValueJson>>
  expireMs: number | undefined
  /** The memory's revisions, oldest first (absent: none yet, or a state saved before revisions). */
  revisions?: RevisionState[]
  /** The id of the last revision made, expired ones included: ids are never reused. */
  lastRevision?: number
}

/** One reasoning engine's memory bank: its memories (creation order) and their index (fact embeddings). */
export interface EngineState {
  readonly name: string
  /** By name, in creation order: added and removed only through addMemory / removeMemory (a scope index follows them). */
  readonly memories: Map<string, MemoryState>
  readonly index: QuarryIndex
  /** No memory expires before this instant (a lower bound: sweeps before it are skipped). */
  nextExpiryMs: number
  /** Its Agent Engine Sessions (SessionService), by name, in creation order. */
  readonly sessions: Map<string, SessionState>
  /** No session expires before this instant (a lower bound: session sweeps before it are skipped). */
  nextSessionExpiryMs: number
  /**
   * The ReasoningEngine resource, once created through ReasoningEngineService; absent for an
   * implicit engine (one that came into being when memories or sessions were first written under it).
   */
  resource?: ReasoningEngineState
}

/** A ReasoningEngine resource as stored (plain JSON: saved with its engine); `contextSpec` as read, durations in seconds. */
export interface ReasoningEngineState {
  readonly seq: number
  readonly createMs: number
  updateMs: number
  displayName?: string
  description?: string
  spec?: Readonly<Record<string, unknown>>
  contextSpec?: ContextSpecInput
  encryptionSpec?: Readonly<Record<string, unknown>>
  labels?: Readonly<Record<string, string>>
  trafficConfig?: Readonly<Record<string, unknown>>
}

export interface MemoryBankState {
  readonly engines: Map<string, EngineState>
  readonly operations: Map<string, Operation>
  seq: number
}

/** Core metadata fields of a memory's record. */
export const SCOPE_FIELD = '$scope'
/** The custom topic labels and the managed topics of a memory, apart (the filter fields Google documents). */
export const CUSTOM_TOPICS_FIELD = 'topics.custom_memory_topic_label'
export const MANAGED_TOPICS_FIELD = 'topics.managed_memory_topic'
export const scopeField = (key: string): string => `s.${key}`
/** The scope key a filter field names (`s.<key>`, see {@link scopeField}), or undefined. */
export const scopeKeyOfField = (field: string): string | undefined => (field.startsWith('s.') ? field.slice(2) : undefined)
export const metadataField = (key: string): string => `m.${key}`

export function scopeKeyOf(scope: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.keys(scope).sort().map((k) => [k, scope[k]]))
}

function topicLabel(t: TopicJson): string {
  return 'managedMemoryTopic' in t ? t.managedMemoryTopic : t.customMemoryTopicLabel
}

/** Writes a memory's record (embedding + filterable metadata) into its engine's index. */
export function indexMemory(engine: EngineState, m: MemoryState, vector: Float32Array): void {
  engine.index.upsert({ id: m.name, vector, metadata: memoryMetadata(m) })
}

/**
 * The record metadata filters read: scope (whole and per key), fact, times, topics (all, custom,
 * managed), user metadata. A topic list is there only when it has a topic: a repeated field is
 * present when not empty (proto3), so `topics:*` holds for the memories with a topic.
 */
export function memoryMetadata(m: MemoryState): Metadata {
  const out: Metadata = {
    [SCOPE_FIELD]: m.scopeKey,
    fact: m.fact,
    create_time: new Date(m.createMs),
    update_time: new Date(m.updateMs),
  }
  const put = (key: string, value: Metadata[string]): void => {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true })
  }
  const custom = m.topics.flatMap((t) => ('customMemoryTopicLabel' in t ? [t.customMemoryTopicLabel] : []))
  const managed = m.topics.flatMap((t) => ('managedMemoryTopic' in t ? [t.managedMemoryTopic] : []))
  if (m.topics.length > 0) put('topics', m.topics.map(topicLabel))
  if (custom.length > 0) put(CUSTOM_TOPICS_FIELD, custom)
  if (managed.length > 0) put(MANAGED_TOPICS_FIELD, managed)
  for (const [k, v] of Object.entries(m.scope)) put(scopeField(k), v)
  for (const [k, v] of Object.entries(m.metadata)) {
    put(metadataField(k), 'stringValue' in v ? v.stringValue : 'doubleValue' in v ? v.doubleValue : 'boolValue' in v ? v.boolValue : new Date(v.timestampValue))
  }
  return out
}

export function memoryJson(m: MemoryState): MemoryJson {
  return omitUnset({
    name: m.name,
    displayName: m.displayName,
    description: m.description,
    fact: m.fact,
    scope: m.scope,
    topics: m.topics,
    metadata: m.metadata,
    createTime: rfc3339(m.createMs),
    updateTime: rfc3339(m.updateMs),
    expireTime: m.expireMs === undefined ? undefined : rfc3339(m.expireMs),
  })
}

export function revisionJson(m: MemoryState, r: RevisionState): MemoryRevisionJson {
  return omitUnset({
    name: `${m.name}/revisions/${r.id}`,
    createTime: rfc3339(r.createMs),
    expireTime: rfc3339(r.expireMs),
    fact: r.fact,
    labels: r.labels,
    extractedMemories: r.extracted?.map((fact) => ({ fact })),
  })
}

/**
 * Each engine's memories by scope (scope key → name → memory, in creation order), keyed by the
 * engine's `memories` map: made on first use, then kept by {@link addMemory} and {@link removeMemory}.
 * A scope's reads (retrieval, consolidation, a list filtered by scope) look its memories up
 * instead of scanning every user's.
 */
const byScope = new WeakMap<ReadonlyMap<string, MemoryState>, Map<string, Map<string, MemoryState>>>()

function place(index: Map<string, Map<string, MemoryState>>, m: MemoryState): void {
  let scope = index.get(m.scopeKey)
  if (!scope) index.set(m.scopeKey, (scope = new Map()))
  scope.set(m.name, m)
}

function scopeIndex(engine: EngineState): Map<string, Map<string, MemoryState>> {
  let index = byScope.get(engine.memories)
  if (!index) {
    index = new Map()
    for (const m of engine.memories.values()) place(index, m)
    byScope.set(engine.memories, index)
  }
  return index
}

/** The memories of one scope, in creation order. */
export function memoriesOfScope(engine: EngineState, scopeKey: string): Iterable<MemoryState> {
  return scopeIndex(engine).get(scopeKey)?.values() ?? []
}

/** How many scopes hold a memory of the engine (expired ones not yet swept included). */
export function scopeCount(engine: EngineState): number {
  return scopeIndex(engine).size
}

/** Adds a new memory to its engine (and to its scope's list, once there is one). */
export function addMemory(engine: EngineState, m: MemoryState): void {
  engine.memories.set(m.name, m)
  const index = byScope.get(engine.memories)
  if (index) place(index, m)
}

/** Removes a memory from its engine and its scope's list. */
export function removeMemory(engine: EngineState, m: MemoryState): void {
  engine.memories.delete(m.name)
  const index = byScope.get(engine.memories)
  const scope = index?.get(m.scopeKey)
  if (!scope) return
  scope.delete(m.name)
  if (scope.size === 0) index?.delete(m.scopeKey)
}
