import type { Operation } from '../rpc/operations.js'
import { parseName } from '../rpc/names.js'
import { readMessage } from '../rpc/proto-json.js'
import { failure, invalidArgument } from '../rpc/status.js'
import type { RagContext } from './context.js'
import { LOCATION } from './context.js'
import { GetRagEngineConfigRequest, UpdateRagEngineConfigRequest, requestSchema, type ApiVersion } from './schema.js'
import type { ManagedDbTier, RagEngineConfigState } from './state.js'

/**
 * RagEngineConfig (`projects/{p}/locations/{l}/ragEngineConfig`): the location's RagManagedDb
 * tier. A location never configured has the default: the Basic tier, Spanner mode unset — "Basic
 * tier (default)" (https://cloud.google.com/vertex-ai/generative-ai/docs/rag-engine/understanding-ragmanageddb;
 * the v1 protos: "This is the default tier if not explicitly chosen"). Tiers change nothing in
 * Quarry but one: Unprovisioned deletes every corpus of the location (Google: "deletes all your
 * data held within this service") and createRagCorpus there answers FAILED_PRECONDITION until
 * another tier is set.
 */
const ENGINE_CONFIG = `${LOCATION}/ragEngineConfig`

/** The default of a location never configured. */
const DEFAULT_TIER: ManagedDbTier = 'basic'

const TIERS = ['enterprise', 'scaled', 'basic', 'unprovisioned'] as const

/** A location's config (the default when never set). */
function engineConfigOf(ctx: RagContext, location: string): RagEngineConfigState {
  const name = `${location}/ragEngineConfig`
  return ctx.state.engineConfigs.get(name) ?? { name, tier: DEFAULT_TIER, mode: undefined }
}

/** Refuses to create resources in a location whose RagManagedDb is unprovisioned. */
export function requireProvisioned(ctx: RagContext, location: string, field: string): void {
  if (engineConfigOf(ctx, location).tier === 'unprovisioned') {
    throw failure('FAILED_PRECONDITION', `RAG Engine is unprovisioned in ${location}; set a tier (basic or scaled) with updateRagEngineConfig first.`, field)
  }
}

/** The config as proto3 JSON of a version: v1 knows the tier alone (enterprise reads as scaled); v1beta1 also the mode. */
function engineConfigJson(config: RagEngineConfigState, version: ApiVersion): { name: string; ragManagedDbConfig: Record<string, unknown> } {
  const tier = config.tier === undefined ? {} : { [version === 'v1' && config.tier === 'enterprise' ? 'scaled' : config.tier]: {} }
  if (version === 'v1') return { name: config.name, ragManagedDbConfig: tier }
  if (config.mode === 'serverless') return { name: config.name, ragManagedDbConfig: { serverless: {} } }
  if (config.mode === 'spanner') return { name: config.name, ragManagedDbConfig: { spanner: tier } }
  return { name: config.name, ragManagedDbConfig: tier }
}

export async function getRagEngineConfig(ctx: RagContext, version: ApiVersion, request: unknown): Promise<{ name: string; ragManagedDbConfig: Record<string, unknown> }> {
  const { name } = readMessage(requestSchema(GetRagEngineConfigRequest, version), request)
  const parsed = parseName(name, ENGINE_CONFIG, 'name')
  return engineConfigJson(engineConfigOf(ctx, parsed.names.location), version)
}

function tierOf(config: Readonly<Record<string, unknown>> | undefined): ManagedDbTier | undefined {
  return TIERS.find((t) => config?.[t] !== undefined)
}

export async function updateRagEngineConfig(ctx: RagContext, version: ApiVersion, request: unknown): Promise<Operation> {
  const { ragEngineConfig } = readMessage(requestSchema(UpdateRagEngineConfigRequest, version), request)
  const parsed = parseName(ragEngineConfig?.name, ENGINE_CONFIG, 'ragEngineConfig.name')
  const db = ragEngineConfig?.ragManagedDbConfig as Readonly<Record<string, unknown>> | undefined
  const spanner = db?.spanner as Readonly<Record<string, unknown>> | undefined
  const top = tierOf(db)
  const inner = tierOf(spanner)
  if (top !== undefined && inner !== undefined && top !== inner) {
    throw invalidArgument('ragEngineConfig.ragManagedDbConfig.spanner', `the tier is given twice and differently (${top}, spanner.${inner}); give it once, as spanner.${inner}.`)
  }
  const serverless = db?.serverless !== undefined
  if (serverless && top !== undefined) throw invalidArgument('ragEngineConfig.ragManagedDbConfig.serverless', `serverless mode has no tier; drop ${top} or choose spanner mode.`)
  const tier = serverless ? undefined : (inner ?? top ?? (spanner !== undefined ? DEFAULT_TIER : undefined))
  if (!serverless && tier === undefined) {
    throw invalidArgument('ragEngineConfig.ragManagedDbConfig', version === 'v1' ? 'give a tier: basic, scaled or unprovisioned.' : 'give a tier (spanner.basic, spanner.scaled, spanner.unprovisioned) or serverless.')
  }
  // v1 has no mode: its tier lands in Spanner mode when that was chosen (v1beta1), else as the bare tier.
  const previous = engineConfigOf(ctx, parsed.names.location).mode
  const mode = serverless ? 'serverless' : spanner !== undefined || (version === 'v1' && previous === 'spanner') ? 'spanner' : undefined
  const config: RagEngineConfigState = { name: parsed.name, tier, mode }
  if (tier === 'unprovisioned') {
    // Google: unprovisioning "deletes all your data held within this service" (the location's corpora).
    for (const corpus of [...ctx.state.corpora.values()]) if (corpus.parent === parsed.names.location) ctx.state.corpora.delete(corpus.name)
  }
  ctx.state.engineConfigs.set(config.name, config)
  return ctx.operation(version, config.name, 'UpdateRagEngineConfigOperationMetadata', { type: 'RagEngineConfig', value: engineConfigJson(config, version) })
}
