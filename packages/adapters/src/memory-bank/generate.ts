import { compileFilter } from '@quarry/core'
import type { Operation } from '../rpc/operations.js'
import { omitUnset } from '../rpc/omit.js'
import { readMessage } from '../rpc/proto-json.js'
import { CAPS, characterCount } from '../rpc/limits.js'
import { failure, invalidArgument } from '../rpc/status.js'
import type { MemoryContext } from './context.js'
import { readScope } from './fields.js'
import { memoryFilter } from './memories.js'
import { DOCUMENTED, GenerateMemoriesRequest, PurgeMemoriesRequest } from './schema.js'
import { addMemory, removeMemory, indexMemory, memoryJson, memoryMetadata, scopeKeyOf, type MemoryJson, type MemoryState } from './state.js'
import { ScopeConsolidation, type Consolidation } from './consolidate.js'
import { configuredExpiry } from './engine-config.js'
import { replayable } from '../rpc/replay.js'
import { conversationOf } from './conversation.js'
import { latestRevisionName, readRevisionPlan, recordRevision } from './revisions.js'

/** Facts one directMemoriesSource may carry (Google's limit; the request schema holds it). */
export const MAX_DIRECT_MEMORIES = DOCUMENTED.directMemories.max

/** An extractor's answer, checked: a plug-in that answers anything but a list of strings is the server's failure (INTERNAL). */
function extractedFacts(answer: unknown): string[] {
  if (!Array.isArray(answer) || answer.some((f) => typeof f !== 'string')) {
    throw new Error(`the extractor must resolve to an array of strings (facts); it resolved to ${Array.isArray(answer) ? 'an array holding other values' : typeof answer}`)
  }
  return [...(answer as string[])]
}

/**
 * The facts of an extractor's answer that are stored: blank ones are dropped; one longer than a
 * memory's fact may be (CAPS.text, as createMemory takes it) is the extractor's failure, as a
 * model's would be: INTERNAL saying which fact and how long, reported to onInternalError, and
 * nothing is written. Stored, it would be a memory no update could keep, and a read of it as large.
 */
function storedFacts(ctx: MemoryContext, answer: readonly string[]): string[] {
  for (const [i, fact] of answer.entries()) {
    // Code points never outnumber code units: most facts pass without being counted.
    const n = fact.length > CAPS.text.max ? characterCount(fact) : 0
    if (n <= CAPS.text.max || fact.trim() === '') continue
    const count = (x: number): string => x.toLocaleString('en-US')
    ctx.options.onInternalError(new Error(`the extractor must resolve to facts of at most ${count(CAPS.text.max)} characters (a memory's fact); its fact [${i}] has ${count(n)}`))
    throw failure('INTERNAL', `The extractor gave a fact of ${count(n)} characters (fact [${i}] of its answer); a memory's fact holds at most ${count(CAPS.text.max)}. Nothing was written.`)
  }
  return answer.filter((f) => f.trim() !== '')
}

/**
 * generateMemories: facts from directMemoriesSource, or extracted from a session or contents (the
 * `extractor` option; the local extractor by default), are consolidated with the memories of the
 * scope (consolidate.ts: CREATED, UPDATED or DELETED); `disableConsolidation` always creates. The
 * engine's ttlConfig sets the expiry of what is created or updated (engine-config.ts).
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
    facts = storedFacts(ctx, await replayable('extract', async () => extractedFacts(await extractor({ kind, source, scope, events }))))
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
  const generated: { memory: MemoryJson | { name: string }; action: Consolidation['action']; previousRevision?: string }[] = []
  const scopeKey = scopeKeyOf(scope)
  // The scope's memories as the rules read them, derived once for the whole request and kept up to date fact by fact.
  const scopeFacts = req.disableConsolidation ? undefined : new ScopeConsolidation(ctx, engine, scopeKey)
  facts.forEach((fact, i) => {
    const vector = vectors[i] as Float32Array
    const now = ctx.now()
    const outcome: Consolidation = scopeFacts ? scopeFacts.consolidate({ fact, vector }) : { action: 'CREATED' }
    if (outcome.action === 'DELETED') {
      removeMemory(engine, outcome.memory)
      scopeFacts?.deleted(outcome.memory)
      engine.index.remove(outcome.memory.name)
      generated.push({ memory: { name: outcome.memory.name }, action: 'DELETED' })
      return
    }
    // Each memory's answer is made before it changes (memoryJson is all that can fail): a fact never leaves a memory half-written.
    if (outcome.action === 'UPDATED') {
      const target = outcome.memory
      const updated: MemoryState = { ...target, fact, updateMs: now, expireMs: configuredExpiry(engine, 'generateUpdated', now) ?? target.expireMs }
      const json = memoryJson(updated)
      Object.assign(target, updated)
      scopeFacts?.updated(target)
      ctx.expiresAt(engine, target.expireMs)
      indexMemory(engine, target, vector)
      const previousRevision = latestRevisionName(target, target.updateMs)
      recordRevision(target, revision, [fact])
      generated.push(omitUnset({ memory: json, action: 'UPDATED' as const, previousRevision }))
      return
    }
    let name: string
    do name = `${engine.name}/memories/m${ctx.numericId()}`
    while (engine.memories.has(name))
    const expireMs = configuredExpiry(engine, 'generateCreated', now)
    const m: MemoryState = { name, displayName: undefined, description: undefined, fact, scope, scopeKey, topics: [], metadata: {}, expireMs, ...ctx.stamp(now) }
    const json = memoryJson(m)
    addMemory(engine, m)
    scopeFacts?.created(m)
    ctx.expiresAt(engine, expireMs)
    indexMemory(engine, m, vector)
    recordRevision(m, revision, [fact])
    generated.push({ memory: json, action: 'CREATED' })
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
      removeMemory(engine, m)
      engine.index.remove(m.name)
    }
  }
  // purgeCount is an int64 (a decimal string), omitted at 0.
  return ctx.operation(parent, 'PurgeMemoriesOperationMetadata', 'PurgeMemoriesResponse', omitUnset({ purgeCount: matching.length > 0 ? String(matching.length) : undefined }), version)
}
