import { MAX_TOP_K, type Filter, type Hit, type QuarryIndex, type SearchRequest } from '@quarry/core'
import { parseFilter } from '../rpc/aip160.js'
import { toCoreFilter, type KeyType } from '../rpc/aip160-filter.js'
import { omitUndefined, omitUnset } from '../rpc/omit.js'
import { readMessage } from '../rpc/proto-json.js'
import { failure, invalidArgument } from '../rpc/status.js'
import { replayable } from '../rpc/replay.js'
import type { RagContext } from './context.js'
import { coreThreshold, denseMeasure, scoreOfRelevance, sparseDistanceOf, type DenseMeasure, type DistanceMetric } from './metric.js'
import type { ContextJson, RetrieveContextsResponseJson } from './resources.js'
import { RetrieveContextsRequest, requestSchema, type ApiVersion } from './schema.js'
import { chunkAt, chunkOrdinal, FILE_FIELD, metadataField, sourceUriOf, type RagChunkState, type RagCorpusState, type RagFileState } from './state.js'
import { filesGoingIn } from './pending-files.js'

/** Contexts when neither ragRetrievalConfig.topK nor similarityTopK is set. */
export const DEFAULT_TOP_K = 10

interface Plan {
  readonly corpus: RagCorpusState
  readonly text: string
  readonly topK: number
  readonly alpha: number
  readonly filter: Filter | undefined
  readonly distance: number | undefined
  readonly similarity: number | undefined
  readonly ranking: { kind: 'rankService' | 'llmRanker'; model: string | undefined } | undefined
}

function plan(ctx: RagContext, version: ApiVersion, request: unknown): Plan {
  const req = readMessage(requestSchema(RetrieveContextsRequest, version), request)
  const location = ctx.location(req.parent, 'parent')
  const store = req.vertexRagStore
  if (!store) throw invalidArgument('vertexRagStore', 'vertexRagStore is required: give ragResources with one RagCorpus.')
  const resources = store.ragResources?.length ? store.ragResources : (store.ragCorpora ?? []).map((ragCorpus) => ({ ragCorpus, ragFileIds: [] }))
  // The deprecated ragCorpora is named only when the request used it (an empty request names ragResources).
  const field = store.ragResources?.length || !store.ragCorpora?.length ? 'vertexRagStore.ragResources' : 'vertexRagStore.ragCorpora'
  if (resources.length !== 1) throw invalidArgument(field, `exactly one RagResource is supported; received ${resources.length}.`)
  const resource = resources[0] as { ragCorpus?: string; ragFileIds?: string[] }
  const resourceField = field === 'vertexRagStore.ragResources' ? `${field}[0].ragCorpus` : `${field}[0]`
  const corpus = ctx.corpus(resource.ragCorpus, resourceField)
  if (corpus.parent !== location) throw invalidArgument(resourceField, `the corpus is in ${corpus.parent}, not in the request's parent ${location}.`)

  const query = req.query
  const text = query?.text ?? ''
  if (text.trim() === '') throw invalidArgument('query.text', 'query.text is required: the text to retrieve contexts for.')
  const config = query?.ragRetrievalConfig
  // topK and similarityTopK have no presence: 0 reads as unset, the default.
  const topK = config?.topK ?? query?.similarityTopK ?? DEFAULT_TOP_K
  if (topK < 1 || topK > MAX_TOP_K) throw invalidArgument(config?.topK !== undefined ? 'query.ragRetrievalConfig.topK' : 'query.similarityTopK', `topK must be between 1 and ${MAX_TOP_K} (0 or unset: the default ${DEFAULT_TOP_K}); received ${topK}.`)
  // v1 has no hybrid search: it retrieves by the dense embedding alone.
  const alphaField = config?.hybridSearch?.alpha !== undefined ? 'query.ragRetrievalConfig.hybridSearch.alpha' : 'query.ranking.alpha'
  const alpha = version === 'v1' ? 1 : (config?.hybridSearch?.alpha ?? query?.ranking?.alpha ?? 0.5)
  if (!(alpha >= 0 && alpha <= 1)) throw invalidArgument(alphaField, `alpha is in [0, 1]: 0 = sparse (BM25) only, 1 = dense only; received ${alpha}.`)

  const f = config?.filter
  let distance = f?.vectorDistanceThreshold
  if (store.vectorDistanceThreshold !== undefined) {
    if (f?.vectorSimilarityThreshold !== undefined || (distance !== undefined && distance !== store.vectorDistanceThreshold)) {
      throw invalidArgument('vertexRagStore.vectorDistanceThreshold', 'give one threshold: the deprecated vertexRagStore.vectorDistanceThreshold or query.ragRetrievalConfig.filter.vector*Threshold.')
    }
    distance = store.vectorDistanceThreshold
  }

  const filters: Filter[] = []
  const fileIds = resource.ragFileIds ?? []
  if (fileIds.length > 0) {
    fileIds.forEach((id, i) => {
      if (!corpus.files.has(`${corpus.name}/ragFiles/${id}`)) throw failure('NOT_FOUND', `RagFile "${id}" is not in ${corpus.name}.`, `${field}[0].ragFileIds[${i}]`)
    })
    filters.push({ op: 'in', field: FILE_FIELD, values: fileIds })
  }
  if (f?.metadataFilter) {
    const expr = parseFilter(f.metadataFilter, 'query.ragRetrievalConfig.filter.metadataFilter')
    const types = new Map<string, KeyType | undefined>([...corpus.schemas.values()].map((s) => [s.key, s.type]))
    filters.push(toCoreFilter(expr, { path: 'query.ragRetrievalConfig.filter.metadataFilter', fieldOf: metadataField, typeOf: (k) => types.get(k) }))
  }
  const ranking = config?.ranking?.rankService
    ? { kind: 'rankService' as const, model: config.ranking.rankService.modelName }
    : config?.ranking?.llmRanker
      ? { kind: 'llmRanker' as const, model: config.ranking.llmRanker.modelName }
      : undefined
  return {
    corpus,
    text,
    topK,
    alpha,
    filter: filters.length === 0 ? undefined : filters.length === 1 ? filters[0] : { op: 'and', filters },
    distance,
    similarity: f?.vectorSimilarityThreshold,
    ranking,
  }
}

