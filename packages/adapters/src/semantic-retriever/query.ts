import type { Filter, Hit, QuarryIndex } from '@quarry/core'
import { omitUndefined, omitUnset } from '../rpc/omit.js'
import { float32, readMessage } from '../rpc/proto-json.js'
import { invalidArgument } from '../rpc/status.js'
import type { RetrieverContext } from './context.js'
import { DOCUMENT_FIELD } from './custom-metadata.js'
import { compileMetadataFilters } from './metadata-filters.js'
import type { QueryResponseJson, RelevantChunkJson } from './resources.js'
import { QueryCorpusRequest, QueryDocumentRequest, type MetadataFilterInput } from './schema.js'
import { chunkJson, documentJson, type ChunkState, type CorpusState } from './state.js'

/** Results when resultsCount is unset, and the most a request may ask for. */
export const DEFAULT_RESULTS = 10
export const MAX_RESULTS = 100

interface QueryPlan {
  readonly query: string
  readonly topK: number
  readonly filter: Filter | undefined
}

function plan(query: string | undefined, resultsCount: number | undefined, filters: readonly MetadataFilterInput[] | undefined, scope: 'corpus' | 'document'): QueryPlan {
  if (query === undefined || query.trim() === '') throw invalidArgument('query', 'query is required: the text to search for.')
  // 0 arrives as unset (proto3: resultsCount has no presence), so it is the default too.
  const topK = resultsCount ?? DEFAULT_RESULTS
  if (topK < 1 || topK > MAX_RESULTS) throw invalidArgument('resultsCount', `resultsCount must be between 1 and ${MAX_RESULTS} (0 or unset: the default ${DEFAULT_RESULTS}); received ${topK}.`)
  return { query, topK, filter: compileMetadataFilters(filters ?? [], scope) }
}

/** One result of a query: the response's entry, the core hit it came from, and its chunk. */
interface QueryResult {
  readonly json: RelevantChunkJson
  readonly hit: Hit
  readonly chunk: ChunkState
}

/** A query's answer: the response, and each of its results as found (the console's explain reads both). */
export interface CorpusSearch {
  readonly response: QueryResponseJson
  /** In response order. */
  readonly results: readonly QueryResult[]
  /** The query text. */
  readonly query: string
  /** The corpus index searched (its analyzer marks matched words). */
  readonly index: QuarryIndex
}

/**
 * Embeds the query, then searches the corpus index by cosine similarity. The corpus is looked up
 * again after the (asynchronous) embedding, so a query never reads a corpus deleted meanwhile.
 * A query whose embedding is zero (no word the embedder knows) matches nothing.
 */
async function run(ctx: RetrieverContext, corpusOf: () => CorpusState, p: QueryPlan, withDocument: boolean): Promise<CorpusSearch> {
  const [vector] = await ctx.embed([p.query])
  const corpus = corpusOf()
  const none = { response: {}, results: [], query: p.query, index: corpus.index }
  if (vector === undefined || !vector.some((x) => x !== 0) || corpus.index.size === 0) return none
  const { hits } = corpus.index.search(omitUndefined({ vector, topK: p.topK, filter: p.filter }))
  const results = hits.map((hit): QueryResult => {
    const documentName = hit.metadata[DOCUMENT_FIELD]
    const document = typeof documentName === 'string' ? corpus.documents.get(documentName) : undefined
    const chunk = document?.chunks.get(hit.id)
    if (!document || !chunk) throw new Error(`index and resources disagree on ${hit.id}`)
    // chunkRelevanceScore is a float without presence: a score of exactly 0 is omitted, as proto3
    // JSON omits it; written as the float it is over gRPC (float32).
    return { json: omitUnset({ chunkRelevanceScore: float32(hit.score), chunk: chunkJson(chunk), document: withDocument ? documentJson(document) : undefined }), hit, chunk }
  })
  return { ...none, response: omitUnset({ relevantChunks: results.map((r) => r.json) }), results }
}

/** queryCorpus's search: its response and how each result was found (queryCorpus answers the response alone). */
export async function searchCorpus(ctx: RetrieverContext, request: unknown): Promise<CorpusSearch> {
  const req = readMessage(QueryCorpusRequest, request)
  const corpusOf = (): CorpusState => ctx.corpus(req.name, 'name')
  corpusOf()
  return run(ctx, corpusOf, plan(req.query, req.resultsCount, req.metadataFilters, 'corpus'), true)
}

export async function queryCorpus(ctx: RetrieverContext, request: unknown): Promise<QueryResponseJson> {
  return (await searchCorpus(ctx, request)).response
}

export async function queryDocument(ctx: RetrieverContext, request: unknown): Promise<QueryResponseJson> {
  const req = readMessage(QueryDocumentRequest, request)
  const { document } = ctx.document(req.name, 'name')
  const corpusOf = (): CorpusState => ctx.document(document.name, 'name').corpus
  const p = plan(req.query, req.resultsCount, req.metadataFilters, 'document')
  const inDocument: Filter = { op: 'eq', field: DOCUMENT_FIELD, value: document.name }
  return (await run(ctx, corpusOf, { ...p, filter: p.filter ? { op: 'and', filters: [inDocument, p.filter] } : inDocument }, false)).response
}
