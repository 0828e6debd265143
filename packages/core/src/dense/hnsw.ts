import { createRequire } from 'node:module'
import type { Graph } from '@quarry/hnsw'
import { QuarryError } from '../errors.js'
import type { Label } from '../ids.js'
import type { Bitset } from '../util/bitset.js'

/** HNSW parameters. See ARCHITECTURE.md ("HNSW parameters in one page") for what each one trades. */
export interface HnswOptions {
  /** Graph degree: links per node per layer. Higher = better recall, more memory, slower build. @defaultValue 16 */
  m?: number
  /** Candidate list size while building. Higher = better graph, slower build. @defaultValue 200 */
  efConstruction?: number
  /** Candidate list size while searching (raised to topK when smaller). @defaultValue 64 */
  efSearch?: number
  /** Seed of the level generator; the same inserts in the same order build the same graph. @defaultValue 100 */
  seed?: number
}

export type ResolvedHnswOptions = Required<HnswOptions>

export const HNSW_DEFAULTS: ResolvedHnswOptions = { m: 16, efConstruction: 200, efSearch: 64, seed: 100 }

/** @quarry/hnsw's Graph (its index.d.ts): the native HNSW graph, hnswlib underneath. */
type NativeCtor = typeof Graph

/** Where the native module comes from: @quarry/hnsw by default, a stand-in in tests. */
type NativeLoader = () => unknown

function requireNative(): unknown {
  // @quarry/hnsw is CommonJS; a named ESM import type-checks but fails at run time. Its first
  // require chooses the build (native where one loads, else WebAssembly; QUARRY_HNSW forces one).
  return createRequire(import.meta.url)('@quarry/hnsw')
}

let loader: NativeLoader = requireNative
let nativeCtor: NativeCtor | undefined

/** What @quarry/hnsw's loader throws (its index.d.ts LoadError), narrowed from unknown. */
interface LoadFailure {
  code?: unknown
  reason?: unknown
  platform?: unknown
  package?: unknown
}

const FROM_SOURCE = 'npm explore @quarry/hnsw -- npm run build-from-source (needs python3, make and a C++ compiler)'
const INSTALL_GUIDE = "Quarry's docs/install.md"

/**
 * The cause in one line, without the require stack that follows (it names local paths; the
 * loader's own messages have none).
 */
function firstLine(cause: unknown): string {
  const line = (cause instanceof Error ? cause.message : String(cause)).split('\n')[0] ?? ''
  return line.replace(/[\s.:]+$/, '')
}

/** What went wrong and the fix for that cause. */
function causeAndFix(cause: unknown): string {
  const failure: LoadFailure = typeof cause === 'object' && cause !== null ? (cause as LoadFailure) : {}
  const line = firstLine(cause)
  if (failure.code === 'MODULE_NOT_FOUND' && line.includes("'@quarry/hnsw'")) {
    return (
      '@quarry/hnsw, the HNSW graph package @quarry/core depends on, is not installed. ' +
      'From the npm registry it comes with @quarry/core; installing from packed tarballs, map it (and its platform packages) to their tarballs ' +
      `in your package.json's "overrides", e.g. "@quarry/hnsw": "file:./quarry-hnsw-0.1.0.tgz", then run npm install (see ${INSTALL_GUIDE})`
    )
  }
  if (failure.code === 'QUARRY_HNSW_INVALID') return `${line}.`
  if (failure.code === 'QUARRY_HNSW_NATIVE_UNAVAILABLE') {
    const name = typeof failure.package === 'string' ? failure.package : 'the platform package'
    const platform = typeof failure.platform === 'string' ? failure.platform : 'this platform'
    const wasm = 'or unset QUARRY_HNSW to use the WebAssembly build (same answers and snapshots)'
    if (failure.reason === 'package-missing') {
      return `${line}: the prebuilt graph for ${platform} is the optional dependency ${name}, left out of this install (npm --omit=optional, or a tarball install without it in "overrides"). Install it (npm install ${name}; from tarballs see ${INSTALL_GUIDE}), ${wasm}.`
    }
    if (failure.reason === 'no-binary') {
      return `${line}: no prebuilt native graph is shipped for ${platform}. Unset QUARRY_HNSW (or set it to wasm) to use the WebAssembly build, or build the native one from source: ${FROM_SOURCE}.`
    }
    if (failure.package === '@quarry/hnsw') {
      return `${line}. Rebuild it (${FROM_SOURCE}), delete @quarry/hnsw's src/build folder to use the prebuilt binary, ${wasm}.`
    }
    return `${line}. The prebuilt binary needs Linux with glibc 2.32 or later; ${wasm}, or build it for this system from source: ${FROM_SOURCE}.`
  }
  if (failure.code === 'QUARRY_HNSW_WASM_UNAVAILABLE') {
    return `${line}. Its wasm/ folder is missing or damaged: reinstall @quarry/hnsw (npm install), or build the native graph from source: ${FROM_SOURCE}.`
  }
  return `@quarry/hnsw could not be loaded: ${line}. Reinstall it (npm install; from tarballs see ${INSTALL_GUIDE}).`
}

/**
 * The error of a graph module that cannot load, naming the cause and its fix. @quarry/hnsw always
 * has its WebAssembly build, so this happens when the package is missing, when QUARRY_HNSW asks
 * for what cannot load, or when the package is damaged; only what needs the graph fails.
 */
