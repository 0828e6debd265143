import fc from 'fast-check'
import { omitUndefined } from '../rpc/omit.js'
import { CAPS } from '../rpc/limits.js'
import type { Infer } from '../rpc/proto-json.js'
import { CHUNK_PREFIX, DOCUMENT_PREFIX } from '../semantic-retriever/custom-metadata.js'
import { CORPUS_NAME } from '../semantic-retriever/context.js'
import { MAX_RESULTS } from '../semantic-retriever/query.js'
import type { MetadataFilterInput, QueryCorpusRequest } from '../semantic-retriever/schema.js'
import { checkKinds, checkName } from './check.js'
import { queriesOf } from './query-text.js'
import { floatValue, stringValue } from './values.js'

/** A QueryCorpusRequest (v1beta RetrieverService) as proto3 JSON (every field optional, as in the protos). */
export type QueryCorpusRequestInput = Infer<typeof QueryCorpusRequest>

/** The value a CustomMetadata entry sets, which decides the conditions that suit its key. */
export type CustomMetadataKind = 'stringValue' | 'numericValue' | 'stringListValue'

const KINDS: readonly CustomMetadataKind[] = ['stringValue', 'numericValue', 'stringListValue']

/** Options of {@link queryCorpusRequestArbitrary}. */
export interface QueryCorpusRequestOptions {
  /** The corpus queried: `corpora/{corpus}`. */
  readonly corpus: string
  /** Chunk custom metadata keys that filters may name (`chunk.custom_metadata.<key>`), with their kinds. @defaultValue {} */
  readonly chunkMetadata?: Readonly<Record<string, CustomMetadataKind>>
  /** Document custom metadata keys that filters may name (`document.custom_metadata.<key>`), with their kinds. @defaultValue {} */
  readonly documentMetadata?: Readonly<Record<string, CustomMetadataKind>>
  /** Query texts. Texts that are blank or over 10,000 characters are skipped. @defaultValue queryTextArbitrary() */
  readonly query?: fc.Arbitrary<string>
}

type Condition = NonNullable<MetadataFilterInput['conditions']>[number]

const NUMERIC = ['LESS', 'LESS_EQUAL', 'EQUAL', 'GREATER_EQUAL', 'GREATER', 'NOT_EQUAL'] as const

function conditionOf(kind: CustomMetadataKind): fc.Arbitrary<Condition> {
  if (kind === 'numericValue') return fc.record({ operation: fc.constantFrom(...NUMERIC), numericValue: floatValue })
  const operations = kind === 'stringValue' ? (['EQUAL', 'NOT_EQUAL'] as const) : (['INCLUDES', 'EXCLUDES'] as const)
  return fc.record({ operation: fc.constantFrom(...operations), stringValue: stringValue })
}

/** One MetadataFilter of a key (conditions ORed), or two for a numeric key (a range: filters are ANDed). */
function filtersOf(key: string, kind: CustomMetadataKind): fc.Arbitrary<MetadataFilterInput[]> {
  const filter = fc.array(conditionOf(kind), { minLength: 1, maxLength: 3 }).map((conditions): MetadataFilterInput => ({ key, conditions }))
  // String conditions on one key may only be ORed inside one filter (Google's rule): only numeric keys repeat.
  return fc.array(filter, { minLength: 1, maxLength: kind === 'numericValue' ? 2 : 1 })
}

/**
 * Valid `corpora.query` requests (QueryCorpusRequest) for one corpus: a query text, an optional
 * resultsCount in 1–100, and metadataFilters over the declared chunk and document keys with the
 * conditions that suit each kind (numeric comparisons, EQUAL / NOT_EQUAL on strings, INCLUDES /
 * EXCLUDES on string lists), string conditions of a key inside one filter, numeric keys sometimes
 * in two (a range). Each request is valid per the adapters' schema and limits: Quarry's
 * SemanticRetriever answers every one without INVALID_ARGUMENT.
 */
export function queryCorpusRequestArbitrary(options: QueryCorpusRequestOptions): fc.Arbitrary<QueryCorpusRequestInput> {
  const name = checkName(options.corpus, CORPUS_NAME, 'corpus')
  const keys = [
    ...checkKinds(options.chunkMetadata, KINDS, CAPS.key.max, 'chunkMetadata').map(([k, kind]) => [`${CHUNK_PREFIX}${k}`, kind] as const),
    ...checkKinds(options.documentMetadata, KINDS, CAPS.key.max, 'documentMetadata').map(([k, kind]) => [`${DOCUMENT_PREFIX}${k}`, kind] as const),
  ]
  const metadataFilters =
    keys.length === 0
      ? fc.constant(undefined)
      : fc.option(
          fc.subarray(keys, { minLength: 1, maxLength: 4 }).chain((chosen) => fc.tuple(...chosen.map(([key, kind]) => filtersOf(key, kind))).map((groups) => groups.flat())),
          { nil: undefined },
        )
  return fc
    .record({
      query: queriesOf(options.query),
      resultsCount: fc.option(fc.integer({ min: 1, max: MAX_RESULTS }), { nil: undefined }),
      metadataFilters,
    })
    .map(({ query, resultsCount, metadataFilters }): QueryCorpusRequestInput => omitUndefined({ name, query, resultsCount, metadataFilters }))
}
