import { randomBytes } from 'node:crypto'
import { closeSync, fdatasync, fsync, fstatSync, fsyncSync, ftruncateSync, openSync, write, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import * as zlib from 'node:zlib'
import { QuarryError } from '../errors.js'
import { fsyncDir } from './debris.js'
import { PositionalReader } from './positional-reader.js'
import { turn } from './steps.js'

/**
 * A write-ahead log: an append-only file of records, each framed by its length, a CRC-32 of the
 * length and a CRC-32 of its bytes, made durable by fsync. Appends are written at once (in order)
 * and `sync()` resolves when everything appended before it is on disk; concurrent callers share one
 * sync (group commit), so many small writes cost one round of disk flushes between them.
 *
 * The log is sealed: its header names the log (a random id the checkpoint it follows records, so a
 * log cannot be swapped or lost unnoticed) and holds two seal slots. After the records of a group
 * commit are fsynced, the newer slot is overwritten with how far the log is durable (bytes and
 * records) and synced again; only then are the writes acknowledged. So, on open:
 * - everything up to the sealed length was acknowledged: a missing, cut or damaged byte there is
 *   damage, refused with what it would lose ({@link LogReading} `ok: false`);
 * - past it lies at most the group commit a crash interrupted (never acknowledged): a record cut
 *   short or failing its checksum at the very end is a torn append and dropped; whole records there
 *   are kept; a bad record followed by good ones is damage.
 * Two slots, written in turn and each with its own CRC, mean a torn seal leaves the previous one.
 */

/** The file starts with this: format and version. `QRYWAL01` (unsealed) was never released. */
const MAGIC = Buffer.from('QRYWAL02', 'latin1')
const OLD_MAGIC = Buffer.from('QRYWAL01', 'latin1')
/** Header: magic, 8-byte id, u32 generation it follows, u32 CRC-32 of those 20 bytes. */
const IDENTITY = 24
/** A seal slot: u32 counter, u32+u32 sealed bytes (low, high), u32 sealed records, u32 CRC-32 of the 16 bytes before. */
const SLOT = 20
/** Where records start: the identity and the two slots. */
const START = IDENTITY + 2 * SLOT
/** Per record: u32 length, u32 CRC-32 of those 4 bytes, u32 CRC-32 of the payload (little-endian). */
const HEADER = 12

const CRC_TABLE = (() => {
  const table = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    table[n] = c >>> 0
  }
  return table
})()

/**
 * CRC-32 (IEEE) in JavaScript, as zip and PNG compute it; `previous` is the CRC of the bytes before
 * (0 for none), so a long payload can be checked a piece at a time. @internal
 */
