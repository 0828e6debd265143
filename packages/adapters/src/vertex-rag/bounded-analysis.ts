import { extname } from 'node:path'
import type { Worker } from 'node:worker_threads'
import { outsideWrites } from '../rpc/replay.js'
import { SHARED_ABOVE_BYTES, sharedCopy } from '../rpc/shared-bytes.js'
import type { AnalysisInput, WireOfAnalysis } from './analysis-types.js'
import { overBound } from './file-bounds.js'
import { startThread } from './threads.js'

/**
 * Files read on threads of their own (bounded-worker.ts), each stopped when it runs over its time
 * bound: a thread can be terminated mid-parse, a promise cannot. So a PDF that inflates to
 * gigabytes, or a text that takes seconds to chunk, costs its own thread, never the event loop.
 * At most {@link THREADS} run at once (a file waits for one; its time runs from when it starts);
 * one finished thread is kept, unref'd, for the next file.
 */

/** Text files up to this size are analyzed on the calling thread: a few milliseconds, less than a thread's round trip. */
const IN_PLACE_BYTES = 256 * 1024

/** Threads reading files at once. */
const THREADS = 2

/** The V8 heap of a file's thread: PDF.js's objects for a large file fit; a runaway parse stops here instead of taking the machine. */
const THREAD_HEAP_MB = 1024

/** Whether a file is analyzed on a bounded thread: every PDF (any can inflate), and text files above {@link IN_PLACE_BYTES}. */
export function needsThread(input: AnalysisInput): boolean {
  return extname(input.readAs).toLowerCase() === '.pdf' || input.bytes.length > IN_PLACE_BYTES
}

/** What the thread posts: it has loaded, a file's analysis, or what it threw. */
type Reply = { readonly ready: true } | { readonly analysis: WireOfAnalysis } | { readonly error: string }

type Outcome = WireOfAnalysis | undefined

class BoundedThreads {
  #idle: Worker | undefined
  #running = 0
  readonly #waiting: (() => void)[] = []
  /** No thread could start: files are read on the calling thread (as without this module). */
  #unavailable = false

  /** The file's analysis from a thread (or the bound it went over); undefined when no thread can run. */
  async analyze(input: AnalysisInput): Promise<Outcome> {
    if (this.#unavailable) return undefined
    if (this.#running < THREADS) this.#running++
    // A finished file hands its place to the first waiting one (the count stays).
    else await new Promise<void>((resolve) => this.#waiting.push(resolve))
    try {
      return await this.#run(input)
    } finally {
      const next = this.#waiting.shift()
      if (next) next()
      else this.#running--
    }
  }

  async #run(input: AnalysisInput): Promise<Outcome> {
    // In shared memory, which the thread reads without a copy (copied there a slice at a time if
    // need be); before the thread is taken: a kept thread that stops meanwhile is not handed the file.
    const bytes = input.bytes.buffer instanceof SharedArrayBuffer || input.bytes.length <= SHARED_ABOVE_BYTES ? input.bytes : await sharedCopy([input.bytes])
    const thread = this.#idle ?? (await this.#start())
    this.#idle = undefined
    if (!thread) return undefined
    thread.ref()
    return new Promise<Outcome>((resolve) => {
      const settle = (outcome: Outcome, keep: boolean): void => {
        clearTimeout(timer)
        thread.off('message', onMessage).off('error', onError).off('exit', onExit)
        if (keep && !this.#idle) {
          thread.unref()
          this.#idle = thread
        } else void thread.terminate()
        resolve(outcome)
      }
      const over = (found: string): WireOfAnalysis => ({ ok: false, message: overBound(input.label, 'time', found, input.bounds), bound: true })
      const onMessage = (reply: Reply): void => {
        if ('analysis' in reply) settle(reply.analysis, true)
        else if ('error' in reply) settle({ ok: false, message: `${input.label}: could not be read (${reply.error}).` }, true)
      }
      const onError = (error: Error & { code?: string }): void =>
        settle(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? { ok: false, message: overBound(input.label, 'inflated', `reading it needs more than ${THREAD_HEAP_MB} MB of memory`, input.bounds), bound: true }
            : { ok: false, message: `${input.label}: could not be read (${error.name}).` },
          false,
        )
      const onExit = (): void => settle({ ok: false, message: `${input.label}: could not be read (its thread stopped).` }, false)
      const timer = input.bounds.timeoutMs > 0 ? setTimeout(() => settle(over(`reading it took more than ${input.bounds.timeoutMs / 1000} s`), false), input.bounds.timeoutMs) : undefined
      thread.on('message', onMessage).on('error', onError).on('exit', onExit)
      thread.postMessage({ readAs: input.readAs, label: input.label, bytes, chunking: input.chunking, bounds: input.bounds } satisfies AnalysisInput)
    })
  }

  /** A new thread, once it has loaded; undefined (and no more tries) if it cannot start. */
  #start(): Promise<Worker | undefined> {
    // Started outside the write that asks: its callbacks must not keep that write's trace alive.
    return outsideWrites(
      () =>
        new Promise((resolve) => {
          let thread: Worker
          const fail = (): void => {
            // Said once, by the first of the threads that could not start.
            if (!this.#unavailable) process.emitWarning('a thread to read files on could not start; Quarry reads files on the calling thread from now on, without a time bound.', { code: 'QUARRY_FILE_THREAD' })
            this.#unavailable = true
            resolve(undefined)
          }
          try {
            thread = startThread('bounded-worker', 'quarry-file', { maxOldGenerationSizeMb: THREAD_HEAP_MB })
          } catch {
            return fail()
          }
          const onExit = (): void => fail()
          thread.once('error', onExit).once('exit', onExit)
          thread.once('message', (reply: Reply) => {
            thread.off('error', onExit).off('exit', onExit)
            if (!('ready' in reply)) return fail()
            // A kept thread that dies while idle is not handed the next file.
            thread.on('exit', () => {
              if (this.#idle === thread) this.#idle = undefined
            })
            resolve(thread)
          })
        }),
    )
  }
}

/** The process's file threads. */
const threads = new BoundedThreads()

export function analyzeBounded(input: AnalysisInput): Promise<Outcome> {
  return threads.analyze(input)
}
