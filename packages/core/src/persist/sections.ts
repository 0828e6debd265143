import type { GenerationFile } from './generations.js'
import type { Steps } from './steps.js'

/**
 * The binary sections of a version 5 snapshot file: a sequence of typed arrays and string lists,
 * each behind an 16-byte header (a tag, its element count) and padded to 8 bytes, so a reader
 * holding the whole (checksummed) file in one buffer hands out typed-array views of it without
 * copying or parsing record by record. Strings go in groups of about a million characters: the
 * length of each, then the group's strings of characters up to U+00FF as one latin1 run and the
 * others as one UTF-16LE run (any JavaScript string, lone surrogates included), each decoded
 * with one copy per group (UTF-8 would need validating, at a tenth of the speed).
 *
 *     item    = u32 tag, u32 0, f64 count, data, zero padding to a multiple of 8
 *     strings = header (tag STRINGS, count n), then groups until n entries:
 *               u32 entries, u32 0, f64 latin1 bytes, f64 UTF-16LE bytes,
 *               u32 lengths[entries] (code units; WIDE set: in the UTF-16LE run; ABSENT: none),
 *               padding, latin1 bytes, padding, UTF-16LE bytes, padding
 *
 * Little-endian, as the typed arrays of every platform Node runs on.
 */

const TAGS = { u8: 0x7538, u32: 0x7533, f32: 0x6633, f64: 0x6636, strings: 0x7374 } as const
type Tag = keyof typeof TAGS

/** A string list's entry that holds no string (null / undefined). */
const ABSENT = 0xffff_ffff

/**
 * Characters of one group of strings (about; a longer string makes a group of its own). A group is
 * built in one go between two safe points, so it is kept small enough to take a few milliseconds.
 */
const GROUP_CHARS = 1 << 18

/** Strings of one group at most (see GROUP_CHARS). */
const GROUP_STRINGS = 1 << 12

/**
 * Characters decoded by one call at most when reading (a longer string is decoded alone). A
 * decoded string above V8's regular object size (128 KB) goes to fresh large-object pages, whose
 * first touches made decoding a group's 256K characters in one call many times slower than
 * decoding the same bytes in pieces of this size (`pnpm bench persist`). Independent of how the writer grouped them.
 */
const DECODE_CHARS = 1 << 14

/** Distinct strings a list read with `repeats` compares each entry with (see SectionReader `strings`). */
const RECENT = 8

/** Strings of code units up to U+00FF, stored one byte per character (latin1). */
const LATIN1 = /^[\x00-\xff]*$/

/** The length bit marking a string stored two bytes per code unit (UTF-16LE). */
const WIDE = 0x8000_0000

/** Bytes written between two safe points. */
const STEP_BYTES = 1 << 20

const ZEROS = new Uint8Array(8)

type Typed = Uint8Array | Uint32Array | Float32Array | Float64Array

function header(tag: Tag, count: number): Uint8Array {
  const bytes = new Uint8Array(16)
  const view = new DataView(bytes.buffer)
  view.setUint32(0, TAGS[tag], true)
  view.setFloat64(8, count, true)
  return bytes
}

const padding = (n: number): number => (8 - (n % 8)) % 8

/** Writes sections into a generation file. Each method is steps: it yields at safe points. */
export class SectionWriter {
  readonly #file: GenerationFile

  constructor(file: GenerationFile) {
    this.#file = file
  }

  *array(tag: Exclude<Tag, 'strings'>, data: Typed): Steps {
    this.#file.bytes(header(tag, data.length))
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
    for (let at = 0; at < bytes.byteLength; at += STEP_BYTES) {
      this.#file.bytes(bytes.subarray(at, at + STEP_BYTES))
      if (bytes.byteLength > STEP_BYTES) yield
    }
    this.#file.bytes(ZEROS.subarray(0, padding(bytes.byteLength)))
  }

  /** One array of `count` elements written from consecutive parts (their lengths must sum to `count`). */
  *concat(tag: Exclude<Tag, 'strings'>, count: number, parts: Iterable<Typed>): Steps {
    this.#file.bytes(header(tag, count))
    let written = 0
    let since = 0
    for (const part of parts) {
      this.#file.bytes(new Uint8Array(part.buffer, part.byteOffset, part.byteLength))
      written += part.byteLength
      since += part.byteLength
      if (since >= STEP_BYTES) {
        since = 0
        yield
      }
    }
    this.#file.bytes(ZEROS.subarray(0, padding(written)))
  }

  u8(data: Uint8Array): Steps {
    return this.array('u8', data)
  }

