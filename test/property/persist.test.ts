import fc from 'fast-check'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createIndex, loadIndex, type Filter } from '@quarry/core'

const dir = mkdtempSync(join(tmpdir(), 'quarry-persist-prop-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const WORDS = ['wing', 'flow', 'shock', 'heat', 'plate', 'layer', 'café', 'naïve']
const vector = fc.array(fc.integer({ min: -4, max: 4 }), { minLength: 4, maxLength: 4 }).filter((v) => v.some((x) => x !== 0))
const op = fc.oneof(
  fc.record({ kind: fc.constant('upsert' as const), id: fc.integer({ min: 0, max: 25 }), vector, words: fc.array(fc.constantFrom(...WORDS), { maxLength: 5 }), year: fc.integer({ min: 1990, max: 2000 }), when: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 25 }) }),
)

describe('snapshots', () => {
  it('a loaded index returns exactly the results the saved one returned (dense, text, hybrid, filters)', () => {
    let run = 0
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), vector, fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }), fc.constantFrom<'hnsw' | 'exact'>('hnsw', 'exact'), (ops, q, words, dense) => {
        const index = createIndex({ dimensions: 4, metric: 'cosine', dense, planner: { exactBelow: 0 }, text: { fields: { title: { boost: 0.3 } } } })
        for (const o of ops) {
          if (o.kind === 'remove') index.remove(`r${o.id}`)
          else
            index.upsert({
              id: `r${o.id}`,
              vector: o.vector,
              ...(o.words.length > 0 ? { text: { title: o.words[0] as string, body: o.words.join(' ') } } : {}),
              metadata: { year: o.year, when: new Date(o.when * 86_400_000), tags: o.words },
            })
        }
        const path = join(dir, `p${run++}`)
        index.save(path)
        const loaded = loadIndex(path)
        const text = words.join(' ')
        const filter: Filter = { op: 'and', filters: [{ op: 'gte', field: 'year', value: 1994 }, { op: 'lt', field: 'when', value: { datetime: '1970-01-03T00:00:00Z' } }] }
        for (const request of [
          { vector: q, topK: 8 },
          { text, topK: 8, explain: true },
          { text, vector: q, topK: 8, explain: true },
          { text, vector: q, topK: 8, fusion: 'rrf' as const },
          { vector: q, topK: 8, filter },
          { text, topK: 8, filter: { op: 'includes', field: 'tags', value: 'flow' } as Filter },
        ]) {
          expect(loaded.search(request)).toEqual(index.search(request))
        }
        expect(loaded.size).toBe(index.size)
        expect(loaded.textStats).toEqual(index.textStats)
        for (const id of index.ids()) expect(loaded.get(id)).toEqual(index.get(id))
      }),
      { numRuns: 60 },
    )
  })
})
