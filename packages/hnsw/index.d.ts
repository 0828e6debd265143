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
