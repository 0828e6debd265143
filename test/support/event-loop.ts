import { readFileSync } from 'node:fs'
import { PerformanceObserver } from 'node:perf_hooks'

/**
 * This thread's CPU time in ms (Linux: /proc/thread-self/schedstat, in ns): what a stretch of the
 * event loop cost this thread, without the time the machine's other processes had it waiting (the
 * machines that run these tests are shared). Elsewhere, the wall clock.
 */
function threadMs(): number {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6
  } catch {
    return performance.now()
  }
}

/** The longest stretches of the event loop while work ran, in this thread's CPU time (ms). */
export interface Holds {
  /** The longest stretch outside collections. */
  readonly hold: number
  /** The longest stretch that overlapped a collection of V8's of 10 ms or more. */
  readonly collecting: number
  /** The longest stretch the same timer sees on an idle loop just before: its own bookkeeping. */
  readonly idle: number
}

/**
 * The longest the event loop went without a turn while `work` ran, in this thread's CPU time: a
 * timer re-arms itself every turn, and the CPU time between two of its calls is the longest
 * synchronous stretch (plus the timer's own bookkeeping, `idle`). Stretches that overlap a
 * collection of V8's of 10 ms or more are reported apart: a pause the heap's size makes, not a
 * slice's work.
 */
export async function longestHold(work: () => Promise<unknown>): Promise<Holds> {
  const collections: [number, number][] = []
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.duration >= 10) collections.push([e.startTime, e.startTime + e.duration])
  })
  observer.observe({ entryTypes: ['gc'] })
  const gaps = async (during: Promise<unknown>): Promise<{ hold: number; collecting: number }> => {
    let last = performance.now()
    let lastCpu = threadMs()
    let hold = 0
    let collecting = 0
    let done = false
    const tick = (): void => {
      const now = performance.now()
      const cpu = threadMs()
      const gap = cpu - lastCpu
      if (collections.some(([s, e]) => s < now && e > last)) collecting = Math.max(collecting, gap)
      else hold = Math.max(hold, gap)
      last = now
      lastCpu = cpu
      if (!done) setTimeout(tick, 0)
    }
    setTimeout(tick, 0)
    await during
    done = true
    await new Promise((r) => setTimeout(r, 5))
    return { hold, collecting }
  }
  try {
    const idle = (await gaps(new Promise((r) => setTimeout(r, 300)))).hold
    return { ...(await gaps(work())), idle }
  } finally {
    observer.disconnect()
  }
}
