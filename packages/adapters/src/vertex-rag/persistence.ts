import { join } from 'node:path'
import { loadIndex } from '@quarry/core'
import { arrayField, indexDirOf, readState, seqOf, writeState, type StateFormat } from '../rpc/saved-state.js'
import type { RagContext } from './context.js'
import type { Operation } from '../rpc/operations.js'
import type { RagCorpusState, RagDataSchemaState, RagFileState, RagMetadataState } from './state.js'

/**
 * RAG Engine state on disk: `state.json` (corpora, files, chunks, schemas, metadata, operations) and
 * one core snapshot per corpus. `state.json` is versioned; its checksum is the data folder's (http/data-dir.ts).
 */
const FORMAT: StateFormat = { format: 'quarry-vertex-rag', version: 1, engine: 'Vertex AI RAG Engine' }

type SavedFile = Omit<RagFileState, 'metadata'> & { readonly metadata: readonly RagMetadataState[] }
type SavedCorpus = Omit<RagCorpusState, 'index' | 'files' | 'schemas'> & { readonly indexDir: string; readonly files: readonly SavedFile[]; readonly schemas: readonly RagDataSchemaState[] }
interface Saved {
  readonly seq: number
  readonly operations: readonly Operation[]
  readonly corpora: readonly SavedCorpus[]
}

export function saveRag(ctx: RagContext, dir: string): void {
  const corpora = [...ctx.state.corpora.values()].map((c, i): SavedCorpus => {
    const indexDir = `corpus-${i}`
    c.index.save(join(dir, indexDir))
    const { index: _index, files, schemas, ...rest } = c
    return { ...rest, indexDir, files: [...files.values()].map(({ metadata, ...f }) => ({ ...f, metadata: [...metadata.values()] })), schemas: [...schemas.values()] }
  })
  const saved: Saved = { seq: ctx.state.seq, operations: [...ctx.state.operations.values()], corpora }
  writeState(dir, FORMAT, { ...saved })
}

export function loadRag(ctx: RagContext, dir: string): void {
  // Everything is read before anything is replaced: a failing load leaves the current state as it was.
  const { saved, corpora } = readState(dir, FORMAT, (raw) => {
    const saved = { seq: seqOf(raw), operations: arrayField(raw, 'operations'), corpora: arrayField(raw, 'corpora') } as unknown as Saved
    const corpora = new Map<string, RagCorpusState>()
    for (const { indexDir, files, schemas, ...c } of saved.corpora) {
      const index = loadIndex(indexDirOf(dir, indexDir), { embedder: ctx.options.embedder })
      corpora.set(c.name, {
        ...c,
        index,
        files: new Map(files.map(({ metadata, ...f }) => [f.name, { ...f, metadata: new Map(metadata.map((m) => [m.name, { ...m }])) } as RagFileState])),
        schemas: new Map(schemas.map((s) => [s.name, { ...s }])),
      } as RagCorpusState)
    }
    return { saved, corpora }
  })
  ctx.state.corpora.clear()
  for (const [name, corpus] of corpora) ctx.state.corpora.set(name, corpus)
  ctx.state.operations.clear()
  for (const op of saved.operations) ctx.state.operations.set(op.name, op)
  ctx.state.seq = saved.seq
}
