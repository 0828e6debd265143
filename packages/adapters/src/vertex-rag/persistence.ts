import { loadIndex, type GenerationWriter, type Steps } from '@quarry/core'
import { arrayField, indexDirOf, mapped, readState, saveIndex, seqOf, streamed, within, writeState, type StateFormat } from '../rpc/saved-state.js'
import type { RagContext } from './context.js'
import type { Operation } from '../rpc/operations.js'
import type { RagCorpusState, RagDataSchemaState, RagEngineConfigState, RagFileState, RagMetadataState } from './state.js'

/**
 * RAG Engine state on disk: `state.json` (corpora, files, chunks, schemas, metadata, operations) and
 * one core snapshot per corpus, written into a generation as steps (the engine's writes held off
 * meanwhile). `state.json` is versioned; its checksum is the generation's.
 */
export const FORMAT: StateFormat = { format: 'quarry-vertex-rag', version: 1, engine: 'Vertex AI RAG Engine' }

type SavedFile = Omit<RagFileState, 'metadata'> & { readonly metadata: readonly RagMetadataState[] }
type SavedCorpus = Omit<RagCorpusState, 'index' | 'files' | 'schemas'> & { readonly indexDir: string; readonly files: readonly SavedFile[]; readonly schemas: readonly RagDataSchemaState[] }
interface Saved {
  readonly seq: number
  readonly operations: readonly Operation[]
  readonly corpora: readonly SavedCorpus[]
  /** Each location's RagEngineConfig set by updateRagEngineConfig (absent in states saved before it was served). */
  readonly engineConfigs: readonly RagEngineConfigState[]
}

export function* saveRag(ctx: RagContext, out: GenerationWriter, folder: string): Steps {
  const corpora = [...ctx.state.corpora.values()]
  for (const [i, c] of corpora.entries()) yield* saveIndex(out, within(folder, `corpus-${i}`), c.index)
  const saved = corpora.map((c, i) => {
    const { index: _index, files, schemas, ...rest } = c
    return { ...rest, indexDir: `corpus-${i}`, files: streamed(mapped(files.values(), ({ metadata, ...f }) => ({ ...f, metadata: [...metadata.values()] }))), schemas: [...schemas.values()] }
  })
  yield* writeState(out, folder, FORMAT, { seq: ctx.state.seq, operations: streamed(ctx.state.operations.values()), corpora: streamed(saved), engineConfigs: [...ctx.state.engineConfigs.values()] })
}

export function loadRag(ctx: RagContext, dir: string): void {
  // Everything is read before anything is replaced: a failing load leaves the current state as it was.
  const { saved, corpora } = readState(dir, FORMAT, (raw) => {
    const engineConfigs = raw['engineConfigs'] === undefined ? [] : arrayField(raw, 'engineConfigs')
    const saved = { seq: seqOf(raw), operations: arrayField(raw, 'operations'), corpora: arrayField(raw, 'corpora'), engineConfigs } as unknown as Saved
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
  ctx.state.engineConfigs.clear()
  for (const config of saved.engineConfigs) ctx.state.engineConfigs.set(config.name, { ...config })
  ctx.state.seq = saved.seq
}
