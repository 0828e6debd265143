import { CAPS, googleLimit, quarryCap } from '../rpc/limits.js'
import { bool, enumOf, fieldMask, float, int32, message, repeated, string, text, timestamp, type Infer } from '../rpc/proto-json.js'

/**
 * The request messages of google.ai.generativelanguage.v1beta.RetrieverService, as schemas the
 * proto-JSON reader checks requests against (field names and types from the v1beta protos).
 */
const PKG = 'google.ai.generativelanguage.v1beta'

/** Where Google documents each limit (also in the protos' comments, retriever.proto / retriever_service.proto). */
const CORPORA = 'https://ai.google.dev/api/semantic-retrieval/corpora'
const DOCUMENTS = 'https://ai.google.dev/api/semantic-retrieval/documents'
const CHUNKS = 'https://ai.google.dev/api/semantic-retrieval/chunks'

/** The per-request limits Google documents; engine options (`limits`) may lower them, never raise them. */
export const DOCUMENTED = {
  corpusDisplayName: googleLimit(512, CORPORA),
  documentDisplayName: googleLimit(512, DOCUMENTS),
  documentCustomMetadata: googleLimit(20, DOCUMENTS),
  chunkCustomMetadata: googleLimit(20, CHUNKS),
  batchCreate: googleLimit(100, CHUNKS),
  batchUpdate: googleLimit(100, CHUNKS),
} as const

/** Google documents no limit for chunks:batchDelete; Quarry holds it to the other two batches'. */
const BATCH_DELETE = quarryCap(100, 'the limit Google documents for batchCreate and batchUpdate')

/** Characters of a chunk's text, checked before its tokens are counted (Google's limit is 2,043 tokens, checked by chunks.ts). */
const CHUNK_TEXT = quarryCap(100_000, "2,043 tokens of prose are 10-15k characters; the cap bounds the tokenizing before Google's token limit is checked")
/** Conditions of one MetadataFilter (ORed) and MetadataFilters of one query (ANDed). */
const CONDITIONS = quarryCap(1_000, 'conditions are ORed values of one key; a thousand covers any value list')
const FILTERS = quarryCap(100, 'filters are ANDed keys: a chunk and its document carry at most 40 keys, a range takes two filters')

export const StringList = message(`${PKG}.StringList`, { values: repeated(text(CAPS.value), CAPS.listValues) })

export const CustomMetadata = message(
  `${PKG}.CustomMetadata`,
  { key: text(CAPS.key), stringValue: text(CAPS.text), stringListValue: StringList, numericValue: float },
  [['stringValue', 'stringListValue', 'numericValue']],
)

export const ChunkState = enumOf(`${PKG}.Chunk.State`, { STATE_UNSPECIFIED: 0, STATE_PENDING_PROCESSING: 1, STATE_ACTIVE: 2, STATE_FAILED: 10 })

export const Corpus = message(`${PKG}.Corpus`, { name: string, displayName: text(DOCUMENTED.corpusDisplayName), createTime: timestamp, updateTime: timestamp })

export const Document = message(`${PKG}.Document`, {
  name: string,
  displayName: text(DOCUMENTED.documentDisplayName),
  customMetadata: repeated(CustomMetadata, DOCUMENTED.documentCustomMetadata),
  updateTime: timestamp,
  createTime: timestamp,
})

/** `stringValue` is the one member of the oneof `data`: it has presence. */
export const ChunkData = message(`${PKG}.ChunkData`, { stringValue: text(CHUNK_TEXT) }, [['stringValue']])

export const Chunk = message(`${PKG}.Chunk`, {
  name: string,
  data: ChunkData,
  customMetadata: repeated(CustomMetadata, DOCUMENTED.chunkCustomMetadata),
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

export const Condition = message(`${PKG}.Condition`, { stringValue: text(CAPS.text), numericValue: float, operation: Operator }, [['stringValue', 'numericValue']])

/** A filter key is `chunk.custom_metadata.` or `document.custom_metadata.` (25 characters at most) and a metadata key. */
export const MetadataFilter = message(`${PKG}.MetadataFilter`, { key: text(quarryCap(CAPS.key.max + 25, 'a custom metadata key with its prefix')), conditions: repeated(Condition, CONDITIONS) })

export const CreateCorpusRequest = message(`${PKG}.CreateCorpusRequest`, { corpus: Corpus })
export const GetCorpusRequest = message(`${PKG}.GetCorpusRequest`, { name: string })
export const UpdateCorpusRequest = message(`${PKG}.UpdateCorpusRequest`, { corpus: Corpus, updateMask: fieldMask })
export const DeleteCorpusRequest = message(`${PKG}.DeleteCorpusRequest`, { name: string, force: bool })
export const ListCorporaRequest = message(`${PKG}.ListCorporaRequest`, { pageSize: int32, pageToken: string })
export const QueryCorpusRequest = message(`${PKG}.QueryCorpusRequest`, {
  name: string,
  query: text(CAPS.query),
  metadataFilters: repeated(MetadataFilter, FILTERS),
  resultsCount: int32,
})

export const CreateDocumentRequest = message(`${PKG}.CreateDocumentRequest`, { parent: string, document: Document })
export const GetDocumentRequest = message(`${PKG}.GetDocumentRequest`, { name: string })
export const UpdateDocumentRequest = message(`${PKG}.UpdateDocumentRequest`, { document: Document, updateMask: fieldMask })
export const DeleteDocumentRequest = message(`${PKG}.DeleteDocumentRequest`, { name: string, force: bool })
export const ListDocumentsRequest = message(`${PKG}.ListDocumentsRequest`, { parent: string, pageSize: int32, pageToken: string })
export const QueryDocumentRequest = message(`${PKG}.QueryDocumentRequest`, {
  name: string,
  query: text(CAPS.query),
  resultsCount: int32,
  metadataFilters: repeated(MetadataFilter, FILTERS),
})

export const CreateChunkRequest = message(`${PKG}.CreateChunkRequest`, { parent: string, chunk: Chunk })
export const BatchCreateChunksRequest = message(`${PKG}.BatchCreateChunksRequest`, { parent: string, requests: repeated(CreateChunkRequest, DOCUMENTED.batchCreate) })
export const GetChunkRequest = message(`${PKG}.GetChunkRequest`, { name: string })
export const UpdateChunkRequest = message(`${PKG}.UpdateChunkRequest`, { chunk: Chunk, updateMask: fieldMask })
export const BatchUpdateChunksRequest = message(`${PKG}.BatchUpdateChunksRequest`, { parent: string, requests: repeated(UpdateChunkRequest, DOCUMENTED.batchUpdate) })
export const DeleteChunkRequest = message(`${PKG}.DeleteChunkRequest`, { name: string })
export const BatchDeleteChunksRequest = message(`${PKG}.BatchDeleteChunksRequest`, { parent: string, requests: repeated(DeleteChunkRequest, BATCH_DELETE) })
export const ListChunksRequest = message(`${PKG}.ListChunksRequest`, { parent: string, pageSize: int32, pageToken: string })

export type CustomMetadataInput = Infer<typeof CustomMetadata>
export type MetadataFilterInput = Infer<typeof MetadataFilter>
export type ChunkInput = Infer<typeof Chunk>
export type CreateChunkInput = Infer<typeof CreateChunkRequest>
export type UpdateChunkInput = Infer<typeof UpdateChunkRequest>
