import { createHash } from 'node:crypto'
import { Analyzer, chunkText, chunkTokenized, type TextChunk, type TokenizedText } from '@quarry/core'
import { analyzeBounded, needsThread } from './bounded-analysis.js'
import type { Analysis, AnalysisInput, WireOfAnalysis } from './analysis-types.js'
import type { ChunkingPlan } from './chunking.js'
import { extractText } from './extract.js'
import type { FileBounds } from './file-bounds.js'
import { yieldTurn } from './slices.js'
import { readSource, type ReadResult, type SourceFile } from './sources.js'

export type { Analysis, AnalysisInput, WireOfAnalysis } from './analysis-types.js'

/**
 * What a file's ingest needs before embedding, a function of its bytes, name and chunking alone:
 * its sha256, its text, its chunks. Runs on the calling thread (uploads) or on the import worker
 * (analysis-worker.ts, for imports): the same functions either way.
 */

/**
 * Tokens of RAG chunking: the analyzer's word tokens (stop words included). A corpus's index
 * prepares its chunks' texts with it (ingest.ts): an upload chunked on this thread keeps its text's
 * tokens, from which the index counts each chunk's terms; the words of an import chunked on the
 * worker are learned from it, and not read again either, unless the memo has dropped them.
 */
export const chunkingAnalyzer = new Analyzer()

/** Bytes hashed between two turns of the event loop (a millisecond's work or a few on a busy machine). */
const HASH_SLICE = 256 * 1024

/** The hex sha256 of a file's bytes: how an import tells a file it imported before, unchanged. Hashed in slices that yield. */
export async function sha256Of(bytes: Uint8Array): Promise<string> {
  const hash = createHash('sha256')
  for (let at = 0; at < bytes.length; at += HASH_SLICE) {
    if (at > 0) await yieldTurn()
    hash.update(bytes.subarray(at, at + HASH_SLICE))
  }
  return hash.digest('hex')
}

/**
 * Extracts the text and cuts it into chunks: a PDF, or a file over 256 KiB, on a thread of its own
 * stopped at the time bound (bounded-analysis.ts); a small text file here, where that takes
 * a few milliseconds.
 */
export async function analyzeFile(input: AnalysisInput, here: AnalyzeHere = {}): Promise<Analysis> {
  const bounded = needsThread(input) ? await analyzeBounded(input) : undefined
  return bounded === undefined ? analyzeHere(input, here) : analysisFromWire(bounded)
}

/** What an analysis on the calling thread does beside chunking (an upload's: ingest.ts). */
export interface AnalyzeHere {
  /** Keep the text's tokens: the index counts each chunk's terms from them. */
  readonly keepTokens?: boolean
  /**
   * Given the chunks known for sure while the text is still being read (all of them but the last,
   * a part of the text at a time, in order, each once), so that their embedding can start.
   */
  readonly onChunks?: (chunks: readonly TextChunk[]) => void
}

/**
 * Where in a text (fractions of its length) the chunks known so far go to {@link AnalyzeHere.onChunks}.
 * Later rather than evenly spread: the chunks after the last mark are the ones the upload waits
 * for once its text is read, so that part is kept small, and the worker has the time the rest of
 * the reading takes to embed the first, larger ones. Against even quarters, `bench vertex-rag`'s
 * one-at-a-time uploads differ by less than their noise.
 */
const EARLY_MARKS = [0.4, 0.7, 0.9]

/** {@link analyzeFile} on this thread: what the bounded thread runs. */
export async function analyzeHere(input: AnalysisInput, here: AnalyzeHere = {}): Promise<Analysis> {
  const extracted = await extractText(input.readAs, input.bytes, input.label, input.bounds)
  if (!extracted.ok) return extracted
  const { text } = extracted
  const { keepTokens = false, onChunks } = here
  let given = 0
  const progress = onChunks && {
    marks: EARLY_MARKS.map((at) => Math.floor(text.length * at)),
    onPart: (sofar: TokenizedText) => {
      // All but the last chunk of the tokens so far are chunks of the whole text.
      const known = chunkTokenized(sofar, input.chunking).slice(given, -1)
      given += known.length
      if (known.length > 0) onChunks(known)
    },
  }
  const tokens = keepTokens || progress ? chunkingAnalyzer.tokenized(text, progress) : undefined
  const pieces = tokens ? chunkTokenized(tokens, input.chunking) : chunkText(chunkingAnalyzer, text, input.chunking)
  if (pieces.length === 0) return { ok: false, message: `${input.label}: the file has no words to index.` }
  return { ok: true, text, type: extracted.type, pageStarts: extracted.pageStarts, pieces, ...(keepTokens && tokens ? { tokens } : {}) }
}

/** One file of an import to read and analyze. */
export interface SourceJob {
  readonly file: SourceFile
  readonly maxBytes: number
  readonly readAs: string
  readonly label: string
  readonly chunking: ChunkingPlan
  readonly bounds: FileBounds
  /** The sha256 of the file this URI imported before, if any: bytes with this hash are not analyzed (the import skips them). */
  readonly skipSha256: string | undefined
}

/** A file read (or why not), its sha256 and its analysis (absent when unread, or when its hash is `skipSha256`). */
export interface SourceAnalysis {
  readonly read: ReadResult
  readonly sha256?: string
  readonly analysis?: Analysis
  /** The vectors of the analysis's chunks, in order, when the import worker embedded them too. */
  readonly vectors?: readonly Float32Array[]
}

