import { Content, NEWER_PART_FIELDS } from '../rpc/content.js'
import { CAPS, googleLimit, quarryCap } from '../rpc/limits.js'
import { bool, double, duration, enumOf, fieldMask, int32, int64, mapOf, message, repeated, string, text, timestamp, type Infer } from '../rpc/proto-json.js'

/**
 * Requests of google.cloud.aiplatform.v1beta1.MemoryBankService. The fields of the pinned Node
 * client (aiplatform 6.11) are checked against its protos; `NEWER_FIELDS` lists what the API gained
 * since (topics, metadata, filters, purge), served in process and over HTTP for newer clients.
 */
const P = 'google.cloud.aiplatform.v1beta1'

/**
 * Google documents one request limit of Memory Bank (5 direct memories per generate request); it
 * documents none for facts, scopes, names, topics or metadata, so those are Quarry's caps.
 */
export const DOCUMENTED = {
  directMemories: googleLimit(5, 'https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/projects.locations.reasoningEngines.memories/generate'),
} as const

/** A scope: a few identifiers (user, agent, session...), each short. */
const SCOPE = mapOf(text(CAPS.value), { entries: quarryCap(32, 'a scope is a few identifiers (user, agent, session); every memory and every retrieval carries it'), keys: CAPS.key })
const TOPICS = quarryCap(100, 'topics label a memory: four managed kinds and custom labels')
const METADATA_ENTRIES = quarryCap(100, 'metadata entries are filterable fields of one memory')
/** OR groups of AND filters: each group is a conjunction over a memory's metadata. */
const FILTER_GROUPS = quarryCap(100, "each group is a conjunction over a memory's at most 100 metadata keys")
const GROUP_FILTERS = quarryCap(100, 'one condition per metadata key and then some')
/** Labels of a memory revision: a few keys a revisions.list filter selects by. */
const REVISION_LABELS = mapOf(text(CAPS.value), { entries: quarryCap(64, 'revision labels tag a write for revisions.list filters'), keys: CAPS.key })

export const ManagedTopic = enumOf(`${P}.ManagedTopicEnum`, {
  MANAGED_TOPIC_ENUM_UNSPECIFIED: 0,
  USER_PERSONAL_INFO: 1,
  USER_PREFERENCES: 2,
  KEY_CONVERSATION_DETAILS: 3,
  EXPLICIT_INSTRUCTIONS: 4,
})
export const MemoryTopicId = message(`${P}.MemoryTopicId`, { customMemoryTopicLabel: text(CAPS.value), managedMemoryTopic: ManagedTopic }, [['customMemoryTopicLabel', 'managedMemoryTopic']])
export const MemoryMetadataValue = message(
  `${P}.MemoryMetadataValue`,
  { stringValue: text(CAPS.text), doubleValue: double, boolValue: bool, timestampValue: timestamp },
  [['stringValue', 'doubleValue', 'boolValue', 'timestampValue']],
)

export const Memory = message(
  `${P}.Memory`,
  {
    expireTime: timestamp,
    ttl: duration,
    name: string,
    displayName: text(CAPS.displayName),
    description: text(CAPS.text),
    createTime: timestamp,
    updateTime: timestamp,
    fact: text(CAPS.text),
    scope: SCOPE,
    topics: repeated(MemoryTopicId, TOPICS),
    metadata: mapOf(MemoryMetadataValue, { entries: METADATA_ENTRIES, keys: CAPS.key }),
    // Input only: how the revision this write makes is labelled and kept, or that it makes none.
    revisionLabels: REVISION_LABELS,
    revisionExpireTime: timestamp,
    revisionTtl: duration,
    disableMemoryRevisions: bool,
  },
  [['expireTime', 'ttl'], ['revisionExpireTime', 'revisionTtl']],
)

export const FilterOperator = enumOf(`${P}.MemoryFilter.Operator`, { OPERATOR_UNSPECIFIED: 0, EQUAL: 1, GREATER_THAN: 2, LESS_THAN: 3 })
export const MemoryFilter = message(`${P}.MemoryFilter`, { key: text(CAPS.key), op: FilterOperator, value: MemoryMetadataValue, negate: bool })
export const MemoryConjunctionFilter = message(`${P}.MemoryConjunctionFilter`, { filters: repeated(MemoryFilter, GROUP_FILTERS) })

