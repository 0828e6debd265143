import type { Graph as GraphClass } from '../index.js'

/** The WebAssembly Graph, with the native class's interface, loaded synchronously from quarry_hnsw.wasm. */
export declare const Graph: typeof GraphClass

/**
 * A Graph class from quarry_hnsw.wasm's bytes or compiled module, for a browser (which cannot read the
 * file from disk). Without `fs` (node:fs), save, saveSync and load(fd, size) refuse.
 */
export declare function instantiate(
  wasm: BufferSource | WebAssembly.Module,
  fs?: typeof import('node:fs'),
): Promise<{ Graph: typeof GraphClass }>
