import type { MemoryContext } from './context.js'
import { isNegated, normalizeFact, retractionOf, slotAndValue, slotAndValueOf, wordsOf } from './facts.js'
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

/** What the rules read of a memory's fact, derived once per request (facts.ts). */
interface Forms {
  readonly normal: string
  /** The statement it takes back, when it is a retraction. */
  readonly retracts: string | undefined
  readonly slotted: { readonly slot: string; readonly value: string } | undefined
  /** Its words, for a statement (rule 1 reads only those of statements). */
  readonly words: ReadonlySet<string> | undefined
  /** Whether it negates what it says ("i never eat meat"). */
  readonly negated: boolean
}

function formsOf(fact: string): Forms {
  const normal = normalizeFact(fact)
  const retracts = retractionOf(normal)
  return { normal, retracts, slotted: slotAndValueOf(normal), words: retracts === undefined ? wordsOf(normal) : undefined, negated: isNegated(normal) }
}

/**
 * Memories by a key, each key's list in scope order (the order of `memoriesOfScope`, by rank): the
 * earliest memory a rule names is the first of a list, whatever the memories a request updated or
 * deleted before it.
 */
class Ranked {
  readonly #lists = new Map<string, MemoryState[]>()
  readonly #rank: (m: MemoryState) => number

  constructor(rank: (m: MemoryState) => number) {
    this.#rank = rank
  }

  get(key: string): readonly MemoryState[] {
    return this.#lists.get(key) ?? []
  }

  add(key: string, m: MemoryState): void {
    const list = this.#lists.get(key)
    if (!list) {
      this.#lists.set(key, [m])
      return
    }
    const at = this.#at(list, this.#rank(m))
    if (list[at] !== m) list.splice(at, 0, m)
  }

  delete(key: string, m: MemoryState): void {
    const list = this.#lists.get(key)
    if (!list) return
    const at = this.#at(list, this.#rank(m))
    if (list[at] !== m) return
    if (list.length === 1) this.#lists.delete(key)
    else list.splice(at, 1)
  }

  /** Where rank `r` is, or goes (binary search). */
  #at(list: readonly MemoryState[], r: number): number {
    let lo = 0
    let hi = list.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.#rank(list[mid] as MemoryState) < r) lo = mid + 1
      else hi = mid
    }
    return lo
  }
}

/** The memory of the scope most similar to `vector`, if its cosine similarity reaches `consolidationSimilarity`. */
function similar(ctx: MemoryContext, engine: EngineState, scopeKey: string, vector: Float32Array): MemoryState | undefined {
  if (engine.index.size === 0 || !vector.some((x) => x !== 0)) return undefined
  const [hit] = engine.index.search({ vector, topK: 1, filter: { op: 'eq', field: SCOPE_FIELD, value: scopeKey }, minSimilarity: ctx.options.consolidationSimilarity }).hits
  return hit === undefined ? undefined : engine.memories.get(hit.id)
}

/**
 * Consolidates the facts of one generateMemories request with the memories of their scope, each
 * new fact by the first rule that applies:
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
 *
 * Each memory's normal form, slot and words are derived once, when the request starts (or when a
 * fact of it creates or rewrites the memory), and looked up by key: a request costs its facts plus
 * the scope's memories, not their product. The caller applies each outcome, then reports it
 * ({@link created}, {@link updated}, {@link deleted}) before the next fact.
 */
export class ScopeConsolidation {
  readonly #ctx: MemoryContext
  readonly #engine: EngineState
  readonly #scopeKey: string
  readonly #ranks = new Map<MemoryState, number>()
  readonly #forms = new Map<MemoryState, Forms>()
  #next = 0
  /** The memories under each key of {@link keysOf}. */
  readonly #lookup = new Ranked((m) => this.#ranks.get(m) as number)

  constructor(ctx: MemoryContext, engine: EngineState, scopeKey: string) {
    this.#ctx = ctx
    this.#engine = engine
    this.#scopeKey = scopeKey
    for (const m of memoriesOfScope(engine, scopeKey)) this.created(m)
  }

