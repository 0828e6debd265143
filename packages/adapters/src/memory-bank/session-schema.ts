import { CAPS, quarryCap } from '../rpc/limits.js'
import { duration, fieldMask, int32, mapOf, message, opaque, string, text, timestamp, type Infer } from '../rpc/proto-json.js'

/**
 * Requests of google.cloud.aiplatform.v1beta1.SessionService (Vertex AI Agent Engine Sessions).
 * v1 has the same messages (its service lacks only the `reasoningEngines/*` short bindings), so
 * one schema reads both. Content, actions, event metadata and structs are kept as given.
 */
const P = 'google.cloud.aiplatform.v1beta1'

/** Labels: "keys and values can be no longer than 64 characters" (session.proto, Session.labels). */
const LABELS = mapOf(text(quarryCap(64, 'Google: label keys and values can be no longer than 64 characters (session.proto)')), {
  entries: quarryCap(64, "Google's label maps allow 64 labels per resource"),
  keys: quarryCap(64, 'Google: label keys and values can be no longer than 64 characters (session.proto)'),
})

export const Session = message(
  `${P}.Session`,
  {
    expireTime: timestamp,
    ttl: duration,
    name: string,
    createTime: timestamp,
    updateTime: timestamp,
    displayName: text(CAPS.displayName),
    labels: LABELS,
    sessionState: opaque('google.protobuf.Struct'),
    userId: text(CAPS.value),
  },
  [['expireTime', 'ttl']],
)

const SessionEvent = message(`${P}.SessionEvent`, {
  name: string,
  author: text(CAPS.value),
  content: opaque(`${P}.Content`),
  invocationId: text(CAPS.value),
  actions: opaque(`${P}.EventActions`),
  timestamp,
  errorCode: text(CAPS.value),
  errorMessage: text(CAPS.text),
  eventMetadata: opaque(`${P}.EventMetadata`),
  rawEvent: opaque('google.protobuf.Struct'),
})

export const CreateSessionRequest = message(`${P}.CreateSessionRequest`, { parent: string, session: Session, sessionId: string })
export const GetSessionRequest = message(`${P}.GetSessionRequest`, { name: string })
export const ListSessionsRequest = message(`${P}.ListSessionsRequest`, { parent: string, pageSize: int32, pageToken: string, filter: string, orderBy: string })
export const UpdateSessionRequest = message(`${P}.UpdateSessionRequest`, { session: Session, updateMask: fieldMask })
export const DeleteSessionRequest = message(`${P}.DeleteSessionRequest`, { name: string })
export const ListEventsRequest = message(`${P}.ListEventsRequest`, { parent: string, pageSize: int32, pageToken: string, filter: string, orderBy: string })
export const AppendEventRequest = message(`${P}.AppendEventRequest`, { name: string, event: SessionEvent })

/** Every request of the service (the protos test checks them against Google's). */
export const SESSION_REQUESTS = { CreateSessionRequest, GetSessionRequest, ListSessionsRequest, UpdateSessionRequest, DeleteSessionRequest, ListEventsRequest, AppendEventRequest }

export type SessionInput = Infer<typeof Session>
