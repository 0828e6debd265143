import type { PreparedText, RecordInput } from '@quarry/core'
import { fileMetadata, listFile, perCorpus, type RagCorpusState, type RagFileState } from './state.js'
import { nextBudget, yieldTurn } from './slices.js'

interface Waiting {
  readonly file: RagFileState
  readonly vectors: readonly Float32Array[]
  /** The chunks' texts, analyzed for the corpus's index ahead (core's `prepareText`). */
  readonly texts: readonly PreparedText[]
  /** The corpus's update time once the file is in. */
  readonly atMs: number
  readonly settle?: { resolve: () => void; reject: (error: unknown) => void }
}

/** A file that could not go in, and why (the first error its records met). */
interface Failure {
  readonly waiting: Waiting
  readonly error: unknown
}

/**
 * Records an add puts in one slice at first (about a slice's time, slices.ts, of core's writes on
 * a small machine); later slices are sized from the speed of the one before. A batch this small goes in at
 * once, in its caller's turn, as before slicing.
 */
const FIRST_SLICE_RECORDS = 256

/** Records of one slice, at most, whatever the speed. */
const MAX_SLICE_RECORDS = 16_384

/**
 * Embedded files of one corpus waiting to go into its index and into its file list with them: an
 * import's files, or the uploads of one embedding batch. A file's records take their metadata when
 * they go in, so metadata given to a waiting file (an import's) is in them. Files go in in the
 * order they came, each all or none: a file whose records fail stays out, the others go in.
 *
 * The records go in in slices (slices.ts), with a turn of the event loop between
 * them (a 25 MB file's thousands of chunks would hold the server for the whole add). Until a file
 * is in and listed, its records are hidden from retrieval ({@link filesGoingIn}).
 */
export class PendingFiles {
  readonly #corpus: RagCorpusState
  #waiting: Waiting[] = []
  /** The batch going in now: its files are neither waiting nor listed yet. */
  #going: readonly Waiting[] = []
  #scheduled = false
  /** The last add asked for: the next one starts after it, so files go in in the order they came. */
  #tail: Promise<unknown> = Promise.resolve()

  constructor(corpus: RagCorpusState) {
    this.#corpus = corpus
  }

  /** Whether a waiting file, or one going in, has this name (new ids must not collide with them either). */
  has(name: string): boolean {
    return this.#waiting.some((w) => w.file.name === name) || this.#going.some((w) => w.file.name === name)
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

  /** Adds what waits (after any add under way); rejects with the first failure of a pushed file, once the files that do not fail are in. */
  async flush(): Promise<void> {
    const failures = (await this.#drain()).filter((f) => f.waiting.settle === undefined)
    if (failures.length > 0) throw failures[0]?.error
  }

  /**
   * Waits with the other files of this turn of the event loop (concurrent uploads) and goes in with
   * them; resolves once this file is in (rejects if it alone cannot go in).
   */
  async added(file: RagFileState, vectors: readonly Float32Array[], texts: readonly PreparedText[], atMs: number): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.#waiting.push({ file, vectors, texts, atMs, settle: { resolve, reject } }))
    if (!this.#scheduled) {
      this.#scheduled = true
      setImmediate(() => {
        this.#scheduled = false
        void this.#drain()
      })
    }
    return done
  }

  /** Adds every file waiting when its turn comes, settles the waiting uploads; returns the failures. */
  #drain(): Promise<Failure[]> {
    const run = this.#tail.then(async () => {
      const batch = this.#waiting.splice(0)
      this.#going = batch
      try {
        const failures = await this.#add(batch)
        const failed = new Map(failures.map((f) => [f.waiting, f.error]))
        for (const w of batch) {
          if (failed.has(w)) w.settle?.reject(failed.get(w))
          else w.settle?.resolve()
        }
        return failures
      } finally {
        this.#going = []
      }
    })
    this.#tail = run.catch(() => undefined)
    return run
  }

  /** The batch's records in slices, each file listed once all of its records are in; a file whose records fail is taken out whole. */
  async #add(batch: readonly Waiting[]): Promise<Failure[]> {
    const index = this.#corpus.index
    const hidden = goingIn(this.#corpus)
    for (const w of batch) hidden.add(w.file.id)
    // The files not wholly in yet, in order: only the first may be partly in (`done` of its records).
    const queue = batch.map((waiting) => ({ waiting, records: recordsOf(waiting), done: 0 }))
    const failures: Failure[] = []
    let budget = FIRST_SLICE_RECORDS
    try {
      for (let first = true; queue.length > 0; first = false) {
        if (!first) await yieldTurn()
        const started = performance.now()
        // This slice: `budget` records from the head of the queue (the rest of each file, the start of the last).
        const parts: { file: (typeof queue)[number]; to: number; failed?: boolean }[] = []
        for (let f = 0, room = budget; f < queue.length && room > 0; f++) {
          const file = queue[f] as (typeof queue)[number]
          const to = Math.min(file.records.length, file.done + room)
          parts.push({ file, to })
          room -= to - file.done
        }
        try {
          index.addMany(parts.flatMap((p) => p.file.records.slice(p.file.done, p.to)))
        } catch {
          // All or none: some file's records are bad. Each file's part alone; a file that fails goes out whole.
          for (const p of parts) {
            try {
              index.addMany(p.file.records.slice(p.file.done, p.to))
            } catch (error) {
              index.removeMany(p.file.records.slice(0, p.file.done).map((r) => r.id))
              failures.push({ waiting: p.file.waiting, error })
              p.failed = true
            }
          }
        }
        // Files wholly in (or failed) leave the queue's head; the last part may leave its file partly in.
        let added = 0
        for (const p of parts) {
          const { file } = p
          if (!p.failed) {
            added += p.to - file.done
            file.done = p.to
            if (file.done < file.records.length) break
            this.#listed(file.waiting)
          }
          hidden.delete(file.waiting.file.id)
          queue.shift()
        }
        budget = nextBudget(added, performance.now() - started, budget, MAX_SLICE_RECORDS)
      }
    } finally {
      for (const w of batch) hidden.delete(w.file.id)
    }
    return failures
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

const shared = perCorpus<PendingFiles>()

const hiddenFiles = perCorpus<Set<string>>()

function goingIn(corpus: RagCorpusState): Set<string> {
  return hiddenFiles(corpus, () => new Set())
}

/**
 * The ids of a corpus's files whose records are going into its index in slices, not all in yet:
 * retrieval leaves them out (their file is not listed until they are), and a save waits for them.
 */
export function filesGoingIn(corpus: RagCorpusState): ReadonlySet<string> {
  return goingIn(corpus)
}

/** The corpus's own waiting room, where concurrent uploads meet. */
export function pendingOf(corpus: RagCorpusState): PendingFiles {
  return shared(corpus, () => new PendingFiles(corpus))
}
