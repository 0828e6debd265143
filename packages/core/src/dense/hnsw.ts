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
  resizeIndex(newMaxElements: number): void
  addPoint(point: number[], label: number): void
  markDelete(label: number): void
  searchKnn(query: number[], k: number, filter?: (label: number) => boolean): { distances: number[]; neighbors: number[] }
  getMaxElements(): number
  getCurrentCount(): number
  setEf(ef: number): void
}

type NativeCtor = new (space: 'ip' | 'l2', dim: number) => NativeHnsw

let nativeCtor: NativeCtor | undefined

/** Loads hnswlib-node on first use, so exact-only indexes work where the addon did not build. */
function loadNative(): NativeCtor {
  if (nativeCtor) return nativeCtor
  try {
    // hnswlib-node is CommonJS; a named ESM import type-checks but fails at run time.
    const require = createRequire(import.meta.url)
    const mod = require('hnswlib-node') as { HierarchicalNSW: NativeCtor }
    nativeCtor = mod.HierarchicalNSW
    return nativeCtor
  } catch (cause) {
    throw new QuarryError(
      'NATIVE_UNAVAILABLE',
      'hnswlib-node could not be loaded (was its native build skipped?). Reinstall with build scripts allowed, or create the index with dense: "exact".',
      { cause },
    )
  }
}

/** Result of a graph search: labels best first, with hnswlib's own distances. */
export interface HnswResult {
  readonly labels: number[]
  readonly distances: number[]
}

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
  /** Scratch array reused for every call: the binding wants plain arrays. */
  readonly #scratch: number[]

  private constructor(space: 'ip' | 'l2', dim: number, options: ResolvedHnswOptions, native: NativeHnsw, capacity: number) {
    this.space = space
    this.dim = dim
    this.options = options
    this.#native = native
    this.#capacity = capacity
    this.#ef = options.efSearch
    this.#scratch = new Array<number>(dim).fill(0)
    native.setEf(this.#ef)
  }

  static create(space: 'ip' | 'l2', dim: number, options: ResolvedHnswOptions, capacity = 1024): HnswGraph {
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
    return new HnswGraph(space, dim, options, native, native.getMaxElements())
  }

  save(file: string): void {
    this.#native.writeIndexSync(file)
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
    const result = allow
      ? this.#native.searchKnn(q, kk, (label) => allow.has(label))
      : this.#native.searchKnn(q, kk)
    return { labels: result.neighbors, distances: result.distances }
  }

  #grow(minCapacity: number): void {
    let capacity = this.#capacity
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