/** The plan's filter, leaving out the files whose records are going in now (pending-files.ts): they are not listed yet. */
function withoutGoingIn(corpus: RagCorpusState, filter: Filter | undefined): Filter | undefined {
  const going = filesGoingIn(corpus)
  if (going.size === 0) return filter
  const out: Filter = { op: 'nin', field: FILE_FIELD, values: [...going] }
  return filter === undefined ? out : { op: 'and', filters: [filter, out] }
}

/** One context retrieved: its JSON, the core hit it came from, its file and chunk, and its dense measure. */
export interface RetrievedContext {
  readonly json: ContextJson
  readonly hit: Hit
  readonly file: RagFileState
  readonly chunk: RagChunkState
  /** The chunk's vector against the query in float64 (core's precise key), on the corpus metric's scale. */
  readonly dense: DenseMeasure
  /** What `score` is made from when alpha < 1: the BM25 score over the answer's best (alpha 0), or the fused score. */
  readonly relevance: number
}

/** A retrieval: the response, and each of its contexts as found (the console's explain reads both). */
export interface Retrieval {
  readonly response: RetrieveContextsResponseJson
  /** In response order (after the reranker, if any). */
  readonly results: readonly RetrievedContext[]
  readonly text: string
  /** 1: dense only; 0: BM25 only; between: both fused. */
  readonly alpha: number
  /** The corpus index searched (its analyzer marks matched words). */
  readonly index: QuarryIndex
  /** The corpus's metric: which way its scores go ({@link betterScore}). */
  readonly metric: DistanceMetric
}

/**
 * Retrieves contexts: dense search (alpha 1), BM25 (alpha 0) or both fused by core's hybrid search
 * (convex combination of TM2C2-normalized scores, every candidate scored on both sides), over one corpus, restricted to ragFileIds and the metadata filter.
 * `score` is the dense measure on the corpus metric's scale when alpha is 1; otherwise the fused
 * (or BM25-over-best) relevance r ∈ [0, 1] mapped onto that scale's direction (1 − r for the
 * distances, r for DOT_PRODUCT). v1beta1 adds each chunk's dense `distance` and BM25 `sparseDistance`.
 */
export async function retrieveContexts(ctx: RagContext, version: ApiVersion, request: unknown): Promise<RetrieveContextsResponseJson> {
  return (await retrieve(ctx, version, request, false)).response
}

/**
 * retrieveContexts's search: the response and how each context was found. `explain` asks core
 * for each BM25 hit's term explanation too (fused hybrid hits are always explained); results are the same.
 */
