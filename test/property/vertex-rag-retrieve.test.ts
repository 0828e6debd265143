import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Analyzer, chunkText, createHashingEmbedder } from '@quarry/core'
import { VertexRagEngine, seededRandomId, type ContextJson } from '@quarry/adapters'
import { chunkingOf } from '../../packages/adapters/src/vertex-rag/chunking.js'
import { runs } from '../support/runs.js'

/**
 * retrieveContexts against a brute force written from the API's rules: every chunk embedded with
 * the same embedder; dense (alpha 1) ranks by cosine distance, sparse (alpha 0) by a plainly
 * written BM25 (k1 1.2, b 0.75, statistics over the whole corpus); ragFileIds and a metadata
 * filter restrict; thresholds are strict; ties by chunk id; topK cuts.
 */
const L = 'projects/p/locations/l'
const embedder = createHashingEmbedder({ dimensions: 32 })
const analyzer = new Analyzer()
const WORDS = ['desert', 'spice', 'worm', 'ocean', 'ship', 'storm', 'garden', 'rose', 'the', 'of']
const CHUNK = { size: 6, overlap: 2 }

interface FileSpec { words: string[]; year: number | undefined; genre: string | undefined }
interface Chunk { id: string; file: string; text: string; vector: Float32Array; year: number | undefined; genre: string | undefined }

const fileArb: fc.Arbitrary<FileSpec> = fc.record({
  words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 20 }),
  year: fc.option(fc.integer({ min: 1990, max: 1995 }), { nil: undefined }),
  genre: fc.option(fc.constantFrom('scifi', 'drama'), { nil: undefined }),
})

type MF = { text: string; test: (c: Chunk) => boolean }
const filterArb: fc.Arbitrary<MF | undefined> = fc.option(
  fc.oneof(
    fc.integer({ min: 1989, max: 1996 }).map((y): MF => ({ text: `year < ${y}`, test: (c) => c.year !== undefined && c.year < y })),
    fc.constantFrom('scifi', 'drama').map((g): MF => ({ text: `genre = "${g}"`, test: (c) => c.genre === g })),
    fc.tuple(fc.integer({ min: 1989, max: 1996 }), fc.constantFrom('scifi', 'drama')).map(([y, g]): MF => ({
      text: `year >= ${y} OR NOT genre = "${g}"`,
      test: (c) => (c.year !== undefined && c.year >= y) || !(c.genre === g),
    })),
  ),
  { nil: undefined },
)

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

function bm25(chunks: readonly Chunk[], query: string): Map<string, number> {
  const docs = chunks.map((c) => analyzer.terms(c.text))
  // N and the average length over the chunks with a term, as Lucene's docCount (a chunk of stop words is none).
  const withTerms = docs.filter((d) => d.length > 0)
  const n = withTerms.length
  const avgdl = withTerms.reduce((s, d) => s + d.length, 0) / n
  const out = new Map<string, number>()
  const q = analyzer.terms(query)
  chunks.forEach((c, i) => {
    const d = docs[i] as string[]
    let score = 0
    let matched = false
    for (const term of q) {
      const tf = d.filter((t) => t === term).length
      if (tf === 0) continue
      matched = true
      const df = docs.filter((x) => x.includes(term)).length
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5))
      score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * d.length) / avgdl))
    }
    if (matched) out.set(c.id, score)
  })
  return out
}

const byScore = (a: { id: string; s: number }, b: { id: string; s: number }, asc: boolean): number => (asc ? a.s - b.s : b.s - a.s) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** Same ranking up to float noise: scores agree at every rank, ids agree except within near-ties. */
function expectRanking(actual: readonly ContextJson[], expected: readonly { id: string; s: number }[]): void {
  expect(actual.map((c) => c.chunk.chunkId).length).toBe(expected.length)
  expected.forEach((e, i) => {
    const a = actual[i] as ContextJson
    expect(a.score).toBeCloseTo(e.s, 6)
    if (!expected.some((o, j) => j !== i && Math.abs(o.s - e.s) < 1e-7)) expect(a.chunk.chunkId).toBe(e.id)
  })
}

