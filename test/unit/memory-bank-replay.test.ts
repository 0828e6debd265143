import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { recording, replaying, type Trace } from '../../packages/adapters/src/rpc/replay.js'
import { engineState } from '../support/engine-state.js'

/**
 * A write that makes its reasoning engine on first use and then fails is not in the write-ahead
 * log, so it must leave no engine behind: the next write on that engine would otherwise read the
 * clock for an expiry sweep live (the engine exists) but not in its replay (it does not), and the
 * replay diverged ("value 1 is clock, the write asked for embed"; found by test/http/hostile.test.ts).
 * Here each kind of write that makes an engine fails once, then succeeds; the successful write,
 * recorded as the server's log records it, replays over a fresh bank to the same answer and state.
 */
const embedder = createHashingEmbedder({ dimensions: 16 })
const E = 'projects/p/locations/l/reasoningEngines/1'

function bank(): MemoryBank {
  return new MemoryBank({ embedder, clock: steppingClock('2026-01-01T00:00:00Z', 1), randomId: seededRandomId(3) })
}

/** The whole state of a bank (the other two engines empty), as a data folder's checkpoint holds it. */
function stateOf(b: MemoryBank): Record<string, unknown> {
  return engineState({ memoryBank: b, semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }) })
}

type Write = (b: MemoryBank) => Promise<Outcome<unknown>>

/** Each kind of write that makes its engine on first use: one refused after the engine was made, one that succeeds. */
const CASES: readonly { readonly name: string; readonly fails: Write; readonly succeeds: Write }[] = [
  {
    name: 'createMemory',
    fails: (b) => b.createMemory({ parent: 'reasoningEngines/1', memory: { fact: '', scope: { user_id: 'u' } } }),
    succeeds: (b) => b.createMemory({ parent: 'reasoningEngines/1', memoryId: 'tea', memory: { fact: 'I like green tea', scope: { user_id: 'u' } } }),
  },
  {
    name: 'generateMemories',
    fails: (b) => b.generateMemories({ parent: E, scope: { user_id: 'u' }, directMemoriesSource: { directMemories: [] } }),
    succeeds: (b) => b.generateMemories({ parent: E, scope: { user_id: 'u' }, directMemoriesSource: { directMemories: [{ fact: 'My dog is called Rex' }] } }),
  },
  {
    name: 'createSession',
    fails: (b) => b.sessions.createSession({ parent: E, session: {} }),
    succeeds: (b) => b.sessions.createSession({ parent: E, session: { userId: 'u' } }),
  },
]

describe('Memory Bank writes replay after a failed write made their engine', () => {
  for (const c of CASES) {
    it(`${c.name}: the failed write leaves no engine; the next one replays to the same answer and state`, async () => {
      const live = bank()
      const refused = await c.fails(live)
      expect(refused.ok).toBe(false)
      expect([...live.engines().keys()]).toEqual([])

      // A write that made an engine and was kept is recorded as the server's log records it.
      const { result, trace } = await recording(() => c.succeeds(live))
      expect(result.ok).toBe(true)
      // The same outside reads, in the same order, as the write makes on a bank that never saw the failure.
      const alone = await recording(() => c.succeeds(bank()))
      expect(kinds(trace)).toEqual(kinds(alone.trace))

      const replica = bank()
      expect(await replaying(trace as Trace, () => c.succeeds(replica))).toEqual(result)
      expect(stateOf(replica)).toEqual(stateOf(live))
    })
  }
})

/** The kinds of outside values a trace holds, in order. */
function kinds(trace: Trace): string[] {
  return trace.map((entry) => String((entry as [string, unknown])[0]))
}
