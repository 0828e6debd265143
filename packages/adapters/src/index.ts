/**
 * Google's retrieval APIs in process (Semantic Retriever, Vertex AI RAG Engine, Memory Bank), the
 * local REST server, the `quarry` command's building blocks and judged-collection evaluation.
 *
 * Every export is listed by name.
 * @module @quarry/adapters
 */
export { runCli } from './cli/main.js'
export { runWordDemo } from './cli/demo-words.js'
export { runDocsDemo, runQuery, buildDemoIndex, demoIndexDir } from './cli/demo-docs.js'
export { packageDocs } from './cli/package-docs.js'
export type { PackageDoc } from './cli/package-docs.js'
export { bestPassage, renderSnippet, shortenPath } from './cli/snippet.js'
export type { Snippet, SnippetPart } from './cli/snippet.js'
export { quarryCommand } from './cli/invocation.js'

// Judged test collections (BEIR / TREC files), trec_eval's metrics, SVG line charts: quarry eval and the benchmarks.
export { readCollection, CollectionError } from './eval/collection.js'
export type { Collection, CollectionFiles } from './eval/collection.js'
export { evaluateRun, rankIds } from './eval/metrics.js'
export type { Metrics } from './eval/metrics.js'
export { renderSvg } from './eval/svg.js'
export type { Panel, Series } from './eval/svg.js'

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
export { defaultEmbedder } from './rpc/default-embedder.js'
export type { GoogleClientOptions } from './rpc/google-client.js'
export type { PathHelpers } from './rpc/path-templates.js'

// The engines in-process clients share when made without one (one per API, as one project).
export { defaultEngines, resetDefaultEngines } from './default-engines.js'

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

// Vertex AI RAG Engine (v1 and v1beta1 VertexRagService / VertexRagDataService).
export { VertexRagEngine, VertexRagSurface, RAG_METHODS } from './vertex-rag/service.js'
export { VertexRagServiceClient, VertexRagDataServiceClient } from './vertex-rag/client.js'
export { v1, v1beta1 } from './namespaces.js'
export type { VertexRagClientOptions } from './vertex-rag/client.js'
export type { VertexRagOptions, Reranker, RerankRequest, RagModelHook, GenerateRequest, CorroborateRequest, CorroborateResult } from './vertex-rag/options.js'
export type { DistanceMetric } from './vertex-rag/metric.js'
export type { ApiVersion } from './vertex-rag/schema.js'
export { DEFAULT_TOP_K } from './vertex-rag/retrieve.js'
export { CHUNK_SIZE_DEFAULT, CHUNK_OVERLAP_DEFAULT } from './vertex-rag/chunking.js'
export { LongRunningOperation } from './rpc/long-running.js'
export type { UploadContent } from './vertex-rag/files.js'
export type {
  RagCorpusJson,
  RagFileJson,
  RagChunkJson,
  ContextJson,
  RetrieveContextsResponseJson,
  ImportRagFilesResponseJson,
  UploadRagFileResponseJson,
  RagDataSchemaJson,
  RagMetadataJson,
  MetadataValueJson,
  ContentJson,
  FactJson,
  ClaimJson,
  AugmentPromptResponseJson,
  CorroborateContentResponseJson,
  AskContextsResponseJson,
  RagEngineConfigJson,
} from './vertex-rag/resources.js'

// Vertex AI Agent Engine Memory Bank (v1beta1 MemoryBankService).
export { MemoryBank, MEMORY_METHODS } from './memory-bank/service.js'
export type { MemoryBankSurface } from './memory-bank/service.js'
export type { MemoryApiVersion } from './memory-bank/methods.js'
export { DEFAULT_REVISION_TTL_SECONDS } from './memory-bank/revisions.js'
export { MemoryBankServiceClient } from './memory-bank/client.js'
export type { MemoryBankClientOptions } from './memory-bank/client.js'
export type { MemoryBankOptions, FactExtractor, ExtractRequest, ExtractEvent } from './memory-bank/options.js'
export { DEFAULT_RETRIEVE, MAX_RETRIEVE } from './memory-bank/retrieve.js'
export type { RetrieveMemoriesResponseJson, RetrievedMemoryJson } from './memory-bank/retrieve.js'
export { MAX_DIRECT_MEMORIES } from './memory-bank/generate.js'
export { normalizeFact } from './memory-bank/facts.js'
export { extractFacts, localExtractor } from './memory-bank/local-extractor.js'
export { localModel, LOCAL_MODEL_LABEL } from './generative/model.js'
export type { GenerativeModel, ModelRequest, ModelReply, ModelSupport, PartJson } from './generative/model.js'
export type { MemoryJson, MemoryRevisionJson, TopicJson } from './memory-bank/state.js'
export { ReasoningEngines, REASONING_ENGINE_METHODS } from './memory-bank/engine-service.js'
export type { ReasoningEngineSurface } from './memory-bank/engine-service.js'
export type { ReasoningEngineJson } from './memory-bank/reasoning-engines.js'
export { AgentSessions, SESSION_METHODS } from './memory-bank/session-service.js'
export type { SessionSurface } from './memory-bank/session-service.js'
export { SessionServiceClient } from './memory-bank/session-client.js'
export { ReasoningEngineServiceClient } from './memory-bank/engine-client.js'
export type { ReasoningEngineClientOptions } from './memory-bank/engine-client.js'
export type { SessionClientOptions } from './memory-bank/session-client.js'
export type { SessionJson, SessionEventJson } from './memory-bank/session-state.js'
export { DEFAULT_SESSION_TTL_MS, MIN_SESSION_TTL_MS } from './memory-bank/sessions.js'
export type { Operation, AnyJson } from './rpc/operations.js'

// The local REST server for all three APIs.
export { createServer } from './server/server.js'
export type { QuarryServer, QuarryServerOptions } from './server/options.js'
export type { RequestLogEntry } from './http/server.js'
// Application-default credentials whose token exchange is a local server (Google's REST SDKs, ADK).
export { localCredentials, writeCredentialsFile } from './http/local-credentials.js'
export type { ExternalAccountCredentials } from './http/local-credentials.js'
export type { Engines } from './transport/bound-methods.js'
