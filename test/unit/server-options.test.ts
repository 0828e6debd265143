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

  it("createServer checks its options' values, naming the option and what it takes", () => {
    // Each was taken: `durability: 'logs'` then journaled nothing, `maxInFlight: 0` answered every request 429.
    const cases: [Record<string, unknown>, string, string][] = [
      [{ durability: 'logs', dataDir: '/tmp/x' }, 'durability', "durability must be one of 'log', 'checkpoint', 'none'; received \"logs\"."],
      [{ maxInFlight: 0 }, 'maxInFlight', 'maxInFlight must be a positive integer; received 0.'],
      [{ maxBodyBytes: 'x' }, 'maxBodyBytes', 'maxBodyBytes must be a positive integer; received "x".'],
      [{ maxBodyBytes: -5 }, 'maxBodyBytes', 'maxBodyBytes must be a positive integer; received -5.'],
      [{ snapshotDelayMs: -1 }, 'snapshotDelayMs', 'snapshotDelayMs must be an integer of milliseconds from 0; received -1.'],
      [{ grpcPort: 70000 }, 'grpcPort', 'grpcPort must be a port from 0 to 65535 (0: any free port); received 70000.'],
      [{ console: 'yes' }, 'console', 'console must be true or false; received "yes".'],
      [{ allowedHosts: 'example.com' }, 'allowedHosts', 'allowedHosts must be an array of strings; received "example.com".'],
      [{ onRequest: true }, 'onRequest', 'onRequest must be a function; received a boolean.'],
      [{ dataDir: '' }, 'dataDir', 'dataDir must be the path of a folder; received "".'],
      [{ vertexRag: null }, 'vertexRag', 'vertexRag must be an object; received null.'],
      [{ model: { generate: () => undefined } }, 'model', 'model must be a function; received an object.'],
    ]
    for (const [options, path, message] of cases) {
      const error = thrown(() => createServer(options as never))
      expect(error, path).toBeInstanceOf(QuarryError)
      expect(error, path).toMatchObject({ code: 'INVALID_OPTION', path, message })
    }
    expect(thrown(() => createServer(null as never))).toMatchObject({ code: 'INVALID_OPTION', path: 'options' })
    // The values at their edges are taken.
    for (const options of [{ durability: 'none' }, { grpcPort: 0 }, { snapshotDelayMs: 0 }, { maxInFlight: 1 }, { allowedHosts: [] }]) {
      createServer({ ...options, console: false } as never).server.close()
    }
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
