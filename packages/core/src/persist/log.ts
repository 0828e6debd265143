import { closeSync, fsync, fstatSync, ftruncateSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs'
import { QuarryError } from '../errors.js'

/**
 * A write-ahead log: an append-only file of records, each framed by its length, a CRC-32 of the
 * length and a CRC-32 of its bytes, made durable by fsync. Appends are written at once (in order) and `sync()` resolves when
 * everything appended before it is on disk; concurrent callers share one fsync (group commit), so
 * many small writes cost one disk flush between them, not one each.
 *
 * On open, a record cut short or failing its checksum at the end of the file — a write the
 * process was killed in the middle of, never acknowledged — is dropped and the file truncated to
 * the last whole record; a bad record followed by good ones is corruption and is refused
 * (INVALID_SNAPSHOT).
 */

/** The file starts with this: format and version. */
const MAGIC = Buffer.from('QRYWAL01', 'latin1')
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

/** CRC-32 (IEEE), as zip and PNG compute it. */
export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (let i = 0; i < bytes.length; i++) c = (CRC_TABLE[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/** What `WriteAheadLog.open` found in an existing log. */
export interface LogRecovery {
  /** The whole records, in the order they were appended. */
  readonly records: readonly Buffer[]
  /** Bytes of a torn last record dropped (0 when the log ended cleanly). */
  readonly droppedBytes: number
}

function corrupt(path: string, what: string): QuarryError {
  return new QuarryError('INVALID_SNAPSHOT', `${path} is not a readable write-ahead log: ${what}. Restore the folder from a backup, or move the log away to start from the last checkpoint (losing the writes it holds).`)
}

/** Reads a log's records; a torn tail is reported in `droppedBytes` (and `goodBytes` is where it starts). */
function readRecords(path: string, fd: number): LogRecovery & { goodBytes: number } {
  const size = fstatSync(fd).size
  if (size === 0) return { records: [], droppedBytes: 0, goodBytes: 0 }
  const data = Buffer.allocUnsafe(size)
  let read = 0
  while (read < size) {
    const n = readSync(fd, data, read, size - read, read)
    if (n === 0) break
    read += n
  }
  if (read < MAGIC.length) return { records: [], droppedBytes: read, goodBytes: 0 }
  if (!data.subarray(0, MAGIC.length).equals(MAGIC)) throw corrupt(path, 'it does not start with the log header (another file, or another version)')
  const records: Buffer[] = []
  let offset = MAGIC.length
  while (offset < read) {
    const rest = read - offset
    const torn = (): LogRecovery & { goodBytes: number } => ({ records, droppedBytes: rest, goodBytes: offset })
    if (rest < HEADER) return torn()
    // Space the file system allotted but the write never filled: zeros to the end.
    if (data.subarray(offset).every((b) => b === 0)) return torn()
    const length = data.readUInt32LE(offset)
    // A whole header that fails its own checksum was not torn (a torn write is a prefix of a good
    // frame): a damaged length would otherwise make good records look like a torn tail.
    if (crc32(data.subarray(offset, offset + 4)) !== data.readUInt32LE(offset + 4) || length === 0) throw corrupt(path, `the record header at byte ${offset} is damaged`)
    const end = offset + HEADER + length
    if (end > read) return torn()
    const payload = data.subarray(offset + HEADER, end)
    if (crc32(payload) !== data.readUInt32LE(offset + 8)) {
      if (data.subarray(end).every((b) => b === 0)) return torn()
      throw corrupt(path, `the record at byte ${offset} fails its checksum and is followed by others`)
    }
    records.push(Buffer.from(payload))
    offset = end
  }
  return { records, droppedBytes: 0, goodBytes: offset }
}

interface Waiter {
  readonly upTo: number
  readonly resolve: () => void
  readonly reject: (error: Error) => void
}

/**
 * An append-only log of records on disk (see the top of this file): `open` recovers what a
 * previous process wrote, `append` writes a record, `sync` resolves once it is durable (one fsync
 * shared by every caller waiting), `close` syncs and closes. One writer per file: the caller
 * (the server's data folder) holds the folder's lock.
 */
export class WriteAheadLog {
  readonly path: string
  readonly #fd: number
  #appended: number
  #synced: number
  #syncing = false
  #closed = false
  #failed: Error | undefined
  readonly #waiters: Waiter[] = []

  private constructor(path: string, fd: number, bytes: number) {
    this.path = path
    this.#fd = fd
    this.#appended = bytes
    this.#synced = bytes
  }

  /**
   * Opens (or creates) the log at `path`: reads its records, drops a torn tail (truncating the
   * file to the last whole record) and positions for appends.
   */
  static open(path: string): { log: WriteAheadLog; recovered: LogRecovery } {
    let fd: number
    try {
      fd = openSync(path, 'a+')
    } catch (error) {
      throw new QuarryError('INVALID_SNAPSHOT', `cannot open the write-ahead log ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the folder's permissions and free space.`)
    }
    try {
      const { records, droppedBytes, goodBytes } = readRecords(path, fd)
      let bytes = goodBytes
      if (goodBytes === 0) {
        ftruncateSync(fd, 0)
        writeSync(fd, MAGIC, 0, MAGIC.length, 0)
        bytes = MAGIC.length
        fsyncSync(fd)
      } else if (droppedBytes > 0) {
        ftruncateSync(fd, goodBytes)
        fsyncSync(fd)
      }
      return { log: new WriteAheadLog(path, fd, bytes), recovered: { records, droppedBytes } }
    } catch (error) {
      closeSync(fd)
      throw error
    }
  }

  /** Bytes in the log (header included). */
  get bytes(): number {
    return this.#appended
  }

  /** Writes one record (not yet durable: `sync()` makes it so). Throws if an earlier write or sync failed. */
  append(payload: Uint8Array): void {
    if (this.#failed) throw this.#failed
    if (payload.byteLength === 0) throw new RangeError('a write-ahead log record cannot be empty')
    const frame = Buffer.allocUnsafe(HEADER + payload.byteLength)
    frame.writeUInt32LE(payload.byteLength, 0)
    frame.writeUInt32LE(crc32(frame.subarray(0, 4)), 4)
    frame.writeUInt32LE(crc32(payload), 8)
    frame.set(payload, HEADER)
    try {
      let written = 0
      while (written < frame.length) written += writeSync(this.#fd, frame, written, frame.length - written)
    } catch (error) {
      // Cut a partly written frame back off (the disk was full, say), so the log stays whole and
      // later appends can go on once there is room; if even that fails, the log is unusable.
      try {
        ftruncateSync(this.#fd, this.#appended)
      } catch {
        this.#failed = error as Error
      }
      throw error
    }
    this.#appended += frame.length
  }

  /** Resolves once every record appended so far is on disk (one fsync shared by all waiting callers). */
  sync(): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed)
    if (this.#closed) return Promise.resolve()
    if (this.#synced >= this.#appended) return Promise.resolve()
    return new Promise((resolve, reject) => {
      this.#waiters.push({ upTo: this.#appended, resolve, reject })
      this.#flush()
    })
  }

  #flush(): void {
    if (this.#syncing || this.#waiters.length === 0) return
    this.#syncing = true
    const target = this.#appended
    fsync(this.#fd, (error) => {
      this.#syncing = false
      // Closed meanwhile: close() synced everything and answered every waiter.
      if (this.#closed) return
      if (error) {
        this.#failed = error
        for (const w of this.#waiters.splice(0)) w.reject(error)
        return
      }
      this.#synced = target
      const done = this.#waiters.filter((w) => w.upTo <= target)
      this.#waiters.splice(0, this.#waiters.length, ...this.#waiters.filter((w) => w.upTo > target))
      for (const w of done) w.resolve()
      this.#flush()
    })
  }

  /** The records on disk now (read again from the file: for undoing writes that could not be logged). */
  records(): readonly Buffer[] {
    return readRecords(this.path, this.#fd).records
  }

  /** Closes the file after a last sync of what was appended; callers still waiting on `sync()` are answered. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    let error: Error | undefined = this.#failed
    if (!error && this.#synced < this.#appended) {
      try {
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
