import { enumOf, mapOf, message, opaque, repeated, string } from '../rpc/proto-json.js'
import { Content } from '../rpc/content.js'
import { Tool } from '../vertex-rag/schema.js'

/**
 * PredictionService.GenerateContent's request (prediction_service.proto), v1beta1; v1 is read
 * through vertex-rag's `requestSchema` (the same fields, the Tool without what v1 lacks). The
 * contents, tools and settings a local model cannot honour are read as JSON and handed to the
 * model as sent; only `tools[].retrieval.vertexRagStore` is interpreted by Quarry.
 */
const P = 'google.cloud.aiplatform.v1beta1'

export const GenerateContentRequest = message(`${P}.GenerateContentRequest`, {
  model: string,
  contents: repeated(Content),
  systemInstruction: Content,
  cachedContent: string,
  tools: repeated(Tool),
  toolConfig: opaque(`${P}.ToolConfig`),
  labels: mapOf(string),
  safetySettings: repeated(opaque(`${P}.SafetySetting`)),
  modelArmorConfig: opaque(`${P}.ModelArmorConfig`),
  generationConfig: opaque(`${P}.GenerationConfig`),
})

export const FinishReason = enumOf(`${P}.Candidate.FinishReason`, {
  FINISH_REASON_UNSPECIFIED: 0,
  STOP: 1,
  MAX_TOKENS: 2,
  SAFETY: 3,
  RECITATION: 4,
  OTHER: 5,
  BLOCKLIST: 6,
  PROHIBITED_CONTENT: 7,
  SPII: 8,
  MALFORMED_FUNCTION_CALL: 9,
  MODEL_ARMOR: 10,
})
