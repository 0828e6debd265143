import type { Embedder } from '@quarry/core'
import { sameTexts } from './analysis.js'
import { embedInSlices } from './slices.js'
import { importWorker, type WorkerEmbedding } from './import-worker.js'
import { SHAREABLE_TEXTS } from './shared-vectors.js'
import { perCorpus, type RagCorpusState } from './state.js'

interface Job {
  readonly texts: readonly string[]
  readonly resolve: (vectors: Float32Array[]) => void
  readonly reject: (error: unknown) => void
}

/**
 * The texts of uploads to one corpus. With core's embedder (one with a recipe) and `useWorker`,
 * each upload's texts go to the import worker, the first ones while the rest of its text is still
 * being chunked ({@link beginEarly}), the others once it is, while this thread analyzes them for
 * the index (ingest.ts), then embeds those the worker has not begun. When the worker was not ready
 * as the upload began, and for an upload read ahead whose texts changed, a share of them this
 * thread embeds beside it. Until the worker runs and is ready (an
 * import or the 16th upload of the process starts it: import-worker.ts), uploads embed here.
 * Otherwise concurrent uploads are embedded together: what arrives while a batch is
 * being embedded (or in the same turn of the event loop) goes into the next one, in one `embedInSlices`
 * call. Each upload gets its own vectors, in order; the vectors of a text do not depend on its
 * batch. If a batch fails, each upload of it is embedded alone, so only the one whose texts the
 * embedder refuses fails. A lone upload waits one turn of the event loop, no more.
 */
export class EmbedQueue {
  readonly #embedder: Embedder
  readonly #useWorker: boolean
  #jobs: Job[] = []
  #running = false

  constructor(embedder: Embedder, useWorker: boolean) {
    this.#embedder = embedder
    this.#useWorker = useWorker
  }

