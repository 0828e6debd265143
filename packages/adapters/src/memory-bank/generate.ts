import { compileFilter } from '@quarry/core'
import type { Operation } from '../rpc/operations.js'
import { omitUnset } from '../rpc/omit.js'
import { readMessage } from '../rpc/proto-json.js'
import { invalidArgument } from '../rpc/status.js'
import type { MemoryContext } from './context.js'
import { readScope } from './fields.js'
import { memoryFilter } from './memories.js'
import { DOCUMENTED, GenerateMemoriesRequest, PurgeMemoriesRequest } from './schema.js'
import { indexMemory, memoryJson, memoryMetadata, SCOPE_FIELD, scopeKeyOf, type EngineState, type MemoryJson, type MemoryState } from './state.js'
import { replayable } from '../rpc/replay.js'
import { conversationOf } from './conversation.js'
import { latestRevisionName, readRevisionPlan, recordRevision } from './revisions.js'

/** Facts one directMemoriesSource may carry (Google's limit; the request schema holds it). */
export const MAX_DIRECT_MEMORIES = DOCUMENTED.directMemories.max

/** Case, spacing and final punctuation do not make two facts different. */
export function normalizeFact(fact: string): string {
  return fact.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim().replace(/[.!?]+$/, '')
}

/**
 * The memory of the same scope that `fact` duplicates: the one with an equal normalized text, else
 * the most similar one (the engine's index, filtered to the scope) whose cosine similarity
 * reaches `consolidationSimilarity`.
 */
function duplicateOf(ctx: MemoryContext, engine: EngineState, scopeKey: string, fact: string, vector: Float32Array): MemoryState | undefined {
  const text = normalizeFact(fact)
  for (const m of engine.memories.values()) if (m.scopeKey === scopeKey && normalizeFact(m.fact) === text) return m
  if (engine.index.size === 0 || !vector.some((x) => x !== 0)) return undefined
  const [hit] = engine.index.search({ vector, topK: 1, filter: { op: 'eq', field: SCOPE_FIELD, value: scopeKey }, minSimilarity: ctx.options.consolidationSimilarity }).hits
  return hit === undefined ? undefined : engine.memories.get(hit.id)
}

/**
 * generateMemories: facts from directMemoriesSource (or from the extractor hook for the other
 * sources) become memories of the scope. A fact that duplicates a memory of the same scope
 * updates it (the new wording wins) and is reported UPDATED; `disableConsolidation` always creates.
 */
export async function generateMemories(ctx: MemoryContext, request: unknown, version?: string): Promise<Operation> {
  const req = readMessage(GenerateMemoriesRequest, request)
  const engine = ctx.engine(req.parent, 'parent')
  // A source needing a model is read first: its session may give the scope.
  const conversation = conversationOf(ctx, engine, req)
  const scope = readScope(req.scope !== undefined && Object.keys(req.scope).length > 0 ? req.scope : conversation?.scope, 'scope')
  const revision = readRevisionPlan(req, () => ctx.now(), '')
  let facts: string[]
  if (conversation) {
    // The extractor's facts are recorded for the write-ahead log: a replay gets the same ones.
    const { kind, source, events, extractor } = conversation
    facts = [...(await replayable('extract', async () => [...(await extractor({ kind, source, scope, events }))]))].filter((f) => f.trim() !== '')
  } else {
    const direct = req.directMemoriesSource?.directMemories ?? []
    if (direct.length === 0) throw invalidArgument('directMemoriesSource.directMemories', `give 1 to ${MAX_DIRECT_MEMORIES} facts.`)
    facts = direct.map((d, i) => {
      if (d.fact === undefined || d.fact.trim() === '') throw invalidArgument(`directMemoriesSource.directMemories[${i}].fact`, 'fact is required.')
      return d.fact
    })
  }
  const vectors = await ctx.embed(facts)
  // An update names the revision it replaced (previousRevision): rolling back to it undoes the update.
  const generated: { memory: MemoryJson; action: 'CREATED' | 'UPDATED'; previousRevision?: string }[] = []
  const scopeKey = scopeKeyOf(scope)
  facts.forEach((fact, i) => {
    const vector = vectors[i] as Float32Array
    const duplicate = req.disableConsolidation ? undefined : duplicateOf(ctx, engine, scopeKey, fact, vector)
    if (duplicate) {
      duplicate.fact = fact
      duplicate.updateMs = ctx.now()
      indexMemory(engine, duplicate, vector)
      const previousRevision = latestRevisionName(duplicate, duplicate.updateMs)
      recordRevision(duplicate, revision, [fact])
      generated.push(omitUnset({ memory: memoryJson(duplicate), action: 'UPDATED' as const, previousRevision }))
      return
    }
    let name: string
    do name = `${engine.name}/memories/m${ctx.numericId()}`
    while (engine.memories.has(name))
    const m: MemoryState = { name, displayName: undefined, description: undefined, fact, scope, scopeKey, topics: [], metadata: {}, expireMs: undefined, ...ctx.stamp() }
    engine.memories.set(name, m)
    indexMemory(engine, m, vector)
    recordRevision(m, revision, [fact])
    generated.push({ memory: memoryJson(m), action: 'CREATED' })
  })
  return ctx.operation(engine.name, 'GenerateMemoriesOperationMetadata', 'GenerateMemoriesResponse', omitUnset({ generatedMemories: generated }), version)
}

/** purgeMemories: deletes the memories matching `filter` (required) when `force` is set; otherwise only counts them. */
export async function purgeMemories(ctx: MemoryContext, request: unknown, version?: string): Promise<Operation> {
  const req = readMessage(PurgeMemoriesRequest, request)
  const { name: parent, engine } = ctx.findEngine(req.parent, 'parent')
  const filter = memoryFilter(req.filter, 'filter')
  if (!filter) throw invalidArgument('filter', 'filter is required: which memories to purge, e.g. scope.user_id = "123".')
  const test = compileFilter(filter)
  const matching = engine ? [...engine.memories.values()].filter((m) => test(memoryMetadata(m))) : []
  if (req.force && engine) {
    for (const m of matching) {
      engine.memories.delete(m.name)
      engine.index.remove(m.name)
    }
  }
  // purgeCount is an int64 (a decimal string), omitted at 0.
  return ctx.operation(parent, 'PurgeMemoriesOperationMetadata', 'PurgeMemoriesResponse', omitUnset({ purgeCount: matching.length > 0 ? String(matching.length) : undefined }), version)
}
