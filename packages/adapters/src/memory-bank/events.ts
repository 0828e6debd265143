import { compileFilter, type Filter } from '@quarry/core'
import { parseFilter } from '../rpc/aip160.js'
import { toCoreFilter } from '../rpc/aip160-filter.js'
import { omitUnset } from '../rpc/omit.js'
import { readMessage } from '../rpc/proto-json.js'
import { invalidArgument } from '../rpc/status.js'
import type { MemoryContext } from './context.js'
import { AppendEventRequest, ListEventsRequest } from './session-schema.js'
import { eventMetadata, type EventState, type SessionEventJson, type SessionState } from './session-state.js'
import { findSession, readOrderBy, sortedPage, structOf, sweepSessions } from './sessions.js'

/**
 * A session's events: appendEvent adds one (its name generated, its `actions.stateDelta` merged
 * into the session's state), listEvents pages them by timestamp, optionally filtered by it.
 */

/** Inserts `e` after every event of an earlier or equal (timestamp, seq): events stay in timestamp order. */
function insertInOrder(events: EventState[], e: EventState): void {
  let lo = 0
  let hi = events.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const m = events[mid] as EventState
    if (m.timestampMs < e.timestampMs || (m.timestampMs === e.timestampMs && m.seq < e.seq)) lo = mid + 1
    else hi = mid
  }
  events.splice(lo, 0, e)
}

/** Merges an event's `actions.stateDelta` (a Struct) into the session's state, key by key. */
function applyStateDelta(session: SessionState, actions: Readonly<Record<string, unknown>> | undefined): void {
  const delta = actions?.['stateDelta']
  if (typeof delta !== 'object' || delta === null || Array.isArray(delta)) return
  const next = { ...(structOf(session.sessionState) ?? {}) }
  for (const [k, v] of Object.entries(delta)) Object.defineProperty(next, k, { value: v, enumerable: true, writable: true, configurable: true })
  session.sessionState = next
}

/** appendEvent: author, invocationId and timestamp are required; the answer is empty (AppendEventResponse). */
export async function appendEvent(ctx: MemoryContext, request: unknown): Promise<Record<string, never>> {
  const { name, event = {} } = readMessage(AppendEventRequest, request)
  const { engine, session } = findSession(ctx, name, 'name')
  if (event.author === undefined) throw invalidArgument('event.author', 'author is required: the agent that sent the event, or "user".')
  if (event.invocationId === undefined) throw invalidArgument('event.invocationId', 'invocationId is required: the invocation the event belongs to.')
  if (event.timestamp === undefined) throw invalidArgument('event.timestamp', 'timestamp is required: when the event was created on the client side (RFC 3339).')
  const now = ctx.now()
  sweepSessions(ctx, engine)
  const { seq } = ctx.stamp(now)
  const json: SessionEventJson = omitUnset({
    name: `${session.name}/events/${ctx.numericId()}`,
    author: event.author,
    content: event.content,
    invocationId: event.invocationId,
    actions: event.actions,
    timestamp: event.timestamp,
    errorCode: event.errorCode,
    errorMessage: event.errorMessage,
    eventMetadata: event.eventMetadata,
    rawEvent: event.rawEvent,
  })
  insertInOrder(session.events, { seq, timestampMs: Date.parse(event.timestamp), json })
  applyStateDelta(session, event.actions)
  session.updateMs = now
  return {}
}

/** An event filter: "`timestamp` range (i.e. `timestamp>="2025-01-31T11:30:00-04:00"`...)" (ListEventsRequest.filter). */
function eventFilter(filter: string | undefined): Filter | undefined {
  if (filter === undefined || filter.trim() === '') return undefined
  const fieldOf = (key: string): string => {
    if (key === 'timestamp') return key
    throw invalidArgument('filter', `an event filter reads timestamp (RFC 3339, e.g. timestamp>="2025-01-31T11:30:00Z"); "${key}" is not it.`)
  }
  return toCoreFilter(parseFilter(filter, 'filter'), { path: 'filter', fieldOf, typeOf: () => 'datetime', hasOnListsOnly: true })
}

const EVENT_ORDER: Readonly<Record<string, (e: EventState) => number>> = { timestamp: (e) => e.timestampMs }

/** Events in (timestamp, seq) order → timestamp descending, ties still by seq ascending (the list's key). */
function newestFirst(events: readonly EventState[]): EventState[] {
  const out: EventState[] = []
  for (let end = events.length; end > 0; ) {
    let start = end - 1
    while (start > 0 && (events[start - 1] as EventState).timestampMs === (events[end - 1] as EventState).timestampMs) start--
    for (let i = start; i < end; i++) out.push(events[i] as EventState)
    end = start
  }
  return out
}

/** listEvents: by timestamp ascending ("These events are ordered by timestamp in ascending order"), or `timestamp desc`; ties in append order. */
export async function listEvents(ctx: MemoryContext, request: unknown): Promise<{ sessionEvents?: SessionEventJson[]; nextPageToken?: string }> {
  const req = readMessage(ListEventsRequest, request)
  const filter = eventFilter(req.filter)
  const order = readOrderBy(req.orderBy, EVENT_ORDER, 'timestamp')
  const { session } = findSession(ctx, req.parent, 'parent')
  const test = filter ? compileFilter(filter) : undefined
  // session.events is kept in (timestamp, seq) order: the list is already sorted, or its reverse
  // (every key of an orderBy is the timestamp: the first one's direction orders it).
  const kept = test ? session.events.filter((e) => test(eventMetadata(e))) : session.events
  const sorted = order.desc[0] === true ? newestFirst(kept) : kept
  const page = sortedPage(sorted, order, `listEvents ${session.name} ${req.filter ?? ''} ${req.orderBy ?? ''}`, req)
  return omitUnset({ sessionEvents: page.items.map((e) => e.json), nextPageToken: page.nextPageToken })
}

/** A session's events from `startMs` (inclusive) to `endMs` (exclusive), in timestamp order: a vertexSessionSource. */
export function eventsInRange(session: SessionState, startMs: number | undefined, endMs: number | undefined): SessionEventJson[] {
  return session.events.filter((e) => (startMs === undefined || e.timestampMs >= startMs) && (endMs === undefined || e.timestampMs < endMs)).map((e) => e.json)
}
