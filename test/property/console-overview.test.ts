import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine } from '@quarry/adapters'
import { overview } from '../../packages/adapters/src/console/overview.js'
import { runs } from '../support/runs.js'

// The console's overview counts a reasoning engine's live memories, sessions and scopes. Before
// the engine's next expiry it reads them off its maps and scope index; once a memory or session
// may have expired unswept (the clock moved past it, no write since), it counts one by one. The
// oracle is the one-by-one count over the stored state: an item is live until its expiry.

const E = 'projects/p/locations/l/reasoningEngines/1'
const USERS = ['u0', 'u1', 'u2', 'u3']
// Memories may live a minute; sessions at least a day (the API's minimum ttl).

type Step =
  | { readonly kind: 'memory'; readonly user: number; readonly ttl: number | undefined }
  | { readonly kind: 'delete'; readonly pick: number }
  | { readonly kind: 'session'; readonly ttl: number | undefined }
  | { readonly kind: 'advance'; readonly seconds: number }
  | { readonly kind: 'read'; readonly user: number }

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('memory' as const), user: fc.nat(USERS.length - 1), ttl: fc.option(fc.constantFrom(60, 600, 3600), { nil: undefined }) }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('session' as const), ttl: fc.option(fc.constantFrom(86_400, 100_000), { nil: undefined }) }),
  fc.record({ kind: fc.constant('advance' as const), seconds: fc.constantFrom(0, 30, 90, 700, 4000, 90_000) }),
  fc.record({ kind: fc.constant('read' as const), user: fc.nat(USERS.length - 1) }),
)

describe('console overview', () => {
  it("counts an engine's live memories, sessions and scopes as a one-by-one count does, swept or not", async () => {
    const embedder = createHashingEmbedder({ dimensions: 8 })
    let fast = 0
    let counted = 0
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
        let now = Date.parse('2026-01-01T00:00:00Z')
        const memoryBank = new MemoryBank({ embedder, clock: () => new Date(now) })
        const engines = { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank }
        let k = 0
        for (const s of steps) {
          if (s.kind === 'memory') {
            const made = await memoryBank.createMemory({ parent: E, memory: { fact: `fact ${k++}`, scope: { user_id: USERS[s.user] as string }, ...(s.ttl === undefined ? {} : { ttl: `${s.ttl}s` }) } })
            expect(made.ok).toBe(true)
          } else if (s.kind === 'delete') {
            const names = [...(memoryBank.engines().get(E)?.memories.keys() ?? [])]
            if (names.length > 0) await memoryBank.deleteMemory({ name: names[s.pick % names.length] })
          } else if (s.kind === 'session') {
            const made = await memoryBank.sessions.createSession({ parent: E, session: { userId: 'u', ...(s.ttl === undefined ? {} : { ttl: `${s.ttl}s` }) } })
            expect(made.ok).toBe(true)
          } else if (s.kind === 'advance') now += s.seconds * 1000
          else await memoryBank.retrieveMemories({ parent: E, scope: { user_id: USERS[s.user] as string } })

          const engine = memoryBank.engines().get(E)
          const summary = overview(engines, 0).locations[0]?.reasoningEngines[0]
          if (!engine) {
            expect(summary).toBeUndefined()
            continue
          }
          if (now < engine.nextExpiryMs && now < engine.nextSessionExpiryMs) fast++
          else counted++
          const memories = [...engine.memories.values()].filter((m) => m.expireMs === undefined || m.expireMs > now)
          expect(summary).toEqual({
            name: E,
            memories: memories.length,
            sessions: [...engine.sessions.values()].filter((x) => x.expireMs > now).length,
            scopes: new Set(memories.map((m) => m.scopeKey)).size,
          })
        }
      }),
      { numRuns: runs(300) },
    )
    // Both ways of counting were compared.
    expect(fast).toBeGreaterThan(0)
    expect(counted).toBeGreaterThan(0)
  }, 60_000)
})