  /** The outcome for one new fact (see the class's rules). */
  consolidate(input: FactToConsolidate): Consolidation {
    const text = normalizeFact(input.fact)
    const retracted = retractionOf(text)
    if (retracted !== undefined) {
      const target = this.#retractionTarget(retracted)
      if (target) return { action: 'DELETED', memory: target }
    }
    const [same] = this.#lookup.get(byNormal(text))
    if (same) return { action: 'UPDATED', memory: same }
    if (retracted !== undefined) return { action: 'CREATED' }
    const slot = slotAndValueOf(text)?.slot
    const [sameSlot] = slot === undefined ? [] : this.#lookup.get(bySlot(slot))
    if (sameSlot) return { action: 'UPDATED', memory: sameSlot }
    const near = similar(this.#ctx, this.#engine, this.#scopeKey, input.vector)
    return near ? { action: 'UPDATED', memory: near } : { action: 'CREATED' }
  }

  /** A memory of the scope was created (it comes after every other). */
  created(m: MemoryState): void {
    this.#ranks.set(m, this.#next++)
    const forms = formsOf(m.fact)
    this.#forms.set(m, forms)
    for (const key of keysOf(forms)) this.#lookup.add(key, m)
  }

  /** A memory's fact was rewritten (it keeps its place): it leaves the keys it no longer has and joins its new ones. */
  updated(m: MemoryState): void {
    const before = this.#forms.get(m)
    // Not of the scope as the request found it (no rule can name such a memory): no rule will.
    if (before === undefined) return
    const forms = formsOf(m.fact)
    const had = new Set(keysOf(before))
    const has = new Set(keysOf(forms))
    for (const key of had) if (!has.has(key)) this.#lookup.delete(key, m)
    for (const key of has) if (!had.has(key)) this.#lookup.add(key, m)
    this.#forms.set(m, forms)
  }

  /** A memory was deleted. */
  deleted(m: MemoryState): void {
    const forms = this.#forms.get(m)
    if (forms) for (const key of keysOf(forms)) this.#lookup.delete(key, m)
    this.#forms.delete(m)
    this.#ranks.delete(m)
  }

  /** The memory a retraction takes back (rule 1), given the statement it retracts, normalized. */
  #retractionTarget(retracted: string): MemoryState | undefined {
    const [exact] = this.#lookup.get(byNormal(retracted))
    if (exact) return exact
    // Then statements only: a stored retraction holds the words of what it retracted ("i no longer
    // like chess" ⊇ "i like chess") but states the opposite. The retracted statement is normalized
    // again, as any fact is, before its slot is read. A statement that negates what the retraction
    // does not ("i never eat meat" against "i eat meat") agrees with it: no target either.
    const negatedToo = isNegated(retracted)
    const states = (m: MemoryState): boolean => negatedToo || this.#forms.get(m)?.negated !== true
    const slotted = slotAndValue(retracted)
    const sameValue = slotted ? this.#lookup.get(statementBySlotValue(slotted)).find(states) : undefined
    if (sameValue) return sameValue
    // The earliest statement holding every word (of at least one: "No longer anymore." retracts
    // nothing): the candidates are those of the word fewest hold.
    const words = [...wordsOf(retracted)]
    if (words.length === 0) return undefined
    let fewest = this.#lookup.get(ALL_STATEMENTS)
    for (const w of words) {
      const holding = this.#lookup.get(statementByWord(w))
      if (holding.length < fewest.length) fewest = holding
    }
    return fewest.find((m) => {
      const held = this.#forms.get(m)?.words as ReadonlySet<string>
      return words.every((w) => held.has(w)) && states(m)
    })
  }
}

/**
 * The keys a memory is found by: every memory by its normal form and its slot (rules 2 and 3, and
 * rule 1's same text); a statement (one that retracts nothing) also by its slot and value, by each
 * of its words, and as a statement (rule 1's other two).
 */
function keysOf(forms: Forms): string[] {
  const keys = [byNormal(forms.normal)]
  if (forms.slotted) keys.push(bySlot(forms.slotted.slot))
  if (forms.words === undefined) return keys
  if (forms.slotted) keys.push(statementBySlotValue(forms.slotted))
  keys.push(ALL_STATEMENTS)
  for (const w of forms.words) keys.push(statementByWord(w))
  return keys
}

const ALL_STATEMENTS = 'a'
const byNormal = (normal: string): string => `n${normal}`
const bySlot = (slot: string): string => `s${slot}`
// A normal form has no line break (whitespace is one space): slot and value stay apart.
const statementBySlotValue = (slotted: { readonly slot: string; readonly value: string }): string => `v${slotted.slot}\n${slotted.value}`
const statementByWord = (word: string): string => `w${word}`
