/**
 * Long writes (snapshots, checkpoints) written once, run two ways. A writer is a generator that
 * yields at safe points: `undefined` where the event loop may run, or a {@link BlockingCall} — a
 * call that blocks (an fsync, hnswlib's graph write, a nested save) with its asynchronous twin.
 * `runSteps` drains it at once (`index.save`); `runStepsInSlices` runs it a slice at a time,
 * letting the event loop answer requests between slices and awaiting the twins off the main
 * thread (`index.saveInSlices`, the server's checkpoints).
 */

/** A call that would block the event loop, and the same call done asynchronously. */
export interface BlockingCall {
  readonly sync: () => void
  readonly async: (options: SliceOptions) => Promise<void>
}

/** A safe point of a long write: `undefined` (the loop may run here) or a blocking call. */
export type Step = BlockingCall | undefined

/** A long write: yields steps, returns its result. */
export type Steps<T = void> = Generator<Step, T, undefined>

/** How a write run in slices shares the event loop. */
export interface SliceOptions {
  /**
   * The longest stretch of work between two turns of the event loop, in milliseconds (a stretch
   * ends at the first safe point past it).
   * @defaultValue 8
   */
  readonly sliceMs?: number
}

/** Runs a long write to its end without yielding to the event loop; blocking calls run as they are. */
export function runSteps<T>(steps: Steps<T>): T {
  let next = steps.next()
  while (!next.done) {
    const call = next.value
    if (call === undefined) {
      next = steps.next()
      continue
    }
    let failure: { error: unknown } | undefined
    try {
      call.sync()
    } catch (error) {
      failure = { error }
    }
    // A failed call is thrown into the writer, so its own clean-up (finally) runs.
    next = failure ? steps.throw(failure.error) : steps.next()
  }
  return next.value
}

/** Resolves on the next turn of the event loop, after what waits (I/O, timers) has run. */
export const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Runs a long write in slices of about `sliceMs`, the event loop running between them; blocking
 * calls are awaited in their asynchronous form. Resolves to the write's result.
 */
export async function runStepsInSlices<T>(steps: Steps<T>, options: SliceOptions = {}): Promise<T> {
  const sliceMs = options.sliceMs ?? 8
  // Only the slicing passes on to nested writes (a caller's other options are its own).
  const nested: SliceOptions = { sliceMs }
  let started = performance.now()
  let next = steps.next()
  while (!next.done) {
    const call = next.value
    let failure: { error: unknown } | undefined
    if (call !== undefined) {
      try {
        await call.async(nested)
      } catch (error) {
        failure = { error }
      }
      started = performance.now()
    } else if (performance.now() - started >= sliceMs) {
      await turn()
      started = performance.now()
    }
    next = failure ? steps.throw(failure.error) : steps.next()
  }
  return next.value
}
