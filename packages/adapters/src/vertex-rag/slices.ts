import { embedAll, embedderRecipe, type Embedder } from '@quarry/core'

/**
 * Long work on the calling thread, cut into slices with a turn of the event loop between them, so
 * that no request waits behind a whole file (issue 41: a 25 MB upload held the server 12.5 s).
 */

/** Work waiting for its turn: one slice runs per turn of the event loop, whoever it belongs to. */
const waiting: (() => void)[] = []
let scheduled = false

/**
 * Lets the event loop run what waits (I/O, timers, other requests) before going on. Slices of
 * concurrent files take turns, one per turn of the loop: Node runs every immediate queued before
 * its check phase in one go, so three files yielding each with setImmediate would still hold the
 * loop for three slices.
 */
export function yieldTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve)
    if (!scheduled) nextTurn()
  })
}

function nextTurn(): void {
  scheduled = true
  // Queued from inside the check phase, an immediate runs on the next turn of the loop.
  setImmediate(() => {
    waiting.shift()?.()
    if (waiting.length > 0) nextTurn()
    else scheduled = false
  })
}

/**
 * Milliseconds of work between two turns: well under the 50 ms a request may wait behind a file,
 * also when a busy machine stretches each slice several times.
 */
const SLICE_MS = 5

/**
 * A pause for a loop of small steps that cannot be sized ahead (one text at a time): each call
 * yields a turn once {@link SLICE_MS} have passed since the last turn (a promise to await), and
 * otherwise returns nothing, so a caller that checks takes not even a microtask.
 */
export function slicePauser(): () => Promise<void> | undefined {
  let since = performance.now()
  return () => {
    if (performance.now() - since <= SLICE_MS) return undefined
    return yieldTurn().then(() => {
      since = performance.now()
    })
  }
}

/**
 * `fn` over `items` in order, in slices of {@link SLICE_MS}, each in a turn of its own (the first
 * in the caller's: a small list takes no turn, so small concurrent uploads finish in the order they
 * came, as before slicing).
 */
export async function mapInSlices<T, U>(items: readonly T[], fn: (item: T) => U): Promise<U[]> {
  const out: U[] = []
  const pause = slicePauser()
  for (const item of items) {
    const turn = pause()
    if (turn) await turn
    out.push(fn(item))
  }
  return out
}

/**
 * How much the next slice takes: what fits in {@link SLICE_MS} at the speed of the last one (`done`
 * units in `ms`), growing at most twofold a slice, between 1 and `max`.
 */
export function nextBudget(done: number, ms: number, budget: number, max: number): number {
  const fit = Math.round((done * SLICE_MS) / Math.max(0.1, ms))
  return Math.max(1, Math.min(fit, 2 * budget, max))
}

/** Texts per embedder call, at most: embedAll's batch. */
const EMBED_TEXTS = 64

/** Characters of the first embedder call of a list: about a chunk (core's embedders compute 1 to 15 MB/s here). */
const EMBED_FIRST_CHARS = 4 * 1024

/** Characters of one embedder call, at most: a call's speed varies (a busy machine, a collection), its size need not follow. */
const EMBED_MAX_CHARS = 64 * 1024

/**
 * `embedAll` in calls of at most {@link EMBED_TEXTS} texts, each in a turn of the event loop of its
 * own (the first in the caller's). Core's embedders (those with a recipe) compute on this thread, so each call is sized from
 * the speed of the one before to take about {@link SLICE_MS} (one text at least); any other
 * embedder may be waiting on a model elsewhere, and gets embedAll's batches. The vectors are the
 * same: a text's vector does not depend on its batch.
 */
export async function embedInSlices(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
  if (!embedderRecipe(embedder)) return embedAll(embedder, texts)
  const out: Float32Array[] = []
  let budget = EMBED_FIRST_CHARS
  let at = 0
  while (at < texts.length) {
    let end = at + 1
    let chars = (texts[at] as string).length
    while (end < texts.length && end - at < EMBED_TEXTS && chars + (texts[end] as string).length <= budget) chars += (texts[end++] as string).length
    if (at > 0) await yieldTurn()
    const started = performance.now()
    out.push(...(await embedAll(embedder, texts.slice(at, end))))
    budget = nextBudget(chars, performance.now() - started, budget, EMBED_MAX_CHARS)
    at = end
  }
  return out
}
