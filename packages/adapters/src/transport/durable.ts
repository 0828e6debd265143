import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { QuarryError, WriteAheadLog } from '@quarry/core'
import type { DataDir } from './data-dir.js'
import type { UploadContent } from '../rpc/methods.js'
import { Mutex } from '../rpc/mutex.js'
import type { Outcome } from '../rpc/outcome.js'
import { recording, replaying, type Trace } from '../rpc/replay.js'
import { rpcStatus, type RpcStatus } from '../rpc/status.js'
import type { BoundMethod } from './bound-methods.js'

/**
 * What `--data` promises (README "Durability"):
 * - `log` (the default): a write is acknowledged only once it is in the write-ahead log on disk
 *   (appended and fsynced; concurrent writes share an fsync). A start loads the last checkpoint and
 *   replays the log over it. Checkpoints (whole snapshots, rpc `DataDir`) are taken when the log
 *   passes `checkpointBytes` or `checkpointMs` after the first write since the last one, and at close.
 * - `checkpoint`: snapshots only, `checkpointMs` after a change (acknowledged writes since the last
 *   snapshot are lost in a crash).
 * - `none`: the folder is read at start and written at a clean close only.
 */
export type Durability = 'log' | 'checkpoint' | 'none'

interface DurableOptions {
  readonly durability: Durability
  /** Checkpoint once the log is this large. @defaultValue 64 MiB */
  readonly checkpointBytes?: number
  /** Checkpoint this long after the first write since the last checkpoint (with `log`), or after a change (with `checkpoint`). */
  readonly checkpointMs: number
  readonly onInternalError: (error: unknown) => void
}

/** One acknowledged write as logged: the method, its request, its upload and what it read from outside. */
interface LogRecord {
  /** `<service>.<rpc>@<version>`: the bound method. */
  readonly k: string
  readonly r: Record<string, unknown>
  /** Upload content: base64 bytes (`b`) or text (`s`). */
  readonly c?: { readonly b: string } | { readonly s: string }
  readonly t: Trace
}

const keyOf = (m: BoundMethod): string => `${m.service}.${m.rpc}@${m.version}`

function encodeContent(content: UploadContent | undefined): LogRecord['c'] {
  if (content === undefined) return undefined
  return typeof content === 'string' ? { s: content } : { b: Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('base64') }
}

function decodeContent(c: LogRecord['c']): UploadContent | undefined {
  if (c === undefined) return undefined
  return 's' in c ? c.s : new Uint8Array(Buffer.from(c.b, 'base64'))
}

/**
 * The durable write path of a server with a data folder: the bound methods' writes go through one
 * lock (so the log's order is the order writes were applied), are recorded with what they read
 * from outside (rpc/replay.ts) and appended to the log before the lock is released, and are
 * answered once the log is synced. Reads pass through untouched.
 */
export class DurableWrites {
  readonly methods: readonly BoundMethod[]
  readonly #bound: ReadonlyMap<string, BoundMethod>
  readonly #data: DataDir
  readonly #options: DurableOptions
  readonly #lock = new Mutex()
  #log: WriteAheadLog | undefined
  #timer: NodeJS.Timeout | undefined
  #dirty = false
  #closed = false
  /** Writes the last `recover` replayed from the log. */
  replayed = 0

