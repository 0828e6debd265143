import type { Embedder } from '@quarry/core'
import { embedInSlices } from './slices.js'
import { importWorker } from './import-worker.js'
import { perCorpus, type RagCorpusState } from './state.js'

interface Job {
  readonly texts: readonly string[]
  readonly resolve: (vectors: Float32Array[]) => void
  readonly reject: (error: unknown) => void
}

/**
 * The texts of uploads to one corpus. With core's embedder (one with a recipe) and `useWorker`,
 * each upload's texts go to the import worker at once (but a share this thread embeds beside it),
 * while this thread analyzes them for the index (ingest.ts); until the worker runs and is ready (an
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
    textsEmbeddedBeside += texts.length - split
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

/** The share of an upload's texts embedded on this thread while the import worker embeds the others. */
const HERE_SHARE = 0.25

let textsEmbeddedBeside = 0

/** Texts of uploads embedded on this thread beside the import worker (tests check that the split runs). */
export function embeddedBesideWorker(): number {
  return textsEmbeddedBeside
}

const queues = perCorpus<EmbedQueue>()

/** The corpus's upload queue (one embedder per engine, so per corpus); `useWorker`: the engine's `importWorker` option. */
export function embedQueueOf(corpus: RagCorpusState, embedder: Embedder, useWorker: boolean): EmbedQueue {
  return queues(corpus, () => new EmbedQueue(embedder, useWorker))
}
