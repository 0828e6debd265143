import { InProcessClient, type GoogleClientOptions } from '../rpc/google-client.js'
import { clientOfTable, type ClientMethods } from '../rpc/methods.js'
import { AIPLATFORM_PATH_HELPERS, type AIPLATFORM_PATH_TEMPLATES, type PathHelpers } from '../rpc/path-templates.js'
import { engineFor } from '../rpc/shared-engines.js'
import { RAG_DATA_TABLE, RAG_MIXIN_TABLE, RAG_SERVICE_TABLE } from './methods.js'
import { VERTEX_RAG_OPTION_KEYS, type VertexRagOptions } from './options.js'
import type { ApiVersion } from './schema.js'
import { VertexRagEngine, type VertexRagSurface } from './service.js'

/**
 * Options of the in-process RAG clients: an engine to use, or engine options to make a private
 * one (with neither: the shared default engine, `defaultEngines()`), and the API version. Google's
 * client options are accepted and change nothing.
 */
export type VertexRagClientOptions = VertexRagOptions & GoogleClientOptions & { engine?: VertexRagEngine; version?: ApiVersion }

function surfaceOf(options: VertexRagClientOptions): { engine: VertexRagEngine; surface: VertexRagSurface } {
  const { engine: given, version = 'v1beta1', ...rest } = options
  const engine = given ?? engineFor(VertexRagEngine, rest, VERTEX_RAG_OPTION_KEYS)
  return { engine, surface: version === 'v1' ? engine.v1 : engine.v1beta1 }
}

/** Each client's service, with the operations, locations and IAM mixins Google's clients carry too. */
const SERVICE_CLIENT_TABLE = { ...RAG_SERVICE_TABLE, ...RAG_MIXIN_TABLE } as const
const DATA_CLIENT_TABLE = { ...RAG_DATA_TABLE, ...RAG_MIXIN_TABLE } as const

// The methods come from RAG_SERVICE_TABLE and RAG_MIXIN_TABLE (methods.ts), in Google's calling
// convention; the path helpers from aiplatform's resource templates.
export interface VertexRagServiceClient extends ClientMethods<typeof SERVICE_CLIENT_TABLE>, PathHelpers<typeof AIPLATFORM_PATH_TEMPLATES> {}

/**
 * In-process stand-in for `VertexRagServiceClient` of `@google-cloud/aiplatform` (`v1` or
 * `v1beta1`): `retrieveContexts` and `augmentPrompt` resolve to `[response]`, `asyncRetrieveContexts`
 * to a finished operation; failures reject with an ApiError. askContexts and corroborateContent
 * need the engine's `generativeModel` hook (UNIMPLEMENTED without it, saying so).
 * Clients made without an engine share the default one with the data client.
 */
export class VertexRagServiceClient extends InProcessClient {
  readonly engine: VertexRagEngine

  constructor(options: VertexRagClientOptions = {}) {
    super(options)
    const { engine, surface } = surfaceOf(options)
    this.engine = engine
    Object.assign(this, clientOfTable(SERVICE_CLIENT_TABLE, surface))
  }
}
Object.assign(VertexRagServiceClient.prototype, AIPLATFORM_PATH_HELPERS)

// The methods come from RAG_DATA_TABLE and RAG_MIXIN_TABLE (methods.ts), in Google's calling
// convention; the path helpers from aiplatform's resource templates.
export interface VertexRagDataServiceClient extends ClientMethods<typeof DATA_CLIENT_TABLE>, PathHelpers<typeof AIPLATFORM_PATH_TEMPLATES> {}

/**
 * In-process stand-in for `VertexRagDataServiceClient`: mutations resolve to
 * `[operation, rawOperation]` with `operation.promise()` → `[result, metadata, raw]`, as google-gax
 * gives them; lists page like the Google client; `uploadRagFile(request, content)` takes the file's
 * bytes or text (Google's client cannot send them; its REST upload is multipart). Clients made
 * without an engine share the default one with the retrieval client.
 */
export class VertexRagDataServiceClient extends InProcessClient {
  readonly engine: VertexRagEngine

  constructor(options: VertexRagClientOptions = {}) {
    super(options)
    const { engine, surface } = surfaceOf(options)
    this.engine = engine
    Object.assign(this, clientOfTable(DATA_CLIENT_TABLE, surface))
  }
}
Object.assign(VertexRagDataServiceClient.prototype, AIPLATFORM_PATH_HELPERS)
