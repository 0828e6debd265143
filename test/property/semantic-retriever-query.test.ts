import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { RetrieverServiceClient, seededRandomId, type CustomMetadataJson } from '@quarry/adapters'
import { runs } from '../support/runs.js'

/**
 * queryCorpus / queryDocument against a brute force written from the API's rules alone: embed
 * every chunk with the same embedder, keep chunks whose metadata passes every MetadataFilter
 * (conditions ORed, filters ANDed, a type mismatch never matches), rank by cosine similarity,
 * ties by chunk name, and cut at resultsCount.
 */
const embedder = createHashingEmbedder({ dimensions: 32 })
const WORDS = ['desert', 'spice', 'worm', 'ocean', 'ship', 'storm', 'garden', 'rose', 'clock', 'river']
const GENRES = ['scifi', 'drama', 'poetry']

type Cond = { operation: string; stringValue?: string; numericValue?: number }
type MF = { key: string; conditions: Cond[] }

interface ChunkSpec { text: string; page?: number; speaker?: string; tags?: string[] }
interface DocSpec { year?: number; genre?: string; chunks: ChunkSpec[] }

const chunkArb: fc.Arbitrary<ChunkSpec> = fc.record(
  {
    text: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }).map((w) => w.join(' ')),
    page: fc.integer({ min: 1, max: 5 }),
    speaker: fc.constantFrom('Paul', 'Emma', 'Jessica'),
    tags: fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }),
  },
  { requiredKeys: ['text'] },
)
const docArb: fc.Arbitrary<DocSpec> = fc.record(
  { year: fc.integer({ min: 1990, max: 2000 }), genre: fc.constantFrom(...GENRES), chunks: fc.array(chunkArb, { minLength: 1, maxLength: 8 }) },
  { requiredKeys: ['chunks'] },
)

const numericOp = fc.constantFrom('LESS', 'LESS_EQUAL', 'GREATER_EQUAL', 'GREATER', 'EQUAL', 'NOT_EQUAL')
const stringOp = fc.constantFrom('EQUAL', 'NOT_EQUAL')
const listOp = fc.constantFrom('INCLUDES', 'EXCLUDES')
const numCond = (lo: number, hi: number): fc.Arbitrary<Cond> => fc.record({ operation: numericOp, numericValue: fc.integer({ min: lo, max: hi }) })

/** Filters that are valid requests (string keys appear in one filter only). Some compare across types on purpose. */
const filtersArb = (scope: 'corpus' | 'document'): fc.Arbitrary<MF[]> => {
  const options: fc.Arbitrary<MF>[] = [
    fc.record({ key: fc.constant('chunk.custom_metadata.page'), conditions: fc.array(numCond(0, 6), { minLength: 1, maxLength: 2 }) }),
    fc.record({ key: fc.constant('chunk.custom_metadata.speaker'), conditions: fc.array(fc.record({ operation: stringOp, stringValue: fc.constantFrom('Paul', 'Emma', 'x') }), { minLength: 1, maxLength: 2 }) }),
    fc.record({ key: fc.constant('chunk.custom_metadata.tags'), conditions: fc.array(fc.record({ operation: listOp, stringValue: fc.constantFrom('a', 'b', 'c') }), { minLength: 1, maxLength: 2 }) }),
    fc.record({ key: fc.constant('chunk.custom_metadata.speaker'), conditions: fc.array(numCond(0, 3), { minLength: 1, maxLength: 1 }) }),
  ]
  if (scope === 'corpus') {
    options.push(fc.record({ key: fc.constant('document.custom_metadata.year'), conditions: fc.array(numCond(1989, 2001), { minLength: 1, maxLength: 2 }) }))
    options.push(fc.record({ key: fc.constant('document.custom_metadata.genre'), conditions: fc.array(fc.record({ operation: stringOp, stringValue: fc.constantFrom(...GENRES) }), { minLength: 1, maxLength: 2 }) }))
  }
  return fc.array(fc.oneof(...options), { maxLength: 3 }).filter((fs) => {
    const stringKeys = fs.filter((f) => f.conditions.some((c) => c.stringValue !== undefined)).map((f) => f.key)
    return new Set(stringKeys).size === stringKeys.length
  })
}

function metadataOf(spec: { page?: number; speaker?: string; tags?: string[]; year?: number; genre?: string }): CustomMetadataJson[] {
  const out: CustomMetadataJson[] = []
  if (spec.page !== undefined) out.push({ key: 'page', numericValue: spec.page })
  if (spec.speaker !== undefined) out.push({ key: 'speaker', stringValue: spec.speaker })
  if (spec.tags !== undefined) out.push({ key: 'tags', stringListValue: { values: spec.tags } })
  if (spec.year !== undefined) out.push({ key: 'year', numericValue: spec.year })
  if (spec.genre !== undefined) out.push({ key: 'genre', stringValue: spec.genre })
  return out
}

