import type { PreparedText, TextChunk } from '@quarry/core'
import { replayableRare } from '../rpc/replay.js'
import { analyzeFile, chunkingAnalyzer, sha256Of, type Analysis } from './analysis.js'
import type { RagContext } from './context.js'
import type { ChunkingPlan } from './chunking.js'
import { UNBOUNDED, type FileBounds } from './file-bounds.js'
import { mapInSlices } from './slices.js'
import { pageAt } from './pdf.js'
import { pendingOf, type PendingFiles } from './pending-files.js'
import { chunkId, fileMetadata, importedFrom, perCorpus, type RagCorpusState, type RagFileSource, type RagFileState } from './state.js'

export interface FileInput {
  readonly displayName: string
  readonly description: string | undefined
  readonly userMetadata: string | undefined
  readonly source: RagFileSource
  /** Name whose extension says how to read the bytes. */
  readonly readAs: string
  /** How messages name the file (its URI or display name; never a local path). */
  readonly label: string
  readonly bytes: Uint8Array
  readonly chunking: ChunkingPlan
  readonly bounds: FileBounds
}

type IngestResult = { readonly kind: 'imported' | 'skipped'; readonly file: RagFileState } | { readonly kind: 'failed'; readonly message: string }

/** How {@link ingestFile} gets what others may have computed for it; by default it does everything itself, at once. */
export interface IngestVia {
  /** The file's analysis, done ahead (an import reading ahead) or under way (an upload's, on the import worker); done here when absent. */
  readonly analysis?: Analysis | Promise<Analysis>
  /** The bytes' sha256, computed ahead with the analysis; computed here when absent. */
  readonly sha256?: string
  /** How the chunks' vectors are computed (a batch shared with other files); the file alone by default. */
  readonly embed?: (texts: readonly string[]) => Promise<Float32Array[]>
  /** Given the chunks known while the file is still being chunked here (analysis.ts `onChunks`), so their embedding can start. */
  readonly early?: (texts: readonly string[]) => void
  /**
   * Embeds here the chunks another thread has not begun (`EarlyEmbedding.help`): called once
   * nothing is left to do but wait for the vectors, so this thread works rather than waits.
   */
  readonly help?: () => Promise<void>
  /** Where the file waits for a batched index add; without, it goes in at once. */
  readonly pending?: PendingFiles
}

/** The file of a corpus imported from this source before, if any (uploads have none). */
function sameSource(corpus: RagCorpusState, source: RagFileSource): RagFileState | undefined {
  return source.kind === 'gcs' ? importedFrom(corpus, source.uri) : undefined
}

/**
 * Reads, chunks, embeds and indexes one file. A file imported before from the same URI with the
 * same bytes (sha256) is skipped; with other bytes its chunks are replaced. A file that cannot be
 * read fails alone. Nothing is written before the embeddings are in; the chunks' texts are analyzed
 * for the index while they are embedded (core's `prepareText`). The file and its chunk
 * records go in with the files of concurrent uploads in one add (pending-files.ts), or, with
 * `via.pending`, wait there for the caller's flush (an import's files).
 */
export async function ingestFile(ctx: RagContext, corpus: RagCorpusState, input: FileInput, via: IngestVia = {}): Promise<IngestResult> {
  const turn = commitOrderOf(corpus).take()
  try {
    return await ingestInTurn(ctx, corpus, input, via, turn)
  } finally {
    turn.done()
  }
}

/** {@link ingestFile} with its turn to commit taken. */
async function ingestInTurn(ctx: RagContext, corpus: RagCorpusState, input: FileInput, via: IngestVia, turn: CommitTurn): Promise<IngestResult> {
  const sha256 = via.sha256 ?? (await sha256Of(input.bytes))
  const previous = sameSource(corpus, input.source)
  if (previous && previous.sha256 === sha256) return { kind: 'skipped', file: previous }
  const analysis = await boundedAnalysis(input, via.analysis, via.early)
  if (!analysis.ok) return { kind: 'failed', message: analysis.message }
  const { pieces } = analysis
  const embedding = ctx.embed(pieces.map((p) => p.text), via.embed)
  // Awaited below, after the texts' slices: a failure meanwhile is not unhandled.
  embedding.catch(() => undefined)
  // While the chunks are embedded (an upload's on the import worker), their texts are analyzed for the index.
  // An analysis made here keeps its tokens: each chunk's terms are counted from them.
  const tokens = analysis.tokens
  const texts = await mapInSlices(chunkTexts(analysis), ({ text, start }) => corpus.index.prepareText(text, tokens ? { within: { tokens, start } } : { tokensFrom: chunkingAnalyzer }))
  await via.help?.()
  const vectors = await embedding
  // Ids and stamps are drawn in the order files came, however long each took to read and embed.
  await turn.ready
  if (!ctx.state.corpora.has(corpus.name)) return { kind: 'failed', message: `${input.label}: the corpus was deleted during the import.` }

  const pending = via.pending ?? pendingOf(corpus)
  let file: RagFileState
  if (previous) {
    // Index operations keep their order: what waits goes in before the old chunks go out.
    await pending.flush()
    corpus.index.removeMany(previous.chunks.map((c) => c.id))
    file = previous
    file.updateMs = ctx.now()
  } else {
    let id: string
    do id = ctx.numericId()
    while (corpus.files.has(`${corpus.name}/ragFiles/${id}`) || pending.has(`${corpus.name}/ragFiles/${id}`))
    file = {
      name: `${corpus.name}/ragFiles/${id}`,
      id,
      displayName: input.displayName,
      description: input.description,
      source: input.source,
      sizeBytes: 0,
      sha256,
      type: analysis.type,
      userMetadata: input.userMetadata,
      chunks: [],
      metadata: new Map(),
      ...ctx.stamp(),
    }
  }
  file.sizeBytes = input.bytes.length
  file.sha256 = sha256
  file.type = analysis.type
  const pages = analysis.pageStarts
  file.chunks = pieces.map((p, i) => {
    const chunk = { id: chunkId(file.id, i), text: (texts[i] as PreparedText).text as string }
    return pages ? { ...chunk, pageSpan: { firstPage: pageAt(pages, p.start), lastPage: pageAt(pages, p.end - 1) } } : chunk
  })
  const atMs = ctx.now()
  if (via.pending) via.pending.push(file, vectors, texts, atMs)
  else {
    const added = pending.added(file, vectors, texts, atMs)
    // The next file may join this add: its turn comes once this one waits in it.
    turn.done()
    await added
  }
  return { kind: 'imported', file }
}

