import { Content } from '../rpc/content.js'
import { CAPS, googleLimit, quarryCap } from '../rpc/limits.js'
import { bool, double, enumOf, float, int32, int64, message, opaque, optional, repeated, string, text, timestamp, without, type FieldType, type Infer } from '../rpc/proto-json.js'

/**
 * The request messages of Vertex AI RAG Engine (VertexRagService, VertexRagDataService) as the
 * proto-JSON reader checks them. Written for v1beta1; v1 is the same minus the fields v1beta1
 * added (`V1_REMOVED`), and both are checked field by field against the protos of
 * @google-cloud/aiplatform. Backends and sources Quarry does not serve are `opaque`: accepted
 * by the reader, refused by the operations with a clear message.
 */
const P = 'google.cloud.aiplatform.v1beta1'

const REST = 'https://cloud.google.com/vertex-ai/docs/reference/rest'
/** The limits Google documents (REST reference; the same words are in the protos' comments). */
export const DOCUMENTED = {
  corpusDisplayName: googleLimit(128, `${REST}/v1/projects.locations.ragCorpora`),
  fileDisplayName: googleLimit(128, `${REST}/v1/projects.locations.ragCorpora.ragFiles`),
  schemaKey: googleLimit(63, `${REST}/v1beta1/projects.locations.ragCorpora.ragDataSchemas`),
  schemaBatchCreate: googleLimit(500, `${REST}/v1beta1/projects.locations.ragCorpora.ragDataSchemas/batchCreate`),
  schemaBatchDelete: googleLimit(500, `${REST}/v1beta1/projects.locations.ragCorpora.ragDataSchemas/batchDelete`),
  metadataBatchCreate: googleLimit(500, `${REST}/v1beta1/projects.locations.ragCorpora.ragFiles.ragMetadata/batchCreate`),
  metadataBatchDelete: googleLimit(500, `${REST}/v1beta1/projects.locations.ragCorpora.ragFiles.ragMetadata/batchDelete`),
} as const

/** A gs:// URI: a bucket name (at most 222 characters) and an object name (at most 1,024 bytes), with room to spare. */
const URI = quarryCap(2_048, 'a gs:// URI is a bucket name (≤ 222 characters) and an object name (≤ 1,024 bytes)')

const GcsSource = message(`${P}.GcsSource`, { uris: repeated(text(URI)) })
/** A Cloud Storage folder results are written to (a file inside it). */
const GcsDestination = message(`${P}.GcsDestination`, { outputUriPrefix: text(URI) })
const FixedLengthChunking = message(`${P}.RagFileChunkingConfig.FixedLengthChunking`, { chunkSize: int32, chunkOverlap: int32 })
const RagFileChunkingConfig = message(`${P}.RagFileChunkingConfig`, { fixedLengthChunking: FixedLengthChunking, chunkSize: int32, chunkOverlap: int32 })
const RagFileTransformationConfig = message(`${P}.RagFileTransformationConfig`, { ragFileChunkingConfig: RagFileChunkingConfig })
const RagFileMetadataConfig = message(
  `${P}.RagFileMetadataConfig`,
  {
    gcsMetadataSchemaSource: GcsSource,
    googleDriveMetadataSchemaSource: opaque(`${P}.GoogleDriveSource`),
    inlineMetadataSchemaSource: string,
    gcsMetadataSource: GcsSource,
    googleDriveMetadataSource: opaque(`${P}.GoogleDriveSource`),
    inlineMetadataSource: string,
  },
  [
    ['gcsMetadataSchemaSource', 'googleDriveMetadataSchemaSource', 'inlineMetadataSchemaSource'],
    ['gcsMetadataSource', 'googleDriveMetadataSource', 'inlineMetadataSource'],
  ],
)

