import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBankServiceClient, seededRandomId, type MemoryJson } from '@quarry/adapters'
import { runs } from '../support/runs.js'

/**
 * Scopes isolate memories: whatever the memories, scopes, queries and filters, a retrieval returns
 * only memories whose scope equals the request's exactly, and (without filters) all of them —
 * similarity search returns the brute-force nearest of that scope by cosine distance.
 */
const E = 'projects/p/locations/l/reasoningEngines/1'
const embedder = createHashingEmbedder({ dimensions: 32 })
const WORDS = ['tea', 'coffee', 'dog', 'cat', 'lyon', 'paris', 'cello', 'piano']
const scopeArb = fc
  .record({ user_id: fc.constantFrom('a', 'b', 'A'), agent: fc.constantFrom('x', 'y') }, { requiredKeys: ['user_id'] })
  .map((s) => s as Record<string, string>)
const memoryArb = fc.record({ fact: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 }).map((w) => w.join(' ')), scope: scopeArb })
const sameScope = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean => {
  const ka = Object.keys(a).sort()
  const kb = Object.keys(b).sort()
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k])
}

function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number)
    na += (a[i] as number) ** 2
    nb += (b[i] as number) ** 2
  }
  return 1 - dot / Math.sqrt(na * nb)
}

describe('Memory Bank scope isolation', () => {
  it('holds for similarity search, simple retrieval (all pages) and filters', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(memoryArb, { minLength: 1, maxLength: 25 }),
        scopeArb,
        fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1, max: 6 }),
        fc.option(fc.constantFrom(...WORDS), { nil: undefined }),
        async (memories, scope, queryWords, k, mustContain) => {
          const client = new MemoryBankServiceClient({ embedder, randomId: seededRandomId(4) })
          const created: MemoryJson[] = []
          for (const m of memories) {
            const [op] = await client.createMemory({ parent: E, memory: m })
            created.push((await op.promise())[0])
          }
          const inScope = created.filter((m) => sameScope(m.scope, scope))

          // Simple retrieval, every page.
          const seen: string[] = []
          let pageToken: string | undefined
          do {
            const [r] = await client.retrieveMemories({ parent: E, scope, simpleRetrievalParams: { pageSize: k, ...(pageToken ? { pageToken } : {}) } })
            for (const rm of r.retrievedMemories ?? []) {
              expect(sameScope(rm.memory.scope, scope)).toBe(true)
              expect(rm.distance).toBeUndefined()
              seen.push(rm.memory.name)
            }
            pageToken = r.nextPageToken
          } while (pageToken)
          expect(seen).toEqual(inScope.map((m) => m.name))

          // Similarity search against brute force within the scope.
          const query = queryWords.join(' ')
          const [q] = await embedder.embed([query])
          const vectors = await embedder.embed(inScope.map((m) => m.fact))
          const expected = inScope
            .map((m, i) => ({ name: m.name, d: cosineDistance(q as Float32Array, vectors[i] as Float32Array) }))
            .sort((a, b) => a.d - b.d || (a.name < b.name ? -1 : 1))
            .slice(0, k)
          const [s] = await client.retrieveMemories({ parent: E, scope, similaritySearchParams: { searchQuery: query, topK: k } })
          const got = s.retrievedMemories ?? []
          expect(got.length).toBe(expected.length)
          got.forEach((rm, i) => {
            expect(sameScope(rm.memory.scope, scope)).toBe(true)
            // Euclidean between unit embeddings, √(2 · cosine distance); exactly 0 is omitted (proto3).
            expect(rm.distance ?? 0).toBeCloseTo(Math.sqrt(2 * Math.max(0, (expected[i] as { d: number }).d)), 6)
            if (!expected.some((e, j) => j !== i && Math.abs(e.d - (expected[i] as { d: number }).d) < 1e-7)) expect(rm.memory.name).toBe(expected[i]?.name)
          })
          expect(s.nextPageToken).toBeUndefined()

          // A filter never widens the scope.
          if (mustContain !== undefined) {
            const [f] = await client.retrieveMemories({ parent: E, scope, filter: `fact:* AND NOT fact = "${mustContain}"`, simpleRetrievalParams: { pageSize: 100 } })
            const names = (f.retrievedMemories ?? []).map((rm) => rm.memory.name)
            expect(names).toEqual(inScope.filter((m) => m.fact !== mustContain).map((m) => m.name))
          }
        },
      ),
      { numRuns: runs(60) },
    )
  })
})