  u32(data: Uint32Array): Steps {
    return this.array('u32', data)
  }

  f32(data: Float32Array): Steps {
    return this.array('f32', data)
  }

  f64(data: Float64Array): Steps {
    return this.array('f64', data)
  }

  /** `count` strings, the i-th given by `at(i)` (undefined: none). */
  *strings(count: number, at: (i: number) => string | undefined): Steps {
    this.#file.bytes(header('strings', count))
    let lengths: number[] = []
    let narrow: string[] = []
    let wide: string[] = []
    let size = 0
    const flush = (): void => {
      if (lengths.length === 0) return
      const one = Buffer.from(narrow.join(''), 'latin1')
      const two = Buffer.from(wide.join(''), 'utf16le')
      const head = new Uint8Array(24 + lengths.length * 4)
      const view = new DataView(head.buffer)
      view.setUint32(0, lengths.length, true)
      view.setFloat64(8, one.byteLength, true)
      view.setFloat64(16, two.byteLength, true)
      new Uint32Array(head.buffer, 24).set(lengths)
      this.#file.bytes(head)
      this.#file.bytes(ZEROS.subarray(0, padding(head.byteLength)))
      for (const bytes of [one, two]) {
        this.#file.bytes(bytes)
        this.#file.bytes(ZEROS.subarray(0, padding(bytes.byteLength)))
      }
      lengths = []
      narrow = []
      wide = []
      size = 0
    }
    for (let i = 0; i < count; i++) {
      const s = at(i)
      if (s === undefined) {
        lengths.push(ABSENT)
      } else if (LATIN1.test(s)) {
        lengths.push(s.length)
        narrow.push(s)
      } else {
        lengths.push((s.length | WIDE) >>> 0)
        wide.push(s)
      }
      size += s === undefined ? 0 : s.length
      if (size >= GROUP_CHARS || lengths.length >= GROUP_STRINGS) {
        flush()
        yield
      }
    }
    flush()
  }
}

/**
 * Reads the sections of a whole file held in memory (its checksum verified before). Typed arrays
 * come back as views of `bytes` (no copy); anything malformed throws `fail()`'s error.
 */
export class SectionReader {
  readonly #bytes: Uint8Array<ArrayBuffer>
  readonly #view: DataView
  readonly #fail: () => Error
  #at = 0

  constructor(bytes: Uint8Array<ArrayBuffer>, fail: () => Error) {
    if (bytes.byteOffset % 8 !== 0) throw new Error('SectionReader: the buffer must be 8-byte aligned')
    this.#bytes = bytes
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    this.#fail = fail
  }

  /** True when every byte was read. */
  get done(): boolean {
    return this.#at === this.#bytes.byteLength
  }

  /** Throws unless every byte was read. */
  end(): void {
    if (!this.done) throw this.#fail()
  }

