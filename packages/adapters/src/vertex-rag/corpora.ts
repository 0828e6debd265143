import type { Operation } from '../rpc/operations.js'
import { requireProvisioned } from './engine-config.js'
import { createIndex } from '@quarry/core'
import { omitUnset } from '../rpc/omit.js'
import { pageOf } from '../rpc/paging.js'
import { readMessage } from '../rpc/proto-json.js'
import { failure, invalidArgument } from '../rpc/status.js'
import type { RagContext } from './context.js'
import { coreMetric } from './metric.js'
import type { ListRagCorporaResponseJson, RagCorpusJson } from './resources.js'
import {
  CreateRagCorpusRequest,
  DOCUMENTED,
  DeleteRagCorpusRequest,
  GetRagCorpusRequest,
  ListRagCorporaRequest,
  UpdateRagCorpusRequest,
  requestSchema,
  type ApiVersion,
  type RagCorpusInput,
} from './schema.js'
import { corpusJson, type RagCorpusState } from './state.js'

const UNSERVED_BACKENDS = ['weaviate', 'pinecone', 'vertexFeatureStore', 'vertexVectorSearch', 'ragManagedVertexVectorSearch'] as const

/** BM25 ranges of RagEmbeddingModelConfig.SparseEmbeddingConfig.Bm25. */
const BM25_K1 = { min: 1.2, max: 3, default: 1.2 }
const BM25_B = { min: 0, max: 1, default: 0.75 }

interface BackendChoice {
  readonly dense: 'exact' | 'hnsw'
  readonly vectorDbConfig: Readonly<Record<string, unknown>>
  readonly ragEmbeddingModelConfig: Readonly<Record<string, unknown>> | undefined
  readonly k1: number
  readonly b: number
}

/**
 * What a RagCorpus asks of its vector DB: RagManagedDb only (KNN, the default, is an exact scan;
 * ANN is the HNSW graph), the embedding model config (echoed; the engine's embedder embeds), and
 * in v1beta1 the BM25 k1 / b of hybrid search.
 */
function backendOf(c: RagCorpusInput): BackendChoice {
  if (c.vertexAiSearchConfig) throw failure('FAILED_PRECONDITION', 'Quarry serves RagManagedDb corpora only; leave vertexAiSearchConfig unset.', 'ragCorpus.vertexAiSearchConfig')
  const configs = [
    ['vectorDbConfig', c.vectorDbConfig],
    ['ragVectorDbConfig', c.ragVectorDbConfig],
  ] as const
  for (const [field, config] of configs) {
    for (const backend of UNSERVED_BACKENDS) {
      if (config?.[backend]) throw failure('FAILED_PRECONDITION', `Quarry serves RagManagedDb only; ${backend} is an external vector database. Use ragManagedDb (knn or ann).`, `ragCorpus.${field}.${backend}`)
    }
  }
  const db = c.vectorDbConfig ?? c.ragVectorDbConfig
  const managed = db?.ragManagedDb
  const embedding = c.ragEmbeddingModelConfig ?? db?.ragEmbeddingModelConfig
  const bm25 = embedding?.hybridSearchConfig?.sparseEmbeddingConfig?.bm25
  const at = c.ragEmbeddingModelConfig ? 'ragCorpus.ragEmbeddingModelConfig' : 'ragCorpus.vectorDbConfig.ragEmbeddingModelConfig'
  // k1 and b are proto3 `optional`: a 0 given is a value (out of range for k1), not the default.
  const k1 = bm25?.k1 ?? BM25_K1.default
  const b = bm25?.b ?? BM25_B.default
  if (k1 < BM25_K1.min || k1 > BM25_K1.max) throw invalidArgument(`${at}.hybridSearchConfig.sparseEmbeddingConfig.bm25.k1`, `k1 must be in [${BM25_K1.min}, ${BM25_K1.max}] (default ${BM25_K1.default}); received ${k1}.`)
  if (b < BM25_B.min || b > BM25_B.max) throw invalidArgument(`${at}.hybridSearchConfig.sparseEmbeddingConfig.bm25.b`, `b must be in [${BM25_B.min}, ${BM25_B.max}] (default ${BM25_B.default}); received ${b}.`)
  const { ragEmbeddingModelConfig: _nested, ...dbRest } = db ?? {}
  return {
    dense: managed?.ann ? 'hnsw' : 'exact',
    vectorDbConfig: { ...dbRest, ragManagedDb: managed ?? { knn: {} } },
    ragEmbeddingModelConfig: embedding,
    k1,
    b,
  }
}

/** JSON with sorted keys: equal configs compare equal whatever their key order. */
function stable(value: unknown): string {
  return JSON.stringify(value, (_, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v))
}

/** Required on create; its length (at most 128 characters) is a limit of the request schema. */
function requireDisplayName(value: string | undefined, field: string): string {
  if (value === undefined) throw invalidArgument(field, `displayName is required: up to ${DOCUMENTED.corpusDisplayName.max} characters.`)
  return value
}

