import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, seededRandomId } from '@quarry/adapters'
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