const Bm25 = message(`${P}.RagEmbeddingModelConfig.SparseEmbeddingConfig.Bm25`, { multilingual: bool, k1: optional(float), b: optional(float) })
const SparseEmbeddingConfig = message(`${P}.RagEmbeddingModelConfig.SparseEmbeddingConfig`, { bm25: Bm25 })
const VertexPredictionEndpoint = message(`${P}.RagEmbeddingModelConfig.VertexPredictionEndpoint`, { endpoint: string, model: string, modelVersionId: string })
const RagEmbeddingModelConfig = message(
  `${P}.RagEmbeddingModelConfig`,
  {
    vertexPredictionEndpoint: VertexPredictionEndpoint,
    hybridSearchConfig: message(`${P}.RagEmbeddingModelConfig.HybridSearchConfig`, { sparseEmbeddingConfig: SparseEmbeddingConfig, denseEmbeddingModelPredictionEndpoint: VertexPredictionEndpoint }),
  },
  [['vertexPredictionEndpoint', 'hybridSearchConfig']],
)
const RagManagedDb = message(
  `${P}.RagVectorDbConfig.RagManagedDb`,
  { knn: message(`${P}.RagVectorDbConfig.RagManagedDb.KNN`, {}), ann: message(`${P}.RagVectorDbConfig.RagManagedDb.ANN`, { treeDepth: int32, leafCount: int32 }) },
  [['knn', 'ann']],
)
const RagVectorDbConfig = message(
  `${P}.RagVectorDbConfig`,
  {
    ragManagedDb: RagManagedDb,
    weaviate: opaque(`${P}.RagVectorDbConfig.Weaviate`),
    pinecone: opaque(`${P}.RagVectorDbConfig.Pinecone`),
    vertexFeatureStore: opaque(`${P}.RagVectorDbConfig.VertexFeatureStore`),
    vertexVectorSearch: opaque(`${P}.RagVectorDbConfig.VertexVectorSearch`),
    ragManagedVertexVectorSearch: opaque(`${P}.RagVectorDbConfig.RagManagedVertexVectorSearch`),
    apiAuth: opaque(`${P}.ApiAuth`),
    ragEmbeddingModelConfig: RagEmbeddingModelConfig,
  },
  [['ragManagedDb', 'weaviate', 'pinecone', 'vertexFeatureStore', 'vertexVectorSearch', 'ragManagedVertexVectorSearch']],
)

export const CorpusState = enumOf(`${P}.CorpusStatus.State`, { UNKNOWN: 0, INITIALIZED: 1, ACTIVE: 2, ERROR: 3 })
export const FileState = enumOf(`${P}.FileStatus.State`, { STATE_UNSPECIFIED: 0, ACTIVE: 1, ERROR: 2 })

const RagCorpus = message(
  `${P}.RagCorpus`,
  {
    vectorDbConfig: RagVectorDbConfig,
    vertexAiSearchConfig: opaque(`${P}.VertexAiSearchConfig`),
    name: string,
    displayName: text(DOCUMENTED.corpusDisplayName),
    description: text(CAPS.text),
    ragEmbeddingModelConfig: RagEmbeddingModelConfig,
    ragVectorDbConfig: RagVectorDbConfig,
    createTime: timestamp,
    updateTime: timestamp,
    corpusStatus: message(`${P}.CorpusStatus`, { state: CorpusState, errorStatus: string }),
    ragFilesCount: int32,
    encryptionSpec: opaque(`${P}.EncryptionSpec`),
    corpusTypeConfig: opaque(`${P}.RagCorpus.CorpusTypeConfig`),
    satisfiesPzs: bool,
    satisfiesPzi: bool,
  },
  [['vectorDbConfig', 'vertexAiSearchConfig']],
)

export const RagFileType = enumOf(`${P}.RagFile.RagFileType`, { RAG_FILE_TYPE_UNSPECIFIED: 0, RAG_FILE_TYPE_TXT: 1, RAG_FILE_TYPE_PDF: 2 })
const RagFile = message(
  `${P}.RagFile`,
  {
    gcsSource: GcsSource,
    googleDriveSource: opaque(`${P}.GoogleDriveSource`),
    directUploadSource: opaque(`${P}.DirectUploadSource`),
    slackSource: opaque(`${P}.SlackSource`),
    jiraSource: opaque(`${P}.JiraSource`),
    sharePointSources: opaque(`${P}.SharePointSources`),
    name: string,
    displayName: text(DOCUMENTED.fileDisplayName),
    description: text(CAPS.text),
    sizeBytes: int64,
    ragFileType: RagFileType,
    createTime: timestamp,
    updateTime: timestamp,
    fileStatus: message(`${P}.FileStatus`, { state: FileState, errorStatus: string }),
    userMetadata: string,
  },
  [['gcsSource', 'googleDriveSource', 'directUploadSource', 'slackSource', 'jiraSource', 'sharePointSources']],
)