describe('retrieveContexts equals a brute-force oracle', () => {
  it('dense (alpha 1) and sparse (alpha 0), with filters, file restrictions, thresholds and topK', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fileArb, { minLength: 1, maxLength: 5 }),
        fc.array(fc.constantFrom(...WORDS.slice(0, 8)), { minLength: 1, maxLength: 3 }),
        fc.constantFrom(0, 1),
        fc.integer({ min: 1, max: 8 }),
        filterArb,
        fc.option(fc.double({ min: 0.2, max: 1.2, noNaN: true }), { nil: undefined }),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        async (files, queryWords, alpha, topK, filter, threshold, pick) => {
          const engine = new VertexRagEngine({ embedder, randomId: seededRandomId(2) })
          const s = engine.v1beta1
          const created = await s.createRagCorpus({ parent: L, ragCorpus: { displayName: 'P' } })
          if (!created.ok) throw new Error('create failed')
          const corpus = created.response.response?.name as string
          await s.createRagDataSchema({ parent: corpus, ragDataSchema: { key: 'year', schemaDetails: { type: 'INTEGER' } } })
          const chunks: Chunk[] = []
          const fileIds: string[] = []
          for (const [i, f] of files.entries()) {
            const text = f.words.join(' ')
            const up = await s.uploadRagFile({ parent: corpus, ragFile: { displayName: `f${i}.txt` }, uploadRagFileConfig: { ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: CHUNK.size, chunkOverlap: CHUNK.overlap } } } } }, text)
            if (!up.ok || !up.response.ragFile) throw new Error('upload failed')
            const file = up.response.ragFile.name
            const id = file.split('/').pop() as string
            fileIds.push(id)
            if (f.year !== undefined) await s.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key: 'year', value: { intValue: f.year } } } })
            if (f.genre !== undefined) await s.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key: 'genre', value: { strValue: f.genre } } } })
            const pieces = chunkText(analyzer, text, CHUNK)
            const vectors = await embedder.embed(pieces.map((p) => p.text))
            pieces.forEach((p, j) => chunks.push({ id: `${id}-${String(j).padStart(6, '0')}`, file: id, text: p.text, vector: vectors[j] as Float32Array, year: f.year, genre: f.genre }))
          }
          const restrict = fileIds.filter((_, i) => pick[i])
          const query = queryWords.join(' ')
          const response = await s.retrieveContexts({
            parent: L,
            vertexRagStore: { ragResources: [{ ragCorpus: corpus, ragFileIds: restrict }] },
            query: { text: query, ragRetrievalConfig: { topK, hybridSearch: { alpha }, filter: { ...(filter ? { metadataFilter: filter.text } : {}), ...(threshold !== undefined ? { vectorDistanceThreshold: threshold } : {}) } } },
          })
          if (!response.ok) throw new Error(response.status.message)
          const got = response.response.contexts.contexts ?? []

          const [q] = await embedder.embed([query])
          const eligible = chunks.filter((c) => (restrict.length === 0 || restrict.includes(c.file)) && (!filter || filter.test(c)))
          const distance = new Map(chunks.map((c) => [c.id, cosineDistance(q as Float32Array, c.vector)]))
          // A distance within float32 rounding of the threshold (the engine's kernels compute in
          // float32, this oracle in doubles) may fall on either side of it: such cases are not judged.
          fc.pre(threshold === undefined || eligible.every((c) => Math.abs((distance.get(c.id) as number) - threshold) > 1e-6))
          const withinThreshold = (c: Chunk): boolean => threshold === undefined || (distance.get(c.id) as number) < threshold
          let expected: { id: string; s: number }[]
          if (alpha === 1) {
            expected = eligible.filter(withinThreshold).map((c) => ({ id: c.id, s: distance.get(c.id) as number })).sort((a, b) => byScore(a, b, true)).slice(0, topK)
          } else {
            const scores = bm25(chunks, query)
            const ranked = eligible.filter((c) => scores.has(c.id) && withinThreshold(c)).map((c) => ({ id: c.id, s: scores.get(c.id) as number })).sort((a, b) => byScore(a, b, false)).slice(0, topK)
            const best = ranked[0]?.s ?? 0
            expected = ranked.map((r) => ({ id: r.id, s: 1 - r.s / best }))
            // sparseDistance is 1 / (1 + BM25): smaller is closer.
            got.forEach((c, i) => expect(c.sparseDistance).toBeCloseTo(1 / (1 + (ranked[i] as { s: number }).s), 6))
          }
          expectRanking(got, expected)
          for (const c of got) {
            // A distance of exactly 0 is omitted (a double without presence).
            expect(c.distance ?? 0).toBeCloseTo(distance.get(c.chunk.chunkId as string) as number, 6)
            expect(c.sourceUri).toBe(c.sourceDisplayName)
            expect(c.text).toBe(chunks.find((x) => x.id === c.chunk.chunkId)?.text)
          }
        },
      ),
      { numRuns: runs(60) },
    )
  })
})

