import type { Label } from '../ids.js'
import { norm } from '../metric/kernels.js'
import { SIMD_MAX_BYTES, SIMD_STORE_MIN_COMPONENTS, growSimdMemory, simdInstance, simdLayout, simdMemory, simdModule, type SimdExports, type SimdLayout, type SimdRows, type WasmMemory } from '../metric/simd.js'

/**
 * Vectors in one contiguous Float32Array addressed by label (row = label), plus each row's
 * 1/‖v‖ so cosine needs no normalized copy and `get` returns the vector exactly as stored.
 * Grows by doubling; rows of removed labels are left in place until the label is reused.
 *
 * Once its rows written reach `SIMD_STORE_MIN_COMPONENTS` (256 KiB), the store keeps them in a
 * shared WebAssembly memory after the SIMD kernels' scratch slots (metric/simd.ts): exact scans
 * read them there with the SIMD kernels, with the same keys, and the scan pool's workers read the
 * same memory. It grows in place (no copy), up to just under 4 GiB. A store past that, a store
 * whose memory could not be had, or a Node without SIMD keeps its rows in a typed array, and
 * `shared()` moves them to a SharedArrayBuffer once (growth then reallocates a shared buffer twice
 * the size). Norms are in a SharedArrayBuffer whenever the rows are shared.
 */
export class VectorStore {
  readonly dim: number
  #data: Float32Array
  #invNorms: Float32Array
  #rows: number
  /** Rows written: one past the highest label set (or restored). */
  #used: number
  /** Components of the rows whose pages are in memory: written at least once (see `#touchAhead`). */
  #touched = 0
  /** Whether rows and norms are (and stay) in shared memory. */
  #isShared = false
  /** The rows' memory, while they are in one, and its number. */
  #memory: WasmMemory | undefined
  #memoryId = 0
  /** The calling thread's instance of the kernels over `#memory`, made by the first scan. */
  #kernels: SimdExports | undefined
  readonly #layout: SimdLayout

  /** A store with room for `initialRows`, of which the first `used` count as written (a snapshot's). */
  constructor(dim: number, initialRows = 1024, used = 0) {
    this.dim = dim
    this.#layout = simdLayout(dim)
    this.#data = new Float32Array(0)
    this.#invNorms = new Float32Array(0)
    this.#rows = 0
    this.#used = used
    this.#reallocate(Math.max(1, initialRows, used))
  }

  /** The backing array; valid until the next `set` that grows it. */
  get data(): Float32Array {
    return this.#data
  }

  get invNorms(): Float32Array {
    return this.#invNorms
  }

  /** Allocated rows. */
  get rows(): number {
    return this.#rows
  }

