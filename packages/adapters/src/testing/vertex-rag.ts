import fc from 'fast-check'
import { MAX_TOP_K } from '@quarry/core'
import { omitUndefined } from '../rpc/omit.js'
import { DEFAULT_LIMITS } from '../rpc/limits.js'
import type { Infer } from '../rpc/proto-json.js'
import { CORPUS } from '../vertex-rag/context.js'
import type { RetrieveContextsRequest } from '../vertex-rag/schema.js'
import { aip160FilterArbitrary, writableField, type FilterKey } from './aip160-filters.js'
import { checkKinds, checkName, invalidOption } from './check.js'
import { queriesOf } from './query-text.js'
import { doubleValue } from './values.js'

/** A v1beta1 RetrieveContextsRequest as proto3 JSON (every field optional, as in the protos). */
export type RetrieveContextsRequestInput = Infer<typeof RetrieveContextsRequest>

/** The type of a RagDataSchema (`schemaDetails.type`), which types a key in metadataFilter. */
export type RagDataType = 'INTEGER' | 'FLOAT' | 'STRING' | 'DATETIME' | 'BOOLEAN' | 'LIST'

const DATA_TYPES: readonly RagDataType[] = ['INTEGER', 'FLOAT', 'STRING', 'DATETIME', 'BOOLEAN', 'LIST']
const KEY_TYPE = { INTEGER: 'integer', FLOAT: 'number', STRING: 'string', DATETIME: 'datetime', BOOLEAN: 'boolean', LIST: 'list' } as const

/** Options of {@link retrieveContextsRequestArbitrary}. */
export interface RetrieveContextsRequestOptions {
  /** The corpus retrieved from: `projects/{project}/locations/{location}/ragCorpora/{rag_corpus}` (the request's parent is its location). */
  readonly ragCorpus: string
  /** Ids of RagFiles of that corpus that `ragFileIds` may name (an id not in the corpus is NOT_FOUND, not a valid request). @defaultValue [] (never restricted) */
  readonly ragFileIds?: readonly string[]
  /** Metadata keys `metadataFilter` may name, typed as the corpus's RagDataSchemas declare them. @defaultValue {} (no metadataFilter) */
  readonly metadataSchema?: Readonly<Record<string, RagDataType>>
  /** Query texts. Texts that are blank or over 10,000 characters are skipped. @defaultValue queryTextArbitrary() */
  readonly query?: fc.Arbitrary<string>
}

const MODELS = ['semantic-ranker-default@latest', 'semantic-ranker-fast-004', 'gemini-2.0-flash']

/**
 * Valid v1beta1 `retrieveContexts` requests (VertexRagService) for one corpus: the resource or
 * its deprecated `ragCorpora` spelling, `ragFileIds` among the given ones, topK (or the
 * deprecated similarityTopK) in 1–10,000, hybrid alpha in [0, 1] (or the deprecated
 * `query.ranking.alpha`), a distance or a similarity threshold (or the deprecated
 * `vertexRagStore.vectorDistanceThreshold`), an AIP-160 `metadataFilter` over the declared keys,
 * and a rankService or llmRanker ranking. Each request is valid per the adapters' schema and
 * limits: Quarry's VertexRagEngine answers every one without INVALID_ARGUMENT.
 */
export function retrieveContextsRequestArbitrary(options: RetrieveContextsRequestOptions): fc.Arbitrary<RetrieveContextsRequestInput> {
  const ragCorpus = checkName(options.ragCorpus, CORPUS, 'ragCorpus')
  const parent = ragCorpus.slice(0, ragCorpus.indexOf('/ragCorpora/'))
  const fileIds = [...(options.ragFileIds ?? [])]
  if (fileIds.length > DEFAULT_LIMITS.entries.max || fileIds.some((id) => typeof id !== 'string' || id === '')) {
    throw invalidOption('ragFileIds', `must be at most ${DEFAULT_LIMITS.entries.max} non-empty RagFile ids of the corpus.`)
  }
  const keys = checkKinds(options.metadataSchema, DATA_TYPES, 63, 'metadataSchema').map(([field, type]): FilterKey => {
    if (!writableField(field)) throw invalidOption(`metadataSchema.${field}`, 'cannot be named in an AIP-160 filter (a keyword, or a backquote in the key).')
    return { field, type: KEY_TYPE[type] }
  })

  // Fresh objects every time (never fc.constant of an object): code under test may change a request.
  const fileRestriction = fileIds.length === 0 ? fc.constant(undefined) : fc.option(fc.subarray(fileIds, { minLength: 1 }), { nil: undefined })
  const resource = fileRestriction.map((ids) => omitUndefined({ ragCorpus, ragFileIds: ids }))
  const store = fc.oneof(
    { arbitrary: resource.map((r) => ({ ragResources: [r] })), weight: 4 },
    // Deprecated: corpora by name (no file restriction).
    { arbitrary: fc.constant(null).map(() => ({ ragCorpora: [ragCorpus] })), weight: 1 },
  )
  const threshold = fc.oneof(
    fc.constant(null).map(() => ({})),
    fc.record({ vectorDistanceThreshold: doubleValue }),
    fc.record({ vectorSimilarityThreshold: doubleValue }),
  )
  const filter = fc.record({ threshold, metadataFilter: keys.length === 0 ? fc.constant(undefined) : fc.option(aip160FilterArbitrary(keys), { nil: undefined }) })
  const ranking = fc.oneof(
    fc.record({ rankService: fc.record({ modelName: fc.constantFrom(...MODELS) }, { requiredKeys: [] }) }),
    fc.record({ llmRanker: fc.record({ modelName: fc.constantFrom(...MODELS) }, { requiredKeys: [] }) }),
  )
  const config = fc.record(
    {
      topK: fc.integer({ min: 1, max: MAX_TOP_K }),
      hybridSearch: fc.record({ alpha: fc.float({ min: 0, max: 1, noNaN: true }) }, { requiredKeys: [] }),
      filter,
      ranking,
    },
    { requiredKeys: [] },
  )
  return fc
    .record({
      store,
      text: queriesOf(options.query),
      config: fc.option(config, { nil: undefined }),
      // Move topK, alpha and a distance threshold to their deprecated fields.
      legacy: fc.boolean(),
    })
    .map(({ store, text, config, legacy }): RetrieveContextsRequestInput => {
      const f = config?.filter
      const distance = f && 'vectorDistanceThreshold' in f.threshold ? f.threshold.vectorDistanceThreshold : undefined
      const filterJson = f && { ...(legacy && distance !== undefined ? {} : f.threshold), ...omitUndefined({ metadataFilter: f.metadataFilter }) }
      const topK = config?.topK
      const alpha = config?.hybridSearch?.alpha
      const ragRetrievalConfig =
        config &&
        omitUndefined({
          topK: legacy ? undefined : topK,
          hybridSearch: legacy && alpha !== undefined ? undefined : config.hybridSearch,
          filter: filterJson,
          ranking: config.ranking,
        })
      return {
        parent,
        vertexRagStore: { ...store, ...omitUndefined({ vectorDistanceThreshold: legacy ? distance : undefined }) },
        query: omitUndefined({
          text,
          ragRetrievalConfig,
          similarityTopK: legacy ? topK : undefined,
          ranking: legacy && alpha !== undefined ? { alpha } : undefined,
        }),
      }
    })
}