export async function retrieve(ctx: RagContext, version: ApiVersion, request: unknown, explain: boolean): Promise<Retrieval> {
  const p = plan(ctx, version, request)
  const [query] = await ctx.embed([p.text])
  const corpus = ctx.state.corpora.get(p.corpus.name)
  if (!corpus) throw failure('NOT_FOUND', `RagCorpus "${p.corpus.name}" was deleted.`)
  const none: Retrieval = { response: { contexts: {} }, results: [], text: p.text, alpha: p.alpha, index: corpus.index, metric: corpus.metric }
  // A query the embedder maps to zeros (no word it knows) has no direction: it matches nothing.
  if (corpus.index.size === 0 || query === undefined || !query.some((x) => x !== 0)) return none
  const threshold = coreThreshold(corpus.metric, omitUndefined({ distance: p.distance, similarity: p.similarity }))
  if (threshold.none) return none
  // One core search ranks (dense, BM25 or fused by alpha), applies the filter and the thresholds
  // (at alpha 0 to each text hit's dense distance), and gives every hit its precise dense key.
  const search: SearchRequest = omitUndefined({
    vector: query,
    text: p.text,
    alpha: p.alpha,
    topK: p.topK,
    filter: withoutGoingIn(corpus, p.filter),
    maxDistance: threshold.maxDistance,
    minSimilarity: threshold.minSimilarity,
    // Fused hits need explain.hybrid (their BM25 score); at alpha 1 nothing reads the terms.
    explain: p.alpha === 0 ? explain : p.alpha < 1,
    preciseDistances: true,
  })
  const answer = corpus.index.search(search).hits.map((hit) => found(corpus, hit))
  // BM25-only scores are relative to the best BM25 score of the answer itself.
  const best = p.alpha === 0 ? Math.max(...answer.map((a) => a.hit.score), 0) : 0
  const beta = version === 'v1beta1'
  const results = answer.map(({ hit, file, chunk, dense }): RetrievedContext => {
    const relevance = p.alpha === 0 ? (best > 0 ? hit.score / best : 0) : hit.score
    const bm25 = p.alpha === 0 ? hit.score : hit.explain?.hybrid?.sparse?.score
    // `score` is proto3 `optional` (written even when 0); distance and sparseDistance are plain
    // doubles, omitted at 0 as proto3 JSON omits defaults.
    const json = omitUnset(
      {
        sourceUri: sourceUriOf(file),
        sourceDisplayName: file.displayName,
        text: chunk.text,
        score: p.alpha === 1 ? dense.score : scoreOfRelevance(corpus.metric, relevance),
        distance: beta ? dense.distance : undefined,
        sparseDistance: beta && bm25 !== undefined ? sparseDistanceOf(bm25) : undefined,
        chunk: omitUnset({ text: chunk.text, pageSpan: chunk.pageSpan, fileId: beta ? file.id : undefined, chunkId: beta ? chunk.id : undefined }),
      },
      ['score'],
    )
    return { json, hit, file, chunk, dense, relevance }
  })
  const { reranker } = ctx.options
  const { ranking } = p
  const contexts = results.map((r) => r.json)
  // Recorded like embeddings (rpc/replay.ts): a retrieval inside a logged write (asyncRetrieveContexts) replays the same order.
  const ranked = ranking && reranker ? await replayable('rerank', async () => [...(await reranker({ query: p.text, model: ranking.model, kind: ranking.kind, contexts }))]) : contexts
  // RagContexts is a set message even with no context: `{"contexts": {}}`, its empty list omitted.
  return { ...none, response: { contexts: omitUnset({ contexts: [...ranked] }) }, results: ranked === contexts ? results : reordered(ranked, results) }
}

/** A hit with its file (its record's metadata names it), its chunk (found by record id) and its dense measure. */
function found(corpus: RagCorpusState, hit: Hit): { hit: Hit; file: RagFileState; chunk: RagChunkState; dense: DenseMeasure } {
  const fileId = hit.metadata[FILE_FIELD]
  const file = typeof fileId === 'string' ? corpus.files.get(`${corpus.name}/ragFiles/${fileId}`) : undefined
  const chunk = file ? chunkOf(file, hit.id) : undefined
  if (!file || !chunk || hit.key === undefined) throw new Error(`index and resources disagree on ${hit.id}`)
  return { hit, file, chunk, dense: denseMeasure(corpus.metric, hit.key) }
}

/**
 * A file's chunk by its record id: chunk i of a file has the id `chunkId(file.id, i)`, so the id's
 * ordinal is its place in the list (no map of the file's chunks is built: a first query after a
 * start would build one per file it touches, each as long as the file).
 */
function chunkOf(file: RagFileState, id: string): RagChunkState | undefined {
  const i = chunkOrdinal(file.id, id)
  const chunk = i === undefined ? undefined : chunkAt(file, i)
  return chunk?.id === id ? chunk : undefined
}

/**
 * The results in the reranker's order: each context it returned matched to the result it came
 * from (the same object, else the first unused one with the same source and text); a context
 * it made up has no result and is left out.
 */
function reordered(ranked: readonly ContextJson[], results: readonly RetrievedContext[]): RetrievedContext[] {
  const unused = new Set(results)
  return ranked.flatMap((context) => {
    const found = results.find((r) => r.json === context && unused.has(r)) ?? [...unused].find((r) => r.json.sourceUri === context.sourceUri && r.json.text === context.text)
    if (!found) return []
    unused.delete(found)
    return [found]
  })
}
