import { Worker } from 'node:worker_threads'
import { outsideWrites } from '../rpc/replay.js'
import { analyzeSource, fromWire, type SourceAnalysis, type SourceJob, type WireAnalysis } from './analysis.js'

/**
 * The import worker: one thread per process that reads, hashes and chunks an import's files
 * (analysis.ts `analyzeSource`) while the calling thread embeds and indexes the files before them.
 * Started by the first import that asks for it and kept for the next ones (its start loads the
 * analyzer's model: ~0.1 s), it holds the process open only while a file is with it (ref'd then,
 * unref'd when idle). A thread that cannot start, or that dies, is not started again: its files
 * and every later one are analyzed on the calling thread, by the same functions, to the same
 * result. `VertexRagOptions.importWorker: false` keeps an engine's imports on the calling thread.
 */

interface Waiting {
  readonly job: SourceJob
  readonly resolve: (result: SourceAnalysis) => void
  readonly reject: (error: unknown) => void
}

type Reply = { readonly id: number; readonly wire: WireAnalysis } | { readonly id: number; readonly error: string }

/**
 * How the thread runs this module's sibling: the compiled analysis-worker.js, or in the workspace
 * its TypeScript source through bin/sources.mjs (tsx, a dev dependency; not in the published package).
 */
function startThread(): Worker {
  const here = import.meta.url
  if (!here.endsWith('.ts')) return new Worker(new URL('./analysis-worker.js', here), { name: 'quarry-import' })
  const sources = new URL('../../bin/sources.mjs', here).href
  const source = new URL('./analysis-worker.ts', here).href
  return new Worker(`import(${JSON.stringify(sources)}).then((m) => m.loadSource(${JSON.stringify(source)}))`, { eval: true, name: 'quarry-import' })
}

class ImportWorker {
  #thread: Worker | undefined
  #failed = false
  #next = 0
  readonly #waiting = new Map<number, Waiting>()
  #answered = 0

  /** Files the thread has answered (tests check that imports really use it). */
  get answered(): number {
    return this.#answered
  }

  /** Whether the thread runs (started, not failed). */
  get running(): boolean {
    return this.#thread !== undefined
  }

  /** One file read, hashed and analyzed on the thread (on this one if the thread cannot run). */
  analyze(job: SourceJob): Promise<SourceAnalysis> {
    const thread = this.#started()
    if (!thread) return analyzeSource(job)
    const id = this.#next++
    return new Promise((resolve, reject) => {
      try {
        thread.postMessage({ id, job })
      } catch {
        // Not sent (it cannot be copied): done here, as without the thread.
        analyzeSource(job).then(resolve, reject)
        return
      }
      if (this.#waiting.size === 0) thread.ref()
      this.#waiting.set(id, { job, resolve, reject })
    })
  }

  #started(): Worker | undefined {
    if (this.#thread || this.#failed) return this.#thread
    // Started outside the write that asks first: the thread's callbacks must not keep that write's
    // trace (the bytes and vectors it recorded) alive, nor run in it.
    return outsideWrites(() => {
      let thread: Worker
      try {
        thread = startThread()
      } catch (error) {
        this.#failed = true
        warn(`the import worker could not start (${error instanceof Error ? error.message : String(error)})`)
        return undefined
      }
      thread.on('message', (reply: Reply) => this.#settle(reply))
      thread.on('messageerror', () => this.#fail(thread, 'an answer of the import worker could not be read'))
      thread.on('error', (error) => this.#fail(thread, `the import worker failed (${error.message})`))
      thread.on('exit', (code) => this.#fail(thread, `the import worker stopped (exit code ${code})`))
      thread.unref()
      this.#thread = thread
      return thread
    })
  }

  #settle(reply: Reply): void {
    const waiting = this.#waiting.get(reply.id)
    if (!waiting) return
    this.#waiting.delete(reply.id)
    if (this.#waiting.size === 0) this.#thread?.unref()
    if ('wire' in reply) {
      this.#answered++
      waiting.resolve(fromWire(reply.wire))
    } else {
      // The thread threw on this file: done again here, where an error surfaces as it would without the thread.
      analyzeSource(waiting.job).then(waiting.resolve, waiting.reject)
    }
  }

  /** The thread failed to start or died: what it held is done here, and so is every later file. */
  #fail(thread: Worker, why: string): void {
    if (this.#failed) return
    this.#failed = true
    this.#thread = undefined
    const waiting = [...this.#waiting.values()]
    this.#waiting.clear()
    void thread.terminate()
    for (const w of waiting) analyzeSource(w.job).then(w.resolve, w.reject)
    warn(why)
  }
}

function warn(why: string): void {
  process.emitWarning(`${why}; Quarry reads and chunks imported files on the calling thread from now on.`, { code: 'QUARRY_IMPORT_WORKER' })
}

/**
 * Files an import must have for it to start the thread: a smaller one runs on the calling thread
 * unless the thread already runs (its start, ~0.1 s, would cost more than it saves).
 */
export const IMPORT_WORKER_MIN_FILES = 16

/** The process's import worker. */
export const importWorker = new ImportWorker()
