import { embedAll, type Embedder } from '@quarry/core'
import { analyzeFile, sha256Of, unchangedFile, type Analysis, type FileInput } from './ingest.js'
import { readSource, type ReadResult, type SourceFile } from './sources.js'
import type { RagCorpusState } from './state.js'

/** Texts an import embeds in one call (about what core's ingest gets in one batch). */
export const IMPORT_BATCH_TEXTS = 512

/**
 * Files read at once ahead of the one the import waits for: a read is several system calls
 * (open, the opened path, stat, reads, close), each a round trip to libuv's thread pool, so reading
 * one file after another leaves the main thread idle between them.
 */
export const READ_WINDOW = 16

/**
 * An import's files read, analyzed and embedded ahead, in batches across files: when file i needs
 * its vectors, the files after it are read and chunked until the batch holds
 * {@link IMPORT_BATCH_TEXTS} texts, and one `embedAll` embeds them all; the reads run
 * {@link READ_WINDOW} files at a time. The import still takes
 * each file's read and vectors in file order, through `replayable`, so the write-ahead log records
 * them per file as before and a replay (which hands the recorded values back) never reads ahead.
 * A batch the embedder refuses is embedded file by file: only the file it refuses fails.
 */
export class ReadAhead {
  readonly #corpus: RagCorpusState
  readonly #embedder: Embedder
  readonly #files: readonly SourceFile[]
  readonly #maxFileBytes: number
  readonly #inputOf: (file: SourceFile, bytes: Uint8Array) => FileInput
  /** Reads started ahead (at most {@link READ_WINDOW} files past the one asked for), by file. */
  readonly #reads = new Map<number, Promise<ReadResult>>()
  readonly #analyses = new Map<number, { readonly bytes: Uint8Array; readonly analysis: Analysis }>()
  readonly #vectors = new Map<number, { readonly texts: readonly string[]; readonly vectors: Float32Array[] }>()
  /** Files of a refused batch: embedded alone. */
  readonly #alone = new Set<number>()

  constructor(options: {
    readonly corpus: RagCorpusState
    readonly embedder: Embedder
    readonly files: readonly SourceFile[]
    readonly maxFileBytes: number
    readonly inputOf: (file: SourceFile, bytes: Uint8Array) => FileInput
  }) {
    this.#corpus = options.corpus
    this.#embedder = options.embedder
    this.#files = options.files
    this.#maxFileBytes = options.maxFileBytes
    this.#inputOf = options.inputOf
  }

  /** File i's bytes: read ahead, or read now. */
  async read(i: number): Promise<ReadResult> {
    const ahead = this.#reads.get(i)
    this.#reads.delete(i)
    return ahead ?? readSource(this.#files[i] as SourceFile, this.#maxFileBytes)
  }

  /** File j's read, started with those of the files after it (up to {@link READ_WINDOW}) if they are not yet. */
  #readAhead(j: number): Promise<ReadResult> {
    for (let k = j; k < Math.min(j + READ_WINDOW, this.#files.length); k++) {
      if (this.#reads.has(k)) continue
      const reading = readSource(this.#files[k] as SourceFile, this.#maxFileBytes)
      // Awaited in its turn (a failure surfaces there, as a read done then would); not unhandled meanwhile.
      reading.catch(() => undefined)
      this.#reads.set(k, reading)
    }
    return this.#reads.get(j) as Promise<ReadResult>
  }

  /** File i's analysis if it was done ahead on these bytes. */
  analysis(i: number, bytes: Uint8Array): Analysis | undefined {
    const ahead = this.#analyses.get(i)
    this.#analyses.delete(i)
    return ahead?.bytes === bytes ? ahead.analysis : undefined
  }

  /** File i's vectors for its chunk texts: from the batch that took it, or from a batch starting at it. */
  async embed(i: number, texts: readonly string[]): Promise<Float32Array[]> {
    const ahead = this.#vectors.get(i)
    this.#vectors.delete(i)
    if (ahead && sameTexts(ahead.texts, texts)) return ahead.vectors
    if (this.#alone.delete(i)) return embedAll(this.#embedder, texts)
    const members = [{ i, texts }, ...(await this.#following(i, texts.length))]
    let vectors: Float32Array[]
    try {
      vectors = await embedAll(this.#embedder, members.flatMap((m) => m.texts))
    } catch (error) {
      if (members.length === 1) throw error
      for (const m of members.slice(1)) this.#alone.add(m.i)
      return embedAll(this.#embedder, texts)
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
      const read = await this.#readAhead(j)
      if (!read.ok) continue
      const input = this.#inputOf(this.#files[j] as SourceFile, read.bytes)
      if (unchangedFile(this.#corpus, input, sha256Of(read.bytes))) continue
      const analysis = this.#analyses.get(j)?.analysis ?? (await analyzeFile(input))
      this.#analyses.set(j, { bytes: read.bytes, analysis })
      if (!analysis.ok) continue
      const texts = analysis.pieces.map((p) => p.text)
      out.push({ i: j, texts })
      taken += texts.length
    }
    return out
  }
}

function sameTexts(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((t, k) => t === b[k])
}
