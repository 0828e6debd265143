import type { PreparedText, RecordInput } from '@quarry/core'
import { fileMetadata, listFile, type RagCorpusState, type RagFileState } from './state.js'

interface Waiting {
  readonly file: RagFileState
  readonly vectors: readonly Float32Array[]
  /** The chunks' texts, analyzed for the corpus's index ahead (core's `prepareText`). */
  readonly texts: readonly PreparedText[]
  /** The corpus's update time once the file is in. */
  readonly atMs: number
  readonly settle?: { resolve: () => void; reject: (error: unknown) => void }
}

/**
 * Embedded files of one corpus waiting to go into its index in one `addMany` and into its file
 * list with them: an import's files, or the uploads of one embedding batch. A file's records take
 * their metadata when they go in, so metadata given to a waiting file (an import's) is in them.
 * Files go in in the order they came; if the batch fails (it is all or none), each goes in alone
 * and only the one that fails stays out.
 */
export class PendingFiles {
  readonly #corpus: RagCorpusState
  #waiting: Waiting[] = []
  #scheduled = false

  constructor(corpus: RagCorpusState) {
    this.#corpus = corpus
  }

  /** Whether a waiting file has this name (new ids must not collide with them either). */
  has(name: string): boolean {
    return this.#waiting.some((w) => w.file.name === name)
  }

  push(file: RagFileState, vectors: readonly Float32Array[], texts: readonly PreparedText[], atMs: number): void {
    this.#waiting.push({ file, vectors, texts, atMs })
  }

  /** Chunks waiting. */
  get chunks(): number {
    let n = 0
    for (const w of this.#waiting) n += w.file.chunks.length
    return n
  }

  /** Adds what waits now; throws the first failure of a pushed file (after adding the files that do not fail). */
  flush(): void {
    const failures = this.#drain().filter((f) => f.settle === undefined)
    if (failures.length > 0) throw failures[0]?.error
  }

  /**
   * Waits with the other files of this turn of the event loop (concurrent uploads) and goes in with
   * them in one add; resolves once this file is in (rejects if it alone cannot go in).
   */
  async added(file: RagFileState, vectors: readonly Float32Array[], texts: readonly PreparedText[], atMs: number): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.#waiting.push({ file, vectors, texts, atMs, settle: { resolve, reject } }))
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(() => {
        this.#scheduled = false
        this.#drain()
      })
    }
    return done
  }

  /** Adds every waiting file, settles the waiting uploads; returns the failures. */
  #drain(): { settle: Waiting['settle']; error: unknown }[] {
    const batch = this.#waiting.splice(0)
    const failed = new Map(this.#add(batch).map((f) => [f.waiting, f.error]))
    for (const w of batch) {
      if (!failed.has(w)) w.settle?.resolve()
      else w.settle?.reject(failed.get(w))
    }
    return [...failed].map(([w, error]) => ({ settle: w.settle, error }))
  }

  #add(batch: readonly Waiting[]): { waiting: Waiting; error: unknown }[] {
    if (batch.length === 0) return []
    try {
      this.#corpus.index.addMany(batch.flatMap(recordsOf))
      for (const w of batch) this.#listed(w)
      return []
    } catch {
      const failures: { waiting: Waiting; error: unknown }[] = []
      for (const w of batch) {
        try {
          this.#corpus.index.addMany(recordsOf(w))
          this.#listed(w)
        } catch (error) {
          failures.push({ waiting: w, error })
        }
      }
      return failures
    }
  }

  #listed(w: Waiting): void {
    listFile(this.#corpus, w.file)
    this.#corpus.updateMs = w.atMs
  }
}

function recordsOf(w: Waiting): RecordInput[] {
  const metadata = fileMetadata(w.file)
  return w.file.chunks.map((c, i) => ({ id: c.id, vector: w.vectors[i] as Float32Array, text: w.texts[i] as PreparedText, metadata }))
}

const shared = new WeakMap<RagCorpusState, PendingFiles>()

/** The corpus's own waiting room, where concurrent uploads meet. */
export function pendingOf(corpus: RagCorpusState): PendingFiles {
  let pending = shared.get(corpus)
  if (!pending) shared.set(corpus, (pending = new PendingFiles(corpus)))
  return pending
}
