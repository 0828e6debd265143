import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine, seededRandomId, steppingClock } from '@quarry/adapters'
import { bindMethods } from '../../packages/adapters/src/transport/bound-methods.js'
import { describeGolden, loadGolden, updating, type GoldenCall, type GoldenScenario, type GoldenStep } from './golden-runner.js'

/**
 * Issue 42 asks that every request the clients sent be in the golden contract files. The Python
 * gRPC client's lifecycle (test/python/lifecycle.json: what test/http/python-grpc.test.ts sends
 * from Python and from grpc-js) is one scenario here: each request with the exact answer the
 * bound methods give it in process, as every transport serves them. `UPDATE_GOLDEN=1` rewrites
 * the answers; the requests must stay the lifecycle's own.
 */
const FILE = fileURLToPath(new URL('./golden/python-lifecycle.json', import.meta.url))
const LIFECYCLE = fileURLToPath(new URL('../python/lifecycle.json', import.meta.url))
const GCS = fileURLToPath(new URL('./fixtures/gcs', import.meta.url))
const PREFIX = 'py'

interface LifecycleStep {
  readonly service: string
  readonly rpc: string
  readonly request: unknown
  readonly save?: Readonly<Record<string, string>>
}

/**
 * The lifecycle's steps as golden steps: `service/rpc`, `{{prefix}}` given, saved names kept (their
 * paths are in the answer, which the golden runner finds under the outcome's `response`).
 */
function lifecycleSteps(): GoldenStep[] {
  const { steps } = JSON.parse(readFileSync(LIFECYCLE, 'utf8')) as { steps: LifecycleStep[] }
  return steps.map((s) => ({
    call: `${s.service}/${s.rpc}`,
    request: JSON.parse(JSON.stringify(s.request).replaceAll('{{prefix}}', PREFIX)) as unknown,
    ...(s.save ? { save: Object.fromEntries(Object.entries(s.save).map(([name, path]) => [name, `response.${path}`])) } : {}),
  }))
}

const NAME = 'the Python gRPC lifecycle: Semantic Retriever, RAG Engine with grounded generation, Memory Bank, Sessions'
const scenarios: GoldenScenario[] = existsSync(FILE) && !updating ? loadGolden(FILE) : [{ name: NAME, steps: lifecycleSteps() }]

it('the golden scenario sends exactly the Python lifecycle requests, in order', () => {
  const golden = loadGolden(FILE)
  expect(golden.map((s) => s.name)).toEqual([NAME])
  expect(golden[0]?.steps.map(({ call, request, save }) => ({ call, request, ...(save ? { save } : {}) }))).toEqual(lifecycleSteps())
})

/** A fresh set of engines (seeded ids, a stepping clock, the contract's gs:// fixtures) and their bound methods by `service/rpc`. */
function engine(): GoldenCall {
  const embedder = createHashingEmbedder({ dimensions: 64 })
  const clock = steppingClock('2026-01-01T00:00:00Z')
  const methods = bindMethods({
    semanticRetriever: new SemanticRetriever({ embedder, clock, randomId: seededRandomId(1) }),
    vertexRag: new VertexRagEngine({ embedder, clock, randomId: seededRandomId(2), gcsRoot: GCS }),
    memoryBank: new MemoryBank({ embedder, clock, randomId: seededRandomId(3) }),
  })
  return async (step, request) => {
    const method = methods.find((m) => `${m.service}/${m.rpc}` === step.call)
    if (!method) throw new Error(`no bound method ${step.call}`)
    return method.call(request as Record<string, unknown>, undefined)
  }
}

describeGolden('the Python lifecycle golden request/response pairs', FILE, scenarios, engine)