  /**
   * The SIMD kernels over the rows (an instance on the calling thread, made once), with the
   * memory, its layout and the module; undefined when the rows are not in a WebAssembly memory.
   */
  simd(): SimdRows | undefined {
    const memory = this.#memory
    const module = simdModule()
    if (memory === undefined || module === null) return undefined
    this.#kernels ??= simdInstance(module, memory)
    return { id: this.#memoryId, kernels: this.#kernels, memory, layout: this.#layout, module }
  }

  set(label: Label, vector: Float32Array): void {
    if (label >= this.#used) {
      const before = this.#used
      this.#used = label + 1
      if (label >= this.#rows) this.#grow(label + 1)
      // Reaching the threshold moves the rows into a memory now rather than at the next growth.
      else if (this.#memory === undefined && before * this.dim < SIMD_STORE_MIN_COMPONENTS && this.#used * this.dim >= SIMD_STORE_MIN_COMPONENTS) this.#reallocate(this.#rows)
      if (this.#used * this.dim > this.#touched) this.#touchAhead(before * this.dim)
    }
    this.#data.set(vector, label * this.dim)
    const n = norm(vector)
    this.#invNorms[label] = n === 0 ? 0 : 1 / n
  }

  /** A copy of the row. */
  get(label: Label): Float32Array {
    return this.#data.slice(label * this.dim, (label + 1) * this.dim)
  }

  /** A view of the row (no copy); do not keep it across writes. */
  view(label: Label): Float32Array {
    return this.#data.subarray(label * this.dim, (label + 1) * this.dim)
  }

  /**
   * Rows and norms in shared memory, for worker threads to read in place: rows in a typed array
   * are copied to a SharedArrayBuffer by the first call, and from then on the store grows in
   * shared memory. Valid, like `data`, until the next `set` that grows the store.
   */
  shared(): { readonly data: Float32Array; readonly invNorms: Float32Array } {
    if (!this.#isShared) {
      this.#isShared = true
      this.#reallocate(this.#rows)
    }
    return { data: this.#data, invNorms: this.#invNorms }
  }

  #grow(minRows: number): void {
    let rows = this.#rows
    while (rows < minRows) rows *= 2
    // In a memory, stop at its limit rather than leave it for a doubling that would not fit.
    const fit = Math.floor((SIMD_MAX_BYTES - this.#layout.dataOffset) / (this.dim * 4))
    if (this.#memory !== undefined && rows > fit && minRows <= fit) rows = fit
    this.#reallocate(rows)
  }

  /**
   * Brings the next `TOUCH_AHEAD_BYTES` of rows past the written ones into memory, by writing a
   * zero into each of their pages from component `unwritten` on (rows past the written ones are
   * zero, so this changes no value a reader can see; rows before them, a snapshot's read into a
   * sized store included, are in memory already). Rows added one at a time would otherwise take
   * a fresh page every few rows, between the pages the HNSW graph takes as it grows with them:
   * the graph's pages then lie scattered in physical memory, and hnswlib searches it 2.5–3.4%
   * slower than the same graph built alone (`pnpm bench dense`, twelfth pass in bench/README.md's
   * git history). Pages taken 1 MiB at a time leave the graph's in runs.
   */
  #touchAhead(unwritten: number): void {
    const data = this.#data
    const to = Math.min(data.length, this.#used * this.dim + TOUCH_AHEAD_BYTES / 4)
    for (let i = Math.max(this.#touched, unwritten); i < to; i += PAGE_BYTES / 4) data[i] = 0
    this.#touched = to
  }

  /**
   * Makes room for `rows` rows: the memory grows in place, or rows move into a fresh memory (once
   * the store is big enough for one, see `SIMD_STORE_MIN_COMPONENTS`) or into fresh arrays
   * (shared ones once the store is shared; also when the memory would pass its limit).
   */
  #reallocate(rows: number): void {
    const before = this.#data
    const memory = this.#memoryFor(rows)
    if (memory !== undefined) this.#isShared = true
    const invNorms = floats(rows, this.#isShared)
    invNorms.set(this.#invNorms)
    this.#invNorms = invNorms
    this.#rows = rows
    const inPlace = memory !== undefined && memory === this.#memory
    if (!inPlace) {
      this.#memory = memory
      this.#kernels = undefined
    }
    this.#data = memory === undefined ? floats(rows * this.dim, this.#isShared) : this.#view()
    if (!inPlace) {
      this.#data.set(before)
      this.#touched = before.length
    }
  }

  /** The memory `rows` rows live in: the store's own grown, a new one (once enough rows are written), or none. */
  #memoryFor(rows: number): WasmMemory | undefined {
    const bytes = this.#layout.dataOffset + rows * this.dim * 4
    const memory = this.#memory
    if (memory !== undefined) return bytes <= SIMD_MAX_BYTES && growSimdMemory(memory, bytes) ? memory : undefined
    if (this.#used * this.dim < SIMD_STORE_MIN_COMPONENTS) return undefined
    const made = simdMemory(bytes)
    if (made !== undefined) this.#memoryId = ++memoriesMade
    return made
  }

  /** The rows' view of the memory. */
  #view(): Float32Array {
    return new Float32Array((this.#memory as WasmMemory).buffer, this.#layout.dataOffset, this.#rows * this.dim)
  }

  /** Raw rows `0..extent-1` for a snapshot. */
  slice(extent: number): Float32Array {
    return this.#data.subarray(0, extent * this.dim)
  }

  /** The stored 1/‖v‖ of rows `0..extent-1`, for a snapshot. */
  sliceInvNorms(extent: number): Float32Array {
    return this.#invNorms.subarray(0, extent)
  }

  /**
   * An empty store of exactly `extent` rows (at least one) for a snapshot to read its rows and
   * norms into (`slice(extent)`, `sliceInvNorms(extent)`), with nothing copied afterwards; rows
   * outside a WebAssembly memory go to shared memory when `shared` (a load whose scans the pool
   * will split).
   */
  static sized(dim: number, extent: number, shared = false): VectorStore {
    const store = new VectorStore(dim, extent, extent)
    if (shared) store.shared()
    return store
  }
}

/** How far ahead of the rows written `VectorStore` brings pages into memory, and the page step it writes at (the smallest page size). */
const TOUCH_AHEAD_BYTES = 1 << 20
const PAGE_BYTES = 4096

/** Memories made by stores so far: each new one's number. */
let memoriesMade = 0

/** A zeroed Float32Array of `length`, over a SharedArrayBuffer when `shared`. */
function floats(length: number, shared: boolean): Float32Array {
  return shared ? new Float32Array(new SharedArrayBuffer(length * Float32Array.BYTES_PER_ELEMENT)) : new Float32Array(length)
}
