import { bool, double, duration, enumOf, fieldMask, int32, mapOf, message, opaque, repeated, string, timestamp, type Infer } from '../rpc/proto-json.js'

/**
 * Requests of google.cloud.aiplatform.v1beta1.MemoryBankService. The fields of the pinned Node
 * client (aiplatform 6.11) are checked against its protos; `NEWER_FIELDS` lists what the API gained
 * since (topics, metadata, filters, purge), served in process and over HTTP for newer clients.
 */
const P = 'google.cloud.aiplatform.v1beta1'

export const ManagedTopic = enumOf(`${P}.ManagedTopicEnum`, {
  MANAGED_TOPIC_ENUM_UNSPECIFIED: 0,
  USER_PERSONAL_INFO: 1,
  USER_PREFERENCES: 2,
  KEY_CONVERSATION_DETAILS: 3,
  EXPLICIT_INSTRUCTIONS: 4,
})
export const MemoryTopicId = message(`${P}.MemoryTopicId`, { customMemoryTopicLabel: string, managedMemoryTopic: ManagedTopic }, [['customMemoryTopicLabel', 'managedMemoryTopic']])
export const MemoryMetadataValue = message(
  `${P}.MemoryMetadataValue`,
  { stringValue: string, doubleValue: double, boolValue: bool, timestampValue: timestamp },
  [['stringValue', 'doubleValue', 'boolValue', 'timestampValue']],
)

export const Memory = message(
  `${P}.Memory`,
  {
    expireTime: timestamp,
    ttl: duration,
    name: string,
    displayName: string,
    description: string,
    createTime: timestamp,
    updateTime: timestamp,
    fact: string,
    scope: mapOf(string),
    topics: repeated(MemoryTopicId),
    metadata: mapOf(MemoryMetadataValue),
  },
  [['expireTime', 'ttl']],
)

export const FilterOperator = enumOf(`${P}.MemoryFilter.Operator`, { OPERATOR_UNSPECIFIED: 0, EQUAL: 1, GREATER_THAN: 2, LESS_THAN: 3 })
export const MemoryFilter = message(`${P}.MemoryFilter`, { key: string, op: FilterOperator, value: MemoryMetadataValue, negate: bool })
export const MemoryConjunctionFilter = message(`${P}.MemoryConjunctionFilter`, { filters: repeated(MemoryFilter) })

export const CreateMemoryRequest = message(`${P}.CreateMemoryRequest`, { parent: string, memory: Memory, memoryId: string })
export const GetMemoryRequest = message(`${P}.GetMemoryRequest`, { name: string })
export const UpdateMemoryRequest = message(`${P}.UpdateMemoryRequest`, { memory: Memory, updateMask: fieldMask })
export const ListMemoriesRequest = message(`${P}.ListMemoriesRequest`, { parent: string, filter: string, pageSize: int32, pageToken: string })
export const DeleteMemoryRequest = message(`${P}.DeleteMemoryRequest`, { name: string })
export const RetrieveMemoriesRequest = message(
  `${P}.RetrieveMemoriesRequest`,
  {
    similaritySearchParams: message(`${P}.RetrieveMemoriesRequest.SimilaritySearchParams`, { searchQuery: string, topK: int32 }),
    simpleRetrievalParams: message(`${P}.RetrieveMemoriesRequest.SimpleRetrievalParams`, { pageSize: int32, pageToken: string }),
    parent: string,
    scope: mapOf(string),
    filter: string,
    filterGroups: repeated(MemoryConjunctionFilter),
  },
  [['similaritySearchParams', 'simpleRetrievalParams']],
)
export const GenerateMemoriesRequest = message(
  `${P}.GenerateMemoriesRequest`,
  {
    vertexSessionSource: opaque(`${P}.GenerateMemoriesRequest.VertexSessionSource`),
    directContentsSource: opaque(`${P}.GenerateMemoriesRequest.DirectContentsSource`),
    directMemoriesSource: message(`${P}.GenerateMemoriesRequest.DirectMemoriesSource`, {
      directMemories: repeated(message(`${P}.GenerateMemoriesRequest.DirectMemoriesSource.DirectMemory`, { fact: string })),
    }),
    parent: string,
    disableConsolidation: bool,
    scope: mapOf(string),
  },
  [['vertexSessionSource', 'directContentsSource', 'directMemoriesSource']],
)
export const PurgeMemoriesRequest = message(`${P}.PurgeMemoriesRequest`, { parent: string, filter: string, force: bool })

/** Fields newer than the pinned client's protos, by message (the protos test skips exactly these). */
export const NEWER_FIELDS: Readonly<Record<string, readonly string[]>> = {
  [`${P}.Memory`]: ['topics', 'metadata'],
  [`${P}.RetrieveMemoriesRequest`]: ['filter', 'filterGroups'],
}

/** Requests of the pinned client (PurgeMemoriesRequest is newer and not in it). */
export const CLIENT_REQUESTS = { CreateMemoryRequest, GetMemoryRequest, UpdateMemoryRequest, ListMemoriesRequest, DeleteMemoryRequest, RetrieveMemoriesRequest, GenerateMemoriesRequest }

export type MemoryInput = Infer<typeof Memory>
export type MemoryTopicInput = Infer<typeof MemoryTopicId>
export type MetadataValueInput = Infer<typeof MemoryMetadataValue>
export type ConjunctionInput = Infer<typeof MemoryConjunctionFilter>
