import { fileURLToPath } from 'node:url'
import { describe, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { RAG_METHODS, VertexRagEngine, seededRandomId, steppingClock, type Outcome, type VertexRagSurface } from '@quarry/adapters'
import { describeGolden, type GoldenCall, loadGolden } from './golden-runner.js'

const FILE = fileURLToPath(new URL('./golden/vertex-rag.json', import.meta.url))
const GCS = fileURLToPath(new URL('./fixtures/gcs', import.meta.url))
const scenarios = loadGolden(FILE)

/** A fresh engine per scenario: hashing embedder, stepping clock, seeded ids, gs:// served from fixtures/gcs. */
function engine(options: Record<string, unknown> = {}): GoldenCall {
  const rag = new VertexRagEngine({
    embedder: createHashingEmbedder({ dimensions: 64 }),
    clock: steppingClock('2026-01-01T00:00:00Z'),
    randomId: seededRandomId(11),
    gcsRoot: GCS,
    ...options,
  })
  return (step, request) => {
    if (!(RAG_METHODS as readonly string[]).includes(step.call)) throw new Error(`unknown method ${step.call}`)
    const surface: VertexRagSurface = step.version === 'v1' ? rag.v1 : rag.v1beta1
    if (step.call === 'uploadRagFile') return surface.uploadRagFile(request, step.content) as Promise<Outcome<unknown>>
    return (surface[step.call as (typeof RAG_METHODS)[number]] as (r: unknown) => Promise<Outcome<unknown>>).call(surface, request)
  }
}

describeGolden('Vertex AI RAG Engine golden request/response pairs (v1 and v1beta1)', FILE, scenarios, engine)
