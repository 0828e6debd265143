import { AsyncLocalStorage } from 'node:async_hooks'
import { Mutex } from './mutex.js'
import { insideLoggedWrite } from './replay.js'

/** What a write outside a logged one runs through: it runs `write` in its turn and resolves as it does. */
export type UnloggedRoute = <T>(write: () => Promise<T>) => Promise<T>

/** Set while a routed write runs: what it starts is part of it. */
const routed = new AsyncLocalStorage<true>()

/**
 * An engine's write lock (one for its every surface and service), through which a server also
 * sees the writes that no write-ahead log records: an in-process caller's (`server.engines`), or
 * any write when the server keeps no log. Such a write runs through the routes a server gave
 * (transport/durable.ts: in turn with the logged writes and checkpoints, then noted for the next
 * checkpoint), then takes this lock; a logged or replayed write takes the lock alone, and so do
 * saves (`run`). A write made from inside a routed one (an embedder or extractor calling an engine)
 * is part of it: it takes no route again, which would wait for the route the outer write holds.
 */
export class EngineWrites extends Mutex {
  readonly #routes: UnloggedRoute[] = []

  /** Runs a write in its turn (as `run`), through the routes first when no log records it. */
  write<T>(task: () => Promise<T>): Promise<T> {
    // Read at the call: a logged write's context is its caller's (rpc/replay.ts `recording`).
    if (this.#routes.length === 0 || insideLoggedWrite() || routed.getStore() !== undefined) return this.run(task)
    // The first route given is the outermost.
    return this.#routes.reduceRight<() => Promise<T>>(
      (inner, route) => () => route(inner),
      () => routed.run(true, () => this.run(task)),
    )()
  }

  /** Sends each write outside a logged one through `route`; returns what stops it. */
  routeUnloggedWrites(route: UnloggedRoute): () => void {
    this.#routes.push(route)
    return () => {
      const at = this.#routes.indexOf(route)
      if (at >= 0) this.#routes.splice(at, 1)
    }
  }
}
