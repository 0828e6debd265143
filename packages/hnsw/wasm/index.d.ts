import type { Graph as GraphClass } from '../index.js'

/** The WebAssembly Graph, with the native class's interface, loaded synchronously from quarry_hnsw.wasm. */
export declare const Graph: typeof GraphClass

/**
 * Bytes of the WebAssembly memory this module's graphs share: it grows as graphs do and never
 * shrinks; a dropped Graph's part is reused once it is garbage collected and the event loop turns.
 */
export declare function memoryBytes(): number

/**
 * A Graph class from quarry_hnsw.wasm's bytes or compiled module, for a browser (which cannot read the
 * file from disk). Without `fs` (node:fs), save, saveSync and load(fd, size) refuse.
 */
export declare function instantiate(
  /** The bytes of quarry_hnsw.wasm, or its compiled WebAssembly.Module. */
  wasm: ArrayBuffer | ArrayBufferView | object,
  fs?: typeof import('node:fs'),
): Promise<{ Graph: typeof GraphClass; memoryBytes(): number }>
