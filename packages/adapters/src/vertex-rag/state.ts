import type { Operation } from '../rpc/operations.js'
import type { Metadata, QuarryIndex } from '@quarry/core'
import { rfc3339 } from '../rpc/clock.js'
import { omitUnset } from '../rpc/omit.js'
import type { DistanceMetric } from './metric.js'
import type { ApiVersion } from './schema.js'
import type { MetadataValueJson, RagCorpusJson, RagDataSchemaJson, RagFileJson, RagFileTypeName, RagMetadataJson } from './resources.js'

/** Everything RAG Engine holds: corpora (by full name) and finished operations (for polling). Maps list in creation order. */
export interface RagState {
  readonly corpora: Map<string, RagCorpusState>
  readonly operations: Map<string, Operation>
  /** The RagEngineConfig of each location set by updateRagEngineConfig (by config name); a location not here has the default. */
  readonly engineConfigs: Map<string, RagEngineConfigState>
  seq: number
}

/** A RagManagedDb tier (`enterprise` is v1beta1's deprecated name for scaled). */
export type ManagedDbTier = 'basic' | 'scaled' | 'unprovisioned' | 'enterprise'

/** A location's RagEngineConfig: its RagManagedDb tier and, as v1beta1 gives it, the backend mode. */
export interface RagEngineConfigState {
  /** `projects/{p}/locations/{l}/ragEngineConfig` */
  readonly name: string
  /** Undefined in serverless mode, which has no tier. */
  readonly tier: ManagedDbTier | undefined
  readonly mode: 'spanner' | 'serverless' | undefined
}

interface Stamped {
  readonly seq: number
  readonly createMs: number
  updateMs: number
}

export interface RagCorpusState extends Stamped {
  readonly name: string
  /** `projects/{p}/locations/{l}` */
  readonly parent: string
  readonly id: string
  displayName: string
  description: string | undefined
  readonly metric: DistanceMetric
  /** The vector DB / embedding configs as given (echoed back), and what they select. */
  vectorDbConfig: Readonly<Record<string, unknown>>
  ragEmbeddingModelConfig: Readonly<Record<string, unknown>> | undefined
  readonly index: QuarryIndex
  /** By name. Files come and go through {@link listFile} and {@link unlistFile} (they keep the index of {@link importedFrom}). */
  readonly files: Map<string, RagFileState>
  readonly schemas: Map<string, RagDataSchemaState>
}

/** The first file of each imported source URI, by corpus file list: built on the first lookup, kept by listFile / unlistFile. */
const bySource = new WeakMap<ReadonlyMap<string, RagFileState>, Map<string, RagFileState>>()

function sourceIndex(corpus: RagCorpusState): Map<string, RagFileState> {
  let index = bySource.get(corpus.files)
  if (!index) {
    index = new Map()
    for (const f of corpus.files.values()) if (f.source.kind === 'gcs' && !index.has(f.source.uri)) index.set(f.source.uri, f)
    bySource.set(corpus.files, index)
  }
  return index
}

/** The file of a corpus imported from this source URI before, if any (a lookup, not a scan of the files). */
export function importedFrom(corpus: RagCorpusState, uri: string): RagFileState | undefined {
  return sourceIndex(corpus).get(uri)
}

/**
 * A value kept beside each corpus outside its saved state (what its writes share while they run:
 * the upload queues, the commit order), made on first use by `make` and gone with the corpus.
 */
export function perCorpus<T>(): (corpus: RagCorpusState, make: () => T) => T {
  const values = new WeakMap<RagCorpusState, T>()
  return (corpus, make) => {
    let value = values.get(corpus)
    if (value === undefined) values.set(corpus, (value = make()))
    return value
  }
}

/** Adds a file to its corpus's list. */
export function listFile(corpus: RagCorpusState, file: RagFileState): void {
  corpus.files.set(file.name, file)
  const index = bySource.get(corpus.files)
  if (index && file.source.kind === 'gcs' && !index.has(file.source.uri)) index.set(file.source.uri, file)
}

