import type { MemoryContext } from './context.js'
import { normalizeFact, retractedStatement, slotOf } from './facts.js'
import { SCOPE_FIELD, memoriesOfScope, type EngineState, type MemoryState } from './state.js'

/** What generateMemories does with one fact: Google's consolidation outcomes (GenerateMemoriesResponse.GeneratedMemory.Action). */
export type Consolidation =
  | { readonly action: 'CREATED' }
  | { readonly action: 'UPDATED'; readonly memory: MemoryState }
  | { readonly action: 'DELETED'; readonly memory: MemoryState }

/** A fact to consolidate: its text, its embedding and, for a retraction, the embedding of what it takes back. */
export interface FactToConsolidate {
  readonly fact: string
  readonly vector: Float32Array
  readonly retractedVector?: Float32Array | undefined
}

/** The memory of the scope most similar to `vector`, if its cosine similarity reaches `consolidationSimilarity`. */
function similar(ctx: MemoryContext, engine: EngineState, scopeKey: string, vector: Float32Array): MemoryState | undefined {
  if (engine.index.size === 0 || !vector.some((x) => x !== 0)) return undefined
  const [hit] = engine.index.search({ vector, topK: 1, filter: { op: 'eq', field: SCOPE_FIELD, value: scopeKey }, minSimilarity: ctx.options.consolidationSimilarity }).hits
  return hit === undefined ? undefined : engine.memories.get(hit.id)
}

/**
 * Consolidates one new fact with the memories of its scope, by the first rule that applies:
 * 1. DELETED: the fact is a retraction (facts.ts: "I no longer live in Paris") and a memory states
 *    what it takes back (the same normalized text, else the most similar at
 *    `consolidationSimilarity` or above). That memory is deleted; the retraction is not stored.
 * 2. UPDATED: a memory has the same normalized text.
 * 3. UPDATED: a memory fills the same slot (facts.ts: "My name is …", "I live in …"), the
 *    earliest such: the newer value replaces it.
 * 4. UPDATED: the most similar memory, at `consolidationSimilarity` or above.
 * 5. CREATED otherwise.
 * An update takes the new fact's wording.
 */
export function consolidate(ctx: MemoryContext, engine: EngineState, scopeKey: string, input: FactToConsolidate): Consolidation {
  const memories = [...memoriesOfScope(engine, scopeKey)]
  const retracted = retractedStatement(input.fact)
  if (retracted !== undefined) {
    const target = memories.find((m) => normalizeFact(m.fact) === retracted) ?? (input.retractedVector && similar(ctx, engine, scopeKey, input.retractedVector))
    if (target) return { action: 'DELETED', memory: target }
  }
  const text = normalizeFact(input.fact)
  const same = memories.find((m) => normalizeFact(m.fact) === text)
  if (same) return { action: 'UPDATED', memory: same }
  const slot = slotOf(input.fact)
  const sameSlot = slot === undefined ? undefined : memories.find((m) => slotOf(m.fact) === slot)
  if (sameSlot) return { action: 'UPDATED', memory: sameSlot }
  const near = similar(ctx, engine, scopeKey, input.vector)
  return near ? { action: 'UPDATED', memory: near } : { action: 'CREATED' }
}
