import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Analyzer } from '@quarry/core'
import type { Label } from '../../packages/core/src/ids.js'
import { resolveIndexOptions } from '../../packages/core/src/engine/options.js'
import { queryTerms, sparseDocument } from '../../packages/core/src/engine/sparse-search.js'
import { SparseIndex } from '../../packages/core/src/sparse/sparse-index.js'
import type { TextInput } from '../../packages/core/src/engine/record.js'
import { runs } from '../support/runs.js'

// Issue 20: indexing hands the sparse index the Analyzer's term ids and summed weights (reused
// counts, translated once per term into the index's ids) instead of a Map of term strings. The
// oracle is the Map the counts stand for, written plainly from `analyzer.terms`: both indexes
// must hold the same vocabulary in the same order, the same forward entries and lengths, and
// answer every query with the same labels, order and scores (to the last bit).

/** A record's text as a Map of boosted term frequencies, written plainly (the former sparseDocument). */
function mappedDocument(analyzer: Analyzer, text: TextInput, boosts: Readonly<Record<string, { readonly boost: number }>>): { terms: Map<string, number>; length: number } {
  const terms = new Map<string, number>()
  let length = 0
  const fields: [string, string][] = typeof text === 'string' ? [['text', text]] : Object.entries(text)
  for (const [field, value] of fields) {
    const boost = boosts[field]?.boost ?? 1
    for (const term of analyzer.terms(value)) {
      terms.set(term, (terms.get(term) ?? 0) + boost)
      length += boost
    }
  }
  return { terms, length }
}

const words = fc.constantFrom('flow', 'flows', 'Flowing', 'boundary', 'layer', 'layers', 'the', 'of', 'shock', "isn't", 'cannot', '3.5', 'me@x.org', '`code`', '**bold**', 'x-ray', 'Mach', 'U.S.', 'naïve', 'café', '(a)', 'wave,')
const field = fc.array(words, { minLength: 0, maxLength: 12 }).map((ws) => ws.join(' '))
const text: fc.Arbitrary<TextInput> = fc.oneof(field, fc.record({ title: field, body: field }), fc.record({ body: field, title: field, tags: field }))
/** set (label, text), or delete a label. */
const op = fc.oneof(fc.tuple(fc.integer({ min: 0, max: 20 }), text), fc.tuple(fc.integer({ min: 0, max: 20 }), fc.constant(undefined)))
const boost = fc.oneof(fc.constant(1), fc.double({ min: 0.001, max: 4, noNaN: true }))

describe('indexing from the Analyzer’s term ids equals indexing from a Map of terms', () => {
  it('same vocabulary, forward entries, lengths and search results, with field boosts, replacements, deletions and two analyzers', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 40 }), boost, boost, fc.array(fc.array(words, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }), (ops, titleBoost, tagsBoost, queries) => {
        const options = resolveIndexOptions({ text: { fields: { title: { boost: titleBoost }, tags: { boost: tagsBoost } } } }).text
        // Two analyzers of the same options number terms differently: the index's translation starts over at each switch.
        const analyzers = [new Analyzer(), new Analyzer()]
        analyzers[1]?.terms('zeta eta theta layer flow')
        const oracleAnalyzer = new Analyzer()
        const counted = new SparseIndex(options.bm25)
        const mapped = new SparseIndex(options.bm25)
        ops.forEach(([label, t], i) => {
          if (t === undefined) {
            expect(counted.delete(label as Label)).toBe(mapped.delete(label as Label))
            return
          }
          counted.set(label as Label, sparseDocument(analyzers[i % 2] as Analyzer, t, options))
          mapped.set(label as Label, mappedDocument(oracleAnalyzer, t, options.fields))
        })
        expect(counted.terms).toEqual(mapped.terms)
        expect(counted.documents).toBe(mapped.documents)
        expect(counted.totalLength).toBe(mapped.totalLength)
        for (let label = 0; label <= 20; label++) {
          expect(counted.forward(label as Label)).toEqual(mapped.forward(label as Label))
          expect(counted.lengthOf(label as Label)).toBe(mapped.lengthOf(label as Label))
        }
        const tie = (a: Label, b: Label): number => a - b
        for (const q of queries) {
          const terms = queryTerms(oracleAnalyzer, q.join(' '))
          expect(counted.search(terms, 5, tie).hits).toEqual(mapped.search(terms, 5, tie).hits)
        }
      }),
      { numRuns: runs(300) },
    )
  })

  it('counts sum in token order: a term’s weight and the length are the Map’s to the last bit', () => {
    const options = resolveIndexOptions({ text: { fields: { title: { boost: 0.1 }, body: { boost: 0.7 } } } }).text
    const analyzer = new Analyzer()
    const t = { title: 'flow flow flow layer', body: 'flow layer layer flow the' }
    const doc = sparseDocument(analyzer, t, options)
    if (!('counts' in doc)) throw new Error('sparseDocument gave no counts')
    const want = mappedDocument(new Analyzer(), t, options.fields)
    const got = new Map<string, number>()
    for (let i = 0; i < doc.counts.size; i++) got.set(analyzer.termOf(doc.counts.ids[i] as number), doc.counts.weights[i] as number)
    expect([...got]).toEqual([...want.terms])
    expect(doc.length).toBe(want.length)
    // 0.1 + 0.1 + 0.1 is not 0.3: the sums are made in the same order, not recomputed.
    expect(got.get('flow')).toBe(0.1 + 0.1 + 0.1 + 0.7 + 0.7)
  })
})