const ImportRagFilesConfig = message(
  `${P}.ImportRagFilesConfig`,
  {
    gcsSource: GcsSource,
    googleDriveSource: opaque(`${P}.GoogleDriveSource`),
    slackSource: opaque(`${P}.SlackSource`),
    jiraSource: opaque(`${P}.JiraSource`),
    sharePointSources: opaque(`${P}.SharePointSources`),
    partialFailureGcsSink: GcsDestination,
    partialFailureBigquerySink: opaque(`${P}.BigQueryDestination`),
    importResultGcsSink: GcsDestination,
    importResultBigquerySink: opaque(`${P}.BigQueryDestination`),
    ragFileChunkingConfig: RagFileChunkingConfig,
    ragFileTransformationConfig: RagFileTransformationConfig,
    ragFileParsingConfig: opaque(`${P}.RagFileParsingConfig`),
    ragFileMetadataConfig: RagFileMetadataConfig,
    maxEmbeddingRequestsPerMin: int32,
    globalMaxEmbeddingRequestsPerMin: int32,
    rebuildAnnIndex: bool,
  },
  [
    ['gcsSource', 'googleDriveSource', 'slackSource', 'jiraSource', 'sharePointSources'],
    ['partialFailureGcsSink', 'partialFailureBigquerySink'],
    ['importResultGcsSink', 'importResultBigquerySink'],
  ],
)
const UploadRagFileConfig = message(`${P}.UploadRagFileConfig`, {
  ragFileChunkingConfig: RagFileChunkingConfig,
  ragFileTransformationConfig: RagFileTransformationConfig,
  ragFileMetadataConfig: RagFileMetadataConfig,
  ragFileParsingConfig: opaque(`${P}.RagFileParsingConfig`),
})

const RagResource = message(`${P}.RetrieveContextsRequest.VertexRagStore.RagResource`, { ragCorpus: string, ragFileIds: repeated(string) })
const VertexRagStore = message(`${P}.RetrieveContextsRequest.VertexRagStore`, { ragCorpora: repeated(string), ragResources: repeated(RagResource), vectorDistanceThreshold: optional(double) })
const Alpha = (name: string) => message(name, { alpha: optional(float) })
const RagRetrievalConfig = message(`${P}.RagRetrievalConfig`, {
  topK: int32,
  hybridSearch: Alpha(`${P}.RagRetrievalConfig.HybridSearch`),
  filter: message(
    `${P}.RagRetrievalConfig.Filter`,
    { vectorDistanceThreshold: double, vectorSimilarityThreshold: double, metadataFilter: string },
    [['vectorDistanceThreshold', 'vectorSimilarityThreshold']],
  ),
  ranking: message(
    `${P}.RagRetrievalConfig.Ranking`,
    { rankService: message(`${P}.RagRetrievalConfig.Ranking.RankService`, { modelName: optional(string) }), llmRanker: message(`${P}.RagRetrievalConfig.Ranking.LlmRanker`, { modelName: optional(string) }) },
    [['rankService', 'llmRanker']],
  ),
})
/** `text` is the one member of the oneof `query`: it has presence. */
export const RagQuery = message(`${P}.RagQuery`, { text: text(CAPS.query), similarityTopK: int32, ranking: Alpha(`${P}.RagQuery.Ranking`), ragRetrievalConfig: RagRetrievalConfig }, [['text']])

export const MetadataValue = message(
  `${P}.MetadataValue`,
  {
    intValue: int64,
    floatValue: float,
    strValue: text(CAPS.text),
    datetimeValue: text(CAPS.value),
    boolValue: bool,
    listValue: message(`${P}.MetadataList`, { values: repeated(opaque(`${P}.MetadataValue`), CAPS.listValues) }),
  },
  [['intValue', 'floatValue', 'strValue', 'datetimeValue', 'boolValue', 'listValue']],
)
/** A member of a listValue: a MetadataValue without a nested list (read on its own, as the schema recurses). */
export const ScalarMetadataValue = message(
  `${P}.MetadataValue`,
  { intValue: int64, floatValue: float, strValue: text(CAPS.text), datetimeValue: text(CAPS.value), boolValue: bool },
  [['intValue', 'floatValue', 'strValue', 'datetimeValue', 'boolValue']],
)
export const DataType = enumOf(`${P}.RagMetadataSchemaDetails.DataType`, { DATA_TYPE_UNSPECIFIED: 0, INTEGER: 1, FLOAT: 2, STRING: 3, DATETIME: 4, BOOLEAN: 5, LIST: 6 })
const SchemaDetails = message(`${P}.RagMetadataSchemaDetails`, {
  type: optional(DataType),
  listConfig: message(`${P}.RagMetadataSchemaDetails.ListConfig`, { valueSchema: opaque(`${P}.RagMetadataSchemaDetails`) }),
  granularity: optional(enumOf(`${P}.RagMetadataSchemaDetails.Granularity`, { GRANULARITY_UNSPECIFIED: 0, GRANULARITY_FILE_LEVEL: 1 })),
  searchStrategy: message(`${P}.RagMetadataSchemaDetails.SearchStrategy`, {
    searchStrategyType: optional(enumOf(`${P}.RagMetadataSchemaDetails.SearchStrategy.SearchStrategyType`, { SEARCH_STRATEGY_TYPE_UNSPECIFIED: 0, NO_SEARCH: 1, EXACT_SEARCH: 2 })),
  }),
})
export const RagDataSchema = message(`${P}.RagDataSchema`, { name: string, key: text(DOCUMENTED.schemaKey), schemaDetails: SchemaDetails })
const RagMetadata = message(`${P}.RagMetadata`, {
  name: string,
  userSpecifiedMetadata: message(`${P}.UserSpecifiedMetadata`, { key: text(CAPS.key), value: MetadataValue }),
})

