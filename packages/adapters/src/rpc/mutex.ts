/**
 * Serializes mutations: an operation that awaits (an embedder call) keeps the state to itself
 * until it has written, so two writes never interleave. Reads do not take it.
 */
export class Mutex {
  #tail: Promise<void> = Promise.resolve()

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task)
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    )
    return result
  }
}