export function portableCrc32(bytes: Uint8Array, previous = 0): number {
  let c = (previous ^ 0xffffffff) >>> 0
  for (let i = 0; i < bytes.length; i++) c = (CRC_TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/** zlib's own CRC-32 (Node 20.15 and later): the same values, some hundred times faster. */
const nativeCrc32 = (zlib as unknown as { readonly crc32?: (data: Uint8Array, value?: number) => number }).crc32

/** CRC-32 (IEEE), as zip and PNG compute it; `previous` is the CRC of the bytes before (0 for none). */
export function crc32(bytes: Uint8Array, previous = 0): number {
  return nativeCrc32 ? nativeCrc32(bytes, previous) : portableCrc32(bytes, previous)
}

/** Bytes checksummed between two turns of the event loop by {@link WriteAheadLog.appendInSlices}: a few milliseconds either way. */
const CRC_SLICE = nativeCrc32 ? 8 * 1024 * 1024 : 512 * 1024

/** Which log follows a checkpoint: recorded in the checkpoint and in the log's header. */
export interface LogIdentity {
  /** 16 hex digits, random per log. */
  readonly id: string
  /** The generation (checkpoint) the log's writes follow. */
  readonly follows: number
}

/** How far a log was sealed: everything up to here was acknowledged. */
export interface LogSeal {
  readonly bytes: number
  readonly records: number
}

/**
 * What {@link readLog} found. `ok: false` is damage or loss: `problem` says what (a phrase after
 * the log's path), `records` are the whole records before it, `sealed` how many were acknowledged
 * (when the seal could be read).
 */
export type LogReading =
  | {
      readonly ok: true
      readonly records: readonly Buffer[]
      /** Bytes of a torn last record (an interrupted, unacknowledged append), dropped on resume. */
      readonly droppedBytes: number
      /** Where the whole records end: appends go here. */
      readonly end: number
      readonly seal: LogSeal & { readonly counter: number }
      readonly identity: LogIdentity
    }
  | { readonly ok: false; readonly problem: string; readonly records: readonly Buffer[]; readonly sealed: number | undefined }

/**
 * Runs `read` on the file at `path` opened for reading, closed after; `undefined` if there is none.
 * The file is read by position, a record at a time: a log of any size (past 4 GiB, which no Buffer
 * holds) is read with memory for its records and a window, not a copy of the whole file.
 */
function withLogFile<T>(path: string, read: (file: PositionalReader) => T): T | undefined {
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new QuarryError('INVALID_SNAPSHOT', `cannot read the write-ahead log ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the folder's permissions.`)
  }
  try {
    return read(new PositionalReader(fd, `the write-ahead log ${path}`))
  } finally {
    closeSync(fd)
  }
}

function readSlot(data: Buffer, at: number): (LogSeal & { readonly counter: number }) | undefined {
  if (crc32(data.subarray(at, at + 16)) !== data.readUInt32LE(at + 16)) return undefined
  return { counter: data.readUInt32LE(at), bytes: data.readUInt32LE(at + 4) + data.readUInt32LE(at + 8) * 2 ** 32, records: data.readUInt32LE(at + 12) }
}

function encodeSlot(seal: LogSeal & { readonly counter: number }): Buffer {
  const slot = Buffer.alloc(SLOT)
  slot.writeUInt32LE(seal.counter >>> 0, 0)
  slot.writeUInt32LE(seal.bytes % 2 ** 32, 4)
  slot.writeUInt32LE(Math.floor(seal.bytes / 2 ** 32), 8)
  slot.writeUInt32LE(seal.records, 12)
  slot.writeUInt32LE(crc32(slot.subarray(0, 16)), 16)
  return slot
}

/**
 * The frame at `offset`: whole and checked, torn (cut short, or failing a checksum), or a damaged
 * header. Its payload is read only when the file holds all of it, so a damaged length never makes a
 * buffer larger than the file's rest; and not when it would end past `within` (the sealed part's
 * end): a sealed record cannot run past its seal, so that is damage whatever its checksum says.
 */
function frameAt(file: PositionalReader, offset: number, within = file.length): { kind: 'whole'; end: number; payload: Buffer } | { kind: 'torn' } | { kind: 'damaged' } {
  const rest = file.length - offset
  if (rest < HEADER) return { kind: 'torn' }
  const header = file.read(offset, offset + HEADER)
  const length = header.readUInt32LE(0)
  // A torn write leaves a prefix of a good frame, then zeros or nothing: a header failing its own
  // checksum with bytes after it was not torn (a damaged length would make good records look like
  // a tail).
  if (crc32(header.subarray(0, 4)) !== header.readUInt32LE(4) || length === 0) {
    return file.zerosFrom(offset + HEADER) ? { kind: 'torn' } : { kind: 'damaged' }
  }
  const end = offset + HEADER + length
  if (end > file.length) return { kind: 'torn' }
  if (end > within) return { kind: 'damaged' }
  const payload = file.read(offset + HEADER, end)
  return crc32(payload) === header.readUInt32LE(8) ? { kind: 'whole', end, payload } : { kind: 'torn' }
}

/**
 * Reads the log at `path` without changing it. With `expected`, the log must be that one (the
 * checkpoint's): a missing file, another id, a cut or damage up to the seal is `ok: false`.
 */
export function readLog(path: string, expected: LogIdentity | undefined): LogReading {
  return withLogFile(path, (file) => readLogFile(file, expected)) ?? lost('is missing')
}

function lost(problem: string, records: readonly Buffer[] = [], sealed?: number): LogReading {
  return { ok: false, problem, records, sealed }
}

function readLogFile(file: PositionalReader, expected: LogIdentity | undefined): LogReading {
  const size = file.length
  const head = file.read(0, Math.min(size, START))
  if (size >= OLD_MAGIC.length && head.subarray(0, OLD_MAGIC.length).equals(OLD_MAGIC)) return lost('is in the unsealed format of an unreleased Quarry (QRYWAL01), which this Quarry does not read')
  if (size < START) return lost(size === 0 ? 'is empty (its header is gone)' : `holds ${size} bytes, less than its own header (${START})`)
  if (!head.subarray(0, MAGIC.length).equals(MAGIC)) return lost('does not start with the log header (another file, or another version)')
  if (crc32(head.subarray(0, IDENTITY - 4)) !== head.readUInt32LE(IDENTITY - 4)) return lost('has a damaged header')
  const identity: LogIdentity = { id: head.subarray(8, 16).toString('hex'), follows: head.readUInt32LE(16) }
  if (expected && (identity.id !== expected.id || identity.follows !== expected.follows)) return lost(`is another log (id ${identity.id}, after checkpoint ${identity.follows}) than the one checkpoint ${expected.follows} names (id ${expected.id})`)
  const slots = [readSlot(head, IDENTITY), readSlot(head, IDENTITY + SLOT)].filter((s) => s !== undefined)
  const seal = slots.sort((a, b) => b.counter - a.counter)[0]
  if (!seal) return lost('has both of its seals damaged')
  // Each payload is read into a buffer of its own, kept as the record (no second copy).
  const records: Buffer[] = []
  let offset = START
  // The sealed part: every byte of it was acknowledged.
  while (offset < seal.bytes) {
    if (offset >= size) return lost(`was cut to ${size} bytes, short of the ${seal.bytes} sealed`, records, seal.records)
    const frame = frameAt(file, offset, seal.bytes)
    if (frame.kind !== 'whole') {
      const what = frame.kind === 'torn' && size < seal.bytes ? `was cut to ${size} bytes, short of the ${seal.bytes} sealed` : `has damage in record ${records.length + 1} (byte ${offset}), inside its sealed part`
      return lost(what, records, seal.records)
    }
    records.push(frame.payload)
    offset = frame.end
  }
  if (records.length !== seal.records) return lost(`holds ${records.length} records in its sealed part, its seal counts ${seal.records}`, records, seal.records)
  // Past the seal: at most one interrupted group commit.
  while (offset < size) {
    const frame = frameAt(file, offset)
    if (frame.kind === 'damaged') return lost(`has a damaged record header at byte ${offset}, past its seal but followed by more`, records, seal.records)
    if (frame.kind === 'torn') {
      const end = offset + HEADER + (size - offset >= 4 ? file.read(offset, offset + 4).readUInt32LE(0) : 0)
      // A checksum failure followed by other bytes is not an interrupted last append.
      if (end < size && !file.zerosFrom(end)) return lost(`has a damaged record at byte ${offset}, past its seal but followed by more`, records, seal.records)
      return { ok: true, records, droppedBytes: size - offset, end: offset, seal, identity }
    }
    records.push(frame.payload)
    offset = frame.end
  }
  return { ok: true, records, droppedBytes: 0, end: offset, seal, identity }
}

interface Waiter {
  readonly upTo: number
  readonly resolve: () => void
  readonly reject: (error: Error) => void
}

function writeFully(fd: number, bytes: Buffer, position: number): void {
  let written = 0
  while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written, position + written)
}

