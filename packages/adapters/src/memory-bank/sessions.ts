import { compileFilter, type Filter } from '@quarry/core'
import { parseFilter } from '../rpc/aip160.js'
import { toCoreFilter, type KeyType } from '../rpc/aip160-filter.js'
import { readMessage } from '../rpc/proto-json.js'
import { checkUpdateMask, type MaskRules } from '../rpc/field-mask.js'
import { parseName, type ResourceName } from '../rpc/names.js'
import { omitUnset } from '../rpc/omit.js'
import type { Operation } from '../rpc/operations.js'
import { pageByKey, pageByKeyUnsorted, type PageRequest } from '../rpc/paging.js'
import { failure, invalidArgument } from '../rpc/status.js'
import { ENGINE, NAMED_ID_RULE, SHORT_ENGINE, USER_ID_RULE, type MemoryContext } from './context.js'
import { requiredEquals, ttlExpiry } from './fields.js'
import { CreateSessionRequest, DeleteSessionRequest, GetSessionRequest, ListSessionsRequest, Session, UpdateSessionRequest, type SessionInput } from './session-schema.js'
import { sessionJson, sessionMetadata, type SessionJson, type SessionState } from './session-state.js'
import type { EngineState } from './state.js'

/**
 * Vertex AI Agent Engine Sessions (SessionService) under the reasoning engines of Memory Bank:
 * the same engine lookup (created on first use, or NOT_FOUND with `explicitEngines`), the same
 * operations and the same saved state. Expired sessions are never returned; writes remove them.
 */

const SESSION = `${ENGINE}/sessions/{session}`
const SHORT_SESSION = `${SHORT_ENGINE}/sessions/{session}`


/** Google: ttl and expireTime have a minimum of 24 hours (session.proto, Session.expire_time / ttl). */
export const MIN_SESSION_TTL_MS = 24 * 3600 * 1000
/** A session given neither ttl nor expireTime expires after this (Google documents no default; Quarry's choice, README). */
export const DEFAULT_SESSION_TTL_MS = 365 * 24 * 3600 * 1000

/** A session name under an engine name of either form. */
function parseSession(name: string | undefined, field: string): ResourceName<'reasoning_engine' | 'session'> {
  const rules = { session: NAMED_ID_RULE }
  return name?.startsWith('reasoningEngines/') === true ? parseName(name, SHORT_SESSION, field, rules) : parseName(name, SESSION, field, rules)
}

/** Whether a session may be returned at `now`. */
export function live(s: SessionState, now: number): boolean {
  return s.expireMs > now
}

/** The live session `name` and its engine; NOT_FOUND otherwise (an expired session is gone). */
export function findSession(ctx: MemoryContext, name: string | undefined, field: string): { engine: EngineState; session: SessionState } {
  const parsed = parseSession(name, field)
  const engine = ctx.readEngine(parsed.names.reasoning_engine, field)
  const session = engine?.sessions.get(parsed.name)
  if (!engine || !session || !live(session, ctx.now())) throw failure('NOT_FOUND', `Session "${parsed.name}" not found.`, field)
  return { engine, session }
}

/**
 * Removes the engine's expired sessions (in writes only: the write-ahead log replays them at the
 * same recorded time). A pass over the sessions runs only once the earliest known expiry is due,
 * as the memories' sweep (context.ts); reads test `live` whatever it says.
 */
export function sweepSessions(ctx: MemoryContext, engine: EngineState): void {
  const now = ctx.now()
  if (now < engine.nextSessionExpiryMs) return
  let next = Number.POSITIVE_INFINITY
  for (const s of engine.sessions.values()) {
    if (!live(s, now)) engine.sessions.delete(s.name)
    else next = Math.min(next, s.expireMs)
  }
  engine.nextSessionExpiryMs = next
}

/** Notes a session's expiry so the sweep comes in time. */
function expiresAt(engine: EngineState, expireMs: number): void {
  engine.nextSessionExpiryMs = Math.min(engine.nextSessionExpiryMs, expireMs)
}

/** ttl or expireTime (a oneof) → the expiry instant, at least 24 hours after `fromMs`; undefined when neither is set. */
function readSessionExpiry(session: SessionInput, now: number, fromMs: number, field: string): number | undefined {
  if (session.ttl !== undefined) {
    if (session.ttl * 1000 < MIN_SESSION_TTL_MS) throw invalidArgument(`${field}.ttl`, `ttl must be at least 24 hours ("86400s"); received ${session.ttl}s.`)
    return ttlExpiry(session.ttl, now, `${field}.ttl`)
  }
  if (session.expireTime !== undefined) {
    const ms = Date.parse(session.expireTime)
    if (ms < fromMs + MIN_SESSION_TTL_MS || ms <= now) throw invalidArgument(`${field}.expireTime`, `expireTime must be at least 24 hours after the session's creation (and in the future); received ${session.expireTime}.`)
    return ms
  }
  return undefined
}

