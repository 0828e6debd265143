import { createHash, type Hash } from 'node:crypto'
import { closeSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs'
import { StringDecoder } from 'node:string_decoder'

/**
 * Checksummed, chunked file I/O for snapshots: nothing builds one string or buffer the size of
 * the whole index (a 1M-record index writes and reads in ~1 MB pieces).
 */
export class ChunkWriter {
  readonly #fd: number
  readonly #hash: Hash = createHash('sha256')
  #pending: string[] = []
  #pendingLength = 0
  #bytes = 0

  constructor(path: string) {
    this.#fd = openSync(path, 'w')
  }

  /** Appends text (buffered; flushed in ~1 MB pieces). */
  text(s: string): void {
    this.#pending.push(s)
    this.#pendingLength += s.length
    if (this.#pendingLength >= 1 << 20) this.#flushText()
  }

  /** Appends raw bytes. */
  bytes(data: Uint8Array): void {
    this.#flushText()
    this.#write(data)
  }

  /** Flushes, fsyncs and closes; returns the file's size and sha256. */
  close(): { bytes: number; sha256: string } {
    this.#flushText()
    fsyncSync(this.#fd)
    closeSync(this.#fd)
    return { bytes: this.#bytes, sha256: this.#hash.digest('hex') }
  }

  #flushText(): void {
    if (this.#pending.length === 0) return
    this.#write(Buffer.from(this.#pending.join(''), 'utf8'))
    this.#pending = []
    this.#pendingLength = 0
  }

  #write(data: Uint8Array): void {
    let offset = 0
    while (offset < data.byteLength) offset += writeSync(this.#fd, data, offset, data.byteLength - offset)
    this.#hash.update(data)
    this.#bytes += data.byteLength
  }
}

/** Reads a file in 1 MB chunks, hashing as it goes; `lines()` and `bytes()` consume it. */
export class ChunkReader {
  readonly #fd: number
  readonly #hash: Hash = createHash('sha256')
  readonly #chunk = Buffer.allocUnsafe(1 << 20)
  #bytes = 0
  #done = false

  constructor(path: string) {
    this.#fd = openSync(path, 'r')
  }

  #next(): Buffer | undefined {
    if (this.#done) return undefined
    const n = readSync(this.#fd, this.#chunk, 0, this.#chunk.length, null)
    if (n === 0) {
      this.#done = true
      return undefined
    }
    const piece = this.#chunk.subarray(0, n)
    this.#hash.update(piece)
    this.#bytes += n
    return piece
  }

  /** The file's lines (UTF-8, '\n'-separated; a final empty line is dropped). */
  *lines(): Generator<string> {
    // The decoder keeps a multi-byte character split across chunks for the next chunk.
    const decoder = new StringDecoder('utf8')
    let rest = ''
    for (let piece = this.#next(); piece; piece = this.#next()) {
      const text = rest + decoder.write(piece)
      const cut = text.lastIndexOf('\n')
      if (cut < 0) {
        rest = text
        continue
      }
      rest = text.slice(cut + 1)
      for (const line of text.slice(0, cut).split('\n')) yield line
    }
    rest += decoder.end()
    if (rest !== '') yield rest
  }

  /** Fills `into` with the next bytes; returns how many were read. */
  read(into: Uint8Array): number {
    let filled = 0
    while (filled < into.byteLength) {
      const n = readSync(this.#fd, into, filled, into.byteLength - filled, null)
      if (n === 0) break
      this.#hash.update(into.subarray(filled, filled + n))
      this.#bytes += n
      filled += n
    }
    return filled
  }

  /** Drains the rest, closes; returns size and sha256 of everything read. */
  close(): { bytes: number; sha256: string } {
    while (this.#next()) {
      // hash the remainder
    }
    closeSync(this.#fd)
    return { bytes: this.#bytes, sha256: this.#hash.digest('hex') }
  }
}
