import fc from 'fast-check'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createIndex, loadIndex, type Filter, type QuarryIndex } from '@quarry/core'
import { runs } from '../support/runs.js'

const dir = mkdtempSync(join(tmpdir(), 'quarry-persist-prop-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const WORDS = ['wing', 'flow', 'shock', 'heat', 'plate', 'layer', 'café', 'naïve']
const vector = fc.array(fc.integer({ min: -4, max: 4 }), { minLength: 4, maxLength: 4 }).filter((v) => v.some((x) => x !== 0))
const op = fc.oneof(
  fc.record({ kind: fc.constant('upsert' as const), id: fc.integer({ min: 0, max: 25 }), vector, words: fc.array(fc.constantFrom(...WORDS), { maxLength: 5 }), year: fc.integer({ min: 1990, max: 2000 }), when: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: 25 }) }),
)

type Op = { kind: 'upsert'; id: number; vector: number[]; words: string[]; year: number; when: number } | { kind: 'remove'; id: number }

function apply(index: QuarryIndex, ops: readonly Op[]): void {
  for (const o of ops) {
    if (o.kind === 'remove') index.remove(`r${o.id}`)
    else
      index.upsert({
        id: `r${o.id}`,
        vector: o.vector,
        ...(o.words.length > 0 ? { text: o.words.length % 2 === 0 ? o.words.join(' ') : { title: o.words[0] as string, body: o.words.join(' ') } } : {}),
        metadata: { year: o.year, when: new Date(o.when * 86_400_000), tags: o.words },
      })
  }
}

/** The data files of a saved index (the manifest names its generation; the graph is hnswlib's), by name. */
function dataFiles(path: string): Map<string, Buffer> {
  const folder = readdirSync(path).find((name) => name.startsWith('snapshot-')) as string
  const files = readdirSync(join(path, folder)).filter((name) => name !== 'manifest.json' && name !== 'hnsw.bin')
  return new Map(files.map((name) => [name, readFileSync(join(path, folder, name))]))
}

/** Every answer of `actual` equals `expected`'s: searches of each kind, stats, records. */
function expectSameAnswers(actual: QuarryIndex, expected: QuarryIndex, q: number[], words: readonly string[]): void {
  const text = words.join(' ')
  const filter: Filter = { op: 'and', filters: [{ op: 'gte', field: 'year', value: 1994 }, { op: 'lt', field: 'when', value: { datetime: '1970-01-03T00:00:00Z' } }] }
  for (const request of [
    { vector: q, topK: 8 },
    { text, topK: 8, explain: true },
    { text, topK: 30 },
    { text, vector: q, topK: 8, explain: true },
    { text, vector: q, topK: 8, fusion: 'rrf' as const },
    { vector: q, topK: 8, filter },
    { text, topK: 8, filter: { op: 'includes', field: 'tags', value: 'flow' } as Filter },
  ]) {
    expect(actual.search(request)).toEqual(expected.search(request))
  }
  expect(actual.size).toBe(expected.size)
  expect(actual.textStats).toEqual(expected.textStats)
  expect([...actual.ids()].sort()).toEqual([...expected.ids()].sort())
  for (const id of expected.ids()) expect(actual.get(id)).toEqual(expected.get(id))
}

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
        expectSameAnswers(loadIndex(path), index, q, words)
      }),
      { numRuns: runs(60) },
    )
  })

  it('a loaded index changed after the load (records changed, removed, re-added) answers as the same changes to the unsaved index; an untouched one saves byte for byte the same files', () => {
    let run = 0
    const ops = fc.array(op as fc.Arbitrary<Op>, { maxLength: 50 })
    fc.assert(
      fc.property(ops, ops, vector, fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }), (before, after, q, words) => {
        // Exact: the oracle and the loaded index take the same changes (hnswlib's graph after a load is its own).
        const options = { dimensions: 4, metric: 'cosine' as const, dense: 'exact' as const, text: { fields: { title: { boost: 0.3 } } } }
        const oracle = createIndex(options)
        apply(oracle, before)
        const first = join(dir, `c${run}-a`)
        const second = join(dir, `c${run}-b`)
        const third = join(dir, `c${run++}-c`)
        oracle.save(first)
        const loaded = loadIndex(first)
        loaded.save(second)
        expect(dataFiles(second)).toEqual(dataFiles(first))
        apply(oracle, after)
        apply(loaded, after)
        expectSameAnswers(loaded, oracle, q, words)
        // Saved again with loaded and changed entries side by side, and loaded again.
        loaded.save(third)
        expectSameAnswers(loadIndex(third), oracle, q, words)
        oracle.save(second)
        expect(dataFiles(third)).toEqual(dataFiles(second))
      }),
      { numRuns: runs(60) },
    )
  })
})
