import { join } from 'node:path'
import { loadIndex } from '@quarry/core'
import { arrayField, indexDirOf, readState, seqOf, writeState, type StateFormat } from '../rpc/saved-state.js'
import type { Operation } from '../rpc/operations.js'
import type { MemoryContext } from './context.js'
import type { EngineState, MemoryState } from './state.js'

/**
 * Memory Bank state on disk: `state.json` (engines, memories, operations) and one core snapshot per
 * reasoning engine. `state.json` is versioned; its checksum is the data folder's (http/data-dir.ts).
 */
const FORMAT: StateFormat = { format: 'quarry-memory-bank', version: 1, engine: 'Memory Bank' }

interface Saved {
  readonly seq: number
  readonly operations: readonly Operation[]
  readonly engines: readonly { readonly name: string; readonly indexDir: string; readonly memories: readonly MemoryState[] }[]
}

export function saveMemoryBank(ctx: MemoryContext, dir: string): void {
  const engines = [...ctx.state.engines.values()].map((e, i) => {
    const indexDir = `engine-${i}`
    e.index.save(join(dir, indexDir))
    return { name: e.name, indexDir, memories: [...e.memories.values()] }
  })
  const saved: Saved = { seq: ctx.state.seq, operations: [...ctx.state.operations.values()], engines }
  writeState(dir, FORMAT, { ...saved })
}

export function loadMemoryBank(ctx: MemoryContext, dir: string): void {
  // Everything is read before anything is replaced: a failing load leaves the current state as it was.
  const { saved, engines } = readState(dir, FORMAT, (raw) => {
    const saved = { seq: seqOf(raw), operations: arrayField(raw, 'operations'), engines: arrayField(raw, 'engines') } as unknown as Saved
    const engines = new Map<string, EngineState>()
    for (const e of saved.engines) {
      const index = loadIndex(indexDirOf(dir, e.indexDir), { embedder: ctx.options.embedder })
      // An unknown next expiry: the first sweep makes a full pass and learns it.
      engines.set(e.name, { name: e.name, index, memories: new Map(e.memories.map((m) => [m.name, { ...m }])), nextExpiryMs: Number.NEGATIVE_INFINITY })
    }
    return { saved, engines }
  })
  ctx.state.engines.clear()
  for (const [name, engine] of engines) ctx.state.engines.set(name, engine)
  ctx.state.operations.clear()
  for (const op of saved.operations) ctx.state.operations.set(op.name, op)
  ctx.state.seq = saved.seq
}
