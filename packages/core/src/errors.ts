/**
 * The one error class of `@quarry/core`. Every failure caused by the caller's input carries a
 * stable {@link QuarryErrorCode} (safe to switch on) and a message that says how to fix the input.
 */
export type QuarryErrorCode =
  /** An option of `createIndex` or of a search is missing, of the wrong type or out of range. */
  | 'INVALID_OPTION'
  /** A record is not an object with a string `id` and the fields its index needs. */
  | 'INVALID_RECORD'
  /** An id is empty, too long or not a string. */
  | 'INVALID_ID'
  /** A vector's length differs from the index's `dimensions`. */
  | 'DIMENSION_MISMATCH'
  /** A vector holds NaN or Infinity, or is all zeros where the metric needs a direction. */
  | 'INVALID_VECTOR'
  /** `add` was given an id that is already in the index (use `upsert` to replace). */
  | 'DUPLICATE_ID'
  /** An operation names an id that is not in the index. */
  | 'UNKNOWN_ID'
  /** A search request is malformed (no query, bad topK, ...). */
  | 'INVALID_QUERY'
  /** The caller's filter function threw; the error is kept as `cause`. */
  | 'FILTER_FAILED'
  /** A saved index could not be read: missing files, unknown version or corrupt data. */
  | 'INVALID_SNAPSHOT'
  /**
   * Another writer holds the folder (its `LOCK` names a running process): an index saving there, or
   * a server with `--data` on it. A folder has one writer at a time; retry once it is done.
   */
  | 'LOCKED'
  /**
   * The index is being written by `saveInSlices` and cannot change until that save settles: await
   * it before adding, replacing or removing records.
   */
  | 'BUSY'
  /** A query or load used another embedder (name, dimensions) than the one that built the index. */
  | 'EMBEDDER_MISMATCH'
  /**
   * A module the request needs cannot load: the HNSW graph (@quarry/hnsw: not installed, or
   * QUARRY_HNSW asks for a build that cannot load) for an index with dense: 'hnsw' (the default with
   * dimensions) or a snapshot holding a graph; or a wink / GloVe package. The message names the
   * cause and its fix.
   */
  | 'NATIVE_UNAVAILABLE'

/** Thrown by `@quarry/core` for bad input; `code` is stable across versions. */
export class QuarryError extends Error {
  override readonly name = 'QuarryError'
  readonly code: QuarryErrorCode
  /** Where in the input the problem is, e.g. `vector[3]` or `hnsw.m`, when it is known. */
  readonly path: string | undefined

  constructor(code: QuarryErrorCode, message: string, options: { path?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.path = options.path
  }
}

/** Describes a received value briefly for error messages (`a string`, `NaN`, `an array of 3`). */
export function describe(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return `an array of ${value.length}`
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`
  switch (typeof value) {
    case 'undefined':
      return 'undefined'
    case 'number':
      return Number.isNaN(value) ? 'NaN' : String(value)
    case 'string':
      return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value)
    case 'object':
      return 'an object'
    default:
      return `a ${typeof value}`
  }
}

/**
 * Throws INVALID_OPTION for the first key of `value` not in `known`, naming it (below `path`) and
 * listing the known ones: a misspelt option fails at once rather than being ignored.
 */
export function rejectUnknownOptions(value: Record<string, unknown>, known: readonly string[], path: string): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) {
      const where = path ? `${path}.${key}` : key
      throw new QuarryError('INVALID_OPTION', `unknown option ${where}; known options are ${known.join(', ')}.`, { path: where })
    }
  }
}

/**
 * Throws INVALID_OPTION unless `options` is an object (path `options`, the message showing
 * `{ example }`) whose keys are all in `known` ({@link rejectUnknownOptions}).
 */
export function checkOptionsObject(options: unknown, known: readonly string[], example: string): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new QuarryError('INVALID_OPTION', `options must be an object like { ${example} }; received ${describe(options)}.`, { path: 'options' })
  rejectUnknownOptions(options as Record<string, unknown>, known, '')
}
