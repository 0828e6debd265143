/**
 * Valid Google retrieval requests, generated, to fuzz your RAG code: `retrieveContexts`,
 * `corpora.query` and `memories.retrieve` requests, AIP-160 filters and query texts.
 *
 * The only entry of `@quarry/adapters` that imports fast-check (an optional peer dependency).
 * Every export is listed by name.
 * @module @quarry/adapters/testing
 */
export { queryTextArbitrary } from './query-text.js'
export { retrieveContextsRequestArbitrary } from './vertex-rag.js'
export type { RetrieveContextsRequestInput, RetrieveContextsRequestOptions, RagDataType } from './vertex-rag.js'
export { queryCorpusRequestArbitrary } from './semantic-retriever.js'
export type { QueryCorpusRequestInput, QueryCorpusRequestOptions, CustomMetadataKind } from './semantic-retriever.js'
export { retrieveMemoriesRequestArbitrary } from './memory-bank.js'
export type { RetrieveMemoriesRequestInput, RetrieveMemoriesRequestOptions, MemoryMetadataKind } from './memory-bank.js'
