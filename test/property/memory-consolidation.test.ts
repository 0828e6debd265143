import fc from 'fast-check'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, seededRandomId, type MemoryBankOptions } from '@quarry/adapters'
import { runs } from '../support/runs.js'

/**
 * generateMemories' consolidation (memory-bank/consolidate.ts) against a plain oracle: facts from a
 * closed vocabulary whose slot and retraction are known by construction (not by the rules' regular
 * expressions), applied one request at a time; every answer's actions, names and facts, and the
 * memories left, must be the oracle's. Similarity consolidation is off (threshold 1), so only the
 * text, slot and retraction rules act (a retraction never goes by similarity).
 */
const CITIES = ['Paris', 'Oslo', 'Lyon']
const THINGS = ['tea', 'jazz', 'chess']

/**
 * A fact, the slot it fills and the value it gives it (if any), what it likes (if it says so), and
 * for a retraction the statement, slot value and like it takes back, normalized as the rules compare them.
 */
interface Fact {
  readonly text: string
  readonly slot?: string
  readonly value?: string
  readonly likes?: string
  readonly retracts?: string
  readonly retractsHome?: string
  readonly retractsLike?: string
}

const fact: fc.Arbitrary<Fact> = fc.oneof(
  fc.constantFrom(...CITIES).map((c) => ({ text: `I live in ${c}.`, slot: 'home', value: c })),
  fc.constantFrom(...CITIES).map((c) => ({ text: `I moved to ${c}.`, slot: 'home', value: c })),
  fc.constantFrom('blue', 'green').map((c) => ({ text: `My favorite color is ${c}.`, slot: 'color', value: c })),
  fc.constantFrom(...THINGS).map((t) => ({ text: `I like ${t}.`, likes: t })),
  fc.constantFrom(...THINGS).map((t) => ({ text: `I like ${t} a lot.`, likes: t })),
  fc.constantFrom(...THINGS).map((t) => ({ text: `I no longer like ${t}.`, retracts: `i like ${t}`, retractsLike: t })),
  fc.constantFrom(...CITIES).map((c) => ({ text: `I no longer live in ${c}.`, retracts: `i live in ${c.toLowerCase()}`, retractsHome: c })),
)

const key = (text: string): string => text.toLowerCase().replace(/\.$/, '')

interface Held {
  readonly name: string
  fact: Fact
}

describe('consolidation = a plain oracle of its three rules', () => {
  it('CREATED / UPDATED / DELETED, names and facts, and the memories left', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fact, { minLength: 1, maxLength: 12 }), async (facts) => {
        const bank = new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 64 }), randomId: seededRandomId(3), dense: 'exact', consolidationSimilarity: 1 })
        const parent = 'projects/p/locations/l/reasoningEngines/1'
        const held: Held[] = []
        for (const f of facts) {
          // The oracle: a retraction deletes what it takes back (the same text, else the same home, else a like of the
          // same thing; never a stored retraction); else the same text, else (not for a retraction) the same slot, is
          // updated; else created.
          const first = (...tests: ((h: Held) => boolean)[]): number => tests.map((t) => held.findIndex(t)).find((i) => i >= 0) ?? -1
          const taken =
            f.retracts === undefined
              ? -1
              : first(
                  (h) => key(h.fact.text) === f.retracts,
                  (h) => f.retractsHome !== undefined && h.fact.slot === 'home' && h.fact.value === f.retractsHome,
                  (h) => f.retractsLike !== undefined && h.fact.likes === f.retractsLike,
                )
          const same = held.findIndex((h) => key(h.fact.text) === key(f.text))
          const slot = f.slot === undefined ? -1 : held.findIndex((h) => h.fact.slot === f.slot)
          const outcome = await bank.generateMemories({ parent, scope: { u: '1' }, directMemoriesSource: { directMemories: [{ fact: f.text }] } })
          if (!outcome.ok) throw new Error(outcome.status.message)
          const [generated] = (outcome.response.response as unknown as { generatedMemories: { action: string; memory: { name: string; fact?: string } }[] }).generatedMemories
          if (taken >= 0) {
            expect([generated?.action, generated?.memory.name]).toEqual(['DELETED', held[taken]?.name])
            held.splice(taken, 1)
          } else if (same >= 0 || slot >= 0) {
            const target = held[same >= 0 ? same : slot] as Held
            expect([generated?.action, generated?.memory.name, generated?.memory.fact]).toEqual(['UPDATED', target.name, f.text])
            target.fact = f
          } else {
            expect([generated?.action, generated?.memory.fact]).toEqual(['CREATED', f.text])
            held.push({ name: generated?.memory.name as string, fact: f })
          }
        }
        const listed = await bank.listMemories({ parent })
        const memories = listed.ok ? (listed.response.memories ?? []) : []
        expect(memories.map((m) => [m.name, m.fact]).sort()).toEqual(held.map((h) => [h.name, h.fact.text]).sort())
      }),
      { numRuns: runs(40) },
    )
  })
})

/**
 * One request of many facts is consolidated as the same facts one request each, against the
 * scope's memories: those made by earlier requests (stored retractions and duplicate texts
 * included, which consolidation itself never leaves) and those the request itself creates,
 * rewrites and deletes as it goes. The facts reach the bank through an extractor (directMemories
 * takes at most five). Memories are named by the order of their making, as operation ids take
 * their draws too.
 */
