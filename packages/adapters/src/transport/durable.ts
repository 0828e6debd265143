import { copyFileSync, existsSync, linkSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { QuarryError, WriteAheadLog, readLog, type LogReading } from '@quarry/core'
import type { DataDir } from './data-dir.js'
import { TRANSPORT_CALL, type UploadContent } from '../rpc/methods.js'
import { Mutex } from '../rpc/mutex.js'
import type { Outcome } from '../rpc/outcome.js'
import { ReplayDivergence, recording, replaying } from '../rpc/replay.js'
import { decodeLogRecord, encodeLogRecord, type LogRecord } from './log-record.js'
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
  /** Start even when the log its checkpoint names is missing or damaged, keeping the log aside (see {@link DurableWrites.recover}). */
  readonly acceptLogLoss?: boolean
}

/**
 * The manifest field `log` of a checkpoint taken with `log` durability: the log that follows it.
 * A checkpoint taken at a clean stop (or without `log`) names none: nothing follows it.
 */
interface LogRef {
  readonly name: string
  readonly id: string
  readonly follows: number
  /** When the checkpoint was taken (ISO 8601), for messages. */
  readonly since: string
}

const LOG_NAME = /^wal-\d+\.log$/

function logRefOf(manifest: Readonly<Record<string, unknown>>, root: string): LogRef | undefined {
  const log = manifest['log']
  if (log === undefined) return undefined
  const ref = log as Partial<Record<keyof LogRef, unknown>>
  if (typeof log !== 'object' || log === null || typeof ref.name !== 'string' || !LOG_NAME.test(ref.name) || typeof ref.id !== 'string' || typeof ref.follows !== 'number' || typeof ref.since !== 'string') {
    throw new QuarryError('INVALID_SNAPSHOT', `the checkpoint in ${root} names its write-ahead log in a form this Quarry does not read; start the version of Quarry that wrote it.`)
  }
  return { name: ref.name, id: ref.id, follows: ref.follows, since: ref.since }
}

/** What a start closed before its log was replayed leaves: the folder untouched, for the next start. */
const FOLDER_AS_IT_WAS = 'the data folder is as it was, and the next start replays the whole log'

const keyOf = (m: BoundMethod): string => `${m.service}.${m.rpc}@${m.version}`

/** A record this large goes to the log a slice at a time (WriteAheadLog.appendInSlices); a smaller one at once. */
const SLICED_RECORD_BYTES = 1 << 20

/** How soon a checkpoint whose switch could not be made durable is tried again (at most `checkpointMs`). */
const UNCONFIRMED_RETRY_MS = 1000

/**
 * After a checkpoint fails (a full disk, a folder made read-only), the next is tried after 1 s,
 * then doubling to at most a minute: retried at once, a log past `checkpointBytes` made hundreds
 * of tries a second, each writing part of a snapshot and logging its error.
 */
