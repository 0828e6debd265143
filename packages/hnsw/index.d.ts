/**
 * An HNSW graph (hnswlib 0.8.0) over float32 vectors, labelled by uint32. Built for @quarry/core:
 * vectors cross as Float32Arrays, answers are written into typed arrays the caller owns, filters
 * are bitsets. Methods throw an Error on invalid arguments or hnswlib's refusals.
 */
export declare class Graph {
  constructor(space: 'l2' | 'ip', dim: number)
  /** An empty graph with room for `maxElements`. */
  init(maxElements: number, m: number, efConstruction: number, seed: number): void
  /** The graph saved in `bytes` (hnswlib's format), every field and link checked; on error the graph is unchanged. */
  load(bytes: Uint8Array): void
  /** The same, from the first `size` bytes of the open file `fd` (read by position, in two reads). */
  load(fd: number, size: number): void
  saveSync(path: string): void
  /** Writes on a libuv thread; the graph must not change until the promise settles (searches may run). */
  save(path: string): Promise<void>
  resize(maxElements: number): void
  /** Inserts `label`, replaces its vector, or revives it when deleted. */
  add(vector: Float32Array, label: number): void
  markDelete(label: number): void
  setEf(ef: number): void
  /**
   * Writes at most `k` labels, best first, and hnswlib's distances into `labels` and `distances`
   * (each at least `k` long); only labels whose bit is set in `allow`, when given. Returns how many.
   */
  search(query: Float32Array, k: number, labels: Uint32Array, distances: Float32Array, allow?: Uint32Array): number
  maxElements(): number
  /** Elements in the graph, deleted ones included. */
  size(): number
}

/** Which build of {@link Graph} this process loaded (chosen at the first require; see README.md). */
export declare const backend: 'native' | 'wasm'

/**
 * Where the native Graph came from: `build-from-source` (this package's src/build/Release, built by
 * `npm run build-from-source`), the platform package's name, or `@quarry/hnsw/wasm`.
 */
export declare const source: string

/** Why the native build is not the one in use (absent when it is). */
export interface NativeUnavailable {
  /**
   * `package-missing`: a platform package exists for this platform but is not installed;
   * `no-binary`: none is built for this platform; `load-failed`: the binary did not load (see message);
   * `wasm-requested`: QUARRY_HNSW=wasm.
   */
  readonly reason: 'package-missing' | 'no-binary' | 'load-failed' | 'wasm-requested'
  /** os-cpu(-libc), e.g. `linux-x64-gnu`, `linux-x64-musl`, `darwin-arm64`. */
  readonly platform: string
  /** The package whose binary was looked for. */
  readonly package?: string
  /** What went wrong, one line, without local paths. */
  readonly message: string
}

/** Why the native build is not the one in use (its cause, platform and package); undefined when it is. */
export declare const nativeUnavailable: NativeUnavailable | undefined

/**
 * What the first require throws when no build can be used (its `code`): QUARRY_HNSW_INVALID (a value
 * other than native or wasm), QUARRY_HNSW_NATIVE_UNAVAILABLE (QUARRY_HNSW=native, with `reason`,
 * `platform` and `package` as in {@link NativeUnavailable}) or QUARRY_HNSW_WASM_UNAVAILABLE.
 */
export interface LoadError extends Error {
  readonly code: 'QUARRY_HNSW_INVALID' | 'QUARRY_HNSW_NATIVE_UNAVAILABLE' | 'QUARRY_HNSW_WASM_UNAVAILABLE'
  readonly reason?: NativeUnavailable['reason']
  readonly platform?: string
  readonly package?: string
}
