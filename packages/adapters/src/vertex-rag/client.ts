import { clientOfTable, type ClientMethods } from '../rpc/methods.js'
import { RAG_DATA_TABLE, RAG_SERVICE_TABLE } from './methods.js'
import type { VertexRagOptions } from './options.js'
import type { ApiVersion } from './schema.js'
import { VertexRagEngine, type VertexRagSurface } from './service.js'

/** Options of the in-process RAG clients: an engine to share (or options to make one) and the API version. */
export type VertexRagClientOptions = VertexRagOptions & { engine?: VertexRagEngine; version?: ApiVersion }

function surfaceOf(options: VertexRagClientOptions): { engine: VertexRagEngine; surface: VertexRagSurface } {
  const { engine: given, version = 'v1beta1', ...rest } = options
  const engine = given ?? new VertexRagEngine(rest)
  return { engine, surface: version === 'v1' ? engine.v1 : engine.v1beta1 }
}

// The methods come from RAG_SERVICE_TABLE (methods.ts), in Google's calling convention.
export interface VertexRagServiceClient extends ClientMethods<typeof RAG_SERVICE_TABLE> {}

/**
 * In-process stand-in for `VertexRagServiceClient` of `@google-cloud/aiplatform` (`v1` or
 * `v1beta1`): `retrieveContexts` resolves to `[response]`, failures reject with an ApiError.
 */
export class VertexRagServiceClient {
  readonly engine: VertexRagEngine

  constructor(options: VertexRagClientOptions = {}) {
    const { engine, surface } = surfaceOf(options)
    this.engine = engine
    Object.assign(this, clientOfTable(RAG_SERVICE_TABLE, surface))
  }
}

// The methods come from RAG_DATA_TABLE (methods.ts), in Google's calling convention.
export interface VertexRagDataServiceClient extends ClientMethods<typeof RAG_DATA_TABLE> {}

/**
 * In-process stand-in for `VertexRagDataServiceClient`: mutations resolve to
 * `[operation, rawOperation]` with `operation.promise()` → `[result, metadata, raw]`, as google-gax
 * gives them; lists page like the Google client; `uploadRagFile(request, content)` takes the file's
 * bytes or text (Google's client cannot send them; its REST upload is multipart).
 */
export class VertexRagDataServiceClient {
  readonly engine: VertexRagEngine

  constructor(options: VertexRagClientOptions = {}) {
    const { engine, surface } = surfaceOf(options)
    this.engine = engine
    Object.assign(this, clientOfTable(RAG_DATA_TABLE, surface))
  }
}