/** A record's frame header: its length, the CRC-32 of those 4 bytes, the payload's CRC-32 (`crc`). */
function frameHeader(length: number, crc: number): Buffer {
  const header = Buffer.allocUnsafe(HEADER)
  header.writeUInt32LE(length, 0)
  header.writeUInt32LE(crc32(header.subarray(0, 4)), 4)
  header.writeUInt32LE(crc, 8)
  return header
}

/** {@link writeFully} on the thread pool. */
async function writeFullyOffThread(fd: number, bytes: Uint8Array, position: number): Promise<void> {
  let written = 0
  while (written < bytes.length) {
    written += await new Promise<number>((resolve, reject) => write(fd, bytes, written, bytes.length - written, position + written, (error, n) => (error ? reject(error) : resolve(n))))
  }
}

function openFailure(path: string, error: unknown): QuarryError {
  return new QuarryError('INVALID_SNAPSHOT', `cannot open the write-ahead log ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the folder's permissions and free space.`)
}

/**
 * An append-only, sealed log of records on disk (see the top of this file): `create` starts one,
 * `resume` continues one {@link readLog} found whole, `append` writes a record, `sync` resolves
 * once it is durable and sealed (shared by every caller waiting), `close` syncs, seals and closes.
 * One writer per file: the caller (the server's data folder) holds the folder's lock.
 */
