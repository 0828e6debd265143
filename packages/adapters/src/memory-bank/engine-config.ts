import type { EngineState } from './state.js'

/**
 * What Quarry honours of an engine's `contextSpec.memoryBankConfig`, in one place:
 * - `ttlConfig`: `defaultTtl` sets the expiry of every memory a write creates or updates without
 *   one of its own; `granularTtlConfig` does so per action (`createTtl` for createMemory,
 *   `generateCreatedTtl` / `generateUpdatedTtl` for generateMemories' CREATED / UPDATED memories).
 * - `generationConfig.model` and `similaritySearchConfig.embeddingModel` are recorded and returned,
 *   never called: facts come from the local extractor (or the `extractor` hook) and embeddings from
 *   the server's embedder.
 * - `ttlConfig.memoryRevisionDefaultTtl`, `customizationConfigs` and `disableMemoryRevisions` are
 *   recorded and returned, not applied (docs/memory-bank.md lists them).
 */
export type TtlAction = 'create' | 'update' | 'generateCreated' | 'generateUpdated'

/** The TTL in seconds the engine's configuration gives a memory written by `action`, or undefined. */
function configuredTtl(engine: EngineState, action: TtlAction): number | undefined {
  const ttl = engine.resource?.contextSpec?.memoryBankConfig?.ttlConfig
  if (ttl === undefined) return undefined
  if (ttl.defaultTtl !== undefined) return ttl.defaultTtl
  const granular = ttl.granularTtlConfig
  if (action === 'create') return granular?.createTtl
  if (action === 'generateCreated') return granular?.generateCreatedTtl
  if (action === 'generateUpdated') return granular?.generateUpdatedTtl
  return undefined
}

/** The expiry instant `configuredTtl` gives at `now`, or undefined. */
export function configuredExpiry(engine: EngineState, action: TtlAction, now: number): number | undefined {
  const seconds = configuredTtl(engine, action)
  return seconds === undefined || seconds <= 0 ? undefined : now + Math.ceil(seconds * 1000)
}