function conditionHolds(c: Cond, v: CustomMetadataJson | undefined): boolean {
  if (v === undefined) return false
  if (c.operation === 'INCLUDES' || c.operation === 'EXCLUDES') {
    if (!('stringListValue' in v)) return false
    return (v.stringListValue.values ?? []).includes(c.stringValue as string) === (c.operation === 'INCLUDES')
  }
  if (c.numericValue !== undefined) {
    if (!('numericValue' in v)) return false
    const [a, b] = [v.numericValue, c.numericValue]
    return { LESS: a < b, LESS_EQUAL: a <= b, GREATER_EQUAL: a >= b, GREATER: a > b, EQUAL: a === b, NOT_EQUAL: a !== b }[c.operation] === true
  }
  if (!('stringValue' in v)) return false
  return c.operation === 'EQUAL' ? v.stringValue === c.stringValue : v.stringValue !== c.stringValue
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number)
    na += (a[i] as number) ** 2
    nb += (b[i] as number) ** 2
  }
  return dot / Math.sqrt(na * nb)
}

interface OracleChunk { name: string; document: string; vector: Float32Array; chunkMd: CustomMetadataJson[]; docMd: CustomMetadataJson[] }

/** Every passing chunk, ranked (the caller compares the first resultsCount: near-ties at the cut need the rest). */
async function oracle(chunks: readonly OracleChunk[], query: string, filters: readonly MF[], onlyDocument?: string): Promise<{ name: string; score: number }[]> {
  const [q] = await embedder.embed([query])
  const passing = chunks.filter((c) => {
    if (onlyDocument !== undefined && c.document !== onlyDocument) return false
    return filters.every((f) => {
      const [level, , key] = f.key.split('.')
      const v = (level === 'chunk' ? c.chunkMd : c.docMd).find((m) => m.key === key)
      return f.conditions.some((cond) => conditionHolds(cond, v))
    })
  })
  return passing
    .map((c) => ({ name: c.name, score: cosine(q as Float32Array, c.vector) }))
    .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/**
 * The first k of the oracle's ranking, up to float noise: scores agree at every rank; names agree
 * except within near-ties, including a tie with a chunk just past the cut (the engine scores in
 * float32: two chunks 3e-9 apart may come in either order, and either may be the k-th).
 */
function expectSameRanking(actual: readonly { name: string; score: number }[], ranked: readonly { name: string; score: number }[], k: number): void {
  const expected = ranked.slice(0, k)
  expect(actual.length).toBe(expected.length)
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i] as { name: string; score: number }
    const a = actual[i] as { name: string; score: number }
    expect(a.score).toBeCloseTo(e.score, 5)
    const tied = ranked.some((o, j) => j !== i && Math.abs(o.score - e.score) < 1e-6)
    if (!tied) expect(a.name).toBe(e.name)
  }
}

describe('queryCorpus and queryDocument equal a brute-force oracle', () => {
  it('for random corpora, filters, queries and result counts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(docArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }),
        filtersArb('corpus'),
        filtersArb('document'),
        fc.integer({ min: 1, max: 12 }),
        fc.nat(),
        async (docs, queryWords, corpusFilters, documentFilters, k, pick) => {
          const client = new RetrieverServiceClient({ embedder, randomId: seededRandomId(1) })
          const [corpus] = await client.createCorpus({ corpus: { name: 'corpora/prop' } })
          const all: OracleChunk[] = []
          for (const [i, d] of docs.entries()) {
            const docMd = metadataOf(d)
            const [document] = await client.createDocument({ parent: corpus.name, document: { name: `${corpus.name}/documents/d${i}`, customMetadata: docMd } })
            const [{ chunks = [] }] = await client.batchCreateChunks({
              parent: document.name,
              requests: d.chunks.map((c) => ({ chunk: { data: { stringValue: c.text }, customMetadata: metadataOf(c) } })),
            })
            const vectors = await embedder.embed(d.chunks.map((c) => c.text))
            chunks.forEach((c, j) => all.push({ name: c.name, document: document.name, vector: vectors[j] as Float32Array, chunkMd: metadataOf(d.chunks[j] as ChunkSpec), docMd }))
          }
          const query = queryWords.join(' ')

          const [corpusResult] = await client.queryCorpus({ name: corpus.name, query, metadataFilters: corpusFilters, resultsCount: k })
          const got = (corpusResult.relevantChunks ?? []).map((r) => ({ name: r.chunk.name, score: r.chunkRelevanceScore ?? 0 }))
          expectSameRanking(got, await oracle(all, query, corpusFilters), k)
          for (const r of corpusResult.relevantChunks ?? []) expect(r.chunk.name.startsWith(`${r.document?.name}/chunks/`)).toBe(true)

          const documentName = `${corpus.name}/documents/d${pick % docs.length}`
          const [documentResult] = await client.queryDocument({ name: documentName, query, metadataFilters: documentFilters, resultsCount: k })
          const gotDoc = (documentResult.relevantChunks ?? []).map((r) => ({ name: r.chunk.name, score: r.chunkRelevanceScore ?? 0 }))
          expectSameRanking(gotDoc, await oracle(all, query, documentFilters, documentName), k)
          for (const r of documentResult.relevantChunks ?? []) expect(r.document).toBeUndefined()
        },
      ),
      { numRuns: runs(60) },
    )
  })
})