const StoreRagResource = message(`${P}.VertexRagStore.RagResource`, { ragCorpus: string, ragFileIds: repeated(string) })
/** The Vertex RAG store of a retrieval tool (tool.proto): AugmentPrompt's data source and the `tools` of AskContexts / AsyncRetrieveContexts. */
export const ToolRagStore = message(`${P}.VertexRagStore`, {
  ragCorpora: repeated(string),
  ragResources: repeated(StoreRagResource),
  similarityTopK: optional(int32),
  vectorDistanceThreshold: optional(double),
  ragRetrievalConfig: RagRetrievalConfig,
  storeContext: bool,
})
const Retrieval = message(`${P}.Retrieval`, { vertexAiSearch: opaque(`${P}.VertexAISearch`), vertexRagStore: ToolRagStore, disableAttribution: bool }, [['vertexAiSearch', 'vertexRagStore']])
export const Tool = message(`${P}.Tool`, {
  functionDeclarations: repeated(opaque(`${P}.FunctionDeclaration`)),
  retrieval: Retrieval,
  googleSearch: opaque(`${P}.Tool.GoogleSearch`),
  googleSearchRetrieval: opaque(`${P}.GoogleSearchRetrieval`),
  googleMaps: opaque(`${P}.GoogleMaps`),
  enterpriseWebSearch: opaque(`${P}.EnterpriseWebSearch`),
  parallelAiSearch: opaque(`${P}.Tool.ParallelAiSearch`),
  codeExecution: opaque(`${P}.Tool.CodeExecution`),
  urlContext: opaque(`${P}.UrlContext`),
  computerUse: opaque(`${P}.Tool.ComputerUse`),
})
const PageSpan = message(`${P}.RagChunk.PageSpan`, { firstPage: int32, lastPage: int32 })
const RagChunk = message(`${P}.RagChunk`, { text: string, pageSpan: PageSpan, fileId: string, chunkId: string })
const Fact = message(`${P}.Fact`, {
  query: optional(string),
  title: optional(string),
  uri: optional(string),
  summary: optional(string),
  vectorDistance: optional(double),
  score: optional(double),
  chunk: RagChunk,
})
const ManagedDbTiers = {
  scaled: message(`${P}.RagManagedDbConfig.Scaled`, {}),
  basic: message(`${P}.RagManagedDbConfig.Basic`, {}),
  unprovisioned: message(`${P}.RagManagedDbConfig.Unprovisioned`, {}),
}
const RagManagedDbConfig = message(
  `${P}.RagManagedDbConfig`,
  {
    enterprise: message(`${P}.RagManagedDbConfig.Enterprise`, {}),
    ...ManagedDbTiers,
    serverless: message(`${P}.RagManagedDbConfig.Serverless`, {}),
    spanner: message(`${P}.RagManagedDbConfig.Spanner`, ManagedDbTiers, [['scaled', 'basic', 'unprovisioned']]),
  },
  [
    ['enterprise', 'scaled', 'basic', 'unprovisioned'],
    ['serverless', 'spanner'],
  ],
)
const RagEngineConfig = message(`${P}.RagEngineConfig`, { name: string, ragManagedDbConfig: RagManagedDbConfig })

