import { createHash, type Hash } from 'node:crypto'
import { closeSync, fsync, fsyncSync, openSync, readSync, statSync, writeSync } from 'node:fs'
import { sep } from 'node:path'
import { StringDecoder } from 'node:string_decoder'
import { promisify } from 'node:util'
import { runSteps, type BlockingCall, type Steps } from './steps.js'

const CHUNK = 1 << 20

/** What a file's metadata says of its bytes: another device, inode, size or modification time means they may have changed. */
export type FileStamp = string

/** A file's stamp; '' (which no file has) when it cannot be read, so it is never taken for unchanged. */
export function stampOf(path: string): FileStamp {
  const stat = statSync(path, { bigint: true, throwIfNoEntry: false })
  return stat === undefined ? '' : `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeNs}`
}

/** Whether the file at `path` is still as `stamp` (taken earlier) recorded it: one that could not be stamped never is. */
export function unchangedSince(path: string, stamp: FileStamp | undefined): boolean {
  return stamp !== undefined && stamp !== '' && stampOf(path) === stamp
}

/** Whether `path` lies inside the folder `folder` (both absolute). */
export function isInside(path: string, folder: string): boolean {
  return path.startsWith(`${folder}${sep}`)
}

/**
 * Checksummed, buffered file I/O for snapshots: everything goes through one ~1 MB buffer, so
 * nothing builds a string or buffer the size of the whole index and small records cost no
 * system call each.
 */
export class ChunkWriter {
  readonly #fd: number
  readonly #hash: Hash = createHash('sha256')
  readonly #buffer = Buffer.allocUnsafe(CHUNK)
  #used = 0
  #bytes = 0

  constructor(path: string) {
    this.#fd = openSync(path, 'w')
  }

  /** Appends text (UTF-8). */
  text(s: string): void {
    if (s.length * 3 > CHUNK - this.#used) this.#flush()
    if (s.length * 3 > CHUNK) {
      this.#write(Buffer.from(s, 'utf8'))
      return
    }
    this.#used += this.#buffer.write(s, this.#used, 'utf8')
  }

  /** Appends raw bytes. */
  bytes(data: Uint8Array): void {
    if (data.byteLength > CHUNK - this.#used) this.#flush()
    if (data.byteLength > CHUNK) {
      this.#write(data)
      return
    }
    this.#buffer.set(data, this.#used)
    this.#used += data.byteLength
  }

  /** Flushes, fsyncs and closes; returns the file's size and sha256. */
  close(): { bytes: number; sha256: string } {
    return runSteps(this.finish())
  }

  /** `close` as steps: the fsync is a blocking call (off the main thread when run in slices). */
  *finish(): Steps<{ bytes: number; sha256: string }> {
    try {
      this.#flush()
      yield fsyncCall(this.#fd)
    } finally {
      closeSync(this.#fd)
    }
    return { bytes: this.#bytes, sha256: this.#hash.digest('hex') }
  }

  #flush(): void {
    if (this.#used === 0) return
    this.#write(this.#buffer.subarray(0, this.#used))
    this.#used = 0
  }

  #write(data: Uint8Array): void {
    let offset = 0
    while (offset < data.byteLength) offset += writeSync(this.#fd, data, offset, data.byteLength - offset)
    this.#hash.update(data)
    this.#bytes += data.byteLength
  }
}

const fsyncAsync = promisify(fsync)

/** Fills `into` from the start of an open file with positional reads; returns the bytes read (fewer only at its end). */
export function readFully(fd: number, into: Uint8Array): number {
  let filled = 0
  while (filled < into.byteLength) {
    const n = readSync(fd, into, filled, Math.min(into.byteLength - filled, 1 << 30), filled)
    if (n === 0) break
    filled += n
  }
  return filled
}

/** fsync of an open file, as a blocking call. */
export function fsyncCall(fd: number): BlockingCall {
  return { sync: () => fsyncSync(fd), async: () => fsyncAsync(fd) }
}

/** Reads a file through one ~1 MB buffer, hashing as it goes; `lines()` or `read()` consume it. */
export class ChunkReader {
  readonly #fd: number
  readonly #hash: Hash = createHash('sha256')
  readonly #buffer = Buffer.allocUnsafe(CHUNK)
  #start = 0
  #end = 0
  #bytes = 0
  #eof = false
  #closed = false

  /** Opens `path`, or reads an open file descriptor (then owned: `close` closes it). */
  constructor(path: string | number) {
    this.#fd = typeof path === 'number' ? path : openSync(path, 'r')
  }

  /** Refills the buffer; false at end of file. */
  #fill(): boolean {
    if (this.#eof) return false
    const n = readSync(this.#fd, this.#buffer, 0, CHUNK, null)
    if (n === 0) {
      this.#eof = true
      return false
    }
    this.#hash.update(this.#buffer.subarray(0, n))
    this.#bytes += n
    this.#start = 0
    this.#end = n
    return true
  }

  /** The file's lines (UTF-8, '\n'-separated; a final empty line is dropped). */
  *lines(): Generator<string> {
    // The decoder keeps a multi-byte character split across chunks for the next chunk.
    const decoder = new StringDecoder('utf8')
    let rest = ''
    while (this.#start < this.#end || this.#fill()) {
      const text = rest + decoder.write(this.#buffer.subarray(this.#start, this.#end))
      this.#start = this.#end
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

  /** Fills `into` with the next bytes; returns how many were read (fewer only at end of file). */
  read(into: Uint8Array): number {
    let filled = 0
    while (filled < into.byteLength) {
      if (this.#start === this.#end && !this.#fill()) break
      const n = Math.min(into.byteLength - filled, this.#end - this.#start)
      into.set(this.#buffer.subarray(this.#start, this.#start + n), filled)
      this.#start += n
      filled += n
    }
    return filled
  }

  /**
   * Fills `into` straight from the file (no copy through the buffer, which must be empty),
   * hashing as it goes; returns how many bytes were read (fewer only at end of file).
   */
  readDirect(into: Uint8Array): number {
    if (this.#start !== this.#end) throw new Error('readDirect: buffered bytes are unread')
    let filled = 0
    while (filled < into.byteLength && !this.#eof) {
      const n = readSync(this.#fd, into, filled, Math.min(into.byteLength - filled, 1 << 30), null)
      if (n === 0) {
        this.#eof = true
        break
      }
      this.#hash.update(into.subarray(filled, filled + n))
      this.#bytes += n
      filled += n
    }
    return filled
  }

  /** Drains the rest, closes; returns size and sha256 of the whole file. */
  close(): { bytes: number; sha256: string } {
    return runSteps(this.finish())
  }

  /** `close` as steps: a safe point after each buffer read. */
  *finish(): Steps<{ bytes: number; sha256: string }> {
    try {
      // Hash the remainder: a file longer than expected must not pass.
      while (this.#fill()) yield
    } finally {
      this.abandon()
    }
    return { bytes: this.#bytes, sha256: this.#hash.digest('hex') }
  }

  /** Closes the file unread (a read that failed); nothing if already closed. */
  abandon(): void {
    if (this.#closed) return
    this.#closed = true
    closeSync(this.#fd)
  }
}
