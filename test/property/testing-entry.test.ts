import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { QuarryError, createHashingEmbedder, createIndex, validateFilter, type Metric } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine, seededRandomId, type DistanceMetric, type Outcome } from '@quarry/adapters'
import {
  exactOracle,
  filterArbitrary,
  idArbitrary,
  metadataArbitrary,
  recallAtK,
  recordsArbitrary,
  sameRanking,
  vectorArbitrary,
  type MetadataFields,
} from '@quarry/core/testing'
import { queryCorpusRequestArbitrary, retrieveContextsRequestArbitrary, retrieveMemoriesRequestArbitrary } from '@quarry/adapters/testing'
import { runs } from '../support/runs.js'

/**
 * The testing entries (@quarry/core/testing, @quarry/adapters/testing) used as their users would:
 * the README's worked example runs here verbatim; Quarry's own HNSW path is checked against the
 * exact oracle with the arbitraries; sameRanking is shown to fail on a wrong index; and every
 * generated Google request is accepted by Quarry's own services (the proof that they are valid).
 */

describe('README example: a toy vector store checked against the exact oracle', () => {
  it('passes for a correct brute-force store', () => {
    // --- README example (begin) ---
    // Your vector store: here a toy one, brute-force cosine over a Map.
    class ToyStore {
      #rows = new Map<string, number[]>()
      add(id: string, vector: number[]): void {
        this.#rows.set(id, vector)
      }
      query(q: number[], k: number): { id: string; score: number }[] {
        const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0)
        const cos = (a: number[], b: number[]) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b))
        return [...this.#rows].map(([id, v]) => ({ id, score: cos(q, v) })).sort((a, b) => b.score - a.score).slice(0, k)
      }
    }

    const dimensions = 8
    // 'uniform' spreads components evenly: a float64 store and Quarry's float32 rows then agree to 1e-6.
    // The default, 'float32', also draws subnormals and tiny magnitudes, to test a store's numerics.
    const components = 'uniform'
    fc.assert(
      fc.property(recordsArbitrary({ dimensions, components, maxLength: 100 }), vectorArbitrary({ dimensions, components }), fc.integer({ min: 1, max: 20 }), (records, query, k) => {
        const store = new ToyStore()
        const oracle = exactOracle({ dimensions, metric: 'cosine' })
        for (const r of records) {
          store.add(r.id, r.vector)
          oracle.add(r)
        }
        // A few past k, so that a tie at the k-th place may go either way.
        const expected = oracle.search({ vector: query, topK: k + 5 })
        return sameRanking(expected, store.query(query, k), { k, tolerance: 1e-6 }).same
      }),
    )
    // --- README example (end) ---
  })
})

describe("Quarry's HNSW path against the exact oracle, on generated records, queries and filters", () => {
  const FIELDS: MetadataFields = { genre: 'string', year: 'number', live: 'boolean', tags: 'stringList', published: 'date' }
  const DIM = 12

  // Components spread evenly, like embeddings: float32 edge cases crowd vectors around the axes,
  // where distances are near-ties and recall measures the ties rather than the graph.
  it.each<Metric>(['cosine', 'dot', 'l2'])('recall@10 >= 0.95 (%s); exact strategies rank exactly like the oracle', (metric) => {
    let total = 0
    let searches = 0
    const strategies = new Set<string>()
    fc.assert(
      fc.property(
        recordsArbitrary({ dimensions: DIM, metric, components: 'uniform', fields: FIELDS, minLength: 50, maxLength: 300, id: idArbitrary({ maxLength: 6 }) }),
        // Every run has one unfiltered query, so the graph path is always taken at least once.
        vectorArbitrary({ dimensions: DIM, metric, components: 'uniform' }),
        fc.array(fc.tuple(vectorArbitrary({ dimensions: DIM, metric, components: 'uniform' }), fc.option(filterArbitrary({ fields: FIELDS, maxDepth: 2 }), { nil: undefined })), { minLength: 0, maxLength: 4 }),
        (records, unfiltered, filtered) => {
          const queries: [number[], (typeof filtered)[number][1]][] = [[unfiltered, undefined], ...filtered]
          const index = createIndex({ dimensions: DIM, metric, planner: { exactBelow: 0 } })
          const oracle = exactOracle({ dimensions: DIM, metric })
          index.addMany(records)
          for (const r of records) oracle.add(r)
          for (const [vector, filter] of queries) {
            const { hits, stats } = index.search({ vector, topK: 10, ...(filter ? { filter } : {}) })
            strategies.add(stats.strategy)
            // The oracle's top 20: ties at the 10th place may go either way.
            const expected = oracle.search({ vector, topK: 20, ...(filter ? { filter } : {}) })
            total += recallAtK(expected.map((h) => h.id), hits.map((h) => h.id), 10)
            searches++
            if (stats.strategy === 'exact' || stats.strategy === 'exact-filtered') {
              expect(sameRanking(expected, hits, { k: 10, tolerance: 1e-9 })).toEqual({ same: true })
            }
            if (!filter) expect(stats.strategy).toBe('hnsw')
          }
        },
      ),
      { numRuns: runs(30) },
    )
    expect(strategies.has('hnsw')).toBe(true)
    expect(total / searches).toBeGreaterThanOrEqual(0.95)
  })
})

