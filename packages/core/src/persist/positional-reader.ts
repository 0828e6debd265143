import { fstatSync, readSync } from 'node:fs'
import { QuarryError } from '../errors.js'

/** Bytes the reader keeps of the file around its last small read: one positional read serves many small ones. */
const WINDOW = 1024 * 1024
/** Reads up to this size are copied out of the window; larger ones go straight into their own buffer. */
const SMALL = 64 * 1024
/** At most this many bytes per readSync (Linux returns at most about 2 GiB from one read). */
const MAX_READ = 1 << 30

/**
 * An open file read by position, a piece at a time, so that a file of any size (a write-ahead
 * log past 4 GiB, which no Buffer holds) is read with memory for the pieces asked for and one
 * window of {@link WINDOW} bytes. Its `length` is the file's size when the reader was made; it
 * does not own the descriptor.
 */
export class PositionalReader {
  readonly length: number
  readonly #fd: number
  readonly #path: string
  readonly #window = Buffer.allocUnsafe(WINDOW)
  /** The file's bytes [#windowStart, #windowEnd) are in the window. */
  #windowStart = 0
  #windowEnd = 0
  /** Every byte from here to the end is known to be zero. */
  #zerosFrom = Number.POSITIVE_INFINITY

  /** `path` only names the file in errors. */
  constructor(fd: number, path: string) {
    this.#fd = fd
    this.#path = path
    this.length = fstatSync(fd).size
  }

  /** The bytes [start, end) in a buffer of their own (0 <= start <= end <= length). */
  read(start: number, end: number): Buffer {
    if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start <= end && end <= this.length)) {
      throw new RangeError(`cannot read bytes ${start} to ${end} of ${this.#path}, which holds ${this.length}`)
    }
    const bytes = Buffer.allocUnsafe(end - start)
    if (end - start > SMALL) {
      this.#readInto(bytes, start)
      return bytes
    }
    if (start < this.#windowStart || end > this.#windowEnd) this.#fill(start)
    this.#window.copy(bytes, 0, start - this.#windowStart, end - this.#windowStart)
    return bytes
  }

  /** Whether every byte from `start` to the end of the file is zero (true from the end or past it). */
  zerosFrom(start: number): boolean {
    if (start >= this.#zerosFrom || start >= this.length) return true
    // A window at a time: a tail of gigabytes of zeros (a sparse file) is checked in bounded memory.
    const zeros = Buffer.alloc(WINDOW)
    for (let at = start; at < this.length; at += WINDOW) {
      // Already checked from there (a torn frame's tail is asked about twice).
      if (at >= this.#zerosFrom) break
      const n = this.#fill(at)
      if (!this.#window.subarray(0, n).equals(zeros.subarray(0, n))) return false
    }
    this.#zerosFrom = start
    return true
  }

  /** Reads the window from `start` (as much as the file holds, up to its size); returns how many bytes. */
  #fill(start: number): number {
    const n = Math.min(WINDOW, this.length - start)
    this.#readInto(this.#window.subarray(0, n), start)
    this.#windowStart = start
    this.#windowEnd = start + n
    return n
  }

  /** Fills `into` from the file at `position` with positional reads. */
  #readInto(into: Uint8Array, position: number): void {
    let filled = 0
    while (filled < into.byteLength) {
      const n = readSync(this.#fd, into, filled, Math.min(into.byteLength - filled, MAX_READ), position + filled)
      // One writer holds a log's folder: a file shorter than it was a moment ago is being changed
      // by something else, and no reading of it can be trusted.
      if (n === 0) throw new QuarryError('INVALID_SNAPSHOT', `${this.#path} was cut to ${position + filled} bytes (from ${this.length}) while it was read; is another process writing it? Stop it and start again.`)
      filled += n
    }
  }
}
