import type { Worker } from 'node:worker_threads'
import { embedAll, embedderRecipe, type Embedder, type EmbedderRecipe, type UnitLog } from '@quarry/core'
import { embedInSlices, slicePauser } from './slices.js'
import { outsideWrites } from '../rpc/replay.js'
import { startThread } from './threads.js'
import { HelpedTexts, SHAREABLE_TEXTS, SharedVectors } from './shared-vectors.js'
import { analysisFromWire, analyzeFile, analyzeSource, chunkingAnalyzer, fromWire, sameTexts, splitVectors, type Analysis, type AnalysisInput, type SourceAnalysis, type SourceJob, type WireAnalysis, type WireOfAnalysis } from './analysis.js'

/**
 * The import worker: one thread per process that reads, hashes, chunks and embeds an import's
 * files (analysis.ts `analyzeSource`; embedding when the engine's embedder is one of core's, with
 * a recipe: embed/recipes.ts) while the calling thread indexes the files before them, embeds
 * an upload's chunks while the calling thread analyzes them for the index (ingest.ts), and chunks
 * and embeds an upload that waits for its turn (files.ts `uploadAhead`).
 * Started by the first import that asks for it and kept for the next ones (its start loads the
 * analyzer's model: ~0.1 s), it holds the process open only while a file is with it (ref'd then,
 * unref'd when idle). A thread that cannot start, or that dies, is not started again: its files
 * and every later one are analyzed on the calling thread, by the same functions, to the same
 * result. `VertexRagOptions.importWorker: false` keeps an engine's imports on the calling thread.
 */

/** A message with the thread: what to do with its answer, and how the calling thread does the work instead. */
interface Waiting {
  readonly answer: (reply: WorkerReply) => void
  readonly instead: () => void
}

/** What the thread posts: an answer to a message (by its id), or that it has loaded. */
export type WorkerReply =
  | (Answer & {
      /**
       * The units the thread's chunking read for the first time since its last answer, with their
       * tokens: learned here, so indexing a file the thread chunked does not read its words again.
       */
      readonly units?: UnitLog
    })
  /** The thread has loaded its modules: it answers at once from now on. */
  | { readonly ready: true }

type Answer =
  | { readonly id: number; readonly wire: WireAnalysis }
  | { readonly id: number; readonly analysis: WireOfAnalysis; readonly vectors?: Float32Array }
  | { readonly id: number; readonly vectors: Float32Array }
  | { readonly id: number; readonly error: string }

/** An upload chunked (and embedded) on the thread: its analysis, and the vectors of texts if they are its chunks' (undefined otherwise). */
export interface UploadAnalysis {
  readonly analysis: Analysis
  readonly vectorsOf: (texts: readonly string[]) => Float32Array[] | undefined
}

/** An upload's texts being embedded on the thread and here ({@link ImportWorker.embedHelped}). */
export interface WorkerEmbedding {
  /** The texts' vectors, in order, once {@link help} has run. */
  readonly vectors: Promise<Float32Array[]>
  /** Embeds here the texts the thread has not begun, the last first, and the one it is on; then the vectors resolve. */
  help(): Promise<void>
}

/** The embedder a message names: its number on the thread, and its recipe the first time. */
type EmbedderRef = { readonly id: number; readonly recipe?: EmbedderRecipe }

/**
 * What the calling thread posts: a file to analyze (and embed with the embedder `embed`), an
 * upload's chunk texts to embed, or an embedder to forget (collected here).
 */
export type WorkerMessage =
  | { readonly id: number; readonly job: SourceJob; readonly embed?: EmbedderRef }
  | { readonly id: number; readonly texts: readonly string[]; readonly embed: EmbedderRef; readonly shared?: SharedArrayBuffer }
  | { readonly id: number; readonly upload: AnalysisInput; readonly embed?: EmbedderRef }
  | { readonly forget: number }
  | { readonly forgetMemos: true }