describe('sameRanking can fail', () => {
  // A plausible bug: cosine ranked by the raw dot product (the vectors were never normalized).
  function wrongCosine(records: readonly { id: string; vector: number[] }[], q: number[], k: number): { id: string }[] {
    const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0)
    return records.map((r) => ({ id: r.id, s: dot(q, r.vector) })).sort((a, b) => b.s - a.s).slice(0, k)
  }

  it('finds a counterexample to a store that ranks cosine by the dot product', () => {
    const dimensions = 4
    const verdict = (records: readonly { id: string; vector: number[] }[], query: number[]) => {
      const oracle = exactOracle({ dimensions })
      for (const r of records) oracle.add(r)
      return sameRanking(oracle.search({ vector: query, topK: 5 }), wrongCosine(records, query, 5))
    }
    const details = fc.check(
      fc.property(recordsArbitrary({ dimensions, minLength: 2, maxLength: 30 }), vectorArbitrary({ dimensions }), (records, query) => verdict(records, query).same),
      { numRuns: runs(200) },
    )
    expect(details.failed).toBe(true)
    const [records, query] = details.counterexample ?? [[], []]
    // The (shrunk) counterexample names the first wrong rank and the id that belongs there.
    expect(verdict(records, query)).toMatchObject({ same: false, reason: expect.stringContaining('belongs') as string })
  })

  it('holds to its definition: ties swap, an entry past k tied at the cut replaces the k-th, nothing else moves', () => {
    const reference = [
      { id: 'a', score: 0.9 },
      { id: 'b', score: 0.895 },
      { id: 'c', score: 0.89 },
      { id: 'd', score: 0.5 },
      { id: 'e', score: 0.5 },
    ]
    const ids = (...list: string[]) => list.map((id) => ({ id }))
    expect(sameRanking(reference, ids('a', 'b', 'c', 'd', 'e'))).toEqual({ same: true })
    // Ties (within the tolerance) swap; an entry past k tied with the k-th may replace it.
    expect(sameRanking(reference, ids('b', 'a', 'c', 'e', 'd'), { tolerance: 0.006 })).toEqual({ same: true })
    expect(sameRanking(reference, ids('a', 'b', 'c', 'e'), { k: 4 })).toEqual({ same: true })
    // Ties are not chained: 0.9 and 0.89 are 0.01 apart.
    expect(sameRanking(reference, ids('c', 'b', 'a', 'd', 'e'), { tolerance: 0.006 })).toMatchObject({ same: false, rank: 1 })
    // Order where scores differ, missing / foreign / repeated ids, the length, and the store's own scores.
    expect(sameRanking(reference, ids('b', 'a', 'c', 'd', 'e'))).toMatchObject({ same: false, rank: 1 })
    expect(sameRanking(reference, ids('a', 'b', 'c', 'd'))).toMatchObject({ same: false, rank: 5, reason: expect.stringContaining('4 entries') as string })
    expect(sameRanking(reference, ids('a', 'b', 'c', 'd', 'x'))).toMatchObject({ same: false, rank: 5, reason: expect.stringContaining('not in the reference') as string })
    expect(sameRanking(reference, ids('a', 'a', 'c', 'd', 'e'), { tolerance: 0.01 })).toMatchObject({ same: false, rank: 2 })
    expect(sameRanking(reference, [...ids('a', 'b', 'c', 'd'), { id: 'e', score: 0.4 }])).toMatchObject({ same: false, rank: 5, reason: expect.stringContaining('scored 0.4') as string })
    expect(sameRanking([], [])).toEqual({ same: true })
  })

  it('recallAtK counts the true top k found, once each, in any order', () => {
    expect(recallAtK(['a', 'b', 'c', 'd'], ['c', 'x', 'a', 'a'], 3)).toBeCloseTo(2 / 3, 12)
    expect(recallAtK(['a', 'b'], ['b', 'a', 'c'], 10)).toBe(1)
    expect(recallAtK([], ['x'], 5)).toBe(1)
    expect(() => recallAtK(['a'], ['a'], 0)).toThrowError(expect.objectContaining({ code: 'INVALID_OPTION', path: 'k' }) as Error)
  })
})

