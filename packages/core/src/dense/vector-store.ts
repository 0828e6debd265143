import type { Label } from '../ids.js'
import { norm } from '../metric/kernels.js'

/**
 * Vectors in one contiguous Float32Array addressed by label (row = label), plus each row's
 * 1/‖v‖ so cosine needs no normalized copy and `get` returns the vector exactly as stored.
 * Grows by doubling; rows of removed labels are left in place until the label is reused.
 * Once `shared()` has been asked for, rows and norms live in SharedArrayBuffers
 * (copied there once; growth reallocates a shared buffer twice the size), so the scan pool's
 * workers read them in place.
 */
export class VectorStore {
  readonly dim: number
  #data: Float32Array
  #invNorms: Float32Array
  #rows: number
  /** Whether rows and norms are (and stay) in SharedArrayBuffers. */
  #isShared = false

  constructor(dim: number, initialRows = 1024) {
    this.dim = dim
    this.#rows = Math.max(1, initialRows)
    this.#data = new Float32Array(this.#rows * dim)
    this.#invNorms = new Float32Array(this.#rows)
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

  set(label: Label, vector: Float32Array): void {
    if (label >= this.#rows) this.#grow(label + 1)
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
   * Rows and norms in SharedArrayBuffers, for worker threads to read in place: the first call
   * copies them there, and from then on the store grows in shared memory. Valid, like `data`,
   * until the next `set` that grows the store.
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
    this.#reallocate(rows)
  }

  /** Moves rows and norms into fresh arrays of `rows` rows (shared ones once the store is shared). */
  #reallocate(rows: number): void {
    const data = floats(rows * this.dim, this.#isShared)
    data.set(this.#data)
    const invNorms = floats(rows, this.#isShared)
    invNorms.set(this.#invNorms)
    this.#data = data
    this.#invNorms = invNorms
    this.#rows = rows
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
   * A store of `rows` and their stored `invNorms` from a snapshot (adopted, not copied or
   * recomputed); `shared` when both are over SharedArrayBuffers (the store then stays shared).
   */
  static restore(dim: number, rows: Float32Array, invNorms: Float32Array, shared = false): VectorStore {
    const n = invNorms.length
    if (n === 0) return new VectorStore(dim)
    const store = new VectorStore(dim, 1)
    store.#data = rows
    store.#invNorms = invNorms
    store.#rows = n
    store.#isShared = shared
    return store
  }

  /** Loads rows `0..n-1` from a snapshot. */
  static fromRows(dim: number, rows: Float32Array): VectorStore {
    const n = rows.length / dim
    const store = new VectorStore(dim, Math.max(1024, n))
    store.#data.set(rows)
    for (let label = 0; label < n; label++) {
      const v = store.view(label as Label)
      const length = norm(v)
      store.#invNorms[label] = length === 0 ? 0 : 1 / length
    }
    return store
  }
}

/** A zeroed Float32Array of `length`, over a SharedArrayBuffer when `shared`. */
function floats(length: number, shared: boolean): Float32Array {
  return shared ? new Float32Array(new SharedArrayBuffer(length * Float32Array.BYTES_PER_ELEMENT)) : new Float32Array(length)
}
