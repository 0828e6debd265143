import { Mutex } from './mutex.js'
import { insideLoggedWrite } from './replay.js'

/**
 * An engine's write lock (one for its every surface and service), which also tells listeners of
 * each write that ran outside a logged one: an in-process caller's write, not a transport's that a
 * server's write-ahead log records (transport/durable.ts). A server with a data folder listens, and
 * saves such writes with its next checkpoint, taken before it logs another write: the log replays
 * over a checkpoint that holds them. Saves hold the lock with `run`, which tells no one.
 */
export class EngineWrites extends Mutex {
  readonly #listeners = new Set<() => void>()

  /** Runs a write in its turn (as `run`); once it has settled, tells the listeners if no log records it. */
  write<T>(task: () => Promise<T>): Promise<T> {
    // Read at the call: a logged write's context is its caller's (rpc/replay.ts `recording`).
    const logged = insideLoggedWrite()
    const result = this.run(task)
    if (logged || this.#listeners.size === 0) return result
    return result.finally(() => {
      for (const listener of this.#listeners) listener()
    })
  }

  /** Calls `listener` after each write outside a logged one; returns what stops it. */
  onUnloggedWrite(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => void this.#listeners.delete(listener)
  }
}
