/**
 * The resources of the Semantic Retriever as the API returns them (proto3 JSON: lowerCamelCase,
 * unset fields and empty lists omitted, timestamps RFC 3339 with Z).
 */

/** CustomMetadata: a key with exactly one of a string, a list of strings or a number. */
export type CustomMetadataJson =
  | { readonly key: string; readonly stringValue: string }
  | { readonly key: string; readonly stringListValue: { readonly values?: readonly string[] } }
  | { readonly key: string; readonly numericValue: number }

export interface CorpusJson {
  readonly name: string
  readonly displayName?: string
  readonly createTime: string
  readonly updateTime: string
}

export interface DocumentJson {
  readonly name: string
  readonly displayName?: string
  readonly customMetadata?: readonly CustomMetadataJson[]
  readonly updateTime: string
  readonly createTime: string
}

export type ChunkStateName = 'STATE_PENDING_PROCESSING' | 'STATE_ACTIVE' | 'STATE_FAILED'

export interface ChunkJson {
  readonly name: string
  readonly data: { readonly stringValue: string }
  readonly customMetadata?: readonly CustomMetadataJson[]
  readonly createTime: string
  readonly updateTime: string
  readonly state: ChunkStateName
}

export interface RelevantChunkJson {
  /**
   * Cosine similarity of the query's and the chunk's embeddings, in [-1, 1]; higher is more
   * relevant. A float without presence: omitted when exactly 0 (read a missing score as 0).
   */
  readonly chunkRelevanceScore?: number
  readonly chunk: ChunkJson
  /** The chunk's document (queryCorpus only). */
  readonly document?: DocumentJson
}

export interface QueryResponseJson {
  readonly relevantChunks?: readonly RelevantChunkJson[]
}

export interface ListCorporaResponseJson {
  readonly corpora?: readonly CorpusJson[]
  readonly nextPageToken?: string
}

export interface ListDocumentsResponseJson {
  readonly documents?: readonly DocumentJson[]
  readonly nextPageToken?: string
}

export interface ListChunksResponseJson {
  readonly chunks?: readonly ChunkJson[]
  readonly nextPageToken?: string
}

export interface BatchChunksResponseJson {
  readonly chunks?: readonly ChunkJson[]
}

/** google.protobuf.Empty. */
export type EmptyJson = Record<string, never>
