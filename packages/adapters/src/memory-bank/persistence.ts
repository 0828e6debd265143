import { LinkableFile, loadIndex, saveIndexInto, type FileSum, type GenerationWriter, type QuarryIndex, type Steps } from '@quarry/core'
import { join } from 'node:path'
import { arrayField, indexDirOf, readState, seqOf, streamed, within, writeStateInto, type StateFormat } from '../rpc/saved-state.js'
import type { Operation } from '../rpc/operations.js'
import type { MemoryContext } from './context.js'
import { CUSTOM_TOPICS_FIELD, MANAGED_TOPICS_FIELD, memoryMetadata, type EngineState, type MemoryState, type ReasoningEngineState } from './state.js'
import type { SessionState } from './session-state.js'

/**
 * Memory Bank state on disk: `state.json` (engines, memories, sessions, operations) and one core
 * snapshot per reasoning engine, written into a generation as steps (the engine's writes and
 * expiry sweeps held off meanwhile). `state.json` is versioned; its checksum is the generation's.
 * A checkpoint that finds no write or sweep since the last one (MemoryContext.changed) links the
 * last `state.json` instead of writing it, as unchanged index snapshots are linked.
 */
export const FORMAT: StateFormat = { format: 'quarry-memory-bank', version: 1, engine: 'Memory Bank' }

interface Saved {
  readonly seq: number
  readonly operations: readonly Operation[]
  readonly engines: readonly { readonly name: string; readonly indexDir: string; readonly memories: readonly MemoryState[]; readonly sessions?: readonly SessionState[]; readonly resource?: ReasoningEngineState }[]
}

export function* saveMemoryBank(ctx: MemoryContext, out: GenerationWriter, folder: string): Steps {
  const engines = [...ctx.state.engines.values()]
  for (const [i, e] of engines.entries()) yield* saveIndexInto(out, within(folder, `engine-${i}`), e.index)
  const saved = engines.map((e, i) => ({ name: e.name, indexDir: `engine-${i}`, memories: streamed(e.memories.values()), sessions: streamed(e.sessions.values()), resource: e.resource }))
  yield* ctx.stateFile.save(out, within(folder, 'state.json'), (file) => writeStateInto(file, FORMAT, { seq: ctx.state.seq, operations: streamed(ctx.state.operations.values()), engines: streamed(saved) }))
}

export function loadMemoryBank(ctx: MemoryContext, dir: string, sumOf: (path: string) => FileSum | undefined): void {
  // Recorded before it is read (see LinkableFile.read), and kept only if the load succeeds: the
  // next checkpoint links it while nothing changes.
  const stateFile = new LinkableFile()
  const path = join(dir, 'state.json')
  stateFile.read(path, sumOf(path))
  // Everything is read before anything is replaced: a failing load leaves the current state as it was.
  const { saved, engines } = readState(dir, FORMAT, (raw) => {
    const saved = { seq: seqOf(raw), operations: arrayField(raw, 'operations'), engines: arrayField(raw, 'engines') } as unknown as Saved
    const engines = new Map<string, EngineState>()
    for (const e of saved.engines) {
      const index = loadIndex(indexDirOf(dir, e.indexDir), { embedder: ctx.options.embedder })
      const memories = new Map(e.memories.map((m) => [m.name, { ...m }]))
      withoutEmptyTopics(index, memories.values())
      // An unknown next expiry: the first sweep makes a full pass and learns it.
      engines.set(e.name, { name: e.name, index, memories, nextExpiryMs: Number.NEGATIVE_INFINITY, sessions: sessionsOf(e.sessions), nextSessionExpiryMs: Number.NEGATIVE_INFINITY, ...(e.resource ? { resource: { ...e.resource } } : {}) })
    }
    return { saved, engines }
  })
  ctx.state.engines.clear()
  for (const [name, engine] of engines) ctx.state.engines.set(name, engine)
  ctx.state.operations.clear()
  for (const op of saved.operations) ctx.state.operations.set(op.name, op)
  ctx.state.seq = saved.seq
  ctx.stateFile = stateFile
}

/** Agent Engine Sessions, saved with their engine (a state without them: none). */
function sessionsOf(saved: readonly SessionState[] | undefined): Map<string, SessionState> {
  return new Map((saved ?? []).map((s) => [s.name, { ...s, events: [...s.events] }]))
}

/**
 * Rewrites the metadata of records that an index saved by an earlier Quarry holds with empty topic
 * lists (every record had all three; `topics:*` would match an empty one): as memoryMetadata
 * writes it now, a list only when it has a topic. Metadata alone (the graph is left as it is),
 * once, at the first load of such an index; its next checkpoint writes it anew.
 */
function withoutEmptyTopics(index: QuarryIndex, memories: Iterable<MemoryState>): void {
  for (const m of memories) {
    const stored = index.metadata(m.name)
    const stale = stored !== undefined && TOPIC_FIELDS.some((field) => Array.isArray(stored[field]) && (stored[field] as readonly string[]).length === 0)
    if (stale) index.replaceMetadata(m.name, memoryMetadata(m))
  }
}

const TOPIC_FIELDS = ['topics', CUSTOM_TOPICS_FIELD, MANAGED_TOPICS_FIELD] as const
