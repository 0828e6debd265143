import type { Metadata } from '@quarry/core'
import { rfc3339 } from '../rpc/clock.js'
import { omitUnset } from '../rpc/omit.js'

/** A Session as proto3 JSON (expireTime always set: "always provided on output", session.proto). */
export interface SessionJson {
  readonly name: string
  readonly createTime: string
  readonly updateTime: string
  readonly displayName?: string
  readonly labels?: Readonly<Record<string, string>>
  readonly sessionState?: Readonly<Record<string, unknown>>
  readonly userId: string
  readonly expireTime: string
}

/** A SessionEvent as proto3 JSON; content, actions and metadata as they were appended. */
export interface SessionEventJson {
  readonly name: string
  readonly author: string
  readonly content?: Readonly<Record<string, unknown>>
  readonly invocationId: string
  readonly actions?: Readonly<Record<string, unknown>>
  readonly timestamp: string
  readonly errorCode?: string
  readonly errorMessage?: string
  readonly eventMetadata?: Readonly<Record<string, unknown>>
  readonly rawEvent?: Readonly<Record<string, unknown>>
}

/** One event of a session: its JSON and the keys it is ordered by. */
export interface EventState {
  readonly seq: number
  readonly timestampMs: number
  readonly json: SessionEventJson
}

/** One session of a reasoning engine. */
export interface SessionState {
  readonly name: string
  readonly seq: number
  readonly createMs: number
  updateMs: number
  readonly userId: string
  displayName: string | undefined
  labels: Readonly<Record<string, string>>
  sessionState: Readonly<Record<string, unknown>> | undefined
  expireMs: number
  /** By timestamp, then append order (seq). */
  readonly events: EventState[]
}

export function sessionJson(s: SessionState): SessionJson {
  return omitUnset({
    name: s.name,
    createTime: rfc3339(s.createMs),
    updateTime: rfc3339(s.updateMs),
    displayName: s.displayName,
    labels: s.labels,
    sessionState: s.sessionState,
    userId: s.userId,
    expireTime: rfc3339(s.expireMs),
  })
}

/** The fields a session filter reads (ListSessionsRequest.filter: display_name, user_id, labels.<key>). */
export function sessionMetadata(s: SessionState): Metadata {
  const out: Metadata = { user_id: s.userId }
  if (s.displayName !== undefined) out['display_name'] = s.displayName
  for (const [k, v] of Object.entries(s.labels)) Object.defineProperty(out, `labels.${k}`, { value: v, enumerable: true, writable: true, configurable: true })
  return out
}

/** The fields an event filter reads (ListEventsRequest.filter: timestamp). */
export function eventMetadata(e: EventState): Metadata {
  return { timestamp: new Date(e.timestampMs) }
}
