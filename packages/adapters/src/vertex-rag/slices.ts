import { embedAll, type Embedder } from '@quarry/core'

/**
 * Long work on the calling thread, cut into slices with a turn of the event loop between them, so
 * that no request waits behind a whole file (issue 41: a 25 MB upload held the server 12.5 s).
 */

/** Lets the event loop run what waits (I/O, timers, other requests) before going on. */
export function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/** Milliseconds of work between two turns: well under the 50 ms a request may wait behind a file. */
const SLICE_MS = 10

/** `fn` over `items` in order, yielding whenever a slice has run {@link SLICE_MS}. */
export async function mapInSlices<T, U>(items: readonly T[], fn: (item: T) => U): Promise<U[]> {
  const out: U[] = []
  let since = performance.now()
  for (const item of items) {
    if (performance.now() - since > SLICE_MS) {
      await yieldTurn()
      since = performance.now()
    }
    out.push(fn(item))
  }
  return out
}

/** Texts per embedder call, at most: embedAll's batch. */
const EMBED_TEXTS = 64

/**
 * Characters per embedder call, at most (one text at least): core's embedders compute on this
 * thread at about 10 MB/s (GloVe SIF), so a call stays near {@link SLICE_MS}; 64 chunks of 1,024
 * words would hold the thread for 40 ms.
 */
const EMBED_CHARS = 128 * 1024

/**
 * `embedAll` in calls of at most {@link EMBED_TEXTS} texts and {@link EMBED_CHARS} characters, with
 * a turn of the event loop before each. The vectors are the same: a text's vector does not depend
 * on its batch.
 */
export async function embedInSlices(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = []
  let at = 0
  while (at < texts.length) {
    let end = at + 1
    let chars = (texts[at] as string).length
    while (end < texts.length && end - at < EMBED_TEXTS && chars + (texts[end] as string).length <= EMBED_CHARS) chars += (texts[end++] as string).length
    if (at > 0) await yieldTurn()
    out.push(...(await embedAll(embedder, texts.slice(at, end))))
    at = end
  }
  return out
}
