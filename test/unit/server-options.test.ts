import { describe, expect, it } from 'vitest'
import { createHashingEmbedder, QuarryError } from '@quarry/core'
import { createServer, defaultEngines, MemoryBank, MemoryBankServiceClient, SemanticRetriever, VertexRagEngine } from '@quarry/adapters'
import { thrown } from '../support/thrown.js'

// createServer and the engines refuse an option they do not know, as core's createIndex does: from
// JavaScript, a misspelt option (`data` for `dataDir`, `embeder`) was ignored, and the server kept
// its state in memory, or the engine embedded with the default model.

describe('options', () => {
  it('createServer refuses one it does not know, naming it and the known ones', () => {
    const error = thrown(() => createServer({ data: '/tmp/x', console: false } as never))
    expect(error).toBeInstanceOf(QuarryError)
    expect(error).toMatchObject({ code: 'INVALID_OPTION', path: 'data' })
    expect((error as Error).message).toMatch(/^unknown option data; known options are embedder, .*\bdataDir\b.*\bconsole\.$/)
  })

  it('each engine refuses one it does not know, naming it and the known ones', () => {
    for (const [Engine, known] of [
      [MemoryBank, 'embedder, explicitEngines, consolidationSimilarity'],
      [SemanticRetriever, 'embedder, dense, hnsw, planner, limits'],
      [VertexRagEngine, 'embedder, distanceMetric, gcsRoot, importRoots'],
    ] as const) {
      const error = thrown(() => new Engine({ embeder: createHashingEmbedder({ dimensions: 8 }) } as never))
      expect(error, Engine.name).toBeInstanceOf(QuarryError)
      expect(error, Engine.name).toMatchObject({ code: 'INVALID_OPTION', path: 'embeder' })
      expect((error as Error).message, Engine.name).toContain(`unknown option embeder; known options are ${known}`)
    }
  })

  it("a client hands its engine only the engine's options: Google's client options beside them change nothing", async () => {
    const embedder = createHashingEmbedder({ dimensions: 8 })
    const client = new MemoryBankServiceClient({ apiEndpoint: 'localhost', projectId: 'p', embedder })
    expect(client.memoryBank).not.toBe(defaultEngines().memoryBank)
    const [operation] = await client.createMemory({ parent: 'projects/p/locations/l/reasoningEngines/1', memory: { fact: 'a fact', scope: { u: '1' } } })
    expect(operation.done).toBe(true)
  })
})
