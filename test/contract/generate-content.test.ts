import { fileURLToPath } from 'node:url'
import { createHashingEmbedder } from '@quarry/core'
import { RAG_METHODS, VertexRagEngine, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { predictionSurfaces } from '../../packages/adapters/src/generative/service.js'
import { describeGolden, type GoldenCall, loadGolden } from './golden-runner.js'

/**
 * generateContent golden pairs: the requests @google/genai 2.32 (Vertex mode), ADK 2.0's LlmAgent
 * with a VertexRagRetrievalTool and aiplatform 6.11 (gRPC) sent in test/http/generate-content.test.ts,
 * byte for byte but for the corpus name, with the default local model's exact answers.
 */
const FILE = fileURLToPath(new URL('./golden/generate-content.json', import.meta.url))
const GCS = fileURLToPath(new URL('./fixtures/gcs', import.meta.url))
const scenarios = loadGolden(FILE)

/** A fresh RAG engine per scenario and PredictionService over it: RAG calls build the corpus, generateContent answers. */
function engine(): GoldenCall {
  const rag = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 64 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(13), gcsRoot: GCS })
  const models = predictionSurfaces(rag)
  return (step, request) => {
    const version = step.version === 'v1' ? 'v1' : 'v1beta1'
    if (step.call === 'generateContent') return models[version].generateContent(request) as Promise<Outcome<unknown>>
    if (!(RAG_METHODS as readonly string[]).includes(step.call)) throw new Error(`unknown method ${step.call}`)
    return (rag[version][step.call as (typeof RAG_METHODS)[number]] as (r: unknown) => Promise<Outcome<unknown>>).call(rag[version], request)
  }
}

describeGolden('PredictionService.generateContent golden request/response pairs (v1 and v1beta1)', FILE, scenarios, engine)
