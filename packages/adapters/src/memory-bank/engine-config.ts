import { MAX_TIMESTAMP_MS } from '../rpc/proto-json.js'
import type { ContextSpecInput } from './engine-schema.js'
import { ttlExpiry } from './fields.js'
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

/**
 * Checks the TTLs of a contextSpec an engine create or update would store, at `now`: each must be
 * positive and end by 9999-12-31T23:59:59Z (`ttlExpiry`), or every memory written under the engine
 * would get an expireTime with no RFC 3339 form (or none, for a negative one). INVALID_ARGUMENT at
 * the TTL's path under `field` (`reasoningEngine.contextSpec`).
 */
export function checkContextSpec(spec: ContextSpecInput | undefined, now: number, field: string): void {
  const ttl = spec?.memoryBankConfig?.ttlConfig
  if (ttl === undefined) return
  const at = `${field}.memoryBankConfig.ttlConfig`
  const check = (seconds: number | undefined, path: string): void => {
    if (seconds !== undefined) ttlExpiry(seconds, now, `${at}.${path}`)
  }
  check(ttl.defaultTtl, 'defaultTtl')
  check(ttl.granularTtlConfig?.createTtl, 'granularTtlConfig.createTtl')
  check(ttl.granularTtlConfig?.generateCreatedTtl, 'granularTtlConfig.generateCreatedTtl')
  check(ttl.granularTtlConfig?.generateUpdatedTtl, 'granularTtlConfig.generateUpdatedTtl')
  check(ttl.memoryRevisionDefaultTtl, 'memoryRevisionDefaultTtl')
}

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

/**
 * The expiry instant `configuredTtl` gives at `now`, or undefined. `checkContextSpec` kept it
 * within Timestamp's range when the engine was written; a clock that has moved on since (or a
 * state saved before that check) is held at the last instant rather than written past it.
 */
export function configuredExpiry(engine: EngineState, action: TtlAction, now: number): number | undefined {
  const seconds = configuredTtl(engine, action)
  return seconds === undefined || seconds <= 0 ? undefined : Math.min(MAX_TIMESTAMP_MS, now + Math.ceil(seconds * 1000))
}
