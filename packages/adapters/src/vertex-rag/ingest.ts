import { createHash } from 'node:crypto'
import { Analyzer, chunkText } from '@quarry/core'
import { omitUndefined } from '../rpc/omit.js'
import type { RagContext } from './context.js'
import type { ChunkingPlan } from './chunking.js'
import { extractText } from './extract.js'
import { pageAt } from './pdf.js'
import { fileMetadata, type RagCorpusState, type RagFileSource, type RagFileState } from './state.js'

/** Tokens of RAG chunking: the analyzer's word tokens (stop words included). */
const analyzer = new Analyzer()

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
}

export type IngestResult = { readonly kind: 'imported' | 'skipped'; readonly file: RagFileState } | { readonly kind: 'failed'; readonly message: string }

/** The file of a corpus imported from this source URI before, if any. */
function sameSource(corpus: RagCorpusState, source: RagFileSource): RagFileState | undefined {
  if (source.kind !== 'gcs') return undefined
  for (const f of corpus.files.values()) if (f.source.kind === 'gcs' && f.source.uri === source.uri) return f
  return undefined
}

/**
 * Reads, chunks, embeds and indexes one file. A file imported before from the same URI with the
 * same bytes (sha256) is skipped; with other bytes its chunks are replaced. A file that cannot be
 * read fails alone. Nothing is written before the embeddings are in.
 */
export async function ingestFile(ctx: RagContext, corpus: RagCorpusState, input: FileInput): Promise<IngestResult> {
  const sha256 = createHash('sha256').update(input.bytes).digest('hex')
  const previous = sameSource(corpus, input.source)
  if (previous && previous.sha256 === sha256) return { kind: 'skipped', file: previous }
  const extracted = await extractText(input.readAs, input.bytes, input.label)
  if (!extracted.ok) return { kind: 'failed', message: extracted.message }
  const pieces = chunkText(analyzer, extracted.text, input.chunking)
  if (pieces.length === 0) return { kind: 'failed', message: `${input.label}: the file has no words to index.` }
  const vectors = await ctx.embed(pieces.map((p) => p.text))
  if (!ctx.state.corpora.has(corpus.name)) return { kind: 'failed', message: `${input.label}: the corpus was deleted during the import.` }

  let file: RagFileState
  if (previous) {
    for (const c of previous.chunks) corpus.index.remove(c.id)
    file = previous
    file.updateMs = ctx.now()
  } else {
    let id: string
    do id = ctx.numericId()
    while (corpus.files.has(`${corpus.name}/ragFiles/${id}`))
    file = {
      name: `${corpus.name}/ragFiles/${id}`,
      id,
      displayName: input.displayName,
      description: input.description,
      source: input.source,
      sizeBytes: 0,
      sha256,
      type: extracted.type,
      userMetadata: input.userMetadata,
      chunks: [],
      metadata: new Map(),
      ...ctx.stamp(),
    }
  }
  file.sizeBytes = input.bytes.length
  file.sha256 = sha256
  file.type = extracted.type
  // The first chunk starts at the text's start and the last ends at its end, so leading markup
  // ("# ") and final punctuation are kept; chunks in between run from token to token.
  const text = extracted.text
  const lastIndex = pieces.length - 1
  const pages = extracted.pageStarts
  file.chunks = pieces.map((p, i) =>
    omitUndefined({
      id: `${file.id}-${String(i).padStart(6, '0')}`,
      text: i === 0 || i === lastIndex ? text.slice(i === 0 ? text.length - text.trimStart().length : p.start, i === lastIndex ? text.trimEnd().length : p.end) : p.text,
      pageSpan: pages ? { firstPage: pageAt(pages, p.start), lastPage: pageAt(pages, p.end - 1) } : undefined,
    }),
  )
  const metadata = fileMetadata(file)
  corpus.index.addMany(file.chunks.map((c, i) => ({ id: c.id, vector: vectors[i] as Float32Array, text: c.text, metadata })))
  corpus.files.set(file.name, file)
  corpus.updateMs = ctx.now()
  return { kind: 'imported', file }
}

/** Rewrites a file's chunk records after its metadata changed (vectors and text kept). */
export function reindexFile(corpus: RagCorpusState, file: RagFileState): void {
  const metadata = fileMetadata(file)
  for (const c of file.chunks) {
    const stored = corpus.index.get(c.id)
    if (stored?.vector) corpus.index.upsert({ id: c.id, vector: stored.vector, text: c.text, metadata })
  }
}
