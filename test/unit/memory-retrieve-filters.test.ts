import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compileFilter, createHashingEmbedder } from '@quarry/core'
import { MemoryBank, seededRandomId, type Outcome } from '@quarry/adapters'
import { retrievalFilter } from '../../packages/adapters/src/memory-bank/retrieve.js'
import type { ConjunctionInput, MetadataValueInput } from '../../packages/adapters/src/memory-bank/schema.js'
import { memoriesOfScope, memoryMetadata, scopeKeyOf } from '../../packages/adapters/src/memory-bank/state.js'
import { runs } from '../support/runs.js'

/**
 * retrieveMemories with simpleRetrievalParams has the value indexes answer its filter, as a
 * similarity search does: the same memories in the same order as the compiled filter tested on
 * each memory of the scope (how it read them before), at the cost of the filter's parts and their
 * matches. 100 groups of 100 filters over 10,000 memories took seconds read memory by memory.
 */
const E = 'projects/p/locations/l/reasoningEngines/1'

function bank(): MemoryBank {
  return new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 16 }), randomId: seededRandomId(7), dense: 'exact', onInternalError: (e) => { throw e } })
}

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.status))
  return outcome.response
}

/** Every page of a simple retrieval: the names, in order. */
async function retrieveAll(mb: MemoryBank, request: Record<string, unknown>, pageSize: number): Promise<string[]> {
  const names: string[] = []
  let pageToken: string | undefined
  do {
    const page = ok(await mb.retrieveMemories({ parent: E, ...request, simpleRetrievalParams: { pageSize, ...(pageToken ? { pageToken } : {}) } }))
    for (const r of page.retrievedMemories ?? []) names.push(r.memory.name)
    pageToken = page.nextPageToken
  } while (pageToken)
  return names
}

const SCOPES = [{ user_id: 'a' }, { user_id: 'b' }]
const KEYS = ['k1', 'k2', 'k3']
// Values of every kind, some equal across kinds' readings ("1" and 1): a comparison with another kind than the stored one matches nothing.
const value: fc.Arbitrary<MetadataValueInput> = fc.oneof(
  fc.constantFrom('a', 'b', '1').map((stringValue) => ({ stringValue })),
  fc.constantFrom(-1, 0, 1, 2.5).map((doubleValue) => ({ doubleValue })),
  fc.boolean().map((boolValue) => ({ boolValue })),
  fc.constantFrom('2026-01-01T00:00:00Z', '2026-06-01T00:00:00Z').map((timestampValue) => ({ timestampValue })),
)
const metadata = fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 3 })
const operation = fc.oneof(
  fc.record({ op: fc.constant('create' as const), scope: fc.nat(1), metadata, fact: fc.constantFrom('I like tea.', 'I live in Lyon.', 'My cat is Tom.') }),
  fc.record({ op: fc.constant('update' as const), at: fc.nat(), metadata }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat() }),
)
const groups: fc.Arbitrary<ConjunctionInput[]> = fc.array(
  fc.record({
    filters: fc.array(fc.record({ key: fc.constantFrom(...KEYS, 'k4'), op: fc.constantFrom('EQUAL', 'GREATER_THAN', 'LESS_THAN'), value, negate: fc.boolean() }), { minLength: 1, maxLength: 4 }),
  }),
  { maxLength: 4 },
)

describe('simple retrieval with filterGroups', () => {
  it('gives the memories, in the order, of the filter tested on each memory of the scope', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 1, maxLength: 30 }),
        fc.nat(1),
        groups,
        fc.constantFrom(undefined, 'fact:*', 'NOT fact = "I like tea."', 'fact = "My cat is Tom."'),
        fc.integer({ min: 1, max: 7 }),
        async (operations, scopeAt, filterGroups, filter, pageSize) => {
          const mb = bank()
          const names: string[] = []
          for (const o of operations) {
            if (o.op === 'create') {
              const op = ok(await mb.createMemory({ parent: E, memory: { fact: o.fact, scope: SCOPES[o.scope], metadata: o.metadata } })) as unknown as { response: { name: string } }
              names.push(op.response.name)
            } else if (names.length > 0) {
              const name = names[o.at % names.length] as string
              if (o.op === 'update') ok(await mb.updateMemory({ memory: { name, metadata: o.metadata }, updateMask: 'metadata' }))
              else {
                ok(await mb.deleteMemory({ name }))
                names.splice(names.indexOf(name), 1)
              }
            }
          }
          const scope = SCOPES[scopeAt] as Record<string, string>
          const engine = mb.engines().get(E)
          const test = compileFilter(retrievalFilter(scopeKeyOf(scope), filter, filterGroups))
          const expected = engine === undefined ? [] : [...memoriesOfScope(engine, scopeKeyOf(scope))].filter((m) => test(memoryMetadata(m))).map((m) => m.name)
          expect(await retrieveAll(mb, { scope, filterGroups, ...(filter === undefined ? {} : { filter }) }, pageSize)).toEqual(expected)
        },
      ),
      { numRuns: runs(150) },
    )
  })

  it('costs about what a similarity search with the same filter costs, not its filters times the scope', async () => {
    const mb = bank()
    const scope = { user_id: 'ana' }
    const N = 2_000
    for (let i = 0; i < N; i++) ok(await mb.createMemory({ parent: E, memory: { fact: `I like tea ${i}.`, scope, metadata: { k: { stringValue: 'v' }, i: { doubleValue: i } } } }))
    // 100 groups of 100 filters, each group failing at its last: tested memory by memory, every filter of every group is read.
    const group = { filters: [...Array.from({ length: 99 }, () => ({ key: 'k', op: 'EQUAL', value: { stringValue: 'v' } })), { key: 'k', op: 'EQUAL', value: { stringValue: 'nope' } }] }
    const request = { parent: E, scope, filterGroups: Array.from({ length: 100 }, () => group) }
    const simple = await cpuMsOf(() => mb.retrieveMemories({ ...request, simpleRetrievalParams: { pageSize: 100 } }))
    const similarity = await cpuMsOf(() => mb.retrieveMemories({ ...request, similaritySearchParams: { searchQuery: 'tea', topK: 100 } }))
    expect(simple, `simple retrieval ${simple.toFixed(1)} ms, similarity search ${similarity.toFixed(1)} ms`).toBeLessThan(4 * similarity + 5)
    // And the answer: nothing passes.
    expect(ok(await mb.retrieveMemories({ ...request, simpleRetrievalParams: { pageSize: 100 } }))).toEqual({})
    // A group that passes: the memories it keeps, in creation order.
    const some = ok(await mb.retrieveMemories({ parent: E, scope, filterGroups: [{ filters: [{ key: 'i', op: 'LESS_THAN', value: { doubleValue: 3 } }] }, { filters: [{ key: 'i', op: 'GREATER_THAN', value: { doubleValue: N - 2 } }] }], simpleRetrievalParams: { pageSize: 100 } }))
    expect(some.retrievedMemories?.map((r) => r.memory.fact)).toEqual(['I like tea 0.', 'I like tea 1.', 'I like tea 2.', `I like tea ${N - 1}.`])
  })
})

/** Processor milliseconds a call takes: the least of three (what other processes run meanwhile does not count). */
async function cpuMsOf(fn: () => Promise<unknown>): Promise<number> {
  let best = Infinity
  for (let i = 0; i < 3; i++) {
    const before = process.cpuUsage()
    await fn()
    const spent = process.cpuUsage(before)
    best = Math.min(best, (spent.user + spent.system) / 1000)
  }
  return best
}
