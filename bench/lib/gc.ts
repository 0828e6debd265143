import { PerformanceObserver, constants } from 'node:perf_hooks'

/**
 * Garbage-collection pauses, as `performance.now()` intervals, for charging each engine with the
 * pauses that fell inside its own timed chunks. Interleaved engines share one young generation:
 * a scavenge runs in whichever chunk fills it, so these figures say where collection landed, not
 * whose garbage it collected. The observer reports a pause after it ends, on a later turn of the
 * event loop: call {@link settle} before reading.
 */
export class GcPauses {
  readonly #pauses: { start: number; end: number; major: boolean }[] = []
  readonly #observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as { detail?: { kind?: number } }).detail?.kind
      this.#pauses.push({ start: e.startTime, end: e.startTime + e.duration, major: kind === constants.NODE_PERFORMANCE_GC_MAJOR })
    }
  })

  constructor() {
    this.#observer.observe({ entryTypes: ['gc'] })
  }

  /** Lets the observer deliver the pauses of the work just done. */
  async settle(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }

  /** Milliseconds of pause inside the intervals [start, end) of `windows`: all, and of full (mark-compact) collections. */
  within(windows: readonly { start: number; end: number }[]): { all: number; major: number } {
    let all = 0
    let major = 0
    for (const w of windows) {
      for (const p of this.#pauses) {
        const ms = Math.max(0, Math.min(w.end, p.end) - Math.max(w.start, p.start))
        all += ms
        if (p.major) major += ms
      }
    }
    return { all, major }
  }

  /** Forgets the pauses seen so far. */
  clear(): void {
    this.#pauses.length = 0
  }

  /** Stops observing (the suite calls it when its sweep ends). */
  stop(): void {
    this.#observer.disconnect()
  }
}