describe('fixed-length chunking', () => {
  const textArb = fc
    .array(fc.tuple(fc.constantFrom(...WORDS, 'Émile', "don't", '42', 'x'), fc.constantFrom(' ', '  ', ', ', '.\n', ' — ', '\t')), { minLength: 0, maxLength: 80 })
    .map((parts) => parts.map(([w, sep]) => w + sep).join(''))
  it('covers every token, overlaps by exactly chunkOverlap tokens, and keeps offsets into the source', () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 1, max: 12 }), fc.nat(), (text, size, o) => {
        const plan = chunkingOf({ ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: size, chunkOverlap: size > 1 ? (o % (size - 1)) + 1 : 0 } } } }, 'c')
        const tokens = analyzer.tokens(text)
        const chunks = chunkText(analyzer, text, plan)
        if (tokens.length === 0) {
          expect(chunks).toEqual([])
          return
        }
        const covered = new Set<number>()
        chunks.forEach((c, i) => {
          expect(c.text).toBe(text.slice(c.start, c.end))
          expect(c.start).toBe(tokens[c.firstToken]?.start)
          expect(c.end).toBe(tokens[c.firstToken + c.tokens - 1]?.end)
          expect(c.tokens).toBeLessThanOrEqual(plan.size)
          for (let t = c.firstToken; t < c.firstToken + c.tokens; t++) covered.add(t)
          const next = chunks[i + 1]
          if (next) {
            expect(c.tokens).toBe(plan.size)
            expect(c.firstToken + c.tokens - next.firstToken).toBe(plan.overlap)
          }
        })
        expect(covered.size).toBe(tokens.length)
        expect((chunks[chunks.length - 1] as { end: number }).end).toBe(tokens[tokens.length - 1]?.end)
      }),
      { numRuns: runs(1000) },
    )
  })

  it('defaults to 1024 / 200, a size without an overlap to none, and refuses an overlap not below the size', () => {
    expect(chunkingOf({}, 'c')).toEqual({ size: 1024, overlap: 200 })
    const fixed = (f: { chunkSize?: number; chunkOverlap?: number }): unknown => chunkingOf({ ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: f } } }, 'c')
    expect(fixed({})).toEqual({ size: 1024, overlap: 200 })
    expect(fixed({ chunkSize: 0, chunkOverlap: 0 })).toEqual({ size: 1024, overlap: 200 })
    expect(fixed({ chunkOverlap: 50 })).toEqual({ size: 1024, overlap: 50 })
    // int32 without presence: an overlap of 0 is the same as none, and with a size given both mean no overlap.
    expect(fixed({ chunkSize: 100, chunkOverlap: 0 })).toEqual({ size: 100, overlap: 0 })
    expect(fixed({ chunkSize: 100 })).toEqual({ size: 100, overlap: 0 })
    expect(fixed({ chunkSize: 1 })).toEqual({ size: 1, overlap: 0 })
    expect(fixed({ chunkSize: 2000 })).toEqual({ size: 2000, overlap: 0 })
    expect(chunkingOf({ ragFileChunkingConfig: { chunkSize: 100 } }, 'c')).toEqual({ size: 100, overlap: 0 })
    expect(chunkingOf({ ragFileChunkingConfig: { chunkSize: 300, chunkOverlap: 50 } }, 'c')).toEqual({ size: 300, overlap: 50 })
    expect(() => chunkingOf({ ragFileChunkingConfig: { chunkSize: 10, chunkOverlap: 10 } }, 'c')).toThrow(/chunkOverlap must be at least 0 and smaller than chunkSize/)
  })
})
