/**
 * Bytes in shared memory, which another thread reads without a copy (the file threads of
 * vertex-rag/bounded-analysis.ts, the import worker's answers): an upload's body (http/replies.ts),
 * a file an import read (vertex-rag/sources.ts), a file's bytes handed to its thread.
 */

/** Byte strings over this many bytes go to shared memory; smaller ones are copied cheaply where they are. */
export const SHARED_ABOVE_BYTES = 1024 * 1024

/**
 * `parts` end to end in one buffer of shared memory, copied about {@link SHARED_ABOVE_BYTES} between
 * two turns of the event loop: tens of MB copied at once would hold the loop for tens of ms.
 */
export async function sharedCopy(parts: readonly Uint8Array[]): Promise<Buffer> {
  const whole = Buffer.from(new SharedArrayBuffer(parts.reduce((size, part) => size + part.length, 0)))
  let at = 0
  let budget = SHARED_ABOVE_BYTES
  for (const part of parts) {
    for (let from = 0; from < part.length; ) {
      if (budget === 0) {
        await new Promise((resolve) => setImmediate(resolve))
        budget = SHARED_ABOVE_BYTES
      }
      const n = Math.min(budget, part.length - from)
      whole.set(part.subarray(from, from + n), at)
      from += n
      at += n
      budget -= n
    }
  }
  return whole
}