export class WriteAheadLog {
  readonly path: string
  readonly identity: LogIdentity
  readonly #fd: number
  #appended: number
  #records: number
  #synced: number
  #counter: number
  #syncing = false
  /** An appendInSlices is under way. */
  #appending = false
  #closed = false
  #failed: Error | undefined
  readonly #waiters: Waiter[] = []

  /**
   * Whether the log's file has no name left (its folder or the file removed while it is open):
   * appends then reach nothing a restart reads. One fstat.
   */
  get unlinked(): boolean {
    return fstatSync(this.#fd).nlink === 0
  }

  private constructor(path: string, fd: number, identity: LogIdentity, seal: LogSeal & { readonly counter: number }) {
    this.path = path
    this.#fd = fd
    this.identity = identity
    this.#appended = seal.bytes
    this.#records = seal.records
    this.#synced = seal.bytes
    this.#counter = seal.counter
  }

  /** Creates (or replaces) the log at `path` for the writes after checkpoint `follows`: header and seals written, file and folder fsynced. */
  static create(path: string, follows: number): WriteAheadLog {
    let fd: number
    try {
      fd = openSync(path, 'w+')
    } catch (error) {
      throw openFailure(path, error)
    }
    try {
      const identity: LogIdentity = { id: randomBytes(8).toString('hex'), follows }
      const header = Buffer.alloc(START)
      MAGIC.copy(header, 0)
      Buffer.from(identity.id, 'hex').copy(header, 8)
      header.writeUInt32LE(follows >>> 0, 16)
      header.writeUInt32LE(crc32(header.subarray(0, IDENTITY - 4)), IDENTITY - 4)
      encodeSlot({ counter: 0, bytes: START, records: 0 }).copy(header, IDENTITY)
      encodeSlot({ counter: 1, bytes: START, records: 0 }).copy(header, IDENTITY + SLOT)
      writeFully(fd, header, 0)
      fsyncSync(fd)
      fsyncDir(dirname(path))
      return new WriteAheadLog(path, fd, identity, { counter: 1, bytes: START, records: 0 })
    } catch (error) {
      closeSync(fd)
      throw error
    }
  }

  /** Continues the log `reading` found whole: a torn tail is cut off, appends go after the last whole record. */
  static resume(path: string, reading: LogReading & { readonly ok: true }): WriteAheadLog {
    let fd: number
    try {
      fd = openSync(path, 'r+')
    } catch (error) {
      throw openFailure(path, error)
    }
    try {
      if (reading.droppedBytes > 0) {
        ftruncateSync(fd, reading.end)
        fsyncSync(fd)
      }
      const log = new WriteAheadLog(path, fd, reading.identity, reading.seal)
      if (reading.end > reading.seal.bytes) {
        // Whole records past the seal (a crash between a sync and its seal) are about to be
        // replayed and served: seal them first, so losing them later is damage too.
        log.#appended = reading.end
        log.#records = reading.records.length
        fsyncSync(fd)
        const { slot, at } = log.#nextSeal(log.#appended, log.#records)
        writeFully(fd, slot, at)
        fsyncSync(fd)
        log.#synced = log.#appended
      }
      return log
    } catch (error) {
      closeSync(fd)
      throw error
    }
  }

  /** Bytes in the log (header included). */
  get bytes(): number {
    return this.#appended
  }

  /** Records in the log. */
  get records(): number {
    return this.#records
  }

  /** Writes one record (not yet durable: `sync()` makes it so). Throws if an earlier write or sync failed. */
  append(payload: Uint8Array): void {
    if (this.#failed) throw this.#failed
    if (this.#appending) throw new Error('an appendInSlices of this log is under way; await it before appending.')
    if (payload.byteLength === 0) throw new RangeError('a write-ahead log record cannot be empty')
    const frame = Buffer.allocUnsafe(HEADER + payload.byteLength)
    frameHeader(payload.byteLength, crc32(payload)).copy(frame)
    frame.set(payload, HEADER)
    try {
      writeFully(this.#fd, frame, this.#appended)
    } catch (error) {
      this.#cutBack(error)
    }
    this.#appended += frame.length
    this.#records++
  }

  /**
   * Cuts a partly written frame back off (the disk was full, say), so the log stays whole and later
   * appends can go on once there is room; if even that fails, the log is unusable. Throws `error`.
   */
  #cutBack(error: unknown): never {
    try {
      ftruncateSync(this.#fd, this.#appended)
    } catch {
      this.#failed = error as Error
    }
    throw error
  }

  /**
   * Writes one record whose payload is `parts` one after the other, as {@link append} does, but
   * without holding the event loop: the checksum is computed a slice at a time with turns between,
   * and the bytes are written by the thread pool. For records of megabytes (an upload's content),
   * which `append` would copy, checksum and write in one stretch. No other append may start until
   * it settles; a `sync()` meanwhile covers the records before it.
   */
  async appendInSlices(parts: readonly Uint8Array[]): Promise<void> {
    if (this.#failed) throw this.#failed
    if (this.#appending) throw new Error('an appendInSlices of this log is under way; await it before appending.')
    const length = parts.reduce((n, p) => n + p.byteLength, 0)
    if (length === 0) throw new RangeError('a write-ahead log record cannot be empty')
    if (length > 0xffffffff) throw new RangeError(`a write-ahead log record holds less than 4 GiB; this one is ${length} bytes.`)
    this.#appending = true
    try {
      let crc = 0
      for (const part of parts) {
        for (let at = 0; at < part.byteLength; at += CRC_SLICE) {
          crc = crc32(part.subarray(at, at + CRC_SLICE), crc)
          await turn()
        }
      }
      let at = this.#appended
      try {
        for (const bytes of [frameHeader(length, crc), ...parts]) {
          await writeFullyOffThread(this.#fd, bytes, at)
          at += bytes.byteLength
        }
      } catch (error) {
        this.#cutBack(error)
      }
      this.#appended = at
      this.#records++
    } finally {
      this.#appending = false
    }
  }

  /** Resolves once every record appended so far is on disk and sealed (one round of syncs shared by all waiting callers). */
  sync(): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed)
    if (this.#closed) return Promise.resolve()
    if (this.#synced >= this.#appended) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.#waiters.push({ upTo: this.#appended, resolve, reject })
      this.#flush()
    })
  }

  /** The next seal's slot bytes and position (slots are written in turn). */
  #nextSeal(bytes: number, records: number): { slot: Buffer; at: number } {
    this.#counter++
    return { slot: encodeSlot({ counter: this.#counter, bytes, records }), at: IDENTITY + (this.#counter % 2) * SLOT }
  }

  #flush(): void {
    if (this.#syncing || this.#waiters.length === 0) return
    this.#syncing = true
    const target = this.#appended
    const records = this.#records
    const fail = (error: Error): void => {
      this.#failed = error
      for (const w of this.#waiters.splice(0)) w.reject(error)
    }
    // The records first, then the seal that covers them: a seal never claims bytes not on disk.
    fsync(this.#fd, (error) => {
      if (this.#closed) return this.#afterClose()
      if (error) return fail(error)
      const { slot, at } = this.#nextSeal(target, records)
      try {
        writeFully(this.#fd, slot, at)
      } catch (e) {
        return fail(e as Error)
      }
      fdatasync(this.#fd, (sealError) => {
        if (this.#closed) return this.#afterClose()
        if (sealError) return fail(sealError)
        this.#synced = target
        const done = this.#waiters.filter((w) => w.upTo <= target)
        this.#waiters.splice(0, this.#waiters.length, ...this.#waiters.filter((w) => w.upTo > target))
        this.#syncing = false
        for (const w of done) w.resolve()
        this.#flush()
      })
    })
  }

  /** Closed while a sync ran: close() synced, sealed and answered every waiter. */
  #afterClose(): void {
    this.#syncing = false
  }

  /** The records on disk now (read again from the file: for undoing writes that could not be logged). */
  recordsOnDisk(): readonly Buffer[] {
    const reading = readLog(this.path, this.identity)
    return reading.records
  }

  /** Closes the file after a last sync and seal of what was appended; callers still waiting on `sync()` are answered. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    let error: Error | undefined = this.#failed
    if (!error && this.#synced < this.#appended) {
      try {
        fsyncSync(this.#fd)
        const { slot, at } = this.#nextSeal(this.#appended, this.#records)
        writeFully(this.#fd, slot, at)
        fsyncSync(this.#fd)
        this.#synced = this.#appended
      } catch (e) {
        error = e as Error
      }
    }
    for (const w of this.#waiters.splice(0)) {
      if (error) w.reject(error)
      else w.resolve()
    }
    closeSync(this.#fd)
  }
}
