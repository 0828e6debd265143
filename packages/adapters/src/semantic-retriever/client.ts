import { InProcessClient, type GoogleClientOptions } from '../rpc/google-client.js'
import { clientOfTable, type ClientMethods } from '../rpc/methods.js'
import { GENERATIVE_LANGUAGE_PATH_TEMPLATES, pathHelpers, type PathHelpers } from '../rpc/path-templates.js'
import { engineFor } from '../rpc/shared-engines.js'
import { RETRIEVER_TABLE } from './methods.js'
import { RETRIEVER_OPTION_KEYS, type SemanticRetrieverOptions } from './options.js'
import { SemanticRetriever } from './service.js'

/**
 * Options of the in-process client: an engine to use, or engine options to make a private one;
 * with neither it uses the shared default engine (`defaultEngines()`). Google's client options
 * are accepted and change nothing.
 */
export type RetrieverServiceClientOptions = SemanticRetrieverOptions & GoogleClientOptions & { retriever?: SemanticRetriever }

// The methods come from RETRIEVER_TABLE (methods.ts), in Google's calling convention; the path
// helpers from the API's resource templates.
export interface RetrieverServiceClient extends ClientMethods<typeof RETRIEVER_TABLE>, PathHelpers<typeof GENERATIVE_LANGUAGE_PATH_TEMPLATES> {}

/**
 * An in-process stand-in for `v1beta.RetrieverServiceClient` of `@google-ai/generativelanguage`:
 * the same method names and request objects; each method resolves to `[response]` and rejects
 * with an ApiError carrying the numeric gRPC `code` and `statusDetails` (google.rpc.BadRequest),
 * as the Google client does. List methods page like google-gax: `[resources, nextRequest, response]`,
 * every page by default, one page with `{ autoPaginate: false }`; `listXAsync` iterates and
 * `listXStream` streams. `new RetrieverServiceClient()` clients share one default engine.
 */
export class RetrieverServiceClient extends InProcessClient {
  readonly retriever: SemanticRetriever

  constructor(options: RetrieverServiceClientOptions = {}) {
    super(options)
    const { retriever, ...rest } = options
    this.retriever = retriever ?? engineFor(SemanticRetriever, rest, RETRIEVER_OPTION_KEYS)
    Object.assign(this, clientOfTable(RETRIEVER_TABLE, this.retriever))
  }
}
Object.assign(RetrieverServiceClient.prototype, pathHelpers(GENERATIVE_LANGUAGE_PATH_TEMPLATES))
