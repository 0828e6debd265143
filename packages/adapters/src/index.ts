// @quarry/adapters public API. Every export is listed by name.
export { runCli } from './cli/main.js'
export { runWordDemo } from './cli/demo-words.js'
export { runDocsDemo, runQuery, buildDemoIndex, demoIndexDir } from './cli/demo-docs.js'
export { packageDocs } from './cli/package-docs.js'
export type { PackageDoc } from './cli/package-docs.js'

// Shared by the three Google adapters: google.rpc.Status, client errors, paging.
export { Code, codeName, httpStatusOf, rpcStatus } from './rpc/status.js'
export type { CodeName, RpcStatus, FieldViolation, BadRequestDetail } from './rpc/status.js'
export type { Outcome } from './rpc/outcome.js'
export { ApiError } from './rpc/api-error.js'
export type { PageCallOptions } from './rpc/paged.js'
export { seededRandomId, cryptoRandomId } from './rpc/names.js'
export type { RandomId } from './rpc/names.js'
export { steppingClock, systemClock } from './rpc/clock.js'
export type { Clock } from './rpc/clock.js'

// Generative Language Semantic Retriever (v1beta RetrieverService).
export { SemanticRetriever, RETRIEVER_METHODS } from './semantic-retriever/service.js'
export { RetrieverServiceClient } from './semantic-retriever/client.js'
export type { RetrieverServiceClientOptions } from './semantic-retriever/client.js'
export { RETRIEVER_LIMITS } from './semantic-retriever/options.js'
export type { SemanticRetrieverOptions, RetrieverLimits } from './semantic-retriever/options.js'
export { DEFAULT_RESULTS, MAX_RESULTS } from './semantic-retriever/query.js'
export type {
  CorpusJson,
  DocumentJson,
  ChunkJson,
  ChunkStateName,
  CustomMetadataJson,
  RelevantChunkJson,
  QueryResponseJson,
  ListCorporaResponseJson,
  ListDocumentsResponseJson,
  ListChunksResponseJson,
  BatchChunksResponseJson,
  EmptyJson,
} from './semantic-retriever/resources.js'
