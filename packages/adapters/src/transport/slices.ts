/**
 * The longest a sweep works through the items it found due at once, ms, before other work gets a
 * turn: items that went stale together (calls or bodies on hundreds of stalled connections) are
 * ended over several turns of the event loop, not all in one (grpc/server.ts, transport/receiving.ts).
 */
export const SWEEP_SLICE_MS = 5

/**
 * How often a sweep that ends what made no progress for `idleMs` (each of the times given) runs, ms:
 * a quarter of the shortest, at most a second and at least 10 ms. An item ends between its idle
 * time and that time plus one period.
 */
export function sweepPeriodMs(...idleMs: readonly number[]): number {
  return Math.max(10, Math.min(1000, ...idleMs.map((ms) => ms / 4)))
}

/**
 * Calls `each` on `items` in order, {@link SWEEP_SLICE_MS} at a time with a turn of the event loop
 * between, then `done`. Time passes between the sweep that found an item and its turn: `each`
 * asks again whether it is still due.
 */
export function inSlices<T>(items: readonly T[], each: (item: T) => void, done: () => void): void {
  let next = 0
  const slice = (): void => {
    const until = performance.now() + SWEEP_SLICE_MS
    while (next < items.length && performance.now() < until) each(items[next++] as T)
    if (next < items.length) setImmediate(slice)
    else done()
  }
  slice()
}