describe('generated records, metadata and filters are valid for Quarry', () => {
  it.each<Metric>(['cosine', 'dot', 'l2'])('addMany takes every generated collection (%s), unicode ids and integer vectors too', (metric) => {
    fc.assert(
      fc.property(
        recordsArbitrary({ dimensions: 3, metric, fields: { a: 'any', b: 'any' }, id: idArbitrary({ unit: 'unicode', maxLength: 5 }), maxLength: 20 }),
        recordsArbitrary({ dimensions: 3, metric, components: 'integer', min: -2, max: 2, maxLength: 20 }),
        (unicode, integral) => {
          for (const records of [unicode, integral]) {
            const index = createIndex({ dimensions: 3, metric, dense: 'exact' })
            index.addMany(records)
            expect(index.size).toBe(records.length)
          }
        },
      ),
      { numRuns: runs(100) },
    )
  })

  it('filters validate and nest at most maxDepth levels; metadata keeps to its fields', () => {
    const depth = (f: unknown): number => {
      const g = f as { op: string; filters?: unknown[]; filter?: unknown }
      if (g.op === 'not') return 1 + depth(g.filter)
      if (g.op === 'and' || g.op === 'or') return 1 + Math.max(0, ...(g.filters ?? []).map(depth))
      return 0
    }
    fc.assert(
      fc.property(filterArbitrary({ maxDepth: 2 }), metadataArbitrary({ fields: { x: 'number', y: 'date' } }), (f, m) => {
        expect(validateFilter(f)).toBe(f)
        expect(depth(f)).toBeLessThanOrEqual(2)
        for (const key of Object.keys(m)) expect(['x', 'y']).toContain(key)
        if (m.y !== undefined) expect(m.y).toBeInstanceOf(Date)
      }),
      { numRuns: runs(500) },
    )
  })

  it('refuses bad options up front, naming the option', () => {
    const code = (run: () => unknown): string | undefined => {
      try {
        run()
      } catch (error) {
        return error instanceof QuarryError ? `${error.code} ${error.path ?? ''}` : String(error)
      }
      return undefined
    }
    expect(code(() => vectorArbitrary({ dimensions: 0 }))).toBe('INVALID_OPTION dimensions')
    expect(code(() => vectorArbitrary({ dimensions: 2, min: 0, max: 0 }))).toBe('INVALID_OPTION max')
    expect(code(() => vectorArbitrary({ dimensions: 2, max: 1e39 }))).toBe('INVALID_OPTION max')
    expect(code(() => metadataArbitrary({ fields: { a: 'uuid' as never } }))).toBe('INVALID_OPTION fields.a')
    expect(code(() => filterArbitrary({ maxDepth: 100 }))).toBe('INVALID_OPTION maxDepth')
    expect(code(() => sameRanking([], [], { tolerance: -1 }))).toBe('INVALID_OPTION tolerance')
    expect(code(() => retrieveContextsRequestArbitrary({ ragCorpus: 'ragCorpora/x' }))).toBe('INVALID_OPTION ragCorpus')
    expect(code(() => retrieveContextsRequestArbitrary({ ragCorpus: 'projects/p/locations/l/ragCorpora/c', metadataSchema: { AND: 'STRING' } }))).toBe('INVALID_OPTION metadataSchema.AND')
    expect(code(() => queryCorpusRequestArbitrary({ corpus: 'corpora/x', chunkMetadata: { k: 'intValue' as never } }))).toBe('INVALID_OPTION chunkMetadata.k')
    expect(code(() => retrieveMemoriesRequestArbitrary({ reasoningEngine: 'reasoningEngines/1', scopes: [{ user_id: 'a*' }] }))).toBe('INVALID_OPTION scopes[0].user_id')
  })
})

