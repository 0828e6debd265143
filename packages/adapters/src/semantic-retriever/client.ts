import { clientOfTable, type ClientMethods } from '../rpc/methods.js'
import { RETRIEVER_TABLE } from './methods.js'
import type { SemanticRetrieverOptions } from './options.js'
import { SemanticRetriever } from './service.js'

/** Options of the in-process client: an engine to share, or options to make one. */
export type RetrieverServiceClientOptions = SemanticRetrieverOptions & { retriever?: SemanticRetriever }

// The methods come from RETRIEVER_TABLE (methods.ts), in Google's calling convention.
export interface RetrieverServiceClient extends ClientMethods<typeof RETRIEVER_TABLE> {}

/**
 * An in-process stand-in for `v1beta.RetrieverServiceClient` of `@google-ai/generativelanguage`:
 * the same method names and request objects; each method resolves to `[response]` and rejects
 * with an ApiError carrying the numeric gRPC `code` and `statusDetails` (google.rpc.BadRequest),
 * as the Google client does. List methods page like google-gax: `[resources, nextRequest, response]`,
 * every page by default, one page with `{ autoPaginate: false }`; `listXAsync` iterates.
 */
export class RetrieverServiceClient {
  readonly retriever: SemanticRetriever

  constructor(options: RetrieverServiceClientOptions = {}) {
    const { retriever, ...engineOptions } = options
    this.retriever = retriever ?? new SemanticRetriever(engineOptions)
    Object.assign(this, clientOfTable(RETRIEVER_TABLE, this.retriever))
  }
}
