import type { Filter } from '@quarry/core'
import { MAX_TIMESTAMP_MS } from '../rpc/proto-json.js'
import { invalidArgument } from '../rpc/status.js'
import type { MemoryInput } from './schema.js'
import type { MetadataValueJson, TopicJson } from './state.js'

/** Checks a scope: required, at least one entry, values without "*". */
export function readScope(scope: Readonly<Record<string, string>> | undefined, field: string): Readonly<Record<string, string>> {
  const entries = Object.entries(scope ?? {})
  if (entries.length === 0) throw invalidArgument(field, 'scope is required: at least one key/value pair, e.g. { "user_id": "123" }.')
  for (const [k, v] of entries) {
    if (k === '') throw invalidArgument(field, 'a scope key cannot be empty.')
    // JSON and protobuf both carry it as a key, but every JavaScript object assignment on the way
    // (a client's, a converter's) may turn it into a prototype instead and drop it: refused on every transport.
    if (k === '__proto__') throw invalidArgument(`${field}.__proto__`, 'a scope key cannot be "__proto__"; name the scope with another key, e.g. "user_id".')
    if (v.includes('*')) throw invalidArgument(`${field}.${k}`, `scope values cannot contain "*"; received "${v}".`)
  }
  return Object.freeze(Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))))
}

export function readFact(fact: string | undefined, field: string): string {
  if (fact === undefined || fact.trim() === '') throw invalidArgument(field, 'fact is required: the memory\'s text.')
  return fact
}

export function readTopics(topics: MemoryInput['topics'], field: string): readonly TopicJson[] {
  return Object.freeze(
    (topics ?? []).map((t, i): TopicJson => {
      if (t.customMemoryTopicLabel !== undefined && t.customMemoryTopicLabel !== '') return { customMemoryTopicLabel: t.customMemoryTopicLabel }
      if (t.managedMemoryTopic !== undefined && t.managedMemoryTopic !== 'MANAGED_TOPIC_ENUM_UNSPECIFIED') return { managedMemoryTopic: t.managedMemoryTopic }
      throw invalidArgument(`${field}[${i}]`, 'a topic sets customMemoryTopicLabel or managedMemoryTopic.')
    }),
  )
}

export function readMetadata(metadata: MemoryInput['metadata'], field: string): Readonly<Record<string, MetadataValueJson>> {
  const out: Record<string, MetadataValueJson> = {}
  for (const [k, v] of Object.entries(metadata ?? {})) {
    let value: MetadataValueJson
    if (v.stringValue !== undefined) value = { stringValue: v.stringValue }
    else if (v.doubleValue !== undefined) value = { doubleValue: v.doubleValue }
    else if (v.boolValue !== undefined) value = { boolValue: v.boolValue }
    else if (v.timestampValue !== undefined) value = { timestampValue: v.timestampValue }
    else throw invalidArgument(`${field}.${k}`, 'a metadata value sets one of stringValue, doubleValue, boolValue, timestampValue.')
    Object.defineProperty(out, k, { value, enumerable: true, writable: true, configurable: true })
  }
  return Object.freeze(out)
}

/**
 * The instant a TTL of `ttl` seconds ends, from `now` ("The expiration time is computed: now +
 * TTL", memory_bank.proto, Memory.ttl). INVALID_ARGUMENT at `field` unless the TTL is positive and
 * ends by Timestamp's last instant, 9999-12-31T23:59:59Z: a later expireTime has no RFC 3339 form.
 */
export function ttlExpiry(ttl: number, now: number, field: string): number {
  const name = field.slice(field.lastIndexOf('.') + 1)
  if (ttl <= 0) throw invalidArgument(field, `${name} must be positive, like "3600s"; received ${ttl}s.`)
  const ms = now + Math.ceil(ttl * 1000)
  if (ms > MAX_TIMESTAMP_MS) throw invalidArgument(field, `${name} ${ttl}s ends after the year 9999; give a shorter one.`)
  return ms
}

/** expireTime or ttl (a oneof) → the expiry instant; undefined when neither is set. */
export function readExpiry(memory: MemoryInput, now: number, field: string): number | undefined {
  if (memory.ttl !== undefined) return ttlExpiry(memory.ttl, now, `${field}.ttl`)
  if (memory.expireTime !== undefined) {
    const ms = Date.parse(memory.expireTime)
    if (ms <= now) throw invalidArgument(`${field}.expireTime`, `expireTime ${memory.expireTime} is not in the future.`)
    return ms
  }
  return undefined
}

/**
 * The equalities a filter requires at its top (alone, or ANDed there): each `field = "text"` as
 * [field, text]. Every record the filter passes meets them all, so a list may pass over records
 * that fail one on their own fields before making their metadata.
 */
export function requiredEquals(filter: Filter | undefined): [field: string, value: string][] {
  if (filter === undefined) return []
  const parts = filter.op === 'and' ? filter.filters : [filter]
  return parts.flatMap((f): [string, string][] => (f.op === 'eq' && typeof f.value === 'string' ? [[f.field, f.value]] : []))
}