export const RetrieveContextsRequest = message(`${P}.RetrieveContextsRequest`, { vertexRagStore: VertexRagStore, parent: string, query: RagQuery })
export const AugmentPromptRequest = message(
  `${P}.AugmentPromptRequest`,
  { vertexRagStore: ToolRagStore, parent: string, contents: repeated(Content), model: message(`${P}.AugmentPromptRequest.Model`, { model: string, modelVersion: string }) },
)
export const CorroborateContentRequest = message(`${P}.CorroborateContentRequest`, {
  parent: string,
  content: Content,
  facts: repeated(Fact),
  parameters: message(`${P}.CorroborateContentRequest.Parameters`, { citationThreshold: double }),
})
export const AskContextsRequest = message(`${P}.AskContextsRequest`, { parent: string, query: RagQuery, tools: repeated(Tool) })
export const AsyncRetrieveContextsRequest = message(`${P}.AsyncRetrieveContextsRequest`, { parent: string, query: RagQuery, tools: repeated(Tool) })
export const GetRagEngineConfigRequest = message(`${P}.GetRagEngineConfigRequest`, { name: string })
export const UpdateRagEngineConfigRequest = message(`${P}.UpdateRagEngineConfigRequest`, { ragEngineConfig: RagEngineConfig })
export const CreateRagCorpusRequest = message(`${P}.CreateRagCorpusRequest`, { parent: string, ragCorpus: RagCorpus })
export const UpdateRagCorpusRequest = message(`${P}.UpdateRagCorpusRequest`, { ragCorpus: RagCorpus })
export const GetRagCorpusRequest = message(`${P}.GetRagCorpusRequest`, { name: string })
export const ListRagCorporaRequest = message(`${P}.ListRagCorporaRequest`, { parent: string, pageSize: int32, pageToken: string })
export const DeleteRagCorpusRequest = message(`${P}.DeleteRagCorpusRequest`, { name: string, force: bool, forceDelete: bool })
export const UploadRagFileRequest = message(`${P}.UploadRagFileRequest`, { parent: string, ragFile: RagFile, uploadRagFileConfig: UploadRagFileConfig })
export const ImportRagFilesRequest = message(`${P}.ImportRagFilesRequest`, { parent: string, importRagFilesConfig: ImportRagFilesConfig })
export const GetRagFileRequest = message(`${P}.GetRagFileRequest`, { name: string })
export const ListRagFilesRequest = message(`${P}.ListRagFilesRequest`, { parent: string, pageSize: int32, pageToken: string })
export const DeleteRagFileRequest = message(`${P}.DeleteRagFileRequest`, { name: string, forceDelete: bool })
export const CreateRagDataSchemaRequest = message(`${P}.CreateRagDataSchemaRequest`, { parent: string, ragDataSchema: RagDataSchema, ragDataSchemaId: optional(string) })
export const BatchCreateRagDataSchemasRequest = message(`${P}.BatchCreateRagDataSchemasRequest`, { parent: string, requests: repeated(CreateRagDataSchemaRequest, DOCUMENTED.schemaBatchCreate) })
export const GetRagDataSchemaRequest = message(`${P}.GetRagDataSchemaRequest`, { name: string })
export const ListRagDataSchemasRequest = message(`${P}.ListRagDataSchemasRequest`, { parent: string, pageSize: int32, pageToken: string })
export const DeleteRagDataSchemaRequest = message(`${P}.DeleteRagDataSchemaRequest`, { name: string })
export const BatchDeleteRagDataSchemasRequest = message(`${P}.BatchDeleteRagDataSchemasRequest`, { parent: string, names: repeated(string, DOCUMENTED.schemaBatchDelete) })
export const CreateRagMetadataRequest = message(`${P}.CreateRagMetadataRequest`, { parent: string, ragMetadata: RagMetadata, ragMetadataId: optional(string) })
export const BatchCreateRagMetadataRequest = message(`${P}.BatchCreateRagMetadataRequest`, { parent: string, requests: repeated(CreateRagMetadataRequest, DOCUMENTED.metadataBatchCreate) })
export const UpdateRagMetadataRequest = message(`${P}.UpdateRagMetadataRequest`, { ragMetadata: RagMetadata })
export const GetRagMetadataRequest = message(`${P}.GetRagMetadataRequest`, { name: string })
export const ListRagMetadataRequest = message(`${P}.ListRagMetadataRequest`, { parent: string, pageSize: int32, pageToken: string })
export const DeleteRagMetadataRequest = message(`${P}.DeleteRagMetadataRequest`, { name: string })
export const BatchDeleteRagMetadataRequest = message(`${P}.BatchDeleteRagMetadataRequest`, { parent: string, names: repeated(string, DOCUMENTED.metadataBatchDelete) })

