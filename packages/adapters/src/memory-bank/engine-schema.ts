import { CAPS, quarryCap } from '../rpc/limits.js'
import { bool, duration, fieldMask, int32, mapOf, message, opaque, repeated, string, text, timestamp, type Infer } from '../rpc/proto-json.js'

/**
 * Requests of google.cloud.aiplatform.v1beta1.ReasoningEngineService (reasoning_engine.proto,
 * reasoning_engine_service.proto). Quarry runs no agent code, so `spec`, `encryptionSpec` and
 * `trafficConfig` are kept as given; `contextSpec.memoryBankConfig` is read (engine-config.ts says
 * which parts are honoured). v1 uses the same messages.
 */
const P = 'google.cloud.aiplatform.v1beta1'
const MBC = `${P}.ReasoningEngineContextSpec.MemoryBankConfig`

const LABELS = mapOf(text(CAPS.value), { entries: quarryCap(64, 'labels tag an engine for list filters'), keys: CAPS.key })

export const MemoryBankConfig = message(MBC, {
  generationConfig: message(`${MBC}.GenerationConfig`, { model: text(CAPS.value) }),
  similaritySearchConfig: message(`${MBC}.SimilaritySearchConfig`, { embeddingModel: text(CAPS.value) }),
  ttlConfig: message(
    `${MBC}.TtlConfig`,
    {
      defaultTtl: duration,
      granularTtlConfig: message(`${MBC}.TtlConfig.GranularTtlConfig`, { createTtl: duration, generateCreatedTtl: duration, generateUpdatedTtl: duration }),
      memoryRevisionDefaultTtl: duration,
    },
    [['defaultTtl', 'granularTtlConfig']],
  ),
  // Newer than the pinned protos (Google's REST reference): kept, not interpreted.
  customizationConfigs: repeated(opaque(`${MBC}.CustomizationConfig`), quarryCap(100, 'customization configs are a few topic and example lists')),
  disableMemoryRevisions: bool,
})

export const ReasoningEngineContextSpec = message(`${P}.ReasoningEngineContextSpec`, { memoryBankConfig: MemoryBankConfig })

export const ReasoningEngine = message(`${P}.ReasoningEngine`, {
  name: string,
  displayName: text(CAPS.displayName),
  description: text(CAPS.text),
  spec: opaque(`${P}.ReasoningEngineSpec`),
  createTime: timestamp,
  updateTime: timestamp,
  etag: string,
  contextSpec: ReasoningEngineContextSpec,
  encryptionSpec: opaque(`${P}.EncryptionSpec`),
  labels: LABELS,
  trafficConfig: opaque(`${P}.ReasoningEngine.TrafficConfig`),
})

export const CreateReasoningEngineRequest = message(`${P}.CreateReasoningEngineRequest`, { parent: string, reasoningEngine: ReasoningEngine })
export const GetReasoningEngineRequest = message(`${P}.GetReasoningEngineRequest`, { name: string })
export const UpdateReasoningEngineRequest = message(`${P}.UpdateReasoningEngineRequest`, { reasoningEngine: ReasoningEngine, updateMask: fieldMask })
export const ListReasoningEnginesRequest = message(`${P}.ListReasoningEnginesRequest`, { parent: string, filter: string, pageSize: int32, pageToken: string })
export const DeleteReasoningEngineRequest = message(`${P}.DeleteReasoningEngineRequest`, { name: string, force: bool })

/** Fields newer than the pinned protos, by message (the protos test skips exactly these). */
export const NEWER_ENGINE_FIELDS: Readonly<Record<string, readonly string[]>> = {
  [MBC]: ['customizationConfigs', 'disableMemoryRevisions'],
  [`${MBC}.TtlConfig`]: ['memoryRevisionDefaultTtl'],
}

export type ReasoningEngineInput = Infer<typeof ReasoningEngine>
export type ContextSpecInput = Infer<typeof ReasoningEngineContextSpec>
