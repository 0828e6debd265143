import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MEMORY_METHODS, MemoryBank, SESSION_METHODS, seededRandomId, steppingClock, v1, v1beta1, type ExtractRequest, type Outcome } from '@quarry/adapters'
import { describeGolden, type GoldenCall, loadGolden } from './golden-runner.js'

/**
 * Golden pairs of Agent Engine Sessions (SessionService v1beta1 and v1) and of generateMemories
 * from a session or raw contents through the extractor hook. Google's reference:
 * https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1beta1/projects.locations.reasoningEngines.sessions
 * (session.proto / session_service.proto: sessionId rule, the 24-hour minimum of ttl / expireTime,
 * 100 sessions or events a page by default, events by timestamp ascending, the filter fields).
 */
const FILE = fileURLToPath(new URL('./golden/sessions.json', import.meta.url))
const scenarios = loadGolden(FILE)

/** The test extractor: one fact per text part of a user turn (a model would summarize instead). */
async function userTurns(request: ExtractRequest): Promise<string[]> {
  return request.events.filter((e) => e.author === undefined || e.author === 'user').flatMap((e) => ((e.content?.['parts'] ?? []) as { text?: string }[]).flatMap((p) => (p.text === undefined ? [] : [p.text])))
}

/** A fresh memory bank per scenario: hashing embedder, a clock that moves 1 s per read, seeded ids. */
function engine(options: Record<string, unknown> = {}): GoldenCall {
  const { extractor, ...rest } = options
  const bank = new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 64 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(7), ...(extractor === 'userTurns' ? { extractor: userTurns } : {}), ...rest })
  return (step, request) => {
    const v1 = step.version === 'v1'
    if ((SESSION_METHODS as readonly string[]).includes(step.call)) {
      const surface = v1 ? bank.sessions.v1 : bank.sessions
      return (surface[step.call as (typeof SESSION_METHODS)[number]] as (r: unknown) => Promise<Outcome<unknown>>).call(surface, request)
    }
    if (!(MEMORY_METHODS as readonly string[]).includes(step.call)) throw new Error(`unknown method ${step.call}`)
    const surface = v1 ? bank.v1 : bank
    return (surface[step.call as (typeof MEMORY_METHODS)[number]] as (r: unknown) => Promise<Outcome<unknown>>).call(surface, request)
  }
}

describeGolden('Agent Engine Sessions golden request/response pairs', FILE, scenarios, engine)

describe("the in-process SessionServiceClient (aiplatform's calling convention)", () => {
  it('creates through an operation, pages lists, reads operations back, and shares sessions across versions', async () => {
    const memoryBank = new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 16 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(3) })
    const beta = new v1beta1.SessionServiceClient({ memoryBank })
    const ga = new v1.SessionServiceClient({ memoryBank })
    const parent = 'projects/p/locations/l/reasoningEngines/1'
    const [op] = await beta.createSession({ parent, sessionId: 's1', session: { userId: 'u' } })
    const [session] = await op.promise()
    expect(session.name).toBe(`${parent}/sessions/s1`)
    expect((await beta.checkCreateSessionProgress(op.name)).done).toBe(true)
    const [v1op] = await ga.createSession({ parent, sessionId: 's2', session: { userId: 'u' } })
    expect((await v1op.promise())[0].name).toBe(`${parent}/sessions/s2`)
    // v1 wrote it, v1beta1 reads it.
    expect((await beta.getSession({ name: `${parent}/sessions/s2` }))[0].userId).toBe('u')
    const names: string[] = []
    for await (const s of beta.listSessionsAsync({ parent, pageSize: 1 })) names.push(s.name)
    expect(names).toEqual([`${parent}/sessions/s1`, `${parent}/sessions/s2`])
    await ga.appendEvent({ name: `${parent}/sessions/s2`, event: { author: 'user', invocationId: 'i', timestamp: '2026-01-01T00:00:00Z' } })
    const [events] = await beta.listEvents({ parent: `${parent}/sessions/s2` })
    expect(events.map((e) => [e.author, e.timestamp])).toEqual([['user', '2026-01-01T00:00:00.000Z']])
    const missing = await beta.getSession({ name: `${parent}/sessions/none` }).then(() => undefined, (e: unknown) => e as { code: number })
    expect(missing?.code).toBe(5)
  })
})