export async function createRagCorpus(ctx: RagContext, version: ApiVersion, request: unknown): Promise<Operation> {
  const { parent, ragCorpus = {} } = readMessage(requestSchema(CreateRagCorpusRequest, version), request)
  const location = ctx.location(parent, 'parent')
  requireProvisioned(ctx, location, 'parent')
  const displayName = requireDisplayName(ragCorpus.displayName, 'ragCorpus.displayName')
  const backend = backendOf(ragCorpus)
  const { embedder, distanceMetric } = ctx.options
  let id: string
  do id = ctx.numericId()
  while (ctx.state.corpora.has(`${location}/ragCorpora/${id}`))
  const corpus: RagCorpusState = {
    name: `${location}/ragCorpora/${id}`,
    parent: location,
    id,
    displayName,
    description: ragCorpus.description,
    metric: distanceMetric,
    vectorDbConfig: backend.vectorDbConfig,
    ragEmbeddingModelConfig: backend.ragEmbeddingModelConfig,
    index: createIndex({ dimensions: embedder.dimensions, metric: coreMetric(distanceMetric), dense: backend.dense, embedder, text: { bm25: { k1: backend.k1, b: backend.b } } }),
    files: new Map(),
    schemas: new Map(),
    ...ctx.stamp(),
  }
  ctx.state.corpora.set(corpus.name, corpus)
  return ctx.operation(version, corpus.name, 'CreateRagCorpusOperationMetadata', { type: 'RagCorpus', value: corpusJson(corpus, version) })
}

export async function getRagCorpus(ctx: RagContext, version: ApiVersion, request: unknown): Promise<RagCorpusJson> {
  const { name } = readMessage(requestSchema(GetRagCorpusRequest, version), request)
  return corpusJson(ctx.corpus(name, 'name'), version)
}

export async function listRagCorpora(ctx: RagContext, version: ApiVersion, request: unknown): Promise<ListRagCorporaResponseJson> {
  const req = readMessage(requestSchema(ListRagCorporaRequest, version), request)
  const location = ctx.location(req.parent, 'parent')
  const all = [...ctx.state.corpora.values()].filter((c) => c.parent === location)
  const page = pageOf(all, (c) => c.seq, `listRagCorpora ${location}`, req, { defaultSize: 10, maxSize: 100 })
  return omitUnset({ ragCorpora: page.items.map((c) => corpusJson(c, version)), nextPageToken: page.nextPageToken })
}

/**
 * Replaces displayName and description (set fields only: the request has no update mask). The
 * vector DB and embedding configs are fixed at creation, as in Vertex.
 */
export async function updateRagCorpus(ctx: RagContext, version: ApiVersion, request: unknown): Promise<Operation> {
  const { ragCorpus = {} } = readMessage(requestSchema(UpdateRagCorpusRequest, version), request)
  const corpus = ctx.corpus(ragCorpus.name, 'ragCorpus.name')
  if (ragCorpus.vectorDbConfig || ragCorpus.ragVectorDbConfig || ragCorpus.ragEmbeddingModelConfig || ragCorpus.vertexAiSearchConfig) {
    // Only what the request sets is compared (a client echoing the corpus back is fine).
    const backend = backendOf(ragCorpus)
    const dbGiven = ragCorpus.vectorDbConfig ?? ragCorpus.ragVectorDbConfig
    const dbChanged = dbGiven !== undefined && stable(backend.vectorDbConfig) !== stable(corpus.vectorDbConfig)
    const embeddingChanged = backend.ragEmbeddingModelConfig !== undefined && stable(backend.ragEmbeddingModelConfig) !== stable(corpus.ragEmbeddingModelConfig)
    if (dbChanged || embeddingChanged || ragCorpus.vertexAiSearchConfig) {
      throw failure('FAILED_PRECONDITION', 'The vector DB and embedding model of a RagCorpus are fixed when it is created; create a new corpus to change them.', dbChanged ? 'ragCorpus.vectorDbConfig' : 'ragCorpus.ragEmbeddingModelConfig')
    }
  }
  // Without an update mask, the fields the request sets are updated ('' is unset in proto3).
  if (ragCorpus.displayName !== undefined) corpus.displayName = ragCorpus.displayName
  if (ragCorpus.description !== undefined) corpus.description = ragCorpus.description
  corpus.updateMs = ctx.now()
  return ctx.operation(version, corpus.name, 'UpdateRagCorpusOperationMetadata', { type: 'RagCorpus', value: corpusJson(corpus, version) })
}

export async function deleteRagCorpus(ctx: RagContext, version: ApiVersion, request: unknown): Promise<Operation> {
  const { name, force = false, forceDelete = false } = readMessage(requestSchema(DeleteRagCorpusRequest, version), request)
  const corpus = ctx.corpus(name, 'name')
  if (corpus.files.size > 0 && !force && !forceDelete) {
    throw failure('FAILED_PRECONDITION', `RagCorpus "${corpus.name}" holds ${corpus.files.size} RagFile(s); delete them first or pass force: true.`, 'force')
  }
  ctx.state.corpora.delete(corpus.name)
  return ctx.operation(version, corpus.name, 'DeleteOperationMetadata', { type: 'google.protobuf.Empty', value: {} })
}