/** Takes a file off its corpus's list. */
export function unlistFile(corpus: RagCorpusState, file: RagFileState): void {
  corpus.files.delete(file.name)
  // Another file of the same URI (none is made today) would take its place: the index is rebuilt on the next lookup.
  if (file.source.kind === 'gcs' && bySource.get(corpus.files)?.get(file.source.uri) === file) bySource.delete(corpus.files)
}

/** The id of a file's chunk `i` (0-based): its record id in the corpus index, also the v1beta1 chunkId. */
export function chunkId(fileId: string, i: number): string {
  return `${fileId}-${String(i).padStart(6, '0')}`
}

/** The ordinal a chunk id of this file names (the inverse of {@link chunkId}), or undefined when it names none. */
export function chunkOrdinal(fileId: string, id: string): number | undefined {
  const at = fileId.length + 1
  if (id.length <= at || !id.startsWith(fileId) || id.charCodeAt(at - 1) !== 0x2d) return undefined
  const i = Number(id.slice(at))
  return Number.isSafeInteger(i) ? i : undefined
}

/**
 * The chunks of a file restored from a save, as saved: a count, and each chunk's pages. They stay
 * so until something reads the file's whole list (`chunks`, made then): a query's hit makes its
 * one chunk ({@link chunkAt}), and a save writes the count and pages back as they were, so neither
 * makes an object per chunk of the file nor keeps them.
 */
export interface SavedChunks {
  readonly count: number
  readonly pageSpans: readonly (readonly [number, number])[] | undefined
  /** Chunk `i`, made alone (undefined past the end). */
  at(i: number): RagChunkState | undefined
}

/** The restored files whose chunk list is not made yet. */
const unmade = new WeakMap<RagFileState, SavedChunks>()

/** Marks a restored file's chunks as still as saved (its list not made). */
export function keepSavedChunks(file: RagFileState, chunks: SavedChunks): void {
  unmade.set(file, chunks)
}

/** A restored file's list is made, or was replaced: its chunks are no longer as saved. */
export function forgetSavedChunks(file: RagFileState): void {
  unmade.delete(file)
}

/** A restored file's chunks as saved, while its list is not made; undefined otherwise. */
export function savedChunksOf(file: RagFileState): SavedChunks | undefined {
  return unmade.get(file)
}

/** How many chunks a file has, without making a restored file's list. */
export function chunkCount(file: RagFileState): number {
  return unmade.get(file)?.count ?? file.chunks.length
}

/** Chunk `i` of a file, without making a restored file's whole list. */
export function chunkAt(file: RagFileState, i: number): RagChunkState | undefined {
  const saved = unmade.get(file)
  return saved === undefined ? file.chunks[i] : saved.at(i)
}

export interface RagChunkState {
  /** Record id in the corpus index, also the v1beta1 chunkId: `<fileId>-<6-digit ordinal>`. */
  readonly id: string
  readonly text: string
  /** Pages of a PDF the chunk spans (1-based). */
  readonly pageSpan?: { readonly firstPage: number; readonly lastPage: number }
}

/**
 * A chunk read back from a save: its text is its record's text in the corpus index, read when
 * asked (state.json holds no chunk text; memory holds one copy).
 */
export class IndexedChunk implements RagChunkState {
  readonly id: string
  readonly pageSpan?: { readonly firstPage: number; readonly lastPage: number }
  readonly #index: QuarryIndex

  constructor(index: QuarryIndex, id: string, pageSpan: RagChunkState['pageSpan']) {
    this.id = id
    if (pageSpan) this.pageSpan = pageSpan
    this.#index = index
  }

  get text(): string {
    const text = this.#index.text(this.id)
    if (typeof text !== 'string') throw new Error(`index and resources disagree on ${this.id}: it has no text record`)
    return text
  }
}

export type RagFileSource = { readonly kind: 'gcs'; readonly uri: string } | { readonly kind: 'upload' }