/** A Struct field (sessionState) as stored: a copy of its own keys (a "__proto__" key stays a key). */
export function structOf(value: Readonly<Record<string, unknown>> | undefined): Readonly<Record<string, unknown>> | undefined {
  if (value === undefined) return undefined
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
  return out
}

function labelsOf(labels: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(labels ?? {})) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true })
  return Object.freeze(out)
}

export async function createSession(ctx: MemoryContext, request: unknown, version: string): Promise<Operation> {
  const { parent, session = {}, sessionId } = readMessage(CreateSessionRequest, request)
  const engine = ctx.engine(parent, 'parent')
  if (session.userId === undefined || session.userId === '') throw invalidArgument('session.userId', 'userId is required: the user the session belongs to.')
  const now = ctx.now()
  const expireMs = readSessionExpiry(session, now, now, 'session') ?? now + DEFAULT_SESSION_TTL_MS
  let name: string
  if (sessionId !== undefined) {
    if (!USER_ID_RULE.test.test(sessionId)) throw invalidArgument('sessionId', `sessionId is ${USER_ID_RULE.says}; received "${sessionId}".`)
    name = `${engine.name}/sessions/${sessionId}`
    // An expired session's id is free again.
    const existing = engine.sessions.get(name)
    if (existing && live(existing, now)) throw failure('ALREADY_EXISTS', `Session "${name}" already exists.`, 'sessionId')
  } else {
    do name = `${engine.name}/sessions/${ctx.numericId()}`
    while (engine.sessions.has(name))
  }
  // Nothing changes before the last possible refusal: a refused write is not logged.
  sweepSessions(ctx, engine)
  const s: SessionState = {
    name,
    userId: session.userId,
    displayName: session.displayName,
    labels: labelsOf(session.labels),
    sessionState: structOf(session.sessionState),
    expireMs,
    events: [],
    ...ctx.stamp(now),
  }
  engine.sessions.set(name, s)
  expiresAt(engine, expireMs)
  return ctx.operation(name, 'CreateSessionOperationMetadata', 'Session', sessionJson(s), version)
}

export async function getSession(ctx: MemoryContext, request: unknown): Promise<SessionJson> {
  const { name } = readMessage(GetSessionRequest, request)
  return sessionJson(findSession(ctx, name, 'name').session)
}

/** What an update's mask may name: whole fields (rpc/field-mask.ts). */
const MASK: MaskRules = { updatable: ['displayName', 'labels', 'sessionState', 'expireTime', 'ttl'], immutable: { userId: 'userId is immutable: create a session for the other user instead.' }, subPaths: false }

/** updateSession: the fields of the mask (without one, every updatable field: "If the mask is not present, all fields will be updated"). */
export async function updateSession(ctx: MemoryContext, request: unknown): Promise<SessionJson> {
  const { session = {}, updateMask } = readMessage(UpdateSessionRequest, request)
  const { engine, session: target } = findSession(ctx, session.name, 'session.name')
  const paths = updateMask ?? []
  checkUpdateMask(Session, paths, MASK)
  if (session.userId !== undefined && session.userId !== target.userId) throw invalidArgument('session.userId', 'userId is immutable: create a session for the other user instead.')
  const all = paths.length === 0
  const has = (p: string): boolean => all || paths.includes(p)
  const now = ctx.now()
  // Without a mask the expiry changes only when one is given: expireTime is always set.
  const expiryGiven = session.ttl !== undefined || session.expireTime !== undefined
  const expireMs = (has('expireTime') || has('ttl')) && (expiryGiven || !all) ? (readSessionExpiry(session, now, target.createMs, 'session') ?? target.createMs + DEFAULT_SESSION_TTL_MS) : target.expireMs
  sweepSessions(ctx, engine)
  if (has('displayName')) target.displayName = session.displayName
  if (has('labels')) target.labels = labelsOf(session.labels)
  if (has('sessionState')) target.sessionState = structOf(session.sessionState)
  target.expireMs = expireMs
  expiresAt(engine, expireMs)
  target.updateMs = now
  return sessionJson(target)
}

export async function deleteSession(ctx: MemoryContext, request: unknown, version: string): Promise<Operation> {
  const { name } = readMessage(DeleteSessionRequest, request)
  const { engine, session } = findSession(ctx, name, 'name')
  sweepSessions(ctx, engine)
  engine.sessions.delete(session.name)
  return ctx.operation(session.name, 'DeleteOperationMetadata', 'google.protobuf.Empty', {}, version)
}

/** What a session filter reads ("Supported fields: display_name, user_id, labels", ListSessionsRequest.filter). */
const SESSION_FIELDS: Readonly<Record<string, string>> = { display_name: 'display_name', displayName: 'display_name', user_id: 'user_id', userId: 'user_id' }

