import { createRequire } from 'node:module'
import { QuarryError } from '../errors.js'
import type { Label } from '../ids.js'
import type { Bitset } from '../util/bitset.js'

/** HNSW parameters. See ARCHITECTURE.md ("Dense search") for what each one trades. */
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

/** The part of hnswlib-node's HierarchicalNSW that Quarry uses. */
interface NativeHnsw {
  initIndex(opts: { maxElements: number; m: number; efConstruction: number; randomSeed: number; allowReplaceDeleted: boolean }): void
  readIndexSync(filename: string, allowReplaceDeleted?: boolean): void
  writeIndexSync(filename: string): void
  writeIndex(filename: string): Promise<boolean>
  resizeIndex(newMaxElements: number): void
  addPoint(point: number[], label: number): void
  markDelete(label: number): void
  searchKnn(query: number[], k: number, filter?: (label: number) => boolean): { distances: number[]; neighbors: number[] }
  getMaxElements(): number
  getCurrentCount(): number
  setEf(ef: number): void
}

type NativeCtor = new (space: 'ip' | 'l2', dim: number) => NativeHnsw

/** Where the native module comes from: hnswlib-node by default, a stand-in in tests. */
type NativeLoader = () => unknown

function requireHnswlib(): unknown {
  // hnswlib-node is CommonJS; a named ESM import type-checks but fails at run time.
  return createRequire(import.meta.url)('hnswlib-node')
}

let loader: NativeLoader = requireHnswlib
let nativeCtor: NativeCtor | undefined

/**
 * The error of a missing native module, saying how to get it. hnswlib-node is an optional
 * dependency of `@quarry/core`: an install without a C++ toolchain (or, with pnpm, without its
 * build allowed) succeeds without it, and only what needs the graph fails.
 */
function nativeUnavailable(cause: unknown): QuarryError {
  // The first line says why: "Cannot find module 'hnswlib-node'" (not installed) or bindings'
  // "Could not locate the bindings file. Tried:" (installed, never built), before a list of paths.
  const line = (cause instanceof Error ? cause.message : String(cause)).split('\n')[0] ?? ''
  const reason = line.replace(/\s*Tried:\s*$/, '').replace(/[\s.:]+$/, '')
  return new QuarryError(
    'NATIVE_UNAVAILABLE',
    `hnswlib-node, the native HNSW module (an optional dependency of @quarry/core), could not be loaded: ${reason}. ` +
      'An index with dimensions needs it unless created with dense: "exact" (brute-force search); text (BM25) search never does. ' +
      'To build it: install python3, make and a C++ compiler (g++ or clang++), set npm_config_nodedir to a Node.js install ' +
      'with its headers (include/node/node.h, e.g. /usr) so node-gyp need not download them, then run npm install again ' +
      '(pnpm: allow its build with pnpm approve-builds or allowBuilds in pnpm-workspace.yaml, then pnpm rebuild hnswlib-node).',
    { cause },
  )
}

/**
 * Replaces how hnswlib-node is loaded; returns a function restoring the previous loader. For tests
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
 * Loads hnswlib-node on first use, so exact-only and text-only indexes work where the addon is
 * missing; a failure is not remembered (a later call tries again).
 */
function loadNative(): NativeCtor {
  if (nativeCtor) return nativeCtor
  let ctor: unknown
  try {
    ctor = (loader() as { HierarchicalNSW?: unknown } | undefined)?.HierarchicalNSW
  } catch (cause) {
    throw nativeUnavailable(cause)
  }
  if (typeof ctor !== 'function') throw nativeUnavailable(new TypeError('it exports no HierarchicalNSW class'))
  nativeCtor = ctor as NativeCtor
  return nativeCtor
}

/**
 * Result of a graph search, as hnswlib-node returns it (not copied into another object: a search
 * allocates little beyond what it must): labels best first, with hnswlib's own distances.
 */
export interface HnswResult {
  readonly neighbors: number[]
  readonly distances: number[]
}