/**
 * The file's analysis (`ahead`: done ahead by an import, or under way for an upload) within its bounds. The write-ahead log
 * records a file that went over one, so a replay fails it the same way whatever the machine or the
 * bounds are then; a replayed file within them is read without them (it fitted when it was
 * acknowledged).
 */
async function boundedAnalysis(input: FileInput, ahead: Analysis | Promise<Analysis> | undefined, early: IngestVia['early']): Promise<Analysis> {
  let analysis: Analysis | undefined
  const over = await replayableRare<string>('bound', async (replaying) => {
    // Made here, the analysis keeps its tokens (the index counts the chunks' terms from them).
    const onChunks = early && !replaying ? (chunks: readonly TextChunk[]) => early(chunks.map((c) => c.text)) : undefined
    analysis = replaying ? await analyzeFile({ ...input, bounds: UNBOUNDED }, { keepTokens: true }) : await (ahead ?? analyzeFile(input, { keepTokens: true, ...(onChunks ? { onChunks } : {}) }))
    return !analysis.ok && analysis.bound ? analysis.message : undefined
  })
  return over !== undefined ? { ok: false, message: over, bound: true } : (analysis as Analysis)
}

/**
 * The texts of a file's chunks, and where each starts in the file's text: the first starts at the
 * text's start and the last ends at its end, so leading markup ("# ") and final punctuation are
 * kept; chunks in between run from token to token.
 */
function chunkTexts(analysis: Extract<Analysis, { ok: true }>): { text: string; start: number }[] {
  const { text, pieces } = analysis
  const lastIndex = pieces.length - 1
  const lead = text.length - text.trimStart().length
  const tail = text.trimEnd().length
  return pieces.map((p, i) => {
    if (i !== 0 && i !== lastIndex) return { text: p.text, start: p.start }
    const start = i === 0 ? lead : p.start
    return { text: text.slice(start, i === lastIndex ? tail : p.end), start }
  })
}

/**
 * Gives a file's chunk records its metadata after it changed: the metadata alone, their vectors,
 * graph links and text untouched (an upsert would re-link every chunk in the graph and analyze its
 * text again: minutes for a file of 250k chunks). Chunks not in the index yet are left to their add.
 */
export function reindexFile(corpus: RagCorpusState, file: RagFileState): void {
  const metadata = fileMetadata(file)
  for (const c of file.chunks) if (corpus.index.has(c.id)) corpus.index.replaceMetadata(c.id, metadata)
}

/**
 * The order in which a corpus's files commit (draw their ids and stamps and join the index add):
 * the order their ingest began. Concurrent uploads are read and embedded side by side, in slices
 * whose count depends on the machine's speed; without it, how busy the machine was would decide
 * which file got which seeded id.
 */
interface CommitTurn {
  /** Resolves once the files that came before have committed. */
  readonly ready: Promise<void>
  /** Ends the turn (again is harmless); it must end, also on failure. */
  readonly done: () => void
}

class CommitOrder {
  #last: Promise<void> = Promise.resolve()

  /** A turn after every turn taken before. */
  take(): CommitTurn {
    const ready = this.#last
    let done: () => void = () => undefined
    this.#last = new Promise<void>((resolve) => (done = resolve))
    return { ready, done }
  }
}

const commitOrders = perCorpus<CommitOrder>()

function commitOrderOf(corpus: RagCorpusState): CommitOrder {
  return commitOrders(corpus, () => new CommitOrder())
}
