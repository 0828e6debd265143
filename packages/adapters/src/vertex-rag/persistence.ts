import { loadIndex, QuarryError, saveIndexInto, type GenerationWriter, type QuarryIndex, type Steps } from '@quarry/core'
import { arrayField, indexDirOf, mapped, readState, seqOf, streamed, within, writeState, type StateFormat } from '../rpc/saved-state.js'
import type { RagContext } from './context.js'
import type { Operation } from '../rpc/operations.js'
import { filesGoingIn } from './pending-files.js'
import { chunkId, forgetSavedChunks, IndexedChunk, keepSavedChunks, savedChunksOf, type RagChunkState, type RagCorpusState, type RagDataSchemaState, type RagEngineConfigState, type RagFileState, type RagMetadataState } from './state.js'

/**
 * RAG Engine state on disk: `state.json` (corpora, files, schemas, metadata, operations) and one
 * core snapshot per corpus, written into a generation as steps (the engine's writes held off
 * meanwhile). `state.json` is versioned; its checksum is the generation's.
 *
 * Version 2 keeps no chunk text: a chunk's text is its record's text in the corpus index (one copy
 * on disk, read without parsing it as JSON), its id follows from its file and position
 * ({@link chunkId}); a file lists its chunk count and, for a PDF, each chunk's pages. Only
 * version 2 is read (version 1 was never published).
 */
export const FORMAT: StateFormat = { format: 'quarry-vertex-rag', version: 2, engine: 'Vertex AI RAG Engine' }

/** A file as saved (version 2): its chunks as a count, and their pages when it has pages. */
type SavedFile = Omit<RagFileState, 'metadata' | 'chunks'> & { readonly metadata: readonly RagMetadataState[]; readonly chunks: number; readonly pageSpans?: readonly (readonly [number, number])[] }
type SavedCorpus = Omit<RagCorpusState, 'index' | 'files' | 'schemas'> & { readonly indexDir: string; readonly files: readonly SavedFile[]; readonly schemas: readonly RagDataSchemaState[] }
interface Saved {
  readonly seq: number
  readonly operations: readonly Operation[]
  readonly corpora: readonly SavedCorpus[]
  /** Each location's RagEngineConfig set by updateRagEngineConfig. */
  readonly engineConfigs: readonly RagEngineConfigState[]
}

/** Each chunk's pages, when any chunk has pages (a PDF's). */
function pageSpansOf(chunks: readonly RagChunkState[]): SavedFile['pageSpans'] {
  return chunks.some((c) => c.pageSpan) ? chunks.map((c): readonly [number, number] => [c.pageSpan?.firstPage ?? 0, c.pageSpan?.lastPage ?? 0]) : undefined
}

/**
 * A file without its chunks' texts (version 2). Its fields are copied by name, `chunks` aside: a
 * restored file whose chunk list was never made is written as it was read, without making it.
 */
function savedFile(file: RagFileState): SavedFile {
  const fields: Partial<Record<keyof RagFileState, unknown>> = {}
  for (const key of Object.keys(file) as (keyof RagFileState)[]) if (key !== 'chunks' && key !== 'metadata') fields[key] = file[key]
  const kept = savedChunksOf(file)
  const pageSpans = kept === undefined ? pageSpansOf(file.chunks) : kept.pageSpans
  return { ...(fields as Omit<SavedFile, 'metadata' | 'chunks' | 'pageSpans'>), metadata: [...file.metadata.values()], chunks: kept?.count ?? file.chunks.length, ...(pageSpans ? { pageSpans } : {}) }
}

export function* saveRag(ctx: RagContext, out: GenerationWriter, folder: string): Steps {
  const corpora = [...ctx.state.corpora.values()]
  // A file going into an index in slices is in part of it and in no file list: not a state to keep.
  const busy = corpora.find((c) => filesGoingIn(c).size > 0)
  if (busy) throw new QuarryError('BUSY', `files are going into ${busy.name} (an upload or import under way); await it before saving.`)
  for (const [i, c] of corpora.entries()) yield* saveIndexInto(out, within(folder, `corpus-${i}`), c.index)
  const saved = corpora.map((c, i) => {
    const { index: _index, files, schemas, ...rest } = c
    return { ...rest, indexDir: `corpus-${i}`, files: streamed(mapped(files.values(), savedFile)), schemas: [...schemas.values()] }
  })
  yield* writeState(out, folder, FORMAT, { seq: ctx.state.seq, operations: streamed(ctx.state.operations.values()), corpora: streamed(saved), engineConfigs: [...ctx.state.engineConfigs.values()] })
}