const FAILED_RETRY_MS = { first: 1000, most: 60_000 } as const

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
  /** Checkpoints failed in a row (0 after one that succeeds): how long the next try waits. */
  #failures = 0
  #dirty = false
  #closed = false
  /** The close under way (a second close waits for it). */
  #closing: Promise<void> | undefined
  /**
   * Why the last checkpoint's switch may not be durable (the folder's fsync after it failed), until
   * a checkpoint is: a power loss could bring the generation before back, so its log is kept
   * (`#kept`) and writes are refused (a write logged after the switch would be lost with it).
   */
  #unconfirmed: Error | undefined
  /** Logs kept for generations a power loss may bring back: removed once a checkpoint is confirmed. */
  readonly #kept: string[] = []
  /** Writes the last `recover` replayed from the log. */
  replayed = 0
  /** Set once `recover` has replayed the whole log: until then the engines may hold only part of the folder. */
  #recovered = false
  /** The start's `recover`, once begun: a close waits for it to settle. */
  #recovering: Promise<number> | undefined
  /** Where `recover` kept a damaged log aside (with `acceptLogLoss`). */
  keptAside: string | undefined
  /** Writes the engines ran outside the log (in-process callers'), counted as they end ({@link unlogged}). */
  #unlogged = 0
  /** How many of those the last confirmed checkpoint holds (with `log` they take its lock, so it ran after them; read with `log` only). */
  #unloggedSaved = 0

  constructor(methods: readonly BoundMethod[], data: DataDir, options: DurableOptions) {
    this.#data = data
    this.#options = options
    const bound = new Map<string, BoundMethod>()
    for (const m of methods) if (m.mutates && !bound.has(keyOf(m))) bound.set(keyOf(m), m)
    this.#bound = bound
    // Every write schedules the checkpoint its durability calls for; with `log` it is journaled first.
    this.methods = methods.map((m) => (!m.mutates ? m : options.durability === 'log' ? this.#journaled(m) : this.#noted(m)))
  }

  /**
   * Why journaled writes are refused now (the last checkpoint's switch is not confirmed on disk;
   * one is tried at least every second), or undefined while they are taken. Reads are served either way.
   */
  get writeRefusal(): RpcStatus | undefined {
    if (this.#unconfirmed && this.#options.durability === 'log') return unconfirmedRefusal(this.#unconfirmed)
    // The folder deleted under the server, or its LOCK removed (another server may start there):
    // a write answered now would be in no file a restart reads.
    if (this.#closed || this.#options.durability === 'none') return undefined
    if (this.#log?.unlinked === true || !this.#data.lockIntact) return FOLDER_GONE
    return undefined
  }

  /** Loads the last checkpoint (synchronously); returns whether there was one. */
  load(): boolean {
    return this.#data.load()
  }

  /**
   * Replays the write-ahead log the checkpoint names (before serving), a torn last record dropped;
   * returns how many writes it replayed. A log that is missing, cut short or damaged where it was
   * sealed is refused (INVALID_SNAPSHOT saying what would be lost), unless `acceptLogLoss`: then
   * the writes that can be read are replayed and the log is kept aside as `<name>.damaged-<time>`
   * (it keeps its own name too until a checkpoint holding them is confirmed).
   */
  recover(): Promise<number> {
    if (this.#log) return Promise.resolve(0)
    // Closed before its start got here (a close in the same turn as listen): nothing is touched.
    if (this.#closed) return Promise.reject(new Error(`closed before its write-ahead log was replayed: ${FOLDER_AS_IT_WAS}`))
    this.#recovering ??= this.#recoverOrLetGo()
    return this.#recovering
  }

  async #recoverOrLetGo(): Promise<number> {
    try {
      return await this.#recover()
    } catch (error) {
      // A server that fails to start leaves the folder free (as a checkpoint that cannot be read
      // does), its log closed if it had resumed it.
      this.#closed = true
      for (const release of [() => this.#log?.close(), () => this.#data.close()]) {
        try {
          release()
        } catch {
          // The start's own error says more (a folder that cannot be synced fails this too).
        }
      }
      this.#log = undefined
      throw error
    }
  }

  async #recover(): Promise<number> {
    const root = this.#data.root
    const ref = logRefOf(this.#data.manifest, root)
    let records: readonly Buffer[] = []
    let whole: (LogReading & { readonly ok: true }) | undefined
    let damaged: { readonly name: string; readonly message: string } | undefined
    if (ref) {
      const reading = readLog(join(root, ref.name), ref)
      records = reading.records
      if (reading.ok) whole = reading
      else damaged = { name: ref.name, message: this.#lossMessage(ref, reading) }
    } else {
      damaged = this.#unnamedLog()
    }
    if (damaged) {
      if (!this.#options.acceptLogLoss) throw new QuarryError('INVALID_SNAPSHOT', damaged.message)
      const path = join(root, damaged.name)
      if (existsSync(path)) {
        this.keptAside = `${path}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`
        linkOrCopy(path, this.keptAside)
        // The writes replayed from it are on disk only there until a checkpoint holding them is
        // confirmed: it keeps its name till then (#kept), so a start that fails or a power loss
        // before that finds it where the checkpoint names it, and replays them again.
        if (records.length > 0) this.#kept.push(path)
        else rmSync(path)
      }
    }
    // Every other log is debris: older ones are in the checkpoint, a newer one is what a failed checkpoint left (empty).
    for (const entry of readdirSync(root)) if (LOG_NAME.test(entry) && !(whole && entry === ref?.name) && !this.#kept.includes(join(root, entry))) rmSync(join(root, entry), { force: true })
    for (const [i, bytes] of records.entries()) {
      await this.#replay(bytes, i)
      // The port is bound during the replay (server/server.ts): a turn of the event loop after each
      // write lets it answer /readyz (503) and refuse requests instead of leaving them hanging.
      await new Promise((resolve) => setImmediate(resolve))
      if (this.#closed) throw new Error(`closed while replaying the write-ahead log (${i + 1} of ${records.length} writes): ${FOLDER_AS_IT_WAS}`)
    }
    this.#recovered = true
    if (whole && ref) this.#log = WriteAheadLog.resume(join(root, ref.name), whole)
    this.replayed = records.length
    // A checkpoint now when no sealed log follows the one loaded (a first start, a log lost, or
    // another durability): what the disk holds can always be loaded back (#undo).
    if (this.#options.durability === 'log' ? !this.#log : ref !== undefined) {
      this.#dirty = true
      try {
        await this.checkpoint()
      } catch (error) {
        // Written, but its switch may not be durable: serve reads meanwhile (writes wait for a
        // checkpoint that is confirmed, tried again soon); anything else refuses the start.
        if (!this.#unconfirmed) throw error
        this.#options.onInternalError(error)
      }
    } else if (this.replayed > 0 || this.#unlogged !== this.#unloggedSaved) {
      // The next checkpoint takes in what was replayed (so the log need not be replayed again), and
      // writes made in process before the start.
      this.#changed()
    }
    return this.replayed
  }

  /** What a damaged log named by the checkpoint would lose, and how to start anyway. */
  #lossMessage(ref: LogRef, reading: LogReading & { readonly ok: false }): string {
    const path = join(this.#data.root, ref.name)
    const readable = reading.records.length
    const lost =
      reading.sealed === undefined
        ? `every write acknowledged after that checkpoint would be lost${readable > 0 ? ` but the ${readable} that can be read` : ''}`
        : `it sealed ${reading.sealed} acknowledged writes after that checkpoint, ${reading.sealed - Math.min(readable, reading.sealed)} of which would be lost`
    return `the write-ahead log ${path}, which follows checkpoint ${ref.follows} (taken ${ref.since}), ${reading.problem}: ${lost}. Restore the folder from a backup, or start with --accept-log-loss (createServer option acceptLogLoss) to start from the checkpoint and the ${readable} writes that can be read; the log is then kept aside as ${ref.name}.damaged-<time>.`
  }

  /**
   * A log no checkpoint names. At a clean stop none is named (nothing follows the checkpoint), and
   * logs left by a crash during a checkpoint are debris; but a log of the unsealed format (written
   * before logs were sealed) holding records, or one holding records with no checkpoint at all,
   * may hold acknowledged writes.
   */
  #unnamedLog(): { readonly name: string; readonly message: string } | undefined {
    const root = this.#data.root
    for (const name of readdirSync(root).filter((e) => LOG_NAME.test(e))) {
      const reading = readLog(join(root, name), undefined)
      // The unsealed format's header is its 8-byte magic: a longer file holds records.
      const unreleased = !reading.ok && reading.problem.includes('QRYWAL01') && statSync(join(root, name)).size > 8
      const holds = reading.ok ? reading.records.length > 0 && this.#data.generation === 0 : unreleased
      if (!holds) continue
      const what = unreleased ? reading.problem : `holds ${reading.records.length} writes but no checkpoint names it (was CURRENT removed?)`
      return {
        name,
        message: `the write-ahead log ${join(root, name)} ${what}: its writes cannot be replayed. Start the Quarry that wrote it once and stop it cleanly (its last checkpoint takes the writes in), or start with --accept-log-loss (createServer option acceptLogLoss) to start from the checkpoint without them; the log is then kept aside as ${name}.damaged-<time>.`,
      }
    }
    return undefined
  }

  /**
   * Runs a write an engine got outside the log: an in-process caller's (`server.engines`), or with
   * durability `checkpoint` or `none` any write. With `log` it takes its turn with the logged
   * writes and the checkpoints (one lock: none runs beside it, and a close's checkpoint waits for
   * it); without, the state is dirty from its start, so a checkpoint waits for it. Memory
   * then holds it and the disk does not, so it is saved by the next checkpoint: the one its
   * durability schedules (with `log`, checkpointMs after), the one taken before the next write is
   * logged (a log must follow a state that holds it, to replay exactly), or the last at close.
   */
  unlogged<T>(write: () => Promise<T>): Promise<T> {
    const noted = (): void => {
      this.#unlogged++
      this.#dirty = true
      if (this.#recovered) this.#changed()
    }
    if (this.#options.durability !== 'log') {
      // No log to keep in order: it runs beside the other writes, the state dirty from its start,
      // so that a checkpoint begun meanwhile (a close's last) is written and waits for the engine's lock.
      this.#dirty = true
      return write().finally(noted)
    }
    return this.#lock.run(async () => {
      try {
        return await write()
      } finally {
        noted()
      }
    })
  }

  /** After a successful write: schedules the checkpoint the durability calls for. */
  #changed(): void {
    if (this.#closed || this.#options.durability === 'none') return
    this.#dirty = true
    // After failures the next try is already set, backed off: a write does not bring it forward.
    if (this.#failures > 0 && this.#timer !== undefined) return
    const log = this.#log
    if (log && log.bytes >= (this.#options.checkpointBytes ?? 64 * 1024 * 1024)) {
      clearTimeout(this.#timer)
      this.#timer = setTimeout(() => void this.#checkpointSafely(), 0)
      return
    }
    this.#timer ??= setTimeout(() => void this.#checkpointSafely(), this.#options.checkpointMs)
  }

  /** While a checkpoint is unconfirmed: the next try soon (writes wait for it). */
  #retry(): void {
    if (this.#closed) return
    this.#dirty = true
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => void this.#checkpointSafely(), Math.min(this.#options.checkpointMs, UNCONFIRMED_RETRY_MS))
  }

  /**
   * Takes a checkpoint now (when anything changed since the last one), in slices of about
   * `sliceMs` (8 by default), the event loop answering requests between them (writes wait for the
   * checkpoint's end). Throws when it was not written, or was but its switch could not be made
   * durable (then it is tried again soon, and writes are refused until one is confirmed).
   */
  async checkpoint(options: { readonly sliceMs?: number } = {}): Promise<void> {
    clearTimeout(this.#timer)
    this.#timer = undefined
    try {
      await this.#lock.run(() => this.#checkpoint(options))
    } catch (error) {
      // Writes wait for a confirmed checkpoint: the next try is scheduled whoever called this one.
      if (this.#unconfirmed) this.#retry()
      throw error
    }
  }

  /**
   * A checkpoint, under the lock. Whether there is anything to write is asked in its turn: one
   * asked for while another runs (a flush, the last one at close) waits for it, then writes what
   * came after it, or tries again what it could not confirm.
   */
  async #checkpoint(options: { readonly sliceMs?: number }): Promise<void> {
    if (!this.#dirty) return
    this.#dirty = false
    // Writes outside the log wait for this lock: every one counted so far is in this checkpoint.
    const unlogged = this.#unlogged
    // The next log exists (its header on disk) before the checkpoint that names it is sealed; a
    // clean stop's checkpoint names none.
    const follows = this.#data.generation + 1
    const name = `wal-${String(follows).padStart(6, '0')}.log`
    let next: WriteAheadLog | undefined
    let unconfirmed: Error | undefined
    try {
      next = this.#options.durability === 'log' && !this.#closed ? WriteAheadLog.create(join(this.#data.root, name), follows) : undefined
      const log: LogRef | undefined = next && { name, id: next.identity.id, follows, since: new Date().toISOString() }
      unconfirmed = await this.#data.save({ sliceMs: options.sliceMs ?? 8, ...(log ? { fields: { log } } : {}) })
    } catch (error) {
      this.#dirty = true
      this.#failures++
      next?.close()
      if (next) rmSync(next.path, { force: true })
      throw error
    }
    this.#failures = 0
    // The new generation holds every logged write: its log takes over, the old one goes (with
    // those kept for earlier unconfirmed switches) once the switch is durable.
    const old = this.#log
    this.#log = next
    old?.close()
    if (old) this.#kept.push(old.path)
    this.#unconfirmed = unconfirmed
    if (unconfirmed) {
      this.#dirty = true
      const refused = this.#options.durability === 'log' && !this.#closed ? ' Writes are refused until a checkpoint is confirmed.' : ''
      throw new Error(`${this.#unconfirmedSwitch(unconfirmed)}${refused}`, { cause: unconfirmed })
    }
    for (const path of this.#kept.splice(0)) rmSync(path, { force: true })
    this.#unloggedSaved = unlogged
  }

  /** A last checkpoint, then the log closed; a second call waits for the first one's end. */
  close(): Promise<void> {
    if (this.#closing) return this.#closing
    // Closed already by a start that failed (recover): the folder was let go then.
    if (this.#closed) return Promise.resolve()
    this.#closing = this.#close()
    return this.#closing
  }

  async #close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    // A start under way stops at its next record (or ends its own checkpoint); one that failed has
    // let the folder go already, and nothing is written after it.
    const started = await this.#recovering?.then(
      () => true,
      () => false,
    )
    if (started === false) return
    // Before `recover` has replayed the log the checkpoint names (closed before `listen`, or during
    // its replay), the engines hold only part of the folder: no checkpoint, the folder (checkpoint
    // and log) is left as it was, and a replay under way stops at its next record.
    let failure: Error | undefined
    try {
      if (!this.#partial()) {
        if (this.#options.durability === 'none') this.#dirty = true
        await this.checkpoint()
      }
    } catch (error) {
      // The unconfirmed account only when this close's own checkpoint is the one written (one
      // left unconfirmed earlier does not hold the writes taken since, without a log).
      const unconfirmed = this.#unconfirmed
      const own = unconfirmed !== undefined && (error as Error | undefined)?.cause === unconfirmed
      failure = new Error(own ? `${this.#unconfirmedSwitch(unconfirmed)} ${this.#unconfirmedLoss()}` : this.#onDisk(error), { cause: error })
    }
    // Then the log, then the folder's lock (another server may open the folder now): each let go
    // even if the other cannot be; the checkpoint's failure, which says what the folder holds,
    // is the one reported.
    const log = this.#log
    this.#log = undefined
    for (const release of [() => log?.close(), () => this.#data.close()]) {
      try {
        release()
      } catch (error) {
        failure ??= error as Error
      }
    }
    if (failure) throw failure
  }

  /**
   * Whether the folder may hold writes the engines do not: a log its checkpoint names that
   * `recover` has not replayed whole, or one holding writes that no checkpoint names (which a
   * start refuses: a checkpoint written now would make it debris).
   */
  #partial(): boolean {
    if (this.#recovered) return false
    try {
      return logRefOf(this.#data.manifest, this.#data.root) !== undefined || this.#unnamedLog() !== undefined
    } catch {
      // A log named in a form this Quarry does not read (or a folder that cannot be read): not replayed here either.
      return true
    }
  }

  /** What a power loss would cost while the last switch is unconfirmed, by durability. */
  #unconfirmedLoss(): string {
    if (this.#options.durability === 'log') return 'Nothing acknowledged is lost either way.'
    return `Without a power loss before the disk writes it, it holds every write; after one, the writes since the checkpoint before are lost (durability ${this.#options.durability} keeps no log).`
  }

  /** A checkpoint committed whose switch may not be durable: what the folder holds. */
  #unconfirmedSwitch(error: Error): string {
    const before = this.#kept.length > 0 ? ', kept with the write-ahead log that follows it' : ', kept'
    return `checkpoint ${this.#data.generation} of ${this.#data.root} was written, but the folder could not be synced after the switch to it (${errorCode(error)}): after a power loss the folder may hold the checkpoint before instead${before}.`
  }

  /** A last checkpoint that failed: why, and what the folder holds instead (read before the log is closed). */
  #onDisk(error: unknown): string {
    const why = `the last checkpoint could not be written (${(error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : 'error')})`
    const checkpoint = this.#data.generation === 0 ? 'no checkpoint' : `checkpoint ${this.#data.generation}`
    const log = this.#log
    if (log) return `${why}. ${this.#data.root} holds ${checkpoint} and the write-ahead log ${log.path} with the ${log.records} writes acknowledged after it: nothing acknowledged is lost, the next start replays them.`
    return `${why}. ${this.#data.root} holds ${checkpoint}; the writes since it, kept in memory only (durability ${this.#options.durability}), are lost.`
  }

  async #checkpointSafely(): Promise<void> {
    this.#timer = undefined
    try {
      await this.checkpoint()
    } catch (error) {
      this.#options.onInternalError(error)
      // While unconfirmed, checkpoint() has scheduled its next try; else it comes backed off.
      if (!this.#unconfirmed && !this.#closed) {
        this.#dirty = true
        clearTimeout(this.#timer)
        const wait = Math.min(FAILED_RETRY_MS.most, FAILED_RETRY_MS.first * 2 ** Math.min(this.#failures - 1, 16))
        this.#timer = setTimeout(() => void this.#checkpointSafely(), wait)
      }
    }
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
        // Refused before waiting its turn (and checked again in it: a checkpoint before it may end unconfirmed).
        const refused = this.writeRefusal
        if (refused) return { ok: false, status: refused }
        if (this.#lock.busy) bound.ahead?.(request, content)
        const outcome = await this.#lock.run(async (): Promise<Outcome<unknown>> => {
          const refusedInTurn = this.writeRefusal
          if (refusedInTurn) return { ok: false, status: refusedInTurn }
          // Writes in process since the last checkpoint are in memory only: the log must follow a
          // state that holds them, or this write would replay over one without them.
          // (They take this lock too: none runs while this write does, nor while #undo reloads the disk's state.)
          if (this.#unlogged !== this.#unloggedSaved) {
            try {
              this.#dirty = true
              await this.#checkpoint({})
            } catch (error) {
              this.#options.onInternalError(error)
              // Written but unconfirmed: tried again soon, as checkpoint() does; writes wait for it.
              if (this.#unconfirmed) this.#retry()
              return { ok: false, status: this.writeRefusal ?? diskFailure(error) }
            }
          }
          const { result, trace } = await recording(() => bound.call(request, content, options))
          if (!result.ok) return result
          const parts = await encodeLogRecord({ k: key, r: request, t: trace }, content)
          try {
            log = this.#log
            if (parts.reduce((n, p) => n + p.byteLength, 0) > SLICED_RECORD_BYTES) await log?.appendInSlices(parts)
            else log?.append(parts.length === 1 ? (parts[0] as Uint8Array) : Buffer.concat(parts))
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
      for (const [i, bytes] of (this.#log?.recordsOnDisk() ?? []).entries()) await this.#replay(bytes, i)
    } catch (error) {
      this.#options.onInternalError(error)
    }
  }

  async #replay(bytes: Buffer, index: number): Promise<void> {
    let record: LogRecord
    let content: UploadContent | undefined
    try {
      ;({ record, content } = decodeLogRecord(bytes))
    } catch {
      throw new QuarryError('INVALID_SNAPSHOT', `record ${index} of the write-ahead log in ${this.#data.root} is not a write this Quarry reads (its JSON or its upload is cut) although its checksum holds; restore the folder from a backup.`)
    }
    const bound = this.#bound.get(record.k)
    if (!bound) throw new QuarryError('INVALID_SNAPSHOT', `record ${index} of the write-ahead log in ${this.#data.root} names ${record.k}, which this Quarry does not serve; start the version of Quarry that wrote it.`)
    let outcome: Outcome<unknown>
    try {
      outcome = await replaying(record.t, () => bound.call(record.r, content, TRANSPORT_CALL))
    } catch (error) {
      if (!(error instanceof ReplayDivergence)) throw error
      throw new QuarryError('INVALID_SNAPSHOT', `record ${index} of the write-ahead log in ${this.#data.root} (${record.k}) does not replay here: ${error.detail}. A log replays on the Quarry version and options (embedder, extractor) that wrote it: start that one (its last checkpoint takes the writes in), or restore the folder from a backup.`)
    }
    if (!outcome.ok) throw new QuarryError('INVALID_SNAPSHOT', `record ${index} of the write-ahead log in ${this.#data.root} (${record.k}) failed on replay: ${outcome.status.message}`)
  }
}

/** The Status of a write refused while the last checkpoint is unconfirmed; never a local path. */
/** Writes refused once the data folder's log or LOCK is gone (never the path: responses name no local file). */
const FOLDER_GONE: RpcStatus = rpcStatus('UNAVAILABLE', "The server's data folder, its write-ahead log or its LOCK was removed while the server ran: writes are refused, since a restart would not find them. Restart the server; reads keep working until then.")

function unconfirmedRefusal(error: Error): RpcStatus {
  return rpcStatus('UNAVAILABLE', `The data folder could not be synced after the last checkpoint (${errorCode(error)}): the write was not applied. Writes resume once a checkpoint is confirmed on disk (one is tried at least every second); check the disk, then retry. Reads keep working.`)
}

/** The code of a failed system call (never its message, which may hold a local path). */
function errorCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  return typeof code === 'string' ? code : 'I/O error'
}

/** The Status of a write the disk refused: RESOURCE_EXHAUSTED when it is full, else UNAVAILABLE; never a local path. */
function diskFailure(error: unknown): RpcStatus {
  const code = errorCode(error)
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return rpcStatus('RESOURCE_EXHAUSTED', 'The data folder\'s disk is full: the write was not applied. Free space and retry; reads keep working.')
  }
  return rpcStatus('UNAVAILABLE', `The data folder cannot be written (${code}): the write was not applied. Check its permissions and the disk, then retry; reads keep working.`)
}

/** Errors of a file system that has no hard links (or none across these names). */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'EMLINK'])

/**
 * A second name for a file: a hard link (no bytes written, so it works on a full disk), else a
 * copy where the file system has no links. A copy that fails is removed, not left half written.
 */
function linkOrCopy(path: string, to: string): void {
  try {
    linkSync(path, to)
    return
  } catch (error) {
    if (!NO_LINKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error
  }
  try {
    copyFileSync(path, to)
  } catch (error) {
    rmSync(to, { force: true })
    throw error
  }
}
