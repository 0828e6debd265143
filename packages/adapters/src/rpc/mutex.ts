/**
 * Serializes mutations: an operation that awaits (an embedder call) keeps the state to itself
 * until it has written, so two writes never interleave. Reads do not take it.
 */
export class Mutex {
  #tail: Promise<void> = Promise.resolve()
  /** Tasks run or waiting. */
  #held = 0

  run<T>(task: () => Promise<T>): Promise<T> {
    this.#held++
    const result = this.#tail.then(task)
    this.#tail = result.then(
      () => void this.#held--,
      () => void this.#held--,
    )
    return result
  }

  /** Whether a task runs or waits: one given now would wait. */
  get busy(): boolean {
    return this.#held > 0
  }
}
