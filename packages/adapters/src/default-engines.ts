import type { Engines } from './transport/bound-methods.js'
import { MemoryBank } from './memory-bank/service.js'
import { forgetSharedEngines, sharedEngine } from './rpc/shared-engines.js'
import { SemanticRetriever } from './semantic-retriever/service.js'
import { VertexRagEngine } from './vertex-rag/service.js'

/**
 * The three shared default engines (made now if not yet), e.g. to serve them over REST beside
 * the in-process clients: `createServer({ engines: defaultEngines() })`. They are the engines
 * in-process clients made without an engine use (rpc/shared-engines.ts).
 */
export function defaultEngines(): Engines {
  return { semanticRetriever: sharedEngine(SemanticRetriever), vertexRag: sharedEngine(VertexRagEngine), memoryBank: sharedEngine(MemoryBank) }
}

/**
 * Forgets the shared default engines: clients made afterwards without an engine start from empty
 * ones (tests call it between cases). Clients made before keep the engine they were made with. The
 * default embedder stays loaded: it holds no data.
 */
export function resetDefaultEngines(): void {
  forgetSharedEngines()
}