export const CreateMemoryRequest = message(`${P}.CreateMemoryRequest`, { parent: string, memory: Memory, memoryId: string })
export const GetMemoryRequest = message(`${P}.GetMemoryRequest`, { name: string })
export const UpdateMemoryRequest = message(`${P}.UpdateMemoryRequest`, { memory: Memory, updateMask: fieldMask })
export const ListMemoriesRequest = message(`${P}.ListMemoriesRequest`, { parent: string, filter: string, pageSize: int32, pageToken: string, orderBy: string })
export const DeleteMemoryRequest = message(`${P}.DeleteMemoryRequest`, { name: string })
export const RetrieveMemoriesRequest = message(
  `${P}.RetrieveMemoriesRequest`,
  {
    similaritySearchParams: message(`${P}.RetrieveMemoriesRequest.SimilaritySearchParams`, { searchQuery: text(CAPS.query), topK: int32 }),
    simpleRetrievalParams: message(`${P}.RetrieveMemoriesRequest.SimpleRetrievalParams`, { pageSize: int32, pageToken: string }),
    parent: string,
    scope: SCOPE,
    filter: string,
    filterGroups: repeated(MemoryConjunctionFilter, FILTER_GROUPS),
  },
  [['similaritySearchParams', 'simpleRetrievalParams']],
)
export const GenerateMemoriesRequest = message(
  `${P}.GenerateMemoriesRequest`,
  {
    vertexSessionSource: message(`${P}.GenerateMemoriesRequest.VertexSessionSource`, { session: string, startTime: timestamp, endTime: timestamp }),
    directContentsSource: message(`${P}.GenerateMemoriesRequest.DirectContentsSource`, {
      events: repeated(message(`${P}.GenerateMemoriesRequest.DirectContentsSource.Event`, { content: Content })),
    }),
    directMemoriesSource: message(`${P}.GenerateMemoriesRequest.DirectMemoriesSource`, {
      directMemories: repeated(message(`${P}.GenerateMemoriesRequest.DirectMemoriesSource.DirectMemory`, { fact: text(CAPS.text) }), DOCUMENTED.directMemories),
    }),
    parent: string,
    disableConsolidation: bool,
    scope: SCOPE,
    revisionLabels: REVISION_LABELS,
    revisionExpireTime: timestamp,
    revisionTtl: duration,
    disableMemoryRevisions: bool,
  },
  [['vertexSessionSource', 'directContentsSource', 'directMemoriesSource'], ['revisionExpireTime', 'revisionTtl']],
)
export const PurgeMemoriesRequest = message(`${P}.PurgeMemoriesRequest`, { parent: string, filter: string, force: bool })
export const ListMemoryRevisionsRequest = message(`${P}.ListMemoryRevisionsRequest`, { parent: string, pageSize: int32, pageToken: string, filter: string })
export const GetMemoryRevisionRequest = message(`${P}.GetMemoryRevisionRequest`, { name: string })
/** `targetRevisionId` is an int64; Quarry's revision ids are below 2^53, so a JSON number or a decimal string reads exactly. */
export const RollbackMemoryRequest = message(`${P}.RollbackMemoryRequest`, { name: string, targetRevisionId: int64 })

/** Fields newer than the pinned client's protos, by message (the protos test skips exactly these). */
export const NEWER_FIELDS: Readonly<Record<string, readonly string[]>> = {
  [`${P}.Memory`]: ['topics', 'metadata', 'revisionLabels', 'revisionExpireTime', 'revisionTtl', 'disableMemoryRevisions'],
  [`${P}.RetrieveMemoriesRequest`]: ['filter', 'filterGroups'],
  [`${P}.ListMemoriesRequest`]: ['orderBy'],
  [`${P}.GenerateMemoriesRequest`]: ['revisionLabels', 'revisionExpireTime', 'revisionTtl', 'disableMemoryRevisions'],
  ...NEWER_PART_FIELDS,
}

/** Requests of the pinned client (PurgeMemoriesRequest and the revisions' requests are newer and not in it). */
export const CLIENT_REQUESTS = { CreateMemoryRequest, GetMemoryRequest, UpdateMemoryRequest, ListMemoriesRequest, DeleteMemoryRequest, RetrieveMemoriesRequest, GenerateMemoriesRequest }

export type MemoryInput = Infer<typeof Memory>
export type MemoryTopicInput = Infer<typeof MemoryTopicId>
export type MetadataValueInput = Infer<typeof MemoryMetadataValue>
export type ConjunctionInput = Infer<typeof MemoryConjunctionFilter>