class ImportWorker {
  #thread: Worker | undefined
  #failed = false
  /** The thread said it is ready (its modules loaded). */
  #ready = false
  /** Uploads that asked for the thread before it ran. */
  #uploads = 0
  #next = 0
  readonly #waiting = new Map<number, Waiting>()
  #answered = 0
  #embedded = 0
  #uploadsAnalyzed = 0
  #helpedSent = 0
  #textsHelped = 0
  /** Ids of the embedders whose recipe the thread has. */
  readonly #embedders = new WeakMap<Embedder, number>()
  #nextEmbedder = 0
  /** Embedders the thread holds (sent, not yet collected here). */
  #held = 0
  /** Tells the thread to drop an embedder once it is collected here (its vectors and word table). */
  readonly #collected = new FinalizationRegistry<number>((id) => {
    this.#held--
    this.#thread?.postMessage({ forget: id } satisfies WorkerMessage)
  })

  /** Files the thread has answered (tests check that imports really use it). */
  get answered(): number {
    return this.#answered
  }

  /** Files and texts messages whose chunks the thread embedded (of a helped message, some: {@link embedHelped}); tests check that ingest uses it. */
  get embedded(): number {
    return this.#embedded
  }

  /** Texts messages sent to the thread to be embedded there and here ({@link embedHelped}; tests check that uploads use it). */
  get helpedSent(): number {
    return this.#helpedSent
  }

  /** Texts of helped messages this thread embedded rather than wait for the thread (tests check that it runs). */
  get textsHelped(): number {
    return this.#textsHelped
  }

  /** Uploads the thread has chunked (tests check that uploads waiting for their turn use it). */
  get uploadsAnalyzed(): number {
    return this.#uploadsAnalyzed
  }

  /** Embedders whose recipe the thread holds: each is forgotten there once collected here (tests check it). */
  get embeddersHeld(): number {
    return this.#held
  }

  /** Whether the thread runs and has loaded its modules (uploads embed there only then). */
  get ready(): boolean {
    return this.#ready && this.#thread !== undefined
  }

  /** Whether the thread runs (started, not failed). */
  get running(): boolean {
    return this.#thread !== undefined
  }

  /**
   * One file read, hashed and analyzed on the thread (on this one if the thread cannot run); its
   * chunks embedded there too when `embedder` has a recipe (the vectors come back with the analysis).
   */
  analyze(job: SourceJob, embedder?: Embedder): Promise<SourceAnalysis> {
    return new Promise((resolve, reject) => {
      const instead = (): void => void analyzeSource(job).then(resolve, reject)
      const thread = this.#started()
      if (!thread) return instead()
      const embed = embedder && this.#refOf(embedder)
      this.#ask(thread, (id) => ({ id, job, ...(embed ? { embed } : {}) }), embedder, embed, {
        answer: (reply) => {
          // The thread threw on this file: done again here, where an error surfaces as it would without the thread.
          if (!('wire' in reply)) return instead()
          this.#answered++
          if ('vectors' in reply.wire && reply.wire.vectors) this.#embedded++
          resolve(fromWire(reply.wire))
        },
        instead,
      })
    })
  }

  /**
   * An upload's bytes chunked on the thread, and their chunks embedded there with `embedder` if it
   * has a recipe, once the thread is ready (undefined before: the caller does it). The units its
   * chunking reads come with the answer (#settle). If the thread fails, it is done here.
   */
  analyzeUpload(input: AnalysisInput, embedder: Embedder): Promise<UploadAnalysis> | undefined {
    const thread = this.#thread
    if (!thread || !this.#ready) return undefined
    const ref = this.#refOf(embedder)
    return new Promise((resolve, reject) => {
      const instead = (): void => void analyzeFile(input).then((analysis) => resolve({ analysis, vectorsOf: () => undefined }), reject)
      this.#ask(thread, (id) => ({ id, upload: input, ...(ref ? { embed: ref } : {}) }), embedder, ref, {
        answer: (reply) => {
          if (!('analysis' in reply)) return instead()
          this.#uploadsAnalyzed++
          const analysis = analysisFromWire(reply.analysis)
          const texts = analysis.ok ? analysis.pieces.map((p) => p.text) : []
          const vectors = reply.vectors && splitVectors(reply.vectors, texts.length)
          if (vectors) this.#embedded++
          resolve({ analysis, vectorsOf: (asked) => (vectors && sameTexts(asked, texts) ? vectors : undefined) })
        },
        instead,
      })
    })
  }

  /**
   * An upload's texts embedded on the thread, if it is ready and `embedder` has a recipe (this
   * thread meanwhile analyzes the texts for the index); undefined otherwise: the caller embeds
   * them itself. The 16th upload of a process (IMPORT_WORKER_MIN_FILES) starts the thread if no
   * import has; uploads use it once it is ready. The vectors are the bits `embedder.embed(texts)`
   * gives here; if the thread fails them, they are embedded here.
   */
  embed(texts: readonly string[], embedder: Embedder): Promise<Float32Array[]> | undefined {
    const ref = texts.length > 0 ? this.#refOf(embedder) : undefined
    if (!ref) return undefined
    // A few uploads do not pay for the thread's start; the IMPORT_WORKER_MIN_FILES-th starts it.
    if (!this.#thread && ++this.#uploads < IMPORT_WORKER_MIN_FILES) return undefined
    const thread = this.#started()
    if (!thread || !this.#ready) return undefined
    return new Promise((resolve, reject) => {
      const instead = (): void => void embedInSlices(embedder, texts).then(resolve, reject)
      this.#ask(thread, (id) => ({ id, texts, embed: ref }), embedder, ref, {
        answer: (reply) => {
          if (!('vectors' in reply) || !reply.vectors) return instead()
          this.#embedded++
          resolve(splitVectors(reply.vectors, texts.length))
        },
        instead,
      })
    })
  }

  /**
   * An upload's texts embedded on the thread, which is running and ready, and here: the thread
   * takes them from the first one on and writes their vectors into shared memory
   * (shared-vectors.ts), and the caller, once it has nothing left to do but wait, calls `help`,
   * which embeds here the texts the thread has not begun and the one it is on, and gives every
   * vector: the caller never waits for the thread, which sends no answer. Undefined when the
   * thread does not run, `embedder` has no recipe, or the texts are too many to share.
   */
  embedHelped(texts: readonly string[], embedder: Embedder): WorkerEmbedding | undefined {
    const thread = this.#thread
    const ref = texts.length > 0 && texts.length <= SHAREABLE_TEXTS ? this.#refOf(embedder) : undefined
    if (!thread || !this.#ready || !ref) return undefined
    const shared = SharedVectors.create(texts.length, embedder.dimensions)
    try {
      thread.postMessage({ id: this.#next++, texts, embed: ref, shared: shared.buffer } satisfies WorkerMessage)
    } catch {
      return undefined
    }
    if (ref.recipe) this.#sent(embedder, ref.id)
    this.#helpedSent++
    const helped = new HelpedTexts(texts, shared)
    let help: () => Promise<void> = async () => undefined
    const vectors = new Promise<Float32Array[]>((resolve, reject) => {
      help = async () => {
        const all = await helped.help((text) => this.#embedHere(embedder, text), slicePauser())
        if (all && shared.front > 0) this.#embedded++
        // A text that failed here: all are embedded again, where the embedder's error surfaces.
        if (all) resolve(all)
        else await embedInSlices(embedder, texts).then(resolve, reject)
      }
    })
    return { vectors, help: () => help() }
  }

  /** One text's vector, embedded here by a caller that would otherwise wait for the thread (checked as `embedAll` checks: its length and values). */
  async #embedHere(embedder: Embedder, text: string): Promise<Float32Array> {
    const [vector] = await embedAll(embedder, [text])
    this.#textsHelped++
    return vector as Float32Array
  }

  /**
   * Tells the thread to forget the words its chunking has read (`Analyzer.forgetMemos`), as the
   * calling thread's `chunkingAnalyzer.forgetMemos()` does here: the next files read as new text
   * there too (`bench vertex-rag` reads the same files every round). Nothing when it does not run.
   */
  forgetMemos(): void {
    this.#thread?.postMessage({ forgetMemos: true } satisfies WorkerMessage)
  }

  /**
   * Posts the message `message` numbers (and notes that the thread has `embedder`'s recipe once
   * `ref` carries it), then waits for its answer. One that cannot be posted (it cannot be copied)
   * is done here, as without the thread.
   */
  #ask(thread: Worker, message: (id: number) => WorkerMessage, embedder: Embedder | undefined, ref: EmbedderRef | undefined, waiting: Waiting): void {
    const id = this.#next++
    try {
      thread.postMessage(message(id))
    } catch {
      return waiting.instead()
    }
    if (embedder && ref?.recipe) this.#sent(embedder, ref.id)
    this.#wait(thread, id, waiting)
  }

  /** Holds the process open until message `id` is answered. */
  #wait(thread: Worker, id: number, waiting: Waiting): void {
    if (this.#waiting.size === 0) thread.ref()
    this.#waiting.set(id, waiting)
  }

  /** How a message names `embedder` on the thread (with its recipe if the thread has not got it), or undefined when it has no recipe. */
  #refOf(embedder: Embedder): EmbedderRef | undefined {
    const known = this.#embedders.get(embedder)
    if (known !== undefined) return { id: known }
    const recipe = embedderRecipe(embedder)
    return recipe ? { id: this.#nextEmbedder, recipe } : undefined
  }

  /** The thread has `embedder`'s recipe now, numbered `id`, until it is collected here. */
  #sent(embedder: Embedder, id: number): void {
    this.#embedders.set(embedder, id)
    this.#nextEmbedder = id + 1
    this.#collected.register(embedder, id)
    this.#held++
  }

  #started(): Worker | undefined {
    if (this.#thread || this.#failed) return this.#thread
    // Started outside the write that asks first: the thread's callbacks must not keep that write's
    // trace (the bytes and vectors it recorded) alive, nor run in it.
    return outsideWrites(() => {
      let thread: Worker
      try {
        thread = startThread('analysis-worker', 'quarry-import')
      } catch (error) {
        this.#failed = true
        warn(`the import worker could not start (${error instanceof Error ? error.message : String(error)})`)
        return undefined
      }
      thread.on('message', (reply: WorkerReply) => this.#settle(reply))
      thread.on('messageerror', () => this.#fail(thread, 'an answer of the import worker could not be read'))
      thread.on('error', (error) => this.#fail(thread, `the import worker failed (${error.message})`))
      thread.on('exit', (code) => this.#fail(thread, `the import worker stopped (exit code ${code})`))
      thread.unref()
      this.#thread = thread
      return thread
    })
  }

  #settle(reply: WorkerReply): void {
    if ('ready' in reply) {
      this.#ready = true
      return
    }
    // Before the answer is taken: the index reads the file's units from the chunker's memo (ingest.ts).
    if (reply.units) chunkingAnalyzer.learnUnits(reply.units)
    const waiting = this.#waiting.get(reply.id)
    if (!waiting) return
    this.#waiting.delete(reply.id)
    if (this.#waiting.size === 0) this.#thread?.unref()
    waiting.answer(reply)
  }

  /** The thread failed to start or died: what it held is done here, and so is every later file. */
  #fail(thread: Worker, why: string): void {
    if (this.#failed) return
    this.#failed = true
    this.#thread = undefined
    const waiting = [...this.#waiting.values()]
    this.#waiting.clear()
    void thread.terminate()
    for (const w of waiting) w.instead()
    warn(why)
  }
}

function warn(why: string): void {
  process.emitWarning(`${why}; Quarry reads, chunks and embeds imported and uploaded files on the calling thread from now on.`, { code: 'QUARRY_IMPORT_WORKER' })
}

/**
 * Files an import must have for it to start the thread, and uploads a process makes before they
 * start it: a smaller import, and the first uploads, run on the calling thread unless the thread
 * already runs (its start, ~0.1 s plus the embedder's rebuild, would cost more than it saves; a
 * short script that uploads a few files starts no thread).
 */
export const IMPORT_WORKER_MIN_FILES = 16

/** The process's import worker. */
export const importWorker = new ImportWorker()
