import { loadIndex, saveIndexInto, type GenerationWriter, type Steps } from '@quarry/core'
import { arrayField, indexDirOf, mapped, readState, seqOf, streamed, within, writeState, type StateFormat } from '../rpc/saved-state.js'
import type { RetrieverContext } from './context.js'
import type { ChunkState, CorpusState, DocumentState } from './state.js'

/**
 * The Semantic Retriever's state on disk: `state.json` (every resource) and one core snapshot
 * per corpus (`corpus-<n>/`, vectors and metadata of its chunks), written into a generation as
 * steps. One consistent view needs the engine's writes held off until the steps end (the service's
 * `exclusive`). `state.json` is versioned; its checksum is the generation's.
 */
export const FORMAT: StateFormat = { format: 'quarry-semantic-retriever', version: 1, engine: 'Semantic Retriever' }

interface Saved {
  readonly seq: number
  readonly corpora: readonly (Omit<CorpusState, 'index' | 'documents'> & { readonly indexDir: string; readonly documents: readonly (Omit<DocumentState, 'chunks'> & { readonly chunks: readonly ChunkState[] })[] })[]
}

export function* saveRetriever(ctx: RetrieverContext, out: GenerationWriter, folder: string): Steps {
  const corpora = [...ctx.state.corpora.values()]
  for (const [i, c] of corpora.entries()) yield* saveIndexInto(out, within(folder, `corpus-${i}`), c.index)
  const saved = corpora.map((c, i) => {
    const { index: _index, documents, ...rest } = c
    return { ...rest, indexDir: `corpus-${i}`, documents: streamed(mapped(documents.values(), ({ chunks, ...d }) => ({ ...d, chunks: streamed(chunks.values()) }))) }
  })
  yield* writeState(out, folder, FORMAT, { seq: ctx.state.seq, corpora: streamed(saved) })
}

export function loadRetriever(ctx: RetrieverContext, dir: string): void {
  // Everything is read before anything is replaced: a failing load leaves the current state as it was.
  const { saved, corpora } = readState(dir, FORMAT, (raw) => {
    const saved = { seq: seqOf(raw), corpora: arrayField(raw, 'corpora') } as unknown as Saved
    const corpora = new Map<string, CorpusState>()
    for (const { indexDir, documents, ...c } of saved.corpora) {
      const index = loadIndex(indexDirOf(dir, indexDir), { embedder: ctx.options.embedder })
      const docs = new Map(documents.map(({ chunks, ...d }) => [d.name, { ...d, chunks: new Map(chunks.map((ch) => [ch.name, { ...ch }])) } as DocumentState]))
      corpora.set(c.name, { ...c, index, documents: docs } as CorpusState)
    }
    return { saved, corpora }
  })
  ctx.state.corpora.clear()
  for (const [name, corpus] of corpora) ctx.state.corpora.set(name, corpus)
  ctx.state.seq = saved.seq
}