  embed(texts: readonly string[]): Promise<Float32Array[]> {
    const onWorker = this.#useWorker ? this.#besideWorker(texts) : undefined
    if (onWorker) return onWorker
    const done = new Promise<Float32Array[]>((resolve, reject) => this.#jobs.push({ texts, resolve, reject }))
    if (!this.#running) {
      this.#running = true
      setImmediate(() => void this.#run())
    }
    return done
  }

  /**
   * One upload's embedding, begun while its text is still being chunked: the chunks known so far
   * go to the import worker as they come (`early`, from analysis.ts `onChunks`), so that it embeds
   * them while this thread reads the rest of the text. The returned `embed` sends the chunks that
   * came last there too, and takes all their vectors; its `help` embeds here, once this thread has
   * nothing else to do, those the worker has not begun.
   */
  beginEarly(): EarlyEmbedding {
    return new EarlyEmbedding(this, this.#useWorker ? this.#embedder : undefined)
  }

  /**
   * The texts' vectors, the first ones embedded on the import worker and the last
   * {@link HERE_SHARE} here, at once: this thread analyzes the texts for the index meanwhile, which
   * takes less than embedding them, and would otherwise wait for the worker. Undefined when the
   * worker does not take them.
   */
  #besideWorker(texts: readonly string[]): Promise<Float32Array[]> | undefined {
    const split = texts.length - Math.floor(texts.length * HERE_SHARE)
    const onWorker = importWorker.embed(split < texts.length ? texts.slice(0, split) : texts, this.#embedder)
    if (!onWorker || split === texts.length) return onWorker
    const here = embedInSlices(this.#embedder, texts.slice(split))
    return Promise.all([onWorker, here]).then(([first, last]) => [...first, ...last])
  }

  async #run(): Promise<void> {
    while (this.#jobs.length > 0) await this.#batch(this.#jobs.splice(0))
    this.#running = false
  }

  async #batch(jobs: readonly Job[]): Promise<void> {
    let vectors: Float32Array[]
    try {
      vectors = await embedInSlices(this.#embedder, jobs.flatMap((j) => j.texts))
    } catch (error) {
      if (jobs.length === 1) return jobs[0]?.reject(error)
      for (const job of jobs) await embedInSlices(this.#embedder, job.texts).then(job.resolve, job.reject)
      return
    }
    let at = 0
    for (const job of jobs) {
      job.resolve(vectors.slice(at, at + job.texts.length))
      at += job.texts.length
    }
  }
}

/** See {@link EmbedQueue.beginEarly}. */
export class EarlyEmbedding {
  readonly #queue: EmbedQueue
  readonly #embedder: Embedder | undefined
  /** The texts the worker took, in order, and their embedding there. */
  readonly #sent: { readonly texts: readonly string[]; readonly embedding: WorkerEmbedding }[] = []
  /** The texts the worker did not take (then neither these nor later ones go to it: those it took are the upload's first). */
  #refused = false

  constructor(queue: EmbedQueue, embedder: Embedder | undefined) {
    this.#queue = queue
    this.#embedder = embedder
  }

  /** The next texts of the upload, in order: embedded on the import worker from now, if it runs and takes them. */
  early(texts: readonly string[]): void {
    // Only a running worker: starting it is `embed`'s to decide (the worker counts the uploads that ask).
    if (!this.#send(texts)) this.#refused = true
    else textsEmbeddedEarly += texts.length
  }

  /**
   * All the upload's texts' vectors: the worker's for the texts it took (when they are these
   * texts' first), and the rest's, sent to it too (all of them for an upload too short to send any
   * early; a single text stays here); or, if the worker does not take them, as `EmbedQueue.embed` makes them.
   */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const sent = this.#sent.flatMap((s) => s.texts)
    if (!sameTexts(sent, texts.slice(0, sent.length))) return this.#queue.embed(texts)
    const rest = texts.slice(sent.length)
    // An upload of one text, none sent early, is embedded here once the worker runs: this thread
    // would take the text back, or embed the one the worker is on rather than wait (help), so the
    // message only costs. Before, it goes as any upload does (which counts towards starting the worker).
    if (sent.length === 0 && rest.length === 1 && this.#embedder && importWorker.ready) return embedInSlices(this.#embedder, rest)
    const last = rest.length === 0 || this.#send(rest) ? [] : this.#queue.embed(rest)
    const [first, after] = await Promise.all([Promise.all(this.#sent.map((s) => s.embedding.vectors)), last])
    return [...first.flat(), ...after]
  }

  /**
   * Embeds here what the worker has not begun of the upload's texts, the last ones first, rather
   * than wait for it: for a caller with nothing else left to do (ingest.ts, before it awaits the vectors).
   */
  async help(): Promise<void> {
    for (let i = this.#sent.length - 1; i >= 0; i--) await this.#sent[i]?.embedding.help()
  }

  /**
   * Sends texts to the worker (a running one, which takes them), in messages of at most
   * {@link SHAREABLE_TEXTS}; false when they stay here (those of a later message, if an earlier one went).
   */
  #send(texts: readonly string[]): boolean {
    for (let at = 0; at < texts.length; at += SHAREABLE_TEXTS) {
      const part = texts.length <= SHAREABLE_TEXTS ? texts : texts.slice(at, at + SHAREABLE_TEXTS)
      const embedding = this.#refused || !this.#embedder || !importWorker.ready ? undefined : importWorker.embedHelped(part, this.#embedder)
      if (!embedding) return false
      // Awaited by `embed`; an upload that fails before it leaves them unread, not unhandled.
      embedding.vectors.catch(() => undefined)
      this.#sent.push({ texts: part, embedding })
    }
    return true
  }
}

/** The share of an upload's texts embedded on this thread while the import worker embeds the others. */
const HERE_SHARE = 0.25

let textsEmbeddedEarly = 0

/** Texts of uploads sent to the import worker while the rest of their text was still being chunked (tests check that it runs). */
export function embeddedEarly(): number {
  return textsEmbeddedEarly
}

const queues = perCorpus<EmbedQueue>()

/** The corpus's upload queue (one embedder per engine, so per corpus); `useWorker`: the engine's `importWorker` option. */
export function embedQueueOf(corpus: RagCorpusState, embedder: Embedder, useWorker: boolean): EmbedQueue {
  return queues(corpus, () => new EmbedQueue(embedder, useWorker))
}
