import { bool, enumOf, fieldMask, float, int32, message, repeated, string, timestamp, type Infer } from '../rpc/proto-json.js'

/**
 * The request messages of google.ai.generativelanguage.v1beta.RetrieverService, as schemas the
 * proto-JSON reader checks requests against (field names and types from the v1beta protos).
 */
const PKG = 'google.ai.generativelanguage.v1beta'

export const StringList = message(`${PKG}.StringList`, { values: repeated(string) })

export const CustomMetadata = message(
  `${PKG}.CustomMetadata`,
  { key: string, stringValue: string, stringListValue: StringList, numericValue: float },
  [['stringValue', 'stringListValue', 'numericValue']],
)

export const ChunkState = enumOf(`${PKG}.Chunk.State`, { STATE_UNSPECIFIED: 0, STATE_PENDING_PROCESSING: 1, STATE_ACTIVE: 2, STATE_FAILED: 10 })

export const Corpus = message(`${PKG}.Corpus`, { name: string, displayName: string, createTime: timestamp, updateTime: timestamp })

export const Document = message(`${PKG}.Document`, {
  name: string,
  displayName: string,
  customMetadata: repeated(CustomMetadata),
  updateTime: timestamp,
  createTime: timestamp,
})

export const ChunkData = message(`${PKG}.ChunkData`, { stringValue: string })

export const Chunk = message(`${PKG}.Chunk`, {
  name: string,
  data: ChunkData,
  customMetadata: repeated(CustomMetadata),
  createTime: timestamp,
  updateTime: timestamp,
  state: ChunkState,
})

export const Operator = enumOf(`${PKG}.Condition.Operator`, {
  OPERATOR_UNSPECIFIED: 0,
  LESS: 1,
  LESS_EQUAL: 2,
  EQUAL: 3,
  GREATER_EQUAL: 4,
  GREATER: 5,
  NOT_EQUAL: 6,
  INCLUDES: 7,
  EXCLUDES: 8,
})

export const Condition = message(`${PKG}.Condition`, { stringValue: string, numericValue: float, operation: Operator }, [['stringValue', 'numericValue']])

export const MetadataFilter = message(`${PKG}.MetadataFilter`, { key: string, conditions: repeated(Condition) })

export const CreateCorpusRequest = message(`${PKG}.CreateCorpusRequest`, { corpus: Corpus })
export const GetCorpusRequest = message(`${PKG}.GetCorpusRequest`, { name: string })
export const UpdateCorpusRequest = message(`${PKG}.UpdateCorpusRequest`, { corpus: Corpus, updateMask: fieldMask })
export const DeleteCorpusRequest = message(`${PKG}.DeleteCorpusRequest`, { name: string, force: bool })
export const ListCorporaRequest = message(`${PKG}.ListCorporaRequest`, { pageSize: int32, pageToken: string })
export const QueryCorpusRequest = message(`${PKG}.QueryCorpusRequest`, {
  name: string,
  query: string,
  metadataFilters: repeated(MetadataFilter),
  resultsCount: int32,
})

export const CreateDocumentRequest = message(`${PKG}.CreateDocumentRequest`, { parent: string, document: Document })
export const GetDocumentRequest = message(`${PKG}.GetDocumentRequest`, { name: string })
export const UpdateDocumentRequest = message(`${PKG}.UpdateDocumentRequest`, { document: Document, updateMask: fieldMask })
export const DeleteDocumentRequest = message(`${PKG}.DeleteDocumentRequest`, { name: string, force: bool })
export const ListDocumentsRequest = message(`${PKG}.ListDocumentsRequest`, { parent: string, pageSize: int32, pageToken: string })
export const QueryDocumentRequest = message(`${PKG}.QueryDocumentRequest`, {
  name: string,
  query: string,
  resultsCount: int32,
  metadataFilters: repeated(MetadataFilter),
})

export const CreateChunkRequest = message(`${PKG}.CreateChunkRequest`, { parent: string, chunk: Chunk })
export const BatchCreateChunksRequest = message(`${PKG}.BatchCreateChunksRequest`, { parent: string, requests: repeated(CreateChunkRequest) })
export const GetChunkRequest = message(`${PKG}.GetChunkRequest`, { name: string })
export const UpdateChunkRequest = message(`${PKG}.UpdateChunkRequest`, { chunk: Chunk, updateMask: fieldMask })
export const BatchUpdateChunksRequest = message(`${PKG}.BatchUpdateChunksRequest`, { parent: string, requests: repeated(UpdateChunkRequest) })
export const DeleteChunkRequest = message(`${PKG}.DeleteChunkRequest`, { name: string })
export const BatchDeleteChunksRequest = message(`${PKG}.BatchDeleteChunksRequest`, { parent: string, requests: repeated(DeleteChunkRequest) })
export const ListChunksRequest = message(`${PKG}.ListChunksRequest`, { parent: string, pageSize: int32, pageToken: string })

export type CustomMetadataInput = Infer<typeof CustomMetadata>
export type MetadataFilterInput = Infer<typeof MetadataFilter>
export type ChunkInput = Infer<typeof Chunk>
export type CreateChunkInput = Infer<typeof CreateChunkRequest>
export type UpdateChunkInput = Infer<typeof UpdateChunkRequest>
