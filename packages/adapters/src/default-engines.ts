import type { Engines } from './transport/bound-methods.js'
import { MemoryBank } from './memory-bank/service.js'
import { SemanticRetriever } from './semantic-retriever/service.js'
import { VertexRagEngine } from './vertex-rag/service.js'

/**
 * The engines that in-process clients made without an engine (and without engine options) share,
 * one per API in the process, as Google's clients share one project: a corpus created through
 * `new VertexRagDataServiceClient()` is found by `new VertexRagServiceClient()` (v1 and v1beta1
 * alike). Each is made on first use with the default options (the default embedder is
 * `defaultEmbedder()`).
 */
let current: { semanticRetriever?: SemanticRetriever; vertexRag?: VertexRagEngine; memoryBank?: MemoryBank } = {}

export function defaultRetriever(): SemanticRetriever {
  return (current.semanticRetriever ??= new SemanticRetriever())
}

export function defaultVertexRagEngine(): VertexRagEngine {
  return (current.vertexRag ??= new VertexRagEngine())
}

export function defaultMemoryBank(): MemoryBank {
  return (current.memoryBank ??= new MemoryBank())
}

/**
 * The three shared default engines (made now if not yet), e.g. to serve them over REST beside
 * the in-process clients: `createServer({ engines: defaultEngines() })`.
 */
export function defaultEngines(): Engines {
  return { semanticRetriever: defaultRetriever(), vertexRag: defaultVertexRagEngine(), memoryBank: defaultMemoryBank() }
}

/**
 * Forgets the shared default engines: clients made afterwards without an engine start from empty
 * ones (tests call it between cases). Clients made before keep the engine they were made with. The
 * default embedder stays loaded: it holds no data.
 */
export function resetDefaultEngines(): void {
  current = {}
}