/** What v1 lacks of v1beta1, by message. */
const V1_REMOVED: Readonly<Record<string, readonly string[]>> = {
  [`${P}.RetrieveContextsRequest.VertexRagStore`]: ['ragCorpora'],
  [`${P}.RagQuery`]: ['similarityTopK', 'ranking'],
  [`${P}.RagRetrievalConfig`]: ['hybridSearch'],
  [`${P}.RagCorpus`]: ['ragEmbeddingModelConfig', 'ragVectorDbConfig', 'ragFilesCount', 'corpusTypeConfig', 'satisfiesPzs', 'satisfiesPzi'],
  [`${P}.RagFile`]: ['sizeBytes', 'ragFileType', 'userMetadata'],
  [`${P}.RagVectorDbConfig`]: ['weaviate', 'vertexFeatureStore', 'ragManagedVertexVectorSearch'],
  [`${P}.RagEmbeddingModelConfig`]: ['hybridSearchConfig'],
  [`${P}.RagFileChunkingConfig`]: ['chunkSize', 'chunkOverlap'],
  [`${P}.ImportRagFilesConfig`]: ['ragFileChunkingConfig', 'ragFileMetadataConfig', 'globalMaxEmbeddingRequestsPerMin'],
  [`${P}.UploadRagFileConfig`]: ['ragFileChunkingConfig', 'ragFileMetadataConfig', 'ragFileParsingConfig'],
  [`${P}.DeleteRagCorpusRequest`]: ['forceDelete'],
  [`${P}.DeleteRagFileRequest`]: ['forceDelete'],
  [`${P}.VertexRagStore`]: ['ragCorpora', 'storeContext'],
  [`${P}.RagChunk`]: ['fileId', 'chunkId'],
  [`${P}.RagManagedDbConfig`]: ['enterprise', 'serverless', 'spanner'],
}

export type ApiVersion = 'v1' | 'v1beta1'

/** Requests served by both versions. */
export const SHARED_REQUESTS = {
  RetrieveContextsRequest,
  CreateRagCorpusRequest,
  UpdateRagCorpusRequest,
  GetRagCorpusRequest,
  ListRagCorporaRequest,
  DeleteRagCorpusRequest,
  UploadRagFileRequest,
  ImportRagFilesRequest,
  GetRagFileRequest,
  ListRagFilesRequest,
  DeleteRagFileRequest,
  AugmentPromptRequest,
  CorroborateContentRequest,
  AskContextsRequest,
  AsyncRetrieveContextsRequest,
  GetRagEngineConfigRequest,
  UpdateRagEngineConfigRequest,
}

/** Requests of v1beta1 only (metadata schemas and file metadata). */
export const V1BETA1_REQUESTS = {
  CreateRagDataSchemaRequest,
  BatchCreateRagDataSchemasRequest,
  GetRagDataSchemaRequest,
  ListRagDataSchemasRequest,
  DeleteRagDataSchemaRequest,
  BatchDeleteRagDataSchemasRequest,
  CreateRagMetadataRequest,
  BatchCreateRagMetadataRequest,
  UpdateRagMetadataRequest,
  GetRagMetadataRequest,
  ListRagMetadataRequest,
  DeleteRagMetadataRequest,
  BatchDeleteRagMetadataRequest,
}

const toV1 = (name: string): string => name.replace('.v1beta1.', '.v1.')

/** The schema of a request message for a version (v1: v1beta1 without the fields v1beta1 added). */
export function requestSchema<T extends FieldType>(schema: T, version: ApiVersion): T {
  return version === 'v1beta1' ? schema : without(schema, V1_REMOVED, toV1)
}

export type RagCorpusInput = Infer<typeof RagCorpus>
export type RagFileChunkingInput = Infer<typeof RagFileChunkingConfig>
export type RagFileTransformationInput = Infer<typeof RagFileTransformationConfig>
export type RagFileMetadataConfigInput = Infer<typeof RagFileMetadataConfig>
export type MetadataValueInput = Infer<typeof MetadataValue>
export type RagDataSchemaInput = Infer<typeof RagDataSchema>
export type RagMetadataInput = Infer<typeof RagMetadata>
