import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank } from '@quarry/adapters'

/**
 * Expired sessions are removed by the next session write (sessions.ts `sweepSessions`), which
 * passes over the engine's sessions only once one may have expired: a bound the sweep keeps, and
 * lowers when a session's expiry is set. A session given a shorter expiry than every other one
 * still goes at the first write after its time; reads never show an expired one either way.
 */
const E = 'projects/p/locations/l/reasoningEngines/1'
const DAY = 24 * 3600 * 1000

describe('session expiry sweep', () => {
  it('removes a session whose expiry was set below every other at the first write after it', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z')
    const bank = new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 16 }), clock: () => new Date(now) })
    const create = async (sessionId: string, ttl?: string): Promise<void> => {
      const out = await bank.sessions.createSession({ parent: E, sessionId, session: { userId: 'u', ...(ttl === undefined ? {} : { ttl }) } })
      expect(out.ok).toBe(true)
    }
    const stored = (): string[] => [...(bank.engines().get(E)?.sessions.keys() ?? [])].map((name) => name.slice(name.lastIndexOf('/') + 1))
    const listed = async (): Promise<string[]> => {
      const out = await bank.sessions.listSessions({ parent: E })
      if (!out.ok) throw new Error(out.status.message)
      return (out.response.sessions ?? []).map((s) => String(s.name).slice(String(s.name).lastIndexOf('/') + 1))
    }
    await create('long', `${10 * 86400}s`)
    await create('short', '86400s')
    // An update moves its expiry to 2 days from now (above the bound the sweep keeps: no change to it).
    expect((await bank.sessions.updateSession({ session: { name: `${E}/sessions/short`, ttl: `${2 * 86400}s` }, updateMask: 'ttl' })).ok).toBe(true)
    now += 1.5 * DAY
    await create('later')
    expect(stored()).toEqual(['long', 'short', 'later'])
    now += 1 * DAY
    // Expired: not listed at once, and removed by the next write.
    expect(await listed()).toEqual(['long', 'later'])
    expect(stored()).toEqual(['long', 'short', 'later'])
    await create('next')
    expect(stored()).toEqual(['long', 'later', 'next'])
    // A session created with the shortest expiry of all, after a sweep: the next write after it removes it.
    await create('brief', '86400s')
    now += 1.2 * DAY
    await create('last')
    expect(stored()).toEqual(['long', 'later', 'next', 'last'])
    expect(await listed()).toEqual(['long', 'later', 'next', 'last'])
  })
})
