import type { BoundMethod } from '../transport/bound-methods.js'

/**
 * The console's generation: a number that grows by one with every write the server answers as
 * done (REST or gRPC; with a data folder, once it is durable), so a page knows when what it shows
 * may be stale. Writes made in process to engines shared with the server (`createServer({ engines })`)
 * do not pass through the server and are not counted.
 */
export class Generation {
  #value = 0
  readonly #listeners = new Set<() => void>()

  get value(): number {
    return this.#value
  }

  /** Counts one committed write and tells the listeners. */
  bump(): void {
    this.#value++
    for (const listener of this.#listeners) listener()
  }

  /** Calls `listener` after each write until the returned function is called. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }
}

/**
 * The methods with each successful write counted: every transport's writes pass through the bound
 * methods (transport/bound-methods.ts, wrapped by transport/durable.ts with a data folder), and
 * each knows from its method table whether it writes (`mutates`). Reads are left as they are.
 */
export function countWrites(methods: readonly BoundMethod[], generation: Generation): BoundMethod[] {
  return methods.map((method): BoundMethod => {
    if (!method.mutates) return method
    return {
      ...method,
      call: async (request, content, options) => {
        const outcome = await method.call(request, content, options)
        if (outcome.ok) generation.bump()
        return outcome
      },
    }
  })
}
