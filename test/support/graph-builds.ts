import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Graph as GraphClass } from '@quarry/hnsw'

// The two builds of @quarry/hnsw's Graph side by side, loaded directly (not through the package's
// loader, which picks one by platform and QUARRY_HNSW): the tests that compare them import only here.

const require = createRequire(import.meta.url)
const hnsw = new URL('../../packages/hnsw/', import.meta.url)

export type Graph = GraphClass
export type GraphBuild = typeof GraphClass

/** The WebAssembly build (packages/hnsw/wasm, committed built). */
export const WasmGraph = (require(new URL('wasm/index.cjs', hnsw).pathname) as { Graph: GraphBuild }).Graph

/** Where the native binary of this machine is: its platform package's, else a build from source. */
const nativeFiles = ['npm/linux-x64-gnu/quarry_hnsw.node', 'src/build/Release/quarry_hnsw.node'].map((f) => new URL(f, hnsw).pathname)

/**
 * The file of the native build, on linux-x64 (the only binary whose distances the WebAssembly kernels copy:
 * x64's SSE ones). Elsewhere undefined, and the comparisons are skipped.
 */
export const NATIVE_FILE: string | undefined = (() => {
  if (process.platform !== 'linux' || process.arch !== 'x64') return undefined
  const file = nativeFiles.find((f) => existsSync(f))
  if (file === undefined) throw new Error(`no native graph to compare the WebAssembly one with: build one (node packages/hnsw/scripts/build-native.mjs) or install its platform package`)
  return file
})()

/** {@link NATIVE_FILE}'s Graph. */
export const NativeGraph: GraphBuild | undefined = NATIVE_FILE === undefined ? undefined : (require(NATIVE_FILE) as { Graph: GraphBuild }).Graph
