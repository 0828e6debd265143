import { AsyncLocalStorage } from 'node:async_hooks'
import type { Clock } from './clock.js'
import type { RandomId } from './names.js'

/**
 * Deterministic replay of writes (the server's write-ahead log). A write's outcome depends on its
 * request and on a few inputs from outside: the clock, random ids, the embedder, files read by
 * imports, the fact extractor. Each of those goes through `replayable`: while a write is being
 * recorded, every value it reads is kept (in order, as JSON and byte strings); while it is replayed, the same
 * values are handed back instead of being read again. So replaying the log over the last
 * checkpoint rebuilds exactly the state that was acknowledged — the same ids, times and vectors,
 * even if the files on disk changed since. Outside a write (reads, in-process callers without a
 * log) `replayable` simply computes.
 */

/** The values one write read from outside, in the order it read them (JSON, with Uint8Array byte strings). */
export type Trace = unknown[]

/** Replaying: the next value to hand back, and the first divergence (kept even if the write caught it and answered an error). */
type Replay = { readonly kind: 'replay'; readonly trace: Trace; next: number; diverged?: string }
type Mode = { readonly kind: 'record'; readonly trace: Trace } | Replay

const current = new AsyncLocalStorage<Mode>()

/**
 * Thrown when a replayed write asks for a value the recording does not have (the log does not fit
 * this code or these options). The replay it happens in remembers it: a method that catches it and
 * answers an error still fails its replay with this reason.
 */
export class ReplayDivergence extends Error {
  readonly detail: string
  constructor(detail: string) {
    super(`replaying the write-ahead log diverged: ${detail}`)
    this.name = 'ReplayDivergence'
    this.detail = detail
    const mode = current.getStore()
    if (mode?.kind === 'replay') mode.diverged ??= detail
  }
}

/** Runs `write` recording what it reads from outside; resolves to its result and the trace. */
export async function recording<T>(write: () => Promise<T>): Promise<{ result: T; trace: Trace }> {
  const trace: Trace = []
  const result = await current.run({ kind: 'record', trace }, write)
  return { result, trace }
}

/** Whether the caller runs inside a write that is being recorded into the log or replayed from it. */
export function insideLoggedWrite(): boolean {
  return current.getStore() !== undefined
}

/**
 * Runs `fn` outside any write: what it starts (a worker thread, a timer) and the callbacks it
 * registers do not hold on to the write that happened to start them, nor record into its trace.
 */
export function outsideWrites<T>(fn: () => T): T {
  return current.exit(fn)
}

/** Runs `write` with the values a recording kept; every one must be consumed. */
export async function replaying<T>(trace: Trace, write: () => Promise<T>): Promise<T> {
  const mode: Replay = { kind: 'replay', trace, next: 0 }
  const result = await current.run(mode, write)
  if (mode.diverged !== undefined) throw new ReplayDivergence(mode.diverged)
  if (mode.next !== trace.length) throw new ReplayDivergence(`the write read ${mode.next} outside values; the log recorded ${trace.length}`)
  return result
}

/**
 * A value from outside: computed (and kept, while recording) or handed back (while replaying).
 * `encode` / `decode` turn it into JSON and back (identity by default).
 */
export async function replayable<T>(kind: string, compute: () => Promise<T>, encode: (value: T) => unknown = (v) => v, decode: (json: unknown) => T = (j) => j as T): Promise<T> {
  const mode = current.getStore()
  if (mode === undefined) return compute()
  if (mode.kind === 'replay') return decode(take(mode, kind))
  const slot = reserve(mode.trace)
  let value: T
  try {
    value = await compute()
  } catch (error) {
    slot(undefined)
    throw error
  }
  slot([kind, encode(value)])
  return value
}

/**
 * A place in the trace at the position of the call, filled when the value arrives (or dropped,
 * given undefined). A replay hands values back in the order the write asked for them, so that is
 * the order they are recorded in: values that arrive in another order (an embedding awaited while
 * the same write reads the clock) still replay.
 */
function reserve(trace: Trace): (entry: [string, unknown] | undefined) => void {
  const placeholder = {}
  trace.push(placeholder)
  return (entry) => {
    const at = trace.lastIndexOf(placeholder)
    if (entry === undefined) trace.splice(at, 1)
    else trace[at] = entry
  }
}

/**
 * A value recorded only when there is one (an exception: a file that went over a bound). Recording
 * or outside writes, `compute(false)` runs and a defined result is kept. Replaying, the value is
 * handed back if it is next in the trace; otherwise `compute(true)` runs (it must find none, or the
 * replay diverges later). Logs written before a kind existed replay as "none".
 */
export async function replayableRare<T>(kind: string, compute: (replaying: boolean) => Promise<T | undefined>): Promise<T | undefined> {
  const mode = current.getStore()
  if (mode?.kind === 'replay') {
    const entry = mode.trace[mode.next]
    return Array.isArray(entry) && entry[0] === kind ? (take(mode, kind) as T) : compute(true)
  }
  if (mode === undefined) return compute(false)
  const slot = reserve(mode.trace)
  let value: T | undefined
  try {
    value = await compute(false)
  } catch (error) {
    slot(undefined)
    throw error
  }
  slot(value === undefined ? undefined : [kind, value])
  return value
}

/** The synchronous form, for the clock and random ids. */
function replayableSync<T>(kind: string, compute: () => T): T {
  const mode = current.getStore()
  if (mode === undefined) return compute()
  if (mode.kind === 'replay') return take(mode, kind) as T
  const value = compute()
  mode.trace.push([kind, value])
  return value
}

function take(mode: Replay, kind: string): unknown {
  const entry = mode.trace[mode.next]
  if (!Array.isArray(entry) || entry[0] !== kind) throw new ReplayDivergence(`value ${mode.next} is ${Array.isArray(entry) ? String(entry[0]) : 'missing'}, the write asked for ${kind}`)
  mode.next++
  return entry[1]
}

/** A clock whose readings are recorded and replayed. */
export function replayableClock(clock: Clock): Clock {
  return () => new Date(replayableSync('clock', () => clock().getTime()))
}

/** A source of random ids whose ids are recorded and replayed. */
export function replayableRandomId(randomId: RandomId): RandomId {
  return (length) => replayableSync('id', () => randomId(length))
}

/**
 * Float32 vectors as their bytes (exact, copied: the trace keeps them as they were), for embeddings
 * in a trace; the write-ahead log keeps byte strings outside its JSON (transport/log-record.ts).
 */
export function encodeVectors(vectors: readonly Float32Array[]): unknown {
  return vectors.map((v) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength).slice())
}

/** The vectors {@link encodeVectors} kept, or base64 strings of their bytes (logs written before). */
export function decodeVectors(json: unknown): Float32Array[] {
  if (!Array.isArray(json)) throw new ReplayDivergence('recorded embeddings are not a list')
  return json.map((s) => {
    const bytes = s instanceof Uint8Array ? s : Buffer.from(String(s), 'base64')
    const copy = new Uint8Array(bytes.byteLength)
    copy.set(bytes)
    return new Float32Array(copy.buffer)
  })
}
