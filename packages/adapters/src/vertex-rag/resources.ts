/** RAG Engine responses as proto3 JSON (unset fields omitted, int64 as strings, RFC 3339 times). */

export interface RagCorpusJson {
  readonly name: string
  readonly displayName: string
  readonly description?: string
  readonly vectorDbConfig?: Readonly<Record<string, unknown>>
  readonly ragEmbeddingModelConfig?: Readonly<Record<string, unknown>>
  readonly createTime: string
  readonly updateTime: string
  readonly corpusStatus: { readonly state: 'ACTIVE' }
  /** v1beta1 only. */
  readonly ragFilesCount?: number
}

export type RagFileTypeName = 'RAG_FILE_TYPE_TXT' | 'RAG_FILE_TYPE_PDF'

export interface RagFileJson {
  readonly name: string
  readonly displayName: string
  readonly description?: string
  readonly gcsSource?: { readonly uris: readonly string[] }
  readonly directUploadSource?: Record<string, never>
  /** v1beta1 only; int64 as a decimal string. */
  readonly sizeBytes?: string
  readonly ragFileType?: RagFileTypeName
  readonly userMetadata?: string
  readonly createTime: string
  readonly updateTime: string
  readonly fileStatus: { readonly state: 'ACTIVE' }
}

export interface RagChunkJson {
  readonly text: string
  readonly pageSpan?: { readonly firstPage: number; readonly lastPage: number }
  /** v1beta1 only. */
  readonly fileId?: string
  /** v1beta1 only. */
  readonly chunkId?: string
}

export interface ContextJson {
  readonly sourceUri: string
  readonly sourceDisplayName: string
  readonly text: string
  /** On the corpus metric's scale: COSINE_DISTANCE 1 − cos ∈ [0, 2] (0 best), DOT_PRODUCT q·v (higher best), EUCLIDEAN_SQUARED_DISTANCE ‖q − v‖² (0 best). Written even when 0 (proto3 `optional`). */
  readonly score: number
  /** v1beta1, deprecated: the dense distance (1 − cos, −q·v or ‖q − v‖²); omitted when exactly 0. */
  readonly distance?: number
  /**
   * v1beta1, deprecated: the sparse (BM25) distance 1 / (1 + BM25 score) ∈ (0, 1], smaller is
   * closer (`sparseDistanceOf`); absent where the chunk has no BM25 score (dense-only retrieval,
   * or a hybrid hit found by the dense side alone).
   */
  readonly sparseDistance?: number
  readonly chunk: RagChunkJson
}

export interface RetrieveContextsResponseJson {
  readonly contexts: { readonly contexts?: readonly ContextJson[] }
}

export interface ListRagCorporaResponseJson {
  readonly ragCorpora?: readonly RagCorpusJson[]
  readonly nextPageToken?: string
}

export interface ListRagFilesResponseJson {
  readonly ragFiles?: readonly RagFileJson[]
  readonly nextPageToken?: string
}

export interface ImportRagFilesResponseJson {
  /** The gs:// file the partial failures were written to (partialFailureGcsSink). */
  readonly partialFailuresGcsPath?: string
  readonly importedRagFilesCount?: string
  readonly failedRagFilesCount?: string
  readonly skippedRagFilesCount?: string
}

/** A turn of generative content (google.cloud.aiplatform Content): a role and its parts (text parts are the ones RAG Engine reads). */
export interface ContentJson {
  readonly role?: string
  readonly parts?: readonly Readonly<Record<string, unknown>>[]
}

/** A fact used in grounding: one retrieved context, cited (AugmentPrompt's `facts`, CorroborateContent's input). */
export interface FactJson {
  /** The query the fact was retrieved for. */
  readonly query?: string
  /** The source file's display name. */
  readonly title?: string
  /** The source file's URI (an upload: its display name). */
  readonly uri?: string
  /** The chunk's text. */
  readonly summary?: string
  /** Deprecated in the protos; Quarry leaves it unset. */
  readonly vectorDistance?: number
  /** The context's score, as retrieveContexts gives it (on the corpus metric's scale). */
  readonly score?: number
  readonly chunk?: RagChunkJson
}

/** A claim found in content, and the facts that support it (CorroborateContent). */
export interface ClaimJson {
  /** Start of the claim in the content's text (inclusive, UTF-16 code units). */
  readonly startIndex?: number
  /** End of the claim (exclusive). */
  readonly endIndex?: number
  /** Indexes into the request's facts. */
  readonly factIndexes?: readonly number[]
  /** Confidence in [0, 1]. */
  readonly score?: number
}

export interface AugmentPromptResponseJson {
  readonly augmentedPrompt?: readonly ContentJson[]
  readonly facts?: readonly FactJson[]
}

export interface CorroborateContentResponseJson {
  readonly corroborationScore?: number
  readonly claims?: readonly ClaimJson[]
}

export interface AskContextsResponseJson {
  readonly response?: string
  readonly contexts: { readonly contexts?: readonly ContextJson[] }
}

/** A location's RagEngineConfig: the RagManagedDb tier (`{ basic: {} }`, …; v1beta1 may give the mode: `{ spanner: { scaled: {} } }`, `{ serverless: {} }`). */
export interface RagEngineConfigJson {
  readonly name: string
  readonly ragManagedDbConfig: Readonly<Record<string, unknown>>
}

export interface UploadRagFileResponseJson {
  readonly ragFile?: RagFileJson
  readonly error?: { readonly code: number; readonly message: string }
}

export type MetadataValueJson =
  | { readonly intValue: string }
  | { readonly floatValue: number }
  | { readonly strValue: string }
  | { readonly datetimeValue: string }
  | { readonly boolValue: boolean }
  | { readonly listValue: { readonly values?: readonly MetadataValueJson[] } }

export interface RagDataSchemaJson {
  readonly name: string
  readonly key: string
  readonly schemaDetails?: Readonly<Record<string, unknown>>
}

export interface RagMetadataJson {
  readonly name: string
  readonly userSpecifiedMetadata: { readonly key: string; readonly value: MetadataValueJson }
}

export interface ListRagDataSchemasResponseJson {
  readonly ragDataSchemas?: readonly RagDataSchemaJson[]
  readonly nextPageToken?: string
}

export interface ListRagMetadataResponseJson {
  readonly ragMetadata?: readonly RagMetadataJson[]
  readonly nextPageToken?: string
}