/** Reads, hashes and analyzes one file of an import. */
export async function analyzeSource(job: SourceJob): Promise<SourceAnalysis> {
  const read = await readSource(job.file, job.maxBytes)
  if (!read.ok) return { read }
  const sha256 = await sha256Of(read.bytes)
  if (sha256 === job.skipSha256) return { read, sha256 }
  return { read, sha256, analysis: await analyzeFile({ readAs: job.readAs, label: job.label, bytes: read.bytes, chunking: job.chunking, bounds: job.bounds }) }
}

/**
 * A {@link SourceAnalysis} as it crosses between threads: the bytes' buffer moved or shared (not copied),
 * the chunks as their offsets into the text (the receiving thread slices the texts: one copy of
 * the text crosses, not one per chunk).
 */
export type WireAnalysis =
  | { readonly read: Exclude<ReadResult, { ok: true }> }
  | {
      readonly read: { readonly ok: true; readonly buffer: ArrayBuffer | SharedArrayBuffer; readonly offset: number; readonly length: number }
      readonly sha256: string
      readonly analysis?: WireOfAnalysis
      /** The chunks' vectors end to end (chunks × dimensions), when the worker embedded them. */
      readonly vectors?: Float32Array
    }

/** Fields of one chunk in {@link WireAnalysis} pieces: start, end, firstToken, tokens. */
const PIECE_FIELDS = 4

/** A {@link SourceAnalysis} for posting, and the buffers to transfer with it. */
export function toWire(result: SourceAnalysis): { wire: WireAnalysis; transfer: ArrayBuffer[] } {
  const { read } = result
  if (!read.ok) return { wire: { read }, transfer: [] }
  const bytes = read.bytes
  // readSource's bytes sit alone in their buffer (never Node's shared pool): it can move, or, in
  // shared memory, go without a copy.
  const buffer = bytes.buffer as ArrayBuffer | SharedArrayBuffer
  const moved = buffer instanceof SharedArrayBuffer ? [] : [buffer]
  const analysis = result.analysis
  const wireAnalysis = analysis && analysisToWire(analysis)
  const vectors = result.vectors ? joinVectors(result.vectors) : undefined
  const wire = {
    read: { ok: true as const, buffer, offset: bytes.byteOffset, length: bytes.byteLength },
    sha256: result.sha256 as string,
    ...(wireAnalysis ? { analysis: wireAnalysis } : {}),
    ...(vectors ? { vectors } : {}),
  }
  return { wire, transfer: vectors ? [...moved, vectors.buffer as ArrayBuffer] : moved }
}

/** Whether two lists hold the same texts in the same order (vectors made of one serve the other). */
export function sameTexts(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((t, k) => t === b[k])
}

/** Vectors of one length end to end in one new buffer (it moves between threads whole). */
export function joinVectors(vectors: readonly Float32Array[]): Float32Array {
  const dim = vectors[0]?.length ?? 0
  const out = new Float32Array(vectors.length * dim)
  vectors.forEach((v, i) => out.set(v, i * dim))
  return out
}

/** The `count` vectors of {@link joinVectors}' buffer, as views of it (the index copies each vector in). */
export function splitVectors(flat: Float32Array, count: number): Float32Array[] {
  const dim = count === 0 ? 0 : flat.length / count
  return Array.from({ length: count }, (_, i) => flat.subarray(i * dim, (i + 1) * dim))
}

/** The {@link SourceAnalysis} a {@link WireAnalysis} carries. */
export function fromWire(wire: WireAnalysis): SourceAnalysis {
  if (!('sha256' in wire)) return { read: wire.read }
  const { read, sha256, analysis, vectors: flat } = wire
  // A Buffer, as readSource's own bytes are (a view of the moved or shared buffer: no copy).
  const bytes = Buffer.from(read.buffer, read.offset, read.length)
  if (!analysis?.ok) return { read: { ok: true, bytes }, sha256, ...(analysis ? { analysis } : {}) }
  const ready = analysisFromWire(analysis) as Extract<Analysis, { ok: true }>
  const vectors = flat ? splitVectors(flat, ready.pieces.length) : undefined
  return { read: { ok: true, bytes }, sha256, analysis: ready, ...(vectors ? { vectors } : {}) }
}

export function analysisToWire(analysis: Analysis): WireOfAnalysis {
  if (!analysis.ok) return analysis
  const pieces = new Int32Array(analysis.pieces.length * PIECE_FIELDS)
  analysis.pieces.forEach((p, i) => {
    const at = i * PIECE_FIELDS
    pieces[at] = p.start
    pieces[at + 1] = p.end
    pieces[at + 2] = p.firstToken
    pieces[at + 3] = p.tokens
  })
  return { ok: true, text: analysis.text, type: analysis.type, pageStarts: analysis.pageStarts, pieces }
}

/** The {@link Analysis} a {@link WireOfAnalysis} carries: the chunk texts sliced from its one text. */
export function analysisFromWire(wire: WireOfAnalysis): Analysis {
  if (!wire.ok) return wire
  const { text, pieces: at } = wire
  const pieces: TextChunk[] = []
  for (let i = 0; i < at.length; i += PIECE_FIELDS) {
    const start = at[i] as number
    const end = at[i + 1] as number
    pieces.push({ text: text.slice(start, end), start, end, firstToken: at[i + 2] as number, tokens: at[i + 3] as number })
  }
  return { ok: true, text, type: wire.type, pageStarts: wire.pageStarts, pieces }
}
