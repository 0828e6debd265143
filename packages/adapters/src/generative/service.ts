import { serveTable, type ServiceMethods } from '../rpc/methods.js'
import { EngineWrites } from '../rpc/engine-writes.js'
import type { ApiVersion } from '../vertex-rag/schema.js'
import type { VertexRagSurface } from '../vertex-rag/service.js'
import { PREDICTION_TABLE } from './methods.js'
import { localModel, type GenerativeModel } from './model.js'

export interface PredictionSurface extends ServiceMethods<typeof PREDICTION_TABLE> {}

/**
 * PredictionService of one API version: request JSON → Outcome, from PREDICTION_TABLE. It keeps
 * no state: retrieval tools read the RAG surface of the same version (so a served surface's
 * limits apply), and the model writes the answer.
 */
export class PredictionSurface {
  readonly version: ApiVersion

  constructor(rag: VertexRagSurface, model: GenerativeModel, onInternalError: (error: unknown) => void) {
    this.version = rag.version
    // Nothing here writes: the mutex serializes no one.
    Object.assign(this, serveTable(PREDICTION_TABLE, { version: rag.version, rag, model }, { version: rag.version, writes: new EngineWrites(), onInternalError }))
  }
}

export interface PredictionOptions {
  /** Answers generateContent. @defaultValue `localModel` (deterministic, labelled, quotes the retrieved contexts) */
  readonly model?: GenerativeModel
  /** @defaultValue console.error */
  readonly onInternalError?: (error: unknown) => void
}

/** Both versions of PredictionService over the RAG surfaces a server serves. */
export function predictionSurfaces(rag: { readonly v1: VertexRagSurface; readonly v1beta1: VertexRagSurface }, options: PredictionOptions = {}): { readonly v1: PredictionSurface; readonly v1beta1: PredictionSurface } {
  const model = options.model ?? localModel
  const onInternalError = options.onInternalError ?? ((error: unknown) => console.error('quarry: internal error', error))
  return { v1: new PredictionSurface(rag.v1, model, onInternalError), v1beta1: new PredictionSurface(rag.v1beta1, model, onInternalError) }
}
