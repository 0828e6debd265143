import { describe, expect, it, vi } from 'vitest'
import { Receiving } from '../../packages/adapters/src/transport/receiving.js'

/**
 * The shared budget of bodies being received (transport/receiving.ts): one remote client holds at
 * most half of it, and a body still arriving after `holdMs` gives its room to a body that needs it,
 * oldest first; younger bodies, and any body while nobody waits, keep theirs. A body that receives
 * nothing for `idleMs` is ended by a sweep, never sooner.
 */
describe('Receiving', () => {
  const wait = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms))

  it('holds one remote client to half the budget; loopback clients and the others count against the whole', () => {
    const receiving = new Receiving(60_000, 1000)
    expect([receiving.perClient, receiving.holdMs]).toEqual([500, 240_000])
    const a = receiving.start('10.0.0.7', () => undefined)
    expect(a.add(400)).toBeUndefined()
    const b = receiving.start('10.0.0.7', () => undefined)
    expect(b.add(101)).toBe('This client (10.0.0.7) is sending 500 bytes of request bodies already, its share of the 1000 the server receives at once; retry shortly, or send fewer large bodies at once.')
    b.end()
    expect(receiving.pending).toBe(400)
    // Another client, and loopback, take the rest; past it everyone is refused.
    const other = receiving.start('10.0.0.8', () => undefined)
    expect(other.add(400)).toBeUndefined()
    const local = receiving.start(undefined, () => undefined)
    expect(local.add(200)).toBeUndefined()
    expect(local.add(1)).toBe('The server is receiving 1000 bytes of request bodies already; retry shortly, or send fewer large bodies at once.')
    local.end()
    // The first client's bytes leave with its body: its share is free again.
    a.end()
    expect(receiving.pending).toBe(400)
    const again = receiving.start('10.0.0.7', () => undefined)
    expect(again.add(500)).toBeUndefined()
    for (const body of [again, other]) body.end()
    expect(receiving.pending).toBe(0)
  })

  it('ends bodies arriving for longer than holdMs, oldest first and only as many as needed, when another body needs their room', async () => {
    // Idle for the whole test (60 s), held 40 ms: only the hold time ends bodies here.
    const receiving = new Receiving(60_000, 1000, { holdMs: 40 })
    const evicted: string[] = []
    const start = (name: string): ReturnType<Receiving['start']> => receiving.start(undefined, (message) => evicted.push(`${name}: ${message}`))
    const old1 = start('old1')
    const old2 = start('old2')
    expect(old1.add(400)).toBeUndefined()
    expect(old2.add(400)).toBeUndefined()
    await wait(receiving.holdMs + 20)
    const young = start('young')
    expect(young.add(150)).toBeUndefined()
    // Nobody needs room: old bodies keep going, however long they take.
    expect(evicted).toEqual([])
    // 150 bytes more need room: the oldest body gives its 400, the second keeps its room.
    const newcomer = start('newcomer')
    expect(newcomer.add(150)).toBeUndefined()
    expect(evicted).toEqual(['old1: The request body was still arriving after 0.04 s (400 bytes received) while others waited for room among the bodies the server receives at once; send it faster, or in smaller requests.'])
    expect(receiving.pending).toBe(700)
    // Its later bytes no longer count.
    expect(old1.add(10)).toBeUndefined()
    expect(receiving.pending).toBe(700)
    // A body needing more room than the old ones free is refused, and the young ones keep theirs.
    const large = start('large')
    expect(large.add(800)).toBe('The server is receiving 1000 bytes of request bodies already; retry shortly, or send fewer large bodies at once.')
    expect(evicted.map((e) => e.split(':')[0])).toEqual(['old1', 'old2'])
    large.end()
    expect(receiving.pending).toBe(300)
    for (const body of [old2, young, newcomer]) body.end()
    expect(receiving.pending).toBe(0)
  })

  it('ends a body that received nothing for idleMs, not before, and not one that keeps receiving; the sweep stops when no body is left', () => {
    // The sweep's timers and clock, faked: the figures below are exact, whatever the machine's load.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setImmediate', 'performance'] })
    try {
      const receiving = new Receiving(200, 1000)
      const ended: string[] = []
      const watched = (name: string): ReturnType<Receiving['start']> => receiving.start(undefined, (message) => ended.push(`${name}: ${message}`))
      const stalled = watched('stalled')
      const steady = watched('steady')
      expect(stalled.add(5)).toBeUndefined()
      const run = (ms: number): void => {
        for (let t = 0; t < ms; t += 10) {
          vi.advanceTimersByTime(10)
          expect(steady.add(1)).toBeUndefined()
        }
      }
      // The sweep runs every 50 ms: at 150 ms the stalled body is idle, but not for 200 ms yet.
      run(190)
      expect(ended).toEqual([])
      run(60)
      expect(ended).toEqual(['stalled: The request body made no progress for 0.2 s (5 bytes received); send it without pauses.'])
      // Its bytes left the budget; the steady body's stay until it ends, and it is never ended.
      expect(receiving.pending).toBe(steady.bytes)
      run(500)
      expect(ended).toHaveLength(1)
      steady.end()
      expect(receiving.pending).toBe(0)
      // With no body left the sweep stops, and the next body starts it again.
      vi.advanceTimersByTime(50)
      expect(vi.getTimerCount()).toBe(0)
      const late = watched('late')
      expect(vi.getTimerCount()).toBe(1)
      vi.advanceTimersByTime(250)
      expect(ended).toEqual(['stalled: The request body made no progress for 0.2 s (5 bytes received); send it without pauses.', 'late: The request body made no progress for 0.2 s (0 bytes received); send it without pauses.'])
      late.end()
    } finally {
      vi.useRealTimers()
    }
  })

  it('does not end the body that needs the room, however old', async () => {
    const receiving = new Receiving(60_000, 100, { holdMs: 40 })
    let evicted = 0
    const body = receiving.start(undefined, () => evicted++)
    expect(body.add(60)).toBeUndefined()
    await wait(receiving.holdMs + 20)
    expect(body.add(60)).toBe('The server is receiving 100 bytes of request bodies already; retry shortly, or send fewer large bodies at once.')
    expect(evicted).toBe(0)
    body.end()
    body.end()
    expect(receiving.pending).toBe(0)
  })
})
