/**
 * The texts of one message to the import worker, embedded by two threads at once through shared
 * memory, none twice: the worker takes texts from the front, the calling thread (when it has
 * nothing left to do but wait) from the back, until they meet. The worker writes each vector it
 * makes into the shared buffer and then counts it done, so the calling thread reads the vectors
 * done without waiting for the worker's answer, and embeds the one the worker is on (a paused
 * worker holds nobody up).
 *
 * Layout: two Int32 cells, then the vectors end to end. Cell 0 holds both claims,
 * (taken from the front << 16) | taken from the back, and changes only by compare-and-swap, so a
 * text is taken by exactly one thread; cell 1 counts the front texts whose vectors are written
 * (the worker takes and writes them in order).
 */

/** Texts a message may have for its claims to fit in a cell: one with more is not shared. */
export const SHAREABLE_TEXTS = 0xffff

const CLAIMS = 0
const DONE = 1
/** Bytes before the vectors: the two cells. */
const HEADER = 8

export class SharedVectors {
  readonly buffer: SharedArrayBuffer
  readonly #cells: Int32Array
  readonly #vectors: Float32Array
  readonly #count: number
  readonly #dimensions: number

  /** A new buffer for `count` texts' vectors of `dimensions` (at most {@link SHAREABLE_TEXTS} texts). */
  static create(count: number, dimensions: number): SharedVectors {
    return new SharedVectors(new SharedArrayBuffer(HEADER + 4 * count * dimensions), count, dimensions)
  }

  /** The buffer another thread created for `count` texts (`dimensions` each); throws if it is not its size. */
  constructor(buffer: SharedArrayBuffer, count: number, dimensions: number) {
    if (count > SHAREABLE_TEXTS || buffer.byteLength !== HEADER + 4 * count * dimensions) throw new Error(`a shared vector buffer of ${buffer.byteLength} bytes does not fit ${count} vectors of ${dimensions}`)
    this.buffer = buffer
    this.#cells = new Int32Array(buffer, 0, 2)
    this.#vectors = new Float32Array(buffer, HEADER, count * dimensions)
    this.#count = count
    this.#dimensions = dimensions
  }

  /** Takes the next text from the front (the worker's side): its index, or -1 when every text is taken. */
  claimFront(): number {
    for (;;) {
      const state = Atomics.load(this.#cells, CLAIMS)
      const front = state >>> 16
      if (front + (state & 0xffff) >= this.#count) return -1
      if (Atomics.compareExchange(this.#cells, CLAIMS, state, state + 0x10000) === state) return front
    }
  }

  /** Takes the next text from the back (the calling thread's side): its index, or -1 when every text is taken. */
  claimBack(): number {
    for (;;) {
      const state = Atomics.load(this.#cells, CLAIMS)
      const back = state & 0xffff
      if ((state >>> 16) + back >= this.#count) return -1
      if (Atomics.compareExchange(this.#cells, CLAIMS, state, state + 1) === state) return this.#count - 1 - back
    }
  }

  /** Texts taken from the front so far. */
  get front(): number {
    return Atomics.load(this.#cells, CLAIMS) >>> 16
  }

  /** Front texts whose vectors are written (the first ones). */
  get done(): number {
    return Atomics.load(this.#cells, DONE)
  }

  /** Writes the vector of front text `i` (the next one not done), then counts it done. */
  write(i: number, vector: Float32Array): void {
    if (i !== this.done || vector.length !== this.#dimensions) throw new Error(`vector ${i} is not the next to write, or not ${this.#dimensions} long`)
    this.#vectors.set(vector, i * this.#dimensions)
    // After the vector: whoever reads the count sees the vector written.
    Atomics.store(this.#cells, DONE, i + 1)
  }

  /** The vector of text `i`, one of the {@link done} ones (a view of the buffer: it is not written again). */
  read(i: number): Float32Array {
    if (i >= this.done) throw new Error(`vector ${i} is not written yet`)
    return this.#vectors.subarray(i * this.#dimensions, (i + 1) * this.#dimensions)
  }
}

/**
 * The calling thread's side of texts shared with the worker: {@link help} embeds the texts the
 * worker has not, and gives every vector.
 */
export class HelpedTexts {
  readonly #texts: readonly string[]
  readonly #shared: SharedVectors
  /** Vectors made here, by index. */
  readonly #here: Float32Array[] = []

  constructor(texts: readonly string[], shared: SharedVectors) {
    this.#texts = texts
    this.#shared = shared
  }

  /**
   * Embeds here (`embedOne`: a vector of the buffer's dimensions, or a throw) the texts the worker has
   * not taken, the last first, then the one it is on if it has not written it (rather than wait
   * for it); returns every vector then, or undefined if one is missing (`embedOne` failed: the
   * caller has them embedded again, where the error surfaces). `pause`, awaited before each text,
   * lets the caller's event loop turn (slices.ts `slicePauser`): a text taken is embedded first.
   */
  async help(embedOne: (text: string) => Promise<Float32Array>, pause: () => Promise<void> | undefined = () => undefined): Promise<Float32Array[] | undefined> {
    const shared = this.#shared
    try {
      for (;;) {
        await pause()
        const i = shared.claimBack()
        if (i < 0) break
        this.#here[i] = await embedOne(this.#texts[i] as string)
      }
      for (let i = shared.front - 1; i >= shared.done; i--) {
        await pause()
        if (i >= shared.done) this.#here[i] ??= await embedOne(this.#texts[i] as string)
      }
    } catch {
      return undefined
    }
    return this.#gather()
  }

  /** Every text's vector (from the buffer where the worker wrote it, unless made here), or undefined if one is missing. */
  #gather(): Float32Array[] | undefined {
    const out: Float32Array[] = []
    const written = this.#shared.done
    for (let i = 0; i < this.#texts.length; i++) {
      const vector = this.#here[i] ?? (i < written ? this.#shared.read(i) : undefined)
      if (!vector) return undefined
      out.push(vector)
    }
    return out
  }
}