const PARENT = 'projects/p/locations/l/reasoningEngines/1'
const SCOPE = { u: '1' }

function consolidatingBank(facts: readonly string[] = []): MemoryBank {
  const extractor: MemoryBankOptions['extractor'] = async () => facts
  return new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 64 }), randomId: seededRandomId(3), dense: 'exact', extractor })
}

/** Creates memories with these facts as they are (no consolidation): duplicates and retractions stay. */
async function stored(bank: MemoryBank, facts: readonly string[]): Promise<string[]> {
  const names: string[] = []
  for (const fact of facts) {
    const made = await bank.createMemory({ parent: PARENT, memory: { fact, scope: SCOPE } })
    if (!made.ok) throw new Error(made.status.message)
    names.push((made.response.response as unknown as { name: string }).name)
  }
  return names
}

type Generated = { action: string; memory: { name: string; fact?: string } }

function generatedOf(outcome: Awaited<ReturnType<MemoryBank['generateMemories']>>): Generated[] {
  if (!outcome.ok) throw new Error(outcome.status.message)
  return (outcome.response.response as unknown as { generatedMemories?: Generated[] }).generatedMemories ?? []
}

/** Names as the order of their making: the stored memories first, then each one a request created. */
function renamer(storedNames: readonly string[]): (name: string) => string {
  const names = new Map(storedNames.map((n, i) => [n, `stored${i}`]))
  return (name) => {
    if (!names.has(name)) names.set(name, `made${names.size - storedNames.length}`)
    return names.get(name) as string
  }
}

async function memoriesLeft(bank: MemoryBank, rename: (name: string) => string): Promise<string[][]> {
  const listed = await bank.listMemories({ parent: PARENT, pageSize: 100 })
  if (!listed.ok) throw new Error(listed.status.message)
  return (listed.response.memories ?? []).map((m) => [rename(m.name as string), m.fact as string]).sort()
}

describe('consolidation of one request of many facts = one request per fact', () => {
  it('same actions, memories and facts, over stored duplicates and retractions', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fact, { maxLength: 10 }), fc.array(fact, { minLength: 1, maxLength: 30 }), async (before, facts) => {
        const texts = facts.map((f) => f.text)
        const batch = consolidatingBank(texts)
        const batchRename = renamer(await stored(batch, before.map((f) => f.text)))
        const batched = generatedOf(await batch.generateMemories({ parent: PARENT, scope: SCOPE, directContentsSource: { events: [{ content: { role: 'user', parts: [{ text: 'x' }] } }] } }))

        const single = consolidatingBank()
        const singleRename = renamer(await stored(single, before.map((f) => f.text)))
        const one: Generated[] = []
        for (const text of texts) one.push(...generatedOf(await single.generateMemories({ parent: PARENT, scope: SCOPE, directMemoriesSource: { directMemories: [{ fact: text }] } })))

        const view = (list: Generated[], rename: (name: string) => string): unknown[] => list.map((g) => [g.action, rename(g.memory.name), g.memory.fact])
        expect(view(batched, batchRename)).toEqual(view(one, singleRename))
        expect(await memoriesLeft(batch, batchRename)).toEqual(await memoriesLeft(single, singleRename))
      }),
      { numRuns: runs(60) },
    )
  })
})

afterEach(() => {
  vi.restoreAllMocks()
})

describe('consolidation reads each memory once per request', () => {
  it('normalizes about facts + memories texts, not their product', async () => {
    const M = 300
    const F = 300
    const kinds = (i: number): string => [`I like thing${i}.`, `I no longer like thing${i}.`, `My pet${i % 7} is called Rex${i}.`, `I like thing${i % 50}.`, `I don't read book${i} anymore.`][i % 5] as string
    const facts = Array.from({ length: F }, (_, i) => kinds(i))
    const bank = consolidatingBank(facts)
    await stored(bank, Array.from({ length: M }, (_, i) => (i % 10 === 0 ? `I no longer like thing${i}.` : `I like thing${i} and more ${i}.`)))
    // normalizeFact is the one caller of NFKC normalization: its calls, counted.
    const normalize = String.prototype.normalize
    let calls = 0
    vi.spyOn(String.prototype, 'normalize').mockImplementation(function (this: string, form?: string) {
      if (form === 'NFKC') calls++
      return normalize.call(this, form)
    })
    const generated = generatedOf(await bank.generateMemories({ parent: PARENT, scope: SCOPE, directContentsSource: { events: [{ content: { role: 'user', parts: [{ text: 'x' }] } }] } }))
    vi.restoreAllMocks()
    expect(generated).toHaveLength(F)
    expect(new Set(generated.map((g) => g.action))).toEqual(new Set(['CREATED', 'UPDATED', 'DELETED']))
    // Each stored memory once, then per fact: its own text, the statement a retraction takes back, and the memory it creates or rewrites.
    expect(calls).toBeGreaterThanOrEqual(M)
    expect(calls).toBeLessThanOrEqual(M + 3 * F)
  })
})
