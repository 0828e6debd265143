import { describe, expect, it } from 'vitest'
import { ReplayDivergence, replayable, replayableClock, replayableRare, recording, replaying } from '../../packages/adapters/src/rpc/replay.js'

/**
 * rpc/replay.ts: a trace keeps a write's outside values in the order the write asked for them,
 * which is the order a replay hands them back, also when they arrive in another order.
 */

/** A clock that steps 1 ms a reading from a fixed time. */
function steps(): () => Date {
  let ms = Date.UTC(2026, 0, 1)
  return () => new Date(ms++)
}

/** A value that arrives only after `turns` turns of the event loop, as an embedding computed elsewhere does. */
async function later<T>(value: T, turns: number): Promise<T> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve))
  return value
}

/** A write that starts an embedding, reads the clock while it runs, then awaits the vectors. */
async function write(clock: () => Date, vectors: () => Promise<number[]>): Promise<{ vectors: number[]; at: number }> {
  const embedding = replayable('embed', vectors)
  const at = clock().getTime()
  return { vectors: await embedding, at }
}

describe('replay traces', () => {
  it('record an awaited embedding at its call, before a clock read made while it ran, and replay it', async () => {
    const { result, trace } = await recording(() => write(replayableClock(steps()), () => later([0.25, 0.5], 3)))
    expect(result).toEqual({ vectors: [0.25, 0.5], at: Date.UTC(2026, 0, 1) })
    expect(trace).toEqual([
      ['embed', [0.25, 0.5]],
      ['clock', Date.UTC(2026, 0, 1)],
    ])
    // The replay's clock and embedder would give other values: the recorded ones come back.
    const clock = (): Date => new Date(0)
    const replayed = await replaying(trace, () => write(replayableClock(clock), () => Promise.resolve([9])))
    expect(replayed).toEqual(result)
  })

  it('drops the place of a value that failed or of a rare one that was not there', async () => {
    const { trace } = await recording(async () => {
      await replayable('embed', async () => {
        await later(undefined, 1)
        throw new Error('the embedder is down')
      }).catch(() => undefined)
      await replayableRare('bound', () => later(undefined, 1))
      await replayableRare('bound', () => later('over', 1))
      return replayableClock(steps())().getTime()
    })
    expect(trace).toEqual([
      ['bound', 'over'],
      ['clock', Date.UTC(2026, 0, 1)],
    ])
  })

  it('fails a replay that reads another kind of value, even when the write caught the divergence', async () => {
    const clock = replayableClock(steps())
    // The write asks for an embedding where the log recorded a clock reading, and swallows the error as a method answering INTERNAL would.
    const swallowed = replaying([['clock', 5]], async () => {
      await replayable('embed', () => Promise.resolve([1])).catch(() => undefined)
      return 'answered'
    })
    await expect(swallowed).rejects.toThrow(new ReplayDivergence('value 0 is clock, the write asked for embed'))
    await expect(replaying([['clock', 5]], async () => clock().getTime())).resolves.toBe(5)
  })

  it('fails a replay that reads fewer values than the log recorded', async () => {
    const clock = replayableClock(steps())
    const error = await replaying([['clock', 5], ['clock', 6]], async () => clock().getTime()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ReplayDivergence)
    expect((error as ReplayDivergence).detail).toBe('the write read 1 outside values; the log recorded 2')
  })
})
