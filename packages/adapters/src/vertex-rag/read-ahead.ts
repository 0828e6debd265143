import type { Embedder } from '@quarry/core'
import { embedInSlices } from './slices.js'
import { sameTexts, type Analysis, type SourceAnalysis, type SourceJob } from './analysis.js'
import type { ReadResult, SourceFile } from './sources.js'

/** Texts an import embeds in one call (about what core's ingest gets in one batch). */
export const IMPORT_BATCH_TEXTS = 512

/**
 * Files read and analyzed at once ahead of the one the import waits for. On the import worker
 * (import-worker.ts) they are done while this thread embeds and indexes the files before them: a
 * window of two batches' worth of files of a few kB keeps the worker ahead. On this thread it
 * still spares the idle round trips of one read after another (each read is several system calls:
 * open, the opened path, stat, reads, close).
 */
export const READ_WINDOW = 48

/**
 * Bytes of files (as the walk saw them) held read ahead at most, the one the import waits for
 * included (a larger one alone): large files are read ahead fewer at a time (each is held with
 * its text until its turn).
 */
export const READ_AHEAD_BYTES = 32 * 1024 * 1024

/**
 * Files analyzed and waiting for this thread, below which the next file sent to the import worker
 * is embedded here instead (see {@link ReadAhead}); at most half the window of files read ahead is
 * to be embedded here (at the start nothing is ready yet).
 */
export const READY_FOR_HERE = 12
const HERE_AHEAD_MAX = READ_WINDOW / 2

/**
 * An import's files read, analyzed and embedded ahead. On the import worker with an embedder that
 * has a recipe (core's own), files come back embedded, except those this thread embeds itself,
 * each alone, to keep both threads busy: a file sent to the worker while fewer than
 * {@link READY_FOR_HERE} of its files wait here analyzed (the worker is behind) is embedded here.
 * Indexing a KNN corpus leaves this thread room for about half the embedding, an ANN one for
 * little. The count of files waiting says where the threads stand now; a share steered file by
 * file would swing, as its effect shows a window of files later. Otherwise embedding goes in batches
 * across files: when file i needs its vectors, the files after it are read and chunked until the batch holds
 * {@link IMPORT_BATCH_TEXTS} texts, and one `embedInSlices` (slices.ts) embeds them all; the reads and analyses
 * run {@link READ_WINDOW} files ahead, through `analyze` (on the import worker, or on this
 * thread). The import still takes each file's read and vectors in file order, through
 * `replayable`, so the write-ahead log records them per file as before and a replay (which hands
 * the recorded values back) never reads ahead. A batch the embedder refuses is embedded file by
 * file: only the file it refuses fails.
 */
export class ReadAhead {
  readonly #embedder: Embedder
  readonly #files: readonly SourceFile[]
  readonly #jobOf: (file: SourceFile) => SourceJob
  readonly #analyze: (job: SourceJob, embed: boolean) => Promise<SourceAnalysis>
  /** Files read and analyzed ahead (at most {@link READ_WINDOW} past the one asked for), by file. */
  readonly #ahead = new Map<number, Promise<SourceAnalysis>>()
  /** What was read ahead of files the import has taken the read of, until it takes their analysis. */
  readonly #taken = new Map<number, SourceAnalysis>()
  readonly #vectors = new Map<number, { readonly texts: readonly string[]; readonly vectors: Float32Array[] }>()
  /** Files of a refused batch: embedded alone. */
  readonly #alone = new Set<number>()
  /** Bytes (as the walk saw them) of the files in {@link #ahead}. */
  #aheadBytes = 0
  /** Files read ahead whose analysis has come, not taken yet. */
  readonly #ready = new Set<number>()
  readonly #balance: boolean
  /** Files `analyze` was asked not to embed: this thread embeds them. */
  readonly #here = new Set<number>()
  /** Files of {@link #here} not taken yet. */
  #hereAhead = 0

  constructor(options: {
    readonly embedder: Embedder
    readonly files: readonly SourceFile[]
    /** What reading and analyzing file i asks (its chunking, its size limit, how it is named). */
    readonly jobOf: (file: SourceFile) => SourceJob
    /**
     * Reads, hashes and analyzes a file: analysis.ts `analyzeSource`, here or on the import
     * worker; `embed`: and embeds its chunks there, if it can (the vectors come with the analysis).
     */
    readonly analyze: (job: SourceJob, embed: boolean) => Promise<SourceAnalysis>
    /** Whether `analyze` runs on another thread that embeds when asked: then this thread takes a share of the embedding. */
    readonly balance?: boolean
  }) {
    this.#embedder = options.embedder
    this.#files = options.files
    this.#jobOf = options.jobOf
    this.#analyze = options.analyze
    this.#balance = options.balance ?? false
  }