/** Elements a new graph has room for before it first grows (doubling). */
const INITIAL_CAPACITY = 1024

/**
 * The only user of hnswlib-node. Owns capacity growth, deletion and the ef setting, and
 * guarantees that no caller code runs inside a native callback (a throwing callback would abort
 * the process): filters reach it only as a Bitset.
 */
export class HnswGraph {
  readonly dim: number
  readonly options: ResolvedHnswOptions
  readonly space: 'ip' | 'l2'
  readonly #native: NativeHnsw
  #capacity: number
  #ef: number
  /**
   * Scratch array reused for every call: the binding wants plain arrays. It must be packed (made
   * element by element, not `new Array(dim)`): the binding reads each element through N-API, which
   * is slower on a holey array, by 5–12 µs a 128-d query here (about 3–6% of a search at ef 32).
   */
  readonly #scratch: number[]

  private constructor(space: 'ip' | 'l2', dim: number, options: ResolvedHnswOptions, native: NativeHnsw, capacity: number) {
    this.space = space
    this.dim = dim
    this.options = options
    this.#native = native
    this.#capacity = capacity
    this.#ef = options.efSearch
    this.#scratch = Array.from({ length: dim }, () => 0)
    native.setEf(this.#ef)
  }

  static create(space: 'ip' | 'l2', dim: number, options: ResolvedHnswOptions, capacity = INITIAL_CAPACITY): HnswGraph {
    const Native = loadNative()
    const native = new Native(space, dim)
    native.initIndex({
      maxElements: capacity,
      m: options.m,
      efConstruction: options.efConstruction,
      randomSeed: options.seed,
      allowReplaceDeleted: false,
    })
    return new HnswGraph(space, dim, options, native, capacity)
  }

  /** Reads a graph written by {@link HnswGraph.save}; restores ef, which hnswlib resets to 10. */
  static load(file: string, space: 'ip' | 'l2', dim: number, options: ResolvedHnswOptions): HnswGraph {
    const Native = loadNative()
    const native = new Native(space, dim)
    native.readIndexSync(file, false)
    // hnswlib reads an empty graph back with room for 0 elements (its capacity becomes the count):
    // give it a new graph's room, which a doubling can grow from (and which saves as it was saved).
    if (native.getMaxElements() === 0) native.resizeIndex(INITIAL_CAPACITY)
    return new HnswGraph(space, dim, options, native, native.getMaxElements())
  }

  save(file: string): void {
    this.#native.writeIndexSync(file)
  }

  /** {@link save} on a libuv thread; the graph must not change until it settles (searches may run). */
  async saveAsync(file: string): Promise<void> {
    await this.#native.writeIndex(file)
  }

  /**
   * Inserts or replaces the vector of `label`. A label that was deleted is revived in place
   * (hnswlib unmarks it and relinks it), which is how freed labels reuse their graph slot.
   */
  set(label: Label, vector: Float32Array): void {
    if (!Number.isInteger(label) || label < 0 || label > 0xffff_fffe) {
      // The binding would silently wrap it to uint32 and corrupt another record.
      throw new RangeError(`internal error: label ${label} is not a uint32`)
    }
    if (label >= this.#capacity) this.#grow(label + 1)
    this.#native.addPoint(this.#toArray(vector), label)
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
    const q = this.#toArray(query)
    const kk = Math.min(k, this.#capacity)
    return allow ? this.#native.searchKnn(q, kk, (label) => allow.has(label)) : this.#native.searchKnn(q, kk)
  }

  #grow(minCapacity: number): void {
    let capacity = Math.max(this.#capacity, 1)
    while (capacity < minCapacity) capacity *= 2
    this.#native.resizeIndex(capacity)
    this.#capacity = capacity
  }

  #toArray(vector: Float32Array): number[] {
    const out = this.#scratch
    for (let i = 0; i < this.dim; i++) out[i] = vector[i] as number
    return out
  }
}
