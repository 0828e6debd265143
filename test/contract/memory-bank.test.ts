import { fileURLToPath } from 'node:url'
import { describe, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MEMORY_METHODS, MemoryBank, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { describeGolden, type GoldenCall, loadGolden } from './golden-runner.js'

const FILE = fileURLToPath(new URL('./golden/memory-bank.json', import.meta.url))
const scenarios = loadGolden(FILE)

/** A fresh memory bank per scenario: hashing embedder, a clock that moves 1 s per read, seeded ids. */
function engine(options: Record<string, unknown> = {}): GoldenCall {
  const bank = new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 64 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(5), ...options })
  return (step, request) => {
    if (!(MEMORY_METHODS as readonly string[]).includes(step.call)) throw new Error(`unknown method ${step.call}`)
    // `version: "v1"` calls the v1 surface: the same memories as v1beta1's.
    const surface = step.version === 'v1' ? bank.v1 : bank
    return (surface[step.call as (typeof MEMORY_METHODS)[number]] as (r: unknown) => Promise<Outcome<unknown>>).call(surface, request)
  }
}

describeGolden('Memory Bank golden request/response pairs', FILE, scenarios, engine)