describe('generated Google requests are accepted by Quarry’s own services', () => {
  const embedder = createHashingEmbedder({ dimensions: 32 })
  const accepted = <T,>(outcome: Outcome<T>, request: unknown): T => {
    if (!outcome.ok) expect.fail(`${outcome.status.message}\nrequest: ${JSON.stringify(request)}`)
    return outcome.response
  }

  it.each<DistanceMetric>(['COSINE_DISTANCE', 'DOT_PRODUCT', 'EUCLIDEAN_SQUARED_DISTANCE'])('Vertex RAG retrieveContexts (v1beta1, %s)', async (distanceMetric) => {
    const engine = new VertexRagEngine({ embedder, distanceMetric, randomId: seededRandomId(5) })
    const rag = engine.v1beta1
    const parent = 'projects/p/locations/us-central1'
    const op = accepted(await rag.createRagCorpus({ parent, ragCorpus: { displayName: 'Fuzz' } }), 'createRagCorpus')
    const ragCorpus = op.response?.name as string
    const schema = { year: 'INTEGER', rating: 'FLOAT', genre: 'STRING', published: 'DATETIME', live: 'BOOLEAN', tags: 'LIST' } as const
    for (const [key, type] of Object.entries(schema)) accepted(await rag.createRagDataSchema({ parent: ragCorpus, ragDataSchema: { key, schemaDetails: { type } } }), key)
    const ragFileIds: string[] = []
    const texts = ['the spice must flow', 'what does the user prefer: tea or coffee', 'Paris in the storm, café naïve']
    for (const [i, text] of texts.entries()) {
      const up = accepted(await rag.uploadRagFile({ parent: ragCorpus, ragFile: { displayName: `f${i}.txt` } }, text), 'upload')
      const file = up.ragFile?.name as string
      ragFileIds.push(file.split('/').pop() as string)
      accepted(await rag.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key: 'year', value: { intValue: 1990 + i } } } }), 'year')
      accepted(await rag.createRagMetadata({ parent: file, ragMetadata: { userSpecifiedMetadata: { key: 'tags', value: { listValue: { values: [{ strValue: 'a' }] } } } } }), 'tags')
    }
    let filtered = 0
    await fc.assert(
      fc.asyncProperty(retrieveContextsRequestArbitrary({ ragCorpus, ragFileIds, metadataSchema: schema }), async (request) => {
        if (request.query?.ragRetrievalConfig?.filter?.metadataFilter !== undefined) filtered++
        accepted(await rag.retrieveContexts(request), request)
      }),
      { numRuns: runs(300) },
    )
    // The filter path really ran (not only requests without one): in over a tenth of the runs, however many FC_RUNS makes.
    expect(filtered).toBeGreaterThan(runs(300) / 10)
  })

  it('Semantic Retriever corpora.query', async () => {
    const retriever = new SemanticRetriever({ embedder, randomId: seededRandomId(6) })
    const corpus = accepted(await retriever.createCorpus({ corpus: { name: 'corpora/fuzz' } }), 'corpus')
    const document = accepted(await retriever.createDocument({ parent: corpus.name, document: { displayName: 'D', customMetadata: [{ key: 'year', numericValue: 1999 }, { key: 'genre', stringValue: 'drama' }] } }), 'document')
    accepted(
      await retriever.batchCreateChunks({
        parent: document.name,
        requests: [
          { chunk: { data: { stringValue: 'the spice must flow' }, customMetadata: [{ key: 'page', numericValue: 1 }, { key: 'tags', stringListValue: { values: ['a', 'b'] } }] } },
          { chunk: { data: { stringValue: 'tea or coffee in Paris' }, customMetadata: [{ key: 'speaker', stringValue: 'Paul' }] } },
        ],
      }),
      'chunks',
    )
    let filtered = 0
    await fc.assert(
      fc.asyncProperty(
        queryCorpusRequestArbitrary({ corpus: corpus.name, chunkMetadata: { page: 'numericValue', speaker: 'stringValue', tags: 'stringListValue' }, documentMetadata: { year: 'numericValue', genre: 'stringValue' } }),
        async (request) => {
          if (request.metadataFilters !== undefined) filtered++
          accepted(await retriever.queryCorpus(request), request)
        },
      ),
      { numRuns: runs(300) },
    )
    expect(filtered).toBeGreaterThan(runs(300) / 10)
  })

  it.each([['default scopes', undefined], ['given scopes', [{ user_id: 'u1' }, { user_id: 'u2', 'agent id': 'x' }]]] as const)('Memory Bank memories.retrieve (%s)', async (_, scopes) => {
    const bank = new MemoryBank({ embedder, randomId: seededRandomId(7) })
    const reasoningEngine = 'projects/p/locations/us-central1/reasoningEngines/123'
    for (const [i, fact] of ['likes tea', 'lives in Paris', 'plays the cello'].entries()) {
      const scope = scopes?.[i % scopes.length] ?? { user_id: 'u1' }
      accepted(await bank.createMemory({ parent: reasoningEngine, memory: { fact, scope: { ...scope }, topics: [{ managedMemoryTopic: 'USER_PREFERENCES' }], metadata: { rating: { doubleValue: i } } } }), fact)
    }
    let filtered = 0
    await fc.assert(
      fc.asyncProperty(
        retrieveMemoriesRequestArbitrary({ reasoningEngine, ...(scopes ? { scopes } : {}), metadataSchema: { rating: 'doubleValue', source: 'stringValue', verified: 'boolValue', seen: 'timestampValue' } }),
        async (request) => {
          if (request.filter !== undefined || request.filterGroups !== undefined) filtered++
          accepted(await bank.retrieveMemories(request), request)
        },
      ),
      { numRuns: runs(300) },
    )
    expect(filtered).toBeGreaterThan(runs(300) / 10)
  })
})
