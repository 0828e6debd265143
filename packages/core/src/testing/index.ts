/**
 * Check your own vector store or ANN index against Quarry's exact answers: fast-check arbitraries
 * of records, vectors, metadata and filters, an exact oracle, recall@k and ranking comparison.
 *
 * The only entry of `@quarry/core` that imports fast-check (an optional peer dependency). Every
 * export is listed by name.
 * @module @quarry/core/testing
 */
export { idArbitrary } from './ids.js'
export type { IdArbitraryOptions } from './ids.js'
export { vectorArbitrary } from './vectors.js'
export type { VectorArbitraryOptions } from './vectors.js'
export type { MetadataKind } from './values.js'
export { metadataArbitrary, DEFAULT_METADATA_FIELDS } from './metadata.js'
export type { MetadataArbitraryOptions, MetadataFields } from './metadata.js'
export { filterArbitrary } from './filters.js'
export type { FilterArbitraryOptions } from './filters.js'
export { recordArbitrary, recordsArbitrary } from './records.js'
export type { GeneratedRecord, RecordArbitraryOptions, RecordsArbitraryOptions } from './records.js'
export { exactOracle } from './exact-oracle.js'
export type { ExactOracle, ExactOracleOptions, ExactOracleSearch, OracleRecord } from './exact-oracle.js'
export { recallAtK } from './recall.js'
export { sameRanking } from './same-ranking.js'
export type { RankedEntry, RankingComparison, SameRankingOptions } from './same-ranking.js'
