import type { MemoryContext } from './context.js'
import { normalizeFact, retractedStatement, slotAndValue, slotOf, wordsOf } from './facts.js'
import { SCOPE_FIELD, memoriesOfScope, type EngineState, type MemoryState } from './state.js'

/** What generateMemories does with one fact: Google's consolidation outcomes (GenerateMemoriesResponse.GeneratedMemory.Action). */
export type Consolidation =
  | { readonly action: 'CREATED' }
  | { readonly action: 'UPDATED'; readonly memory: MemoryState }
  | { readonly action: 'DELETED'; readonly memory: MemoryState }

/** A fact to consolidate: its text and its embedding. */
export interface FactToConsolidate {
  readonly fact: string
  readonly vector: Float32Array
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
 *    what it takes back, the earliest of: one with the same normalized text; one giving the same
 *    slot the same value ("I no longer live in Berlin" takes back "I moved to Berlin"); one holding
 *    every word of it ("I don't eat meat anymore" takes back "I eat meat every day"). That memory
 *    is deleted; the retraction is not stored. Never by similarity alone: "My favorite color is
 *    no longer red" embeds close to "My favorite color is blue", which it does not take back.
 * 2. UPDATED: a memory has the same normalized text.
 * 3. UPDATED: a memory fills the same slot (facts.ts: "My name is …", "I live in …"), the
 *    earliest such: the newer value replaces it.
 * 4. UPDATED: the most similar memory, at `consolidationSimilarity` or above.
 * 5. CREATED otherwise.
 * A retraction with nothing to take back goes to rule 2, else is CREATED: rules 3 and 4 would put
 * "no longer red" in place of "blue". An update takes the new fact's wording.
 */
export function consolidate(ctx: MemoryContext, engine: EngineState, scopeKey: string, input: FactToConsolidate): Consolidation {
  const memories = [...memoriesOfScope(engine, scopeKey)]
  const text = normalizeFact(input.fact)
  const retracted = retractedStatement(input.fact)
  if (retracted !== undefined) {
    const target = retractionTarget(memories, retracted)
    if (target) return { action: 'DELETED', memory: target }
  }
  const same = memories.find((m) => normalizeFact(m.fact) === text)
  if (same) return { action: 'UPDATED', memory: same }
  if (retracted !== undefined) return { action: 'CREATED' }
  const slot = slotOf(input.fact)
  const sameSlot = slot === undefined ? undefined : memories.find((m) => slotOf(m.fact) === slot)
  if (sameSlot) return { action: 'UPDATED', memory: sameSlot }
  const near = similar(ctx, engine, scopeKey, input.vector)
  return near ? { action: 'UPDATED', memory: near } : { action: 'CREATED' }
}

/** The memory a retraction takes back (rule 1), given the statement it retracts, normalized. */
function retractionTarget(memories: readonly MemoryState[], retracted: string): MemoryState | undefined {
  const exact = memories.find((m) => normalizeFact(m.fact) === retracted)
  if (exact) return exact
  // A stored retraction holds the words of what it retracted ("i no longer like chess" ⊇ "i like chess") but states the opposite.
  const statements = memories.filter((m) => retractedStatement(m.fact) === undefined)
  const slotted = slotAndValue(retracted)
  const bySlot = slotted && statements.find((m) => {
    const other = slotAndValue(m.fact)
    return other !== undefined && other.slot === slotted.slot && other.value === slotted.value
  })
  if (bySlot) return bySlot
  const words = wordsOf(retracted)
  return statements.find((m) => {
    const held = wordsOf(normalizeFact(m.fact))
    for (const w of words) if (!held.has(w)) return false
    return true
  })
}
