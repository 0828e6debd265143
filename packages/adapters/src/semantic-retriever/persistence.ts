import { LinkableFile, loadIndex, saveIndexInto, type FileSum, type GenerationWriter, type Steps } from '@quarry/core'
import { join } from 'node:path'
import { arrayField, indexDirOf, mapped, readState, readStateFile, seqOf, streamed, within, writeState, writeStateInto, type StateFormat } from '../rpc/saved-state.js'
import type { RetrieverContext } from './context.js'
import type { ChunkState, CorpusState, DocumentState } from './state.js'

/**
 * The Semantic Retriever's state on disk, written into a generation as steps: `state.json` (the
 * corpora), and for each corpus a core snapshot (`corpus-<n>/`, vectors and metadata of its
 * chunks) and its documents and chunks (`corpus-<n>.json`). A corpus no write touched since the
 * last checkpoint costs no writing: its snapshot and its documents' file are hard-links to the
 * last ones (QuarryIndex.save, LinkableFile). One consistent view needs the engine's writes held
 * off until the steps end (the service's `exclusive`). Version 1 (read still) held every
 * corpus's documents in `state.json`, rewritten whole at every checkpoint.
 */
export const FORMAT: StateFormat = { format: 'quarry-semantic-retriever', version: 2, reads: [1], engine: 'Semantic Retriever' }

/** A corpus's documents and their chunks (`corpus-<n>.json`). */
const DOCUMENTS: StateFormat = { format: 'quarry-semantic-retriever-documents', version: 1, engine: 'Semantic Retriever corpus documents' }

type SavedDocument = Omit<DocumentState, 'chunks'> & { readonly chunks: readonly ChunkState[] }

/** A corpus in `state.json`: its fields, its snapshot's folder and its documents' file (version 1: the documents themselves). */
type SavedCorpus = Omit<CorpusState, 'index' | 'documents' | 'documentsFile'> & { readonly indexDir: string; readonly documentsFile?: unknown; readonly documents?: readonly SavedDocument[] }

export function* saveRetriever(ctx: RetrieverContext, out: GenerationWriter, folder: string): Steps {
  const corpora = [...ctx.state.corpora.values()]
  for (const [i, c] of corpora.entries()) {
    yield* saveIndexInto(out, within(folder, `corpus-${i}`), c.index)
    const documents = streamed(mapped(c.documents.values(), ({ chunks, ...d }) => ({ ...d, chunks: streamed(chunks.values()) })))
    yield* c.documentsFile.save(out, within(folder, `corpus-${i}.json`), (file) => writeStateInto(file, DOCUMENTS, { documents }))
  }
  const saved = corpora.map((c, i) => {
    const { index: _index, documents: _documents, documentsFile: _file, ...rest } = c
    return { ...rest, indexDir: `corpus-${i}`, documentsFile: `corpus-${i}.json` }
  })
  yield* writeState(out, folder, FORMAT, { seq: ctx.state.seq, corpora: saved })
}

export function loadRetriever(ctx: RetrieverContext, dir: string, sumOf: (path: string) => FileSum | undefined): void {
  // Everything is read before anything is replaced: a failing load leaves the current state as it was.
  const { seq, corpora } = readState(dir, FORMAT, (raw) => {
    const corpora = new Map<string, CorpusState>()
    for (const { indexDir, documentsFile: file, documents: inline, ...fields } of arrayField(raw, 'corpora') as unknown as readonly SavedCorpus[]) {
      const index = loadIndex(indexDirOf(dir, indexDir), { embedder: ctx.options.embedder })
      const documentsFile = new LinkableFile()
      let documents: Map<string, DocumentState>
      if (raw.version === 1) {
        documents = documentsOf(inline)
      } else {
        const path = join(dir, documentsFileOf(file))
        // Recorded before it is read (see LinkableFile.read): the next checkpoint links it while the corpus is unchanged.
        documentsFile.read(path, sumOf(path))
        documents = readStateFile(path, DOCUMENTS, (saved) => documentsOf(saved['documents']))
      }
      corpora.set(fields.name, { ...fields, index, documents, documentsFile })
    }
    return { seq: seqOf(raw), corpora }
  })
  ctx.state.corpora.clear()
  for (const [name, corpus] of corpora) ctx.state.corpora.set(name, corpus)
  ctx.state.seq = seq
}

/**
 * A corpus's saved documents as the engine holds them (a TypeError when the list is not one, so
 * the file it came from is refused): custom metadata frozen, as when it was first stored
 * (responses hand it out; nothing may change it behind the documents file's back).
 */
function documentsOf(saved: unknown): Map<string, DocumentState> {
  if (!Array.isArray(saved)) throw new TypeError('documents is not a list')
  return new Map(
    (saved as SavedDocument[]).map(({ chunks, ...d }) => [
      d.name,
      { ...d, customMetadata: deepFrozen(d.customMetadata), chunks: new Map(chunks.map((ch) => [ch.name, { ...ch, customMetadata: deepFrozen(ch.customMetadata) }])) },
    ]),
  )
}

/** `value` (parsed JSON) frozen all the way down. */
function deepFrozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const inner of Object.values(value)) deepFrozen(inner)
    Object.freeze(value)
  }
  return value
}

/** The documents file a saved corpus names (`corpus-3.json`): nothing else, never outside the folder. */
function documentsFileOf(name: unknown): string {
  if (typeof name !== 'string' || !/^corpus-\d{1,9}\.json$/.test(name)) throw new TypeError('documentsFile is not a corpus documents file name')
  return name
}