function nativeUnavailable(cause: unknown): QuarryError {
  return new QuarryError(
    'NATIVE_UNAVAILABLE',
    `The HNSW graph (@quarry/hnsw) is unavailable: ${causeAndFix(cause)} ` +
      'An index with dimensions needs it unless created with dense: "exact" (brute-force search); text (BM25) search never does.',
    { cause },
  )
}

/**
 * Replaces how @quarry/hnsw is loaded; returns a function restoring the previous loader. For tests
 * only (simulating a failed native build): not exported by the package.
 */
export function replaceNativeLoader(next: NativeLoader): () => void {
  const previous = loader
  loader = next
  nativeCtor = undefined
  return () => {
    loader = previous
    nativeCtor = undefined
  }
}

/**
 * Loads @quarry/hnsw on first use, so exact-only and text-only indexes work where the addon is
 * missing; a failure is not remembered (a later call tries again).
 */
function loadNative(): NativeCtor {
  if (nativeCtor) return nativeCtor
  let ctor: unknown
  try {
    ctor = (loader() as { Graph?: unknown } | undefined)?.Graph
  } catch (cause) {
    throw nativeUnavailable(cause)
  }
  if (typeof ctor !== 'function') throw nativeUnavailable(new TypeError('it exports no Graph class'))
  nativeCtor = ctor as NativeCtor
  return nativeCtor
}

/** Result of a graph search: labels best first, with hnswlib's own (float32) distances. */
interface HnswResult {
  readonly neighbors: Uint32Array
  readonly distances: Float32Array
}

/** Elements a new graph has room for before it first grows (doubling). */
const INITIAL_CAPACITY = 1024

/**
 * The only user of @quarry/hnsw. Owns capacity growth, deletion and the ef setting; filters reach
 * the native search as a Bitset's words, tested in C++ (no caller code runs inside a search).
 */
export class HnswGraph {
  readonly dim: number
  readonly options: ResolvedHnswOptions
  readonly space: 'ip' | 'l2'
  readonly #native: Graph
  #capacity: number
  #ef: number

  private constructor(space: 'ip' | 'l2', dim: number, options: ResolvedHnswOptions, native: Graph, capacity: number) {
    this.space = space
    this.dim = dim
    this.options = options
    this.#native = native
    this.#capacity = capacity
    this.#ef = options.efSearch
    native.setEf(this.#ef)
  }

  static create(space: 'ip' | 'l2', dim: number, options: ResolvedHnswOptions, capacity = INITIAL_CAPACITY): HnswGraph {
    const Native = loadNative()
    const native = new Native(space, dim)
    native.init(capacity, options.m, options.efConstruction, options.seed)
    return new HnswGraph(space, dim, options, native, capacity)
  }

  /**
   * Reads a graph {@link HnswGraph.save} wrote, from its bytes or from an open file of `size` bytes
   * (read by position; every field and link checked, an Error names what is wrong); restores ef,
   * which a loaded graph resets to 10.
   */
  static load(source: Uint8Array | { readonly fd: number; readonly size: number }, space: 'ip' | 'l2', dim: number, options: ResolvedHnswOptions): HnswGraph {
    const Native = loadNative()
    const native = new Native(space, dim)
    if (source instanceof Uint8Array) native.load(source)
    else native.load(source.fd, source.size)
    // A graph saved empty has room for 0 elements (the count) once read: give it a new graph's
    // room, which a doubling can grow from (and which saves as it was saved).
    if (native.maxElements() === 0) native.resize(INITIAL_CAPACITY)
    return new HnswGraph(space, dim, options, native, native.maxElements())
  }

  save(file: string): void {
    this.#native.saveSync(file)
  }

  /** {@link save} on a libuv thread; the graph must not change until it settles (searches may run). */
  async saveAsync(file: string): Promise<void> {
    await this.#native.save(file)
  }

  /**
   * Inserts or replaces the vector of `label`. A label that was deleted is revived in place
   * (hnswlib unmarks it and relinks it), which is how freed labels reuse their graph slot.
   */
  set(label: Label, vector: Float32Array): void {
    if (!Number.isInteger(label) || label < 0 || label > 0xffff_fffe) {
      // hnswlib would store it, but Quarry's labels are uint32 everywhere else.
      throw new RangeError(`internal error: label ${label} is not a uint32`)
    }
    // Grown by its element count, not by label: @quarry/hnsw refuses to load a graph with room for
    // more than twice its count plus 1024, which a graph that doubles only when full never has.
    if (this.#native.size() >= this.#capacity) this.#grow(this.#capacity + 1)
    this.#native.add(vector, label)
  }

  delete(label: Label): void {
    this.#native.markDelete(label)
  }

  /** Sets the default candidate list size of searches. */
  setEf(ef: number): void {
    if (ef !== this.#ef) {
      this.#native.setEf(ef)
      this.#ef = ef
    }
  }

  /** k nearest labels of a prepared query, optionally only labels in `allow`. */
  search(query: Float32Array, k: number, ef: number, allow?: Bitset): HnswResult {
    this.setEf(Math.max(ef, k))
    const kk = Math.min(k, this.#capacity)
    const neighbors = new Uint32Array(kk)
    const distances = new Float32Array(kk)
    const n = this.#native.search(query, kk, neighbors, distances, allow?.words)
    return n === kk ? { neighbors, distances } : { neighbors: neighbors.subarray(0, n), distances: distances.subarray(0, n) }
  }

  #grow(minCapacity: number): void {
    let capacity = Math.max(this.#capacity, 1)
    while (capacity < minCapacity) capacity *= 2
    this.#native.resize(capacity)
    this.#capacity = capacity
  }
}