  constructor(methods: readonly BoundMethod[], data: DataDir, options: DurableOptions) {
    this.#data = data
    this.#options = options
    const bound = new Map<string, BoundMethod>()
    for (const m of methods) if (m.mutates && !bound.has(keyOf(m))) bound.set(keyOf(m), m)
    this.#bound = bound
    // Every write schedules the checkpoint its durability calls for; with `log` it is journaled first.
    this.methods = methods.map((m) => (!m.mutates ? m : options.durability === 'log' ? this.#journaled(m) : this.#noted(m)))
  }

  /** Loads the last checkpoint (synchronously); returns whether there was one. */
  load(): boolean {
    return this.#data.load()
  }

  /**
   * Replays the write-ahead log written after the checkpoint (with `log`; before serving), a torn
   * last record dropped; returns how many writes it replayed.
   */
  async recover(): Promise<number> {
    if (this.#options.durability !== 'log' || this.#log) return 0
    const name = this.#logName()
    // Logs of older generations are in the checkpoint already (a crash after a checkpoint, before the switch of logs).
    for (const entry of readdirSync(this.#data.root)) if (/^wal-\d+\.log$/.test(entry) && entry !== name) rmSync(join(this.#data.root, entry), { force: true })
    const { log, recovered } = WriteAheadLog.open(join(this.#data.root, name))
    for (const [i, bytes] of recovered.records.entries()) {
      await this.#replay(bytes, i)
      // The port is bound during the replay (http/server.ts): a turn of the event loop after each
      // write lets it answer /readyz (503) and refuse requests instead of leaving them hanging.
      await new Promise((resolve) => setImmediate(resolve))
    }
    this.#log = log
    // A first checkpoint, even of nothing: what the disk holds can always be loaded back (#undo).
    if (this.#data.generation === 0) {
      this.#dirty = true
      await this.checkpoint()
    }
    this.replayed = recovered.records.length
    // The next checkpoint takes in what was replayed, so the log need not be replayed again.
    if (this.replayed > 0) this.#changed()
    return this.replayed
  }

  /** After a successful write: schedules the checkpoint the durability calls for. */
  #changed(): void {
    if (this.#closed || this.#options.durability === 'none') return
    this.#dirty = true
    const log = this.#log
    if (log && log.bytes >= (this.#options.checkpointBytes ?? 64 * 1024 * 1024)) {
      clearTimeout(this.#timer)
      this.#timer = setTimeout(() => void this.#checkpointSafely(), 0)
      return
    }
    this.#timer ??= setTimeout(() => void this.#checkpointSafely(), this.#options.checkpointMs)
  }

  /**
   * Takes a checkpoint now (when anything changed since the last one), in slices of about
   * `sliceMs` (8 by default), the event loop answering requests between them (writes wait for the
   * checkpoint's end).
   */
  async checkpoint(options: { readonly sliceMs?: number } = {}): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (!this.#dirty) return
    await this.#lock.run(async () => {
      this.#dirty = false
      try {
        await this.#data.save({ sliceMs: options.sliceMs ?? 8 })
      } catch (error) {
        this.#dirty = true
        throw error
      }
      if (this.#log) {
        // The new generation holds every logged write: start its log, drop the old one.
        const old = this.#log
        this.#log = this.#closed ? undefined : WriteAheadLog.open(join(this.#data.root, this.#logName())).log
        old.close()
        rmSync(old.path, { force: true })
      }
    })
  }

  /** A last checkpoint, then the log closed. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    clearTimeout(this.#timer)
    if (this.#options.durability === 'none') this.#dirty = true
    try {
      await this.checkpoint()
    } finally {
      this.#log?.close()
      this.#log = undefined
      // The folder's lock goes with the last checkpoint: another server may open it now.
      this.#data.close()
    }
  }

  async #checkpointSafely(): Promise<void> {
    this.#timer = undefined
    try {
      await this.checkpoint()
    } catch (error) {
      this.#options.onInternalError(error)
      this.#changed()
    }
  }

  #logName(): string {
    return `wal-${String(this.#data.generation).padStart(6, '0')}.log`
  }

  /** A write that is not journaled (durability checkpoint / none): answered, then noted for the next checkpoint. */
  #noted(bound: BoundMethod): BoundMethod {
    return {
      ...bound,
      call: async (request, content, options) => {
        const outcome = await bound.call(request, content, options)
        if (outcome.ok) this.#changed()
        return outcome
      },
    }
  }

  #journaled(bound: BoundMethod): BoundMethod {
    const key = keyOf(bound)
    return {
      ...bound,
      call: async (request, content, options) => {
        // The log the write went into: a checkpoint may start a new one before it is synced.
        let log: WriteAheadLog | undefined
        const outcome = await this.#lock.run(async (): Promise<Outcome<unknown>> => {
          const { result, trace } = await recording(() => bound.call(request, content, options))
          if (!result.ok) return result
          const c = encodeContent(content)
          const record: LogRecord = { k: key, r: request, t: trace, ...(c === undefined ? {} : { c }) }
          try {
            log = this.#log
            log?.append(Buffer.from(JSON.stringify(record)))
          } catch (error) {
            // Memory has a write the disk does not: go back to what the disk holds, and say why.
            await this.#undo()
            return { ok: false, status: diskFailure(error) }
          }
          return result
        })
        if (!outcome.ok) return outcome
        this.#changed()
        try {
          await log?.sync()
        } catch (error) {
          this.#options.onInternalError(error)
          return { ok: false, status: rpcStatus('UNAVAILABLE', 'The write was applied in memory but the write-ahead log could not be flushed to disk (is the disk full?); it may not survive a restart. Free space and retry.') }
        }
        return outcome
      },
    }
  }

  /** Reloads the state the disk holds (the checkpoint, then the log): undoes a write that could not be logged. */
  async #undo(): Promise<void> {
    try {
      this.#data.load()
      for (const [i, bytes] of (this.#log?.records() ?? []).entries()) await this.#replay(bytes, i)
    } catch (error) {
      this.#options.onInternalError(error)
    }
  }

  async #replay(bytes: Buffer, index: number): Promise<void> {
    let record: LogRecord
    try {
      record = JSON.parse(bytes.toString('utf8')) as LogRecord
    } catch {
      throw new QuarryError('INVALID_SNAPSHOT', `record ${index} of the write-ahead log in ${this.#data.root} is not JSON although its checksum holds; restore the folder from a backup.`)
    }
    const bound = this.#bound.get(record.k)
    if (!bound) throw new QuarryError('INVALID_SNAPSHOT', `record ${index} of the write-ahead log in ${this.#data.root} names ${record.k}, which this Quarry does not serve; start the version of Quarry that wrote it.`)
    const outcome = await replaying(record.t, () => bound.call(record.r, decodeContent(record.c)))
    if (!outcome.ok) throw new QuarryError('INVALID_SNAPSHOT', `record ${index} of the write-ahead log in ${this.#data.root} (${record.k}) failed on replay: ${outcome.status.message}`)
  }
}

/** The Status of a write the disk refused: RESOURCE_EXHAUSTED when it is full, else UNAVAILABLE; never a local path. */
function diskFailure(error: unknown): RpcStatus {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return rpcStatus('RESOURCE_EXHAUSTED', 'The data folder\'s disk is full: the write was not applied. Free space and retry; reads keep working.')
  }
  return rpcStatus('UNAVAILABLE', `The data folder cannot be written (${code ?? 'I/O error'}): the write was not applied. Check its permissions and the disk, then retry; reads keep working.`)
}