function sessionFilter(filter: string | undefined): Filter | undefined {
  if (filter === undefined || filter.trim() === '') return undefined
  const fieldOf = (key: string): string => {
    if (Object.hasOwn(SESSION_FIELDS, key)) return SESSION_FIELDS[key] as string
    if (key.startsWith('labels.') && key.length > 7) return key
    throw invalidArgument('filter', `a session filter reads display_name, user_id and labels.<key>; "${key}" is none of them.`)
  }
  // Every field a session filter reads is a string.
  const typeOf = (): KeyType => 'string'
  return toCoreFilter(parseFilter(filter, 'filter'), { path: 'filter', fieldOf, typeOf, hasOnListsOnly: true })
}

/**
 * An `orderBy` ("a comma-separated list of fields ... Use "desc" after a field name for descending")
 * over the fields `allowed` (name → key of an item): the key functions and their directions.
 */
export function readOrderBy<T>(orderBy: string | undefined, allowed: Readonly<Record<string, (item: T) => number>>, fallback: string): { keys: ((item: T) => number)[]; desc: boolean[] } {
  const keys: ((item: T) => number)[] = []
  const desc: boolean[] = []
  const text = orderBy === undefined || orderBy.trim() === '' ? fallback : orderBy
  for (const part of text.split(',')) {
    const [field = '', direction, ...rest] = part.trim().split(/\s+/)
    const key = Object.hasOwn(allowed, field) ? allowed[field] : undefined
    if (key === undefined || rest.length > 0 || (direction !== undefined && direction !== 'asc' && direction !== 'desc')) {
      throw invalidArgument('orderBy', `orderBy is a comma-separated list of ${Object.keys(allowed).join(', ')}, each optionally followed by "desc" (or "asc"); received "${orderBy ?? ''}".`)
    }
    keys.push(key)
    desc.push(direction === 'desc')
  }
  return { keys, desc }
}

const SESSION_ORDER: Readonly<Record<string, (s: SessionState) => number>> = {
  create_time: (s) => s.createMs,
  createTime: (s) => s.createMs,
  update_time: (s) => s.updateMs,
  updateTime: (s) => s.updateMs,
}

/** An ordered list's order (readOrderBy): a key per orderBy field, each ascending or descending. */
type ListOrder<T> = { readonly keys: readonly ((item: T) => number)[]; readonly desc: readonly boolean[] }

/** The page key of an ordered list: the order's keys, then the seq (ties by creation, ascending), so every key is unique. */
function pageKeyOf<T extends { readonly seq: number }>(order: ListOrder<T>): { parts: ((item: T) => number)[]; desc: boolean[] } {
  return { parts: [...order.keys, (item: T) => item.seq], desc: [...order.desc, false] }
}

const ORDERED_LIMITS = { defaultSize: 100, maxSize: 1000 }

/** One page by the order's keys, ties by creation (seq, ascending), with a cursor on the last key; `items` in any order. */
export function orderedPage<T extends { readonly seq: number }>(items: readonly T[], order: ListOrder<T>, list: string, request: PageRequest) {
  const { parts, desc } = pageKeyOf(order)
  return pageByKeyUnsorted(items, parts, desc, list, request, ORDERED_LIMITS)
}

/** {@link orderedPage} over items already in that order (no selection: the page is read off them). */
export function sortedPage<T extends { readonly seq: number }>(items: readonly T[], order: ListOrder<T>, list: string, request: PageRequest) {
  const { parts, desc } = pageKeyOf(order)
  return pageByKey(items, (item) => parts.map((p) => p(item)), desc, list, request, ORDERED_LIMITS)
}

/** listSessions: filtered by display_name, user_id, labels; ordered by create_time (default) or update_time; 100 a page unless asked. */
export async function listSessions(ctx: MemoryContext, request: unknown): Promise<{ sessions?: SessionJson[]; nextPageToken?: string }> {
  const req = readMessage(ListSessionsRequest, request)
  const engine = ctx.readEngine(req.parent, 'parent')
  const filter = sessionFilter(req.filter)
  const order = readOrderBy(req.orderBy, SESSION_ORDER, 'create_time')
  const test = filter ? compileFilter(filter) : undefined
  // A `user_id = "..."` at the filter's top is tested on the session itself, before its metadata is made.
  const users = requiredEquals(filter).flatMap(([field, value]) => (field === 'user_id' ? [value] : []))
  const listed = (held: EngineState): SessionState[] => {
    const now = ctx.now()
    return [...held.sessions.values()].filter((s) => users.every((u) => s.userId === u) && live(s, now) && (!test || test(sessionMetadata(s))))
  }
  // An engine that holds nothing yet has no sessions, but its page size and token are read all the same.
  const all = engine ? listed(engine) : []
  const page = orderedPage(all, order, `listSessions ${engine?.name ?? req.parent} ${req.filter ?? ''} ${req.orderBy ?? ''}`, req)
  return omitUnset({ sessions: page.items.map(sessionJson), nextPageToken: page.nextPageToken })
}