export interface RagFileState extends Stamped {
  readonly name: string
  readonly id: string
  displayName: string
  description: string | undefined
  readonly source: RagFileSource
  sizeBytes: number
  sha256: string
  type: RagFileTypeName
  userMetadata: string | undefined
  chunks: readonly RagChunkState[]
  readonly metadata: Map<string, RagMetadataState>
}

export interface RagDataSchemaState extends Stamped {
  readonly name: string
  readonly key: string
  readonly details: Readonly<Record<string, unknown>>
  /** The filter type the schema gives its key. */
  readonly type: 'number' | 'string' | 'datetime' | 'boolean' | 'list' | undefined
}

export interface RagMetadataState extends Stamped {
  readonly name: string
  key: string
  value: MetadataValueJson
}

/** Core metadata field of a user metadata key (prefixed so no user key can shadow the file id). */
export const FILE_FIELD = '$file'
export const metadataField = (key: string): string => `m.${key}`

function valueOf(v: MetadataValueJson): string | number | boolean | Date | string[] {
  if ('intValue' in v) return Number(v.intValue)
  if ('floatValue' in v) return v.floatValue
  if ('strValue' in v) return v.strValue
  if ('datetimeValue' in v) return new Date(v.datetimeValue)
  if ('boolValue' in v) return v.boolValue
  return (v.listValue.values ?? []).map((x) => {
    const s = valueOf(x)
    return s instanceof Date ? s.toISOString() : String(s)
  })
}

/** The metadata of every chunk record of a file: the file id and its user metadata values. */
export function fileMetadata(file: RagFileState): Metadata {
  const out: Metadata = { [FILE_FIELD]: file.id }
  for (const m of file.metadata.values()) {
    Object.defineProperty(out, metadataField(m.key), { value: valueOf(m.value), enumerable: true, writable: true, configurable: true })
  }
  return out
}

export function corpusJson(c: RagCorpusState, version: ApiVersion): RagCorpusJson {
  const beta = version === 'v1beta1'
  return omitUnset({
    name: c.name,
    displayName: c.displayName,
    description: c.description,
    vectorDbConfig: c.vectorDbConfig,
    ragEmbeddingModelConfig: beta ? c.ragEmbeddingModelConfig : undefined,
    createTime: rfc3339(c.createMs),
    updateTime: rfc3339(c.updateMs),
    corpusStatus: { state: 'ACTIVE' },
    ragFilesCount: beta ? c.files.size : undefined,
  })
}

export function fileJson(f: RagFileState, version: ApiVersion): RagFileJson {
  const beta = version === 'v1beta1'
  return omitUnset(
    {
      name: f.name,
      displayName: f.displayName,
      description: f.description,
      gcsSource: f.source.kind === 'gcs' ? { uris: [f.source.uri] } : undefined,
      // A set, empty message: written as {} (the oneof source says where the file came from).
      directUploadSource: f.source.kind === 'upload' ? {} : undefined,
      // int64 as a decimal string; 0 is its default.
      sizeBytes: beta && f.sizeBytes > 0 ? String(f.sizeBytes) : undefined,
      ragFileType: beta ? f.type : undefined,
      userMetadata: beta ? f.userMetadata : undefined,
      createTime: rfc3339(f.createMs),
      updateTime: rfc3339(f.updateMs),
      fileStatus: { state: 'ACTIVE' },
    },
    ['directUploadSource'],
  )
}

export function schemaJson(s: RagDataSchemaState): RagDataSchemaJson {
  return omitUnset({ name: s.name, key: s.key, schemaDetails: s.details })
}

export function ragMetadataJson(m: RagMetadataState): RagMetadataJson {
  return { name: m.name, userSpecifiedMetadata: { key: m.key, value: m.value } }
}

/** The source URI a context reports: the file's URI, or for an upload its display name. */
export function sourceUriOf(f: RagFileState): string {
  return f.source.kind === 'gcs' ? f.source.uri : f.displayName
}