  /** File i's bytes: read ahead, or read now. */
  async read(i: number): Promise<ReadResult> {
    const done = await this.#start(i)
    this.#ready.delete(i)
    if (this.#here.has(i)) this.#hereAhead--
    if (this.#ahead.delete(i)) this.#aheadBytes -= sizeOf(this.#files[i] as SourceFile)
    // Kept for analysis(i), which the import asks next unless the read failed.
    if (done.read.ok) this.#taken.set(i, done)
    return done.read
  }

  /**
   * File j's read and analysis, started with those of the files after it if they are not yet: up
   * to {@link READ_WINDOW} files and {@link READ_AHEAD_BYTES} bytes (file j is started whatever its size).
   */
  #start(j: number): Promise<SourceAnalysis> {
    for (let k = j; k < Math.min(j + READ_WINDOW, this.#files.length); k++) {
      if (this.#ahead.has(k) || this.#taken.has(k)) continue
      const file = this.#files[k] as SourceFile
      if (k > j && this.#aheadBytes + sizeOf(file) > READ_AHEAD_BYTES) break
      const doing = this.#analyze(this.#jobOf(file), !this.#embedsHere(k))
      // Awaited in its turn (a failure surfaces there, as a read done then would); not unhandled meanwhile.
      doing.then(() => this.#ready.add(k), () => undefined)
      this.#ahead.set(k, doing)
      this.#aheadBytes += sizeOf(file)
    }
    return this.#ahead.get(j) ?? Promise.resolve(this.#taken.get(j) as SourceAnalysis)
  }

  /** Whether this thread is to embed file k, sent to be read ahead now (see {@link READY_FOR_HERE}). */
  #embedsHere(k: number): boolean {
    if (!this.#balance || this.#ready.size >= READY_FOR_HERE || this.#hereAhead >= HERE_AHEAD_MAX) return false
    this.#here.add(k)
    this.#hereAhead++
    return true
  }

  /** File i's analysis and sha256 if they were done ahead on these bytes (the read the import took). */
  analysis(i: number, bytes: Uint8Array): { readonly analysis?: Analysis; readonly sha256?: string } {
    const done = this.#taken.get(i)
    this.#taken.delete(i)
    if (!done?.read.ok || done.read.bytes !== bytes) return {}
    // Embedded on the import worker with the analysis: embed(i) hands these out.
    if (done.vectors && done.analysis?.ok) this.#vectors.set(i, { texts: done.analysis.pieces.map((p) => p.text), vectors: [...done.vectors] })
    return { ...(done.analysis ? { analysis: done.analysis } : {}), ...(done.sha256 !== undefined ? { sha256: done.sha256 } : {}) }
  }

  /** File i's vectors for its chunk texts: from the batch that took it, or from a batch starting at it. */
  async embed(i: number, texts: readonly string[]): Promise<Float32Array[]> {
    const ahead = this.#vectors.get(i)
    this.#vectors.delete(i)
    if (ahead && sameTexts(ahead.texts, texts)) return ahead.vectors
    // Files after this one are with the worker: a batch would wait for them.
    if (this.#alone.delete(i) || this.#here.delete(i)) return embedInSlices(this.#embedder, texts)
    const members = [{ i, texts }, ...(await this.#following(i, texts.length))]
    let vectors: Float32Array[]
    try {
      vectors = await embedInSlices(this.#embedder, members.flatMap((m) => m.texts))
    } catch (error) {
      if (members.length === 1) throw error
      for (const m of members.slice(1)) this.#alone.add(m.i)
      return embedInSlices(this.#embedder, texts)
    }
    let at = 0
    for (const m of members) {
      this.#vectors.set(m.i, { texts: m.texts, vectors: vectors.slice(at, at + m.texts.length) })
      at += m.texts.length
    }
    this.#vectors.delete(i)
    return vectors.slice(0, texts.length)
  }

  /** The files after i that will need vectors, read and analyzed, until the batch is full. */
  async #following(i: number, taken: number): Promise<{ i: number; texts: readonly string[] }[]> {
    const out: { i: number; texts: readonly string[] }[] = []
    for (let j = i + 1; j < this.#files.length && taken < IMPORT_BATCH_TEXTS; j++) {
      // No analysis: the file fails alone, or its bytes are those its URI imported before (`skipSha256`:
      // the import skips it; if that file has changed since, it is analyzed and embedded in its turn).
      // Embedded on the import worker: not the batch's to embed.
      const { analysis, vectors } = await this.#start(j)
      if (!analysis?.ok || vectors) continue
      const texts = analysis.pieces.map((p) => p.text)
      out.push({ i: j, texts })
      taken += texts.length
    }
    return out
  }
}

/** A file's size as the walk saw it (0 when unknown: a write-ahead log written before sizes were recorded). */
function sizeOf(file: SourceFile): number {
  return file.size ?? 0
}
