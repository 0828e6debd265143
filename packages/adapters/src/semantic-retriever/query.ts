import type { Filter } from '@quarry/core'
import { readMessage } from '../rpc/proto-json.js'
import { invalidArgument } from '../rpc/status.js'
import type { RetrieverContext } from './context.js'
import { DOCUMENT_FIELD } from './custom-metadata.js'
import { compileMetadataFilters } from './metadata-filters.js'
import type { QueryResponseJson, RelevantChunkJson } from './resources.js'
import { QueryCorpusRequest, QueryDocumentRequest, type MetadataFilterInput } from './schema.js'
import { chunkJson, documentJson, type CorpusState } from './state.js'

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
  const topK = resultsCount ?? DEFAULT_RESULTS
  if (topK < 1 || topK > MAX_RESULTS) throw invalidArgument('resultsCount', `resultsCount must be between 1 and ${MAX_RESULTS} (default ${DEFAULT_RESULTS}); received ${topK}.`)
  return { query, topK, filter: compileMetadataFilters(filters ?? [], scope) }
}

/**
 * Embeds the query, then searches the corpus index by cosine similarity. The corpus is looked up
 * again after the (asynchronous) embedding, so a query never reads a corpus deleted meanwhile.
 * A query whose embedding is zero (no word the embedder knows) matches nothing.
 */
async function run(ctx: RetrieverContext, corpusOf: () => CorpusState, p: QueryPlan, withDocument: boolean): Promise<QueryResponseJson> {
  const [vector] = await ctx.embed([p.query])
  const corpus = corpusOf()
  if (vector === undefined || !vector.some((x) => x !== 0) || corpus.index.size === 0) return {}
  const { hits } = corpus.index.search({ vector, topK: p.topK, ...(p.filter ? { filter: p.filter } : {}) })
  const relevantChunks = hits.map((hit): RelevantChunkJson => {
    const documentName = hit.metadata[DOCUMENT_FIELD] as string
    const document = corpus.documents.get(documentName)
    const chunk = document?.chunks.get(hit.id)
    if (!document || !chunk) throw new Error(`index and resources disagree on ${hit.id}`)
    return { chunkRelevanceScore: hit.score, chunk: chunkJson(chunk), ...(withDocument ? { document: documentJson(document) } : {}) }
  })
  return relevantChunks.length > 0 ? { relevantChunks } : {}
}

export async function queryCorpus(ctx: RetrieverContext, request: unknown): Promise<QueryResponseJson> {
  const req = readMessage(QueryCorpusRequest, request)
  const corpusOf = (): CorpusState => ctx.corpus(req.name, 'name')
  corpusOf()
  return run(ctx, corpusOf, plan(req.query, req.resultsCount, req.metadataFilters, 'corpus'), true)
}

export async function queryDocument(ctx: RetrieverContext, request: unknown): Promise<QueryResponseJson> {
  const req = readMessage(QueryDocumentRequest, request)
  const corpusOf = (): CorpusState => ctx.document(req.name, 'name').corpus
  corpusOf()
  const p = plan(req.query, req.resultsCount, req.metadataFilters, 'document')
  const inDocument: Filter = { op: 'eq', field: DOCUMENT_FIELD, value: req.name as string }
  return run(ctx, corpusOf, { ...p, filter: p.filter ? { op: 'and', filters: [inDocument, p.filter] } : inDocument }, false)
}
