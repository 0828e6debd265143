/**
 * The engines that in-process clients made without an engine (and without engine options) share,
 * one per engine class in the process, as Google's clients share one project: a corpus created
 * through `new VertexRagDataServiceClient()` is found by `new VertexRagServiceClient()` (v1 and
 * v1beta1 alike). Each is made on first use with the default options (the default embedder is
 * `defaultEmbedder()`). Keyed by class, so each API's client asks for its own engine without
 * importing the others (default-engines.ts lists the three).
 */
const shared = new Map<new () => object, object>()

/** The process's shared engine of class `Engine`, made now if not yet. */
export function sharedEngine<T extends object>(Engine: new () => T): T {
  let engine = shared.get(Engine)
  if (engine === undefined) {
    engine = new Engine()
    shared.set(Engine, engine)
  }
  return engine as T
}

/** Forgets every shared engine: the next `sharedEngine` call makes a new one. */
export function forgetSharedEngines(): void {
  shared.clear()
}

/**
 * A client's engine: a private one of class `Engine` made with the engine's options among the
 * client's `options` (`keys`: the engine's; the rest are Google's client options, which change
 * nothing here and never reach the engine, which refuses keys it does not know), or the shared
 * one when they set none.
 */
export function engineFor<T extends object, O extends object>(Engine: new (options?: O) => T, options: object, keys: Readonly<Record<keyof O, true>>): T {
  const given = options as Readonly<Record<string, unknown>>
  const own = Object.fromEntries(Object.keys(keys).flatMap((key) => (given[key] === undefined ? [] : [[key, given[key]]])))
  return Object.keys(own).length === 0 ? sharedEngine(Engine) : new Engine(own as O)
}