/** Chunk `i` of a saved file, its text read from the corpus index when asked. */
function savedChunk(index: QuarryIndex, file: SavedFile, i: number): RagChunkState {
  const span = file.pageSpans?.[i]
  return new IndexedChunk(index, chunkId(file.id, i), span ? { firstPage: span[0], lastPage: span[1] } : undefined)
}

/** The saved chunk list's shape, checked at load (a TypeError otherwise: readState refuses the state). */
function checkChunks(file: SavedFile): void {
  const { chunks, pageSpans: spans } = file
  const counted = typeof chunks === 'number' && Number.isSafeInteger(chunks) && chunks >= 0 && (spans === undefined || (Array.isArray(spans) && spans.length === chunks))
  if (!counted) throw new TypeError('a file\'s chunks are not a count')
}

/**
 * A saved file as the engine holds it, metadata by name. Its chunk list is made the first time
 * something reads `chunks` (a write to the file, its deletion, the console's chunk list); until
 * then its chunks stay as saved (state.ts `SavedChunks`: a query's hits and a save need no list).
 * A load makes no chunk object, so its time is the index's, whatever the number of chunks.
 */
function fileOf(index: QuarryIndex, saved: SavedFile): RagFileState {
  checkChunks(saved)
  const { metadata, chunks: count, pageSpans, ...f } = saved
  const file = { ...f, metadata: new Map(metadata.map((m) => [m.name, { ...m }])) } as Omit<RagFileState, 'chunks'>
  let chunks: readonly RagChunkState[] | undefined
  const restored = Object.defineProperty(file, 'chunks', {
    get: () => {
      if (chunks === undefined) {
        chunks = Array.from({ length: count }, (_, i) => savedChunk(index, saved, i))
        forgetSavedChunks(restored)
      }
      return chunks
    },
    set: (value: readonly RagChunkState[]) => {
      chunks = value
      forgetSavedChunks(restored)
    },
    enumerable: true,
    configurable: true,
  }) as RagFileState
  keepSavedChunks(restored, { count, pageSpans, at: (i) => (Number.isSafeInteger(i) && i >= 0 && i < count ? savedChunk(index, saved, i) : undefined) })
  return restored
}

/**
 * Replaces the state with the one saved in `dir` (all or nothing). Nothing is warmed up: a KNN
 * corpus's vectors are read straight into the scan pool's shared memory and its threads start
 * during the load (core's snapshot reader), so a first query costs what any other does.
 */
export function loadRag(ctx: RagContext, dir: string): void {
  // Everything is read before anything is replaced: a failing load leaves the current state as it was.
  const { saved, corpora } = readState(dir, FORMAT, (raw) => {
    const saved = { seq: seqOf(raw), operations: arrayField(raw, 'operations'), corpora: arrayField(raw, 'corpora'), engineConfigs: arrayField(raw, 'engineConfigs') } as unknown as Saved
    const corpora = new Map<string, RagCorpusState>()
    for (const { indexDir, files, schemas, ...c } of saved.corpora) {
      const index = loadIndex(indexDirOf(dir, indexDir), { embedder: ctx.options.embedder })
      corpora.set(c.name, {
        ...c,
        index,
        files: new Map(files.map((f) => [f.name, fileOf(index, f)])),
        schemas: new Map(schemas.map((s) => [s.name, { ...s }])),
      } as RagCorpusState)
    }
    return { saved, corpora }
  })
  ctx.state.corpora.clear()
  for (const [name, corpus] of corpora) ctx.state.corpora.set(name, corpus)
  ctx.state.operations.clear()
  for (const op of saved.operations) ctx.state.operations.set(op.name, op)
  ctx.state.engineConfigs.clear()
  for (const config of saved.engineConfigs) ctx.state.engineConfigs.set(config.name, { ...config })
  ctx.state.seq = saved.seq
}