  #header(tag: Tag): number {
    if (this.#at + 16 > this.#bytes.byteLength) throw this.#fail()
    if (this.#view.getUint32(this.#at, true) !== TAGS[tag] || this.#view.getUint32(this.#at + 4, true) !== 0) throw this.#fail()
    const count = this.#view.getFloat64(this.#at + 8, true)
    if (!Number.isSafeInteger(count) || count < 0) throw this.#fail()
    this.#at += 16
    return count
  }

  /** `bytes` bytes at the cursor, the cursor moved past them and their padding. */
  #take(bytes: number): number {
    const start = this.#at
    if (bytes > this.#bytes.byteLength - start) throw this.#fail()
    const end = start + bytes + padding(bytes)
    if (end > this.#bytes.byteLength) throw this.#fail()
    for (let i = start + bytes; i < end; i++) if (this.#bytes[i] !== 0) throw this.#fail()
    this.#at = end
    return this.#bytes.byteOffset + start
  }

  /** The next array; `count`, when given, is the length it must have. */
  u8(count?: number): Uint8Array<ArrayBuffer> {
    const n = this.#counted('u8', count)
    return new Uint8Array(this.#bytes.buffer, this.#take(n), n)
  }

  u32(count?: number): Uint32Array<ArrayBuffer> {
    const n = this.#counted('u32', count)
    return new Uint32Array(this.#bytes.buffer, this.#take(n * 4), n)
  }

  f32(count?: number): Float32Array<ArrayBuffer> {
    const n = this.#counted('f32', count)
    return new Float32Array(this.#bytes.buffer, this.#take(n * 4), n)
  }

  f64(count?: number): Float64Array<ArrayBuffer> {
    const n = this.#counted('f64', count)
    return new Float64Array(this.#bytes.buffer, this.#take(n * 8), n)
  }

  #counted(tag: Tag, count: number | undefined): number {
    const n = this.#header(tag)
    if (count !== undefined && n !== count) throw this.#fail()
    return n
  }

  /**
   * The next string list (undefined for entries that hold none); `count`, when given, is its
   * length. With `hashes`, also `hashes.into[i] = hashes.of(...)` of each entry's stored code
   * units (one byte each, or two with `wide`), from the bytes it is decoded from. With `repeats`
   * (a list whose values recur close together, such as the metadata of a file's chunks), an entry
   * equal to one of the last {@link RECENT} distinct entries is that same string, not a copy.
   */
  strings(count?: number, options: { readonly hashes?: { readonly of: UnitsHash; readonly into: Uint32Array }; readonly repeats?: boolean } = {}): (string | undefined)[] {
    const { hashes, repeats = false } = options
    const n = this.#stringCount(count)
    const out = new Array<string | undefined>(n)
    const buffer = this.#buffer()
    let i = 0
    while (i < n) {
      const { lengths, entries, oneAt, oneBytes, twoAt, twoBytes } = this.#group(n - i)
      const one = new Decoding(buffer, 'latin1', oneAt, oneBytes, 1, repeats)
      const two = new Decoding(buffer, 'utf16le', twoAt, twoBytes, 2, repeats)
      // Where the next string of each run starts (its bytes are checked by the decoding).
      let p1 = oneAt
      let p2 = twoAt
      for (let e = 0; e < entries; e++) {
        const length = lengths[e] as number
        if (length === ABSENT) {
          out[i++] = undefined
          continue
        }
        const wide = length >= WIDE
        const s = wide ? two.next(length - WIDE, lengths, e, WIDE) : one.next(length, lengths, e, 0)
        if (s === undefined) throw this.#fail()
        if (hashes !== undefined) {
          hashes.into[i] = wide ? hashes.of(buffer, p2, length - WIDE, true) : hashes.of(buffer, p1, length, false)
          if (wide) p2 += (length - WIDE) * 2
          else p1 += length
        }
        out[i++] = s
      }
      if (!one.done || !two.done) throw this.#fail()
    }
    return out
  }

  /**
   * The next string list left undecoded, checked as {@link strings} checks it: where each entry's
   * characters lie in the buffer, which the result keeps; `count`, when given, is its length.
   */
  stringRefs(count?: number): StringRefs {
    const n = this.#stringCount(count)
    const starts = new Float64Array(n)
    const units = new Uint32Array(n)
    let i = 0
    while (i < n) {
      const { lengths, entries, oneAt, oneBytes, twoAt, twoBytes } = this.#group(n - i)
      let p1 = oneAt
      let p2 = twoAt
      for (let e = 0; e < entries; e++, i++) {
        const length = lengths[e] as number
        units[i] = length
        if (length === ABSENT) continue
        if (length < WIDE) {
          if (length > oneAt + oneBytes - p1) throw this.#fail()
          starts[i] = p1
          p1 += length
        } else {
          const bytes = (length - WIDE) * 2
          if (bytes > twoAt + twoBytes - p2) throw this.#fail()
          starts[i] = p2
          p2 += bytes
        }
      }
      if (p1 !== oneAt + oneBytes || p2 !== twoAt + twoBytes) throw this.#fail()
    }
    return new StringRefs(this.#buffer(), starts, units)
  }

  /** A string list's header read: its number of entries. */
  #stringCount(count: number | undefined): number {
    const n = this.#counted('strings', count)
    // Each entry takes at least its length's four bytes: a count beyond that allocates nothing.
    if (n > (this.#bytes.byteLength - this.#at) / 4) throw this.#fail()
    return n
  }

  #buffer(): Buffer {
    return Buffer.from(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength)
  }

  /** The next group of a string list of which `left` entries are still to come (see the format above). */
  #group(left: number): { lengths: Uint32Array; entries: number; oneAt: number; oneBytes: number; twoAt: number; twoBytes: number } {
    if (this.#at + 24 > this.#bytes.byteLength) throw this.#fail()
    const entries = this.#view.getUint32(this.#at, true)
    const oneBytes = this.#view.getFloat64(this.#at + 8, true)
    const twoBytes = this.#view.getFloat64(this.#at + 16, true)
    if (entries === 0 || entries > left || this.#view.getUint32(this.#at + 4, true) !== 0) throw this.#fail()
    if (!Number.isSafeInteger(oneBytes) || oneBytes < 0 || !Number.isSafeInteger(twoBytes) || twoBytes < 0 || twoBytes % 2 !== 0) throw this.#fail()
    const lengths = new Uint32Array(this.#bytes.buffer, this.#take(24 + entries * 4) + 24, entries)
    const oneAt = this.#take(oneBytes) - this.#bytes.byteOffset
    const twoAt = this.#take(twoBytes) - this.#bytes.byteOffset
    return { lengths, entries, oneAt, oneBytes, twoAt, twoBytes }
  }
}

/** A hash of `units` code units stored from byte `at` of `bytes`: one byte each, or two (UTF-16LE) with `wide`. */
export type UnitsHash = (bytes: Uint8Array, at: number, units: number, wide: boolean) => number

/**
 * A string list of a section left in its buffer (SectionReader.stringRefs): each entry decoded
 * when asked for, a new copy each time.
 */
class StringRefs {
  readonly #bytes: Buffer
  /** Byte offset of each entry's characters in `bytes`. */
  readonly #starts: Float64Array
  /** Each entry's length in code units, WIDE set for UTF-16LE; ABSENT for none. */
  readonly #units: Uint32Array

  constructor(bytes: Buffer, starts: Float64Array, units: Uint32Array) {
    this.#bytes = bytes
    this.#starts = starts
    this.#units = units
  }

  get length(): number {
    return this.#units.length
  }

  /** True when entry i holds a string. */
  has(i: number): boolean {
    const units = this.#units[i]
    return units !== undefined && units !== ABSENT
  }

  /** Entry i (undefined when it holds none). */
  at(i: number): string | undefined {
    const units = this.#units[i]
    if (units === undefined || units === ABSENT) return undefined
    const start = this.#starts[i] as number
    return units < WIDE ? this.#bytes.toString('latin1', start, start + units) : this.#bytes.toString('utf16le', start, start + (units - WIDE) * 2)
  }
}

/**
 * One run of a string group (latin1 or UTF-16LE) decoded in pieces of about DECODE_CHARS
 * characters, each piece ending at a string's end: both decodings are copies, no UTF-8 to validate.
 */
class Decoding {
  readonly #buffer: Buffer
  readonly #encoding: 'latin1' | 'utf16le'
  readonly #unit: number
  /** Byte offsets of the run's next undecoded byte and its end. */
  #at: number
  readonly #end: number
  /** The piece being handed out and the position in it. */
  #piece = ''
  #p = 0
  /** With repeats: the last distinct strings handed out, the latest at `#latest`. */
  readonly #recent: string[] | undefined
  #latest = 0

  constructor(buffer: Buffer, encoding: 'latin1' | 'utf16le', at: number, bytes: number, unit: number, repeats = false) {
    this.#buffer = buffer
    this.#encoding = encoding
    this.#unit = unit
    this.#at = at
    this.#end = at + bytes
    this.#recent = repeats ? new Array<string>(RECENT).fill('') : undefined
  }

  /** True when every character of the run was handed out. */
  get done(): boolean {
    return this.#p === this.#piece.length && this.#at === this.#end
  }

  /**
   * The next string, of `length` code units (entry e of `lengths`, whose strings of this run
   * carry the bit `mark`); undefined when the run has fewer characters left.
   */
  next(length: number, lengths: Uint32Array, e: number, mark: number): string | undefined {
    if (this.#p === this.#piece.length) {
      // The next piece: this string and those after it in this run, up to about DECODE_CHARS characters.
      let chars = length
      for (let f = e + 1; f < lengths.length && chars < DECODE_CHARS; f++) {
        const l = lengths[f] as number
        if (l !== ABSENT && (l >= WIDE ? WIDE : 0) === mark) {
          if (chars + (l - mark) > DECODE_CHARS) break
          chars += l - mark
        }
      }
      const bytes = chars * this.#unit
      if (bytes > this.#end - this.#at) return undefined
      this.#piece = this.#buffer.toString(this.#encoding, this.#at, this.#at + bytes)
      this.#at += bytes
      this.#p = 0
    }
    if (length > this.#piece.length - this.#p) return undefined
    const recent = this.#recent
    if (recent !== undefined) {
      // A repeat is the string handed out before (compared in place: no copy is made to compare).
      for (let k = 0; k < RECENT; k++) {
        const r = recent[(this.#latest - k + RECENT) % RECENT] as string
        if (r.length === length && this.#piece.startsWith(r, this.#p)) {
          this.#p += length
          return r
        }
      }
    }
    const s = this.#piece.slice(this.#p, this.#p + length)
    this.#p += length
    if (recent !== undefined) {
      this.#latest = (this.#latest + 1) % RECENT
      recent[this.#latest] = s
    }
    return s
  }
}
