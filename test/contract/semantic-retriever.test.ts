import { fileURLToPath } from 'node:url'
import { describe, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { RETRIEVER_METHODS, SemanticRetriever, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { describeGolden, type GoldenCall, loadGolden } from './golden-runner.js'

const FILE = fileURLToPath(new URL('./golden/semantic-retriever.json', import.meta.url))
const scenarios = loadGolden(FILE)

function engine(options: Record<string, unknown> = {}): GoldenCall {
  const retriever = new SemanticRetriever({
    embedder: createHashingEmbedder({ dimensions: 64 }),
    clock: steppingClock('2026-01-01T00:00:00Z'),
    randomId: seededRandomId(7),
    ...options,
  })
  return ({ call: method }, request) => {
    if (!(RETRIEVER_METHODS as readonly string[]).includes(method)) throw new Error(`unknown method ${method}`)
    return retriever[method as (typeof RETRIEVER_METHODS)[number]](request) as Promise<Outcome<unknown>>
  }
}

describeGolden('Semantic Retriever golden request/response pairs', FILE, scenarios, engine)
