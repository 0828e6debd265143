import { closeSync, existsSync, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync, type Stats } from 'node:fs'
import { rm } from 'node:fs/promises'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { QuarryError, describe } from '../errors.js'
import { fsyncDir, fsyncDirAsync } from './debris.js'
import { BackgroundSums } from './background-sums.js'
import { ChunkReader, ChunkWriter, fsyncCall, readFully } from './files.js'
import { DirectoryLock } from './lock.js'
import { decodeManifest, manifestProblem, sealManifest, type FileSum, type Manifest } from './manifest.js'
import { runSteps, runStepsInSlices, type BlockingCall, type SliceOptions, type Steps } from './steps.js'

/**
 * The one generation protocol of every folder Quarry writes (an index's `save`, the server's
 * `--data`). A folder holds generations `snapshot-N/` and a pointer `CURRENT` naming one:
 *
 * 1. the writer takes the folder's LOCK (lock.ts), which also removes debris of interrupted saves;
 * 2. writes the generation into `.snapshot-N.tmp-PID/`, every file fsynced and listed with its
 *    size and sha256 in `manifest.json`, the manifest sealed by its own sha256 (manifest.ts) and
 *    written last, the folder fsynced;
 * 3. renames it to `snapshot-N/` and fsyncs the parent;
 * 4. switches CURRENT: writes `CURRENT.tmp-PID`, fsyncs it, renames it over CURRENT (atomic), fsyncs;
 * 5. only then removes every other `snapshot-*` folder.
 *
 * A crash at any point leaves CURRENT naming a complete generation (the previous one until step 4).
 * A reader checks the manifest's seal, its format and version, then each file's size and sha256
 * before trusting a byte of it; anything else is refused as INVALID_SNAPSHOT naming the file.
 */

/** What a kind of generation folder is: written into each manifest, checked on read, named in messages. */
export interface GenerationFormat {
  /** The manifest's `format`, e.g. `quarry-index`. */
  readonly format: string
  /** The manifest's `version` when written; a version neither this one nor one of `reads` is refused. */
  readonly version: number
  /** Earlier versions still read (their reader tells them apart); none by default. */
  readonly reads?: readonly number[]
  /** What the folder is, for messages: `Quarry index`. */
  readonly kind: string
  /** What to do about a folder that cannot be read, for messages (a sentence). */
  readonly remedy: string
}

const NAME = /^snapshot-(\d{1,15})$/

function generationName(n: number): string {
  return `snapshot-${String(n).padStart(6, '0')}`
}

/**
 * A generation folder's manifest and its seal, when the manifest is there and sealed (its seal
 * checked); undefined otherwise. Not a check of the files: for a save that reuses them, which
 * compares the seal with the one it recorded when it wrote or read them.
 */
export function sealedManifest(folder: string): { readonly seal: string; readonly manifest: Manifest } | undefined {
  let bytes: Buffer
  try {
    bytes = readFileSync(join(folder, 'manifest.json'))
  } catch {
    return undefined
  }
  const decoded = decodeManifest(bytes)
  if (decoded.kind !== 'sealed' || manifestProblem(decoded.manifest) !== undefined) return undefined
  return { seal: decoded.seal, manifest: decoded.manifest as Manifest }
}

/** `dir/CURRENT`'s raw text, or undefined when there is none. */
function currentText(root: string): string | undefined {
  try {
    return readFileSync(join(root, 'CURRENT'), 'latin1')
  } catch {
    return undefined
  }
}

/** The generation number CURRENT names, or undefined (none, or not a generation name). */
function currentNumber(root: string): number | undefined {
  const match = /^(snapshot-\d{1,15})\n?$/.exec(currentText(root) ?? '')
  return match ? Number(NAME.exec(match[1] as string)?.[1]) : undefined
}

/**
 * Points `dir/CURRENT` at a generation: a temporary file, fsynced, renamed over (atomic). The
 * generation is committed from the rename on; the caller then fsyncs the folder.
 */
function* writeCurrent(root: string, name: string): Steps {
  const tmp = join(root, `CURRENT.tmp-${process.pid}`)
  const fd = openSync(tmp, 'w')
  try {
    writeSync(fd, `${name}\n`)
    yield fsyncCall(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, join(root, 'CURRENT'))
}

/** A file of a generation written through core's checksummed writer: its size and sha256 are listed as written. */
export interface GenerationFile {
  /** Appends text (UTF-8). */
  text(s: string): void
  /** Appends raw bytes. */
  bytes(data: Uint8Array): void
  /** Flushes, fsyncs (a blocking call) and closes the file, and lists it in the manifest. */
  finish(): Steps
}

/**
 * The folder a generation is written into, before it exists under its name. Files made with
 * `create` are listed as written; a nested generation (an index saved into a subfolder) can be
 * `adopt`ed; every other file found under `folder` when the write returns is read, hashed and
 * fsynced then, so the manifest lists every file.
 */
export interface GenerationWriter {
  /** The temporary folder to write into. */
  readonly folder: string
  /** The folder whose generation this is (`folder` is inside it). */
  readonly root: string
  /** The path of a file of the generation (`name` is '/'-separated, relative). */
  path(name: string): string
  /** Creates a file of the generation (its folder must exist), checksummed as it is written. */
  create(name: string): GenerationFile
  /** Records the size and sha256 of a file already written and fsynced (saves hashing it again). */
  add(name: string, sum: { readonly bytes: number; readonly sha256: string }): void
  /**
   * Lists the files of the generation just written in the subfolder `name` (by writeGeneration or
   * index.save) with the sums of its own sealed manifest, instead of reading them again.
   */
  adopt(name: string): void
  /**
   * Lists `from`, a file of a committed generation, as the file `name` of this one: hard-linked,
   * not copied, with the sum that generation's sealed manifest gives it (generation files are
   * never written again once committed, so both names keep the same bytes). Throws the system's
   * error when the link cannot be made (another filesystem, no such file): then {@link drop} it.
   */
  link(name: string, from: string, sum: { readonly bytes: number; readonly sha256: string }): void
  /** Removes the file `name` written or linked so far, and its listing (a linked file's other name keeps its bytes). */
  drop(name: string): void
  /**
   * Runs `settled` once the write has ended: with the generation's folder, its manifest's seal and
   * its files once CURRENT names it (what was written under the temporary folder is there now), or
   * with undefined when the write failed (the temporary folder is gone).
   */
  onSettled(settled: (committed: CommittedGeneration | undefined) => void): void
}

/** A generation just committed: its folder, its manifest's seal (naming its exact content) and its files with their sums. */
export interface CommittedGeneration {
  readonly folder: string
  readonly seal: string
  /** Each file ('/'-separated, relative to `folder`) with its size and sha256, as the manifest lists it. */
  readonly files: Readonly<Record<string, FileSum>>
}

/** What fills a generation: writes into the folder, yields at safe points (steps.ts), may return fields for the manifest. */
export type GenerationWrite = (out: GenerationWriter) => Steps<Record<string, unknown> | void>

class FolderWriter implements GenerationWriter {
  readonly folder: string
  readonly root: string
  readonly #sums = new Map<string, FileSum>()
  readonly #settled: ((committed: CommittedGeneration | undefined) => void)[] = []

  constructor(root: string, folder: string) {
    this.root = root
    this.folder = folder
  }

  path(name: string): string {
    return join(this.folder, ...name.split('/'))
  }

  create(name: string): GenerationFile {
    const writer = new ChunkWriter(this.path(name))
    const sums = this.#sums
    return {
      text: (s) => writer.text(s),
      bytes: (data) => writer.bytes(data),
      *finish() {
        sums.set(name, yield* writer.finish())
      },
    }
  }

  add(name: string, sum: FileSum): void {
    this.#sums.set(name, { bytes: sum.bytes, sha256: sum.sha256 })
  }

  adopt(name: string): void {
    const current = /^(snapshot-\d{1,15})\n?$/.exec(readFileSync(join(this.path(name), 'CURRENT'), 'latin1'))?.[1]
    const sealed = current === undefined ? undefined : sealedManifest(join(this.path(name), current))
    if (sealed === undefined) throw new Error(`adopt: ${name} holds no generation just written`)
    for (const [file, sum] of Object.entries(sealed.manifest.files)) this.add(`${name}/${current}/${file}`, sum)
  }

  link(name: string, from: string, sum: FileSum): void {
    const path = this.path(name)
    mkdirSync(dirname(path), { recursive: true })
    // Its bytes reach the disk before a generation names them: a snapshot Quarry wrote is there
    // already (nothing to flush), one copied in by other tools and loaded may not be yet.
    syncFile(from)
    linkSync(from, path)
    this.#sums.set(name, { bytes: sum.bytes, sha256: sum.sha256 })
  }

  drop(name: string): void {
    rmSync(this.path(name), { force: true })
    this.#sums.delete(name)
  }

  onSettled(settled: (committed: CommittedGeneration | undefined) => void): void {
    this.#settled.push(settled)
  }

  /**
   * Tells those waiting how the write ended (once). One that throws does not stop the others, nor
   * make a committed generation look failed: they only record where copies lie (a copy not
   * recorded is written again by the next save).
   */
  settle(committed: CommittedGeneration | undefined): void {
    for (const settled of this.#settled.splice(0)) {
      try {
        settled(committed)
      } catch {
        // See above.
      }
    }
  }

  /** Every file under the folder with its sum; files not yet summed read (in steps), folders fsynced. */
  *seal(): Steps<Record<string, FileSum>> {
    const files: Record<string, FileSum> = {}
    const sums = this.#sums
    function* walk(dir: string, prefix: string): Steps {
      for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        const name = `${prefix}${entry.name}`
        const path = join(dir, entry.name)
        if (entry.isDirectory()) {
          yield* walk(path, `${name}/`)
          continue
        }
        if (name === 'manifest.json') continue
        files[name] = sums.get(name) ?? (yield* hashAndSync(path))
      }
      yield fsyncDirCall(dir)
    }
    yield* walk(this.folder, '')
    return files
  }
}

/** fsync of a file through a descriptor opened for reading (on Windows, where that cannot flush, a no-op). */
function syncFile(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } catch (error) {
    if (process.platform !== 'win32') throw error
  } finally {
    closeSync(fd)
  }
}

function* hashAndSync(path: string): Steps<FileSum> {
  const fd = openSync(path, 'r')
  try {
    yield fsyncCall(fd)
  } catch (error) {
    closeSync(fd)
    throw error
  }
  return yield* new ChunkReader(fd).finish()
}

/** fsync of a folder, as a blocking call. */
function fsyncDirCall(dir: string): BlockingCall {
  return { sync: () => fsyncDir(dir), async: () => fsyncDirAsync(dir) }
}

/**
 * The folder a save or a load names, resolved: INVALID_OPTION (path `dir`) for anything but a
 * non-empty string, instead of Node's own error about a path argument.
 */
export function folderArgument(dir: unknown): string {
  if (typeof dir !== 'string' || dir === '') throw new QuarryError('INVALID_OPTION', `dir must be the path of a folder (a non-empty string); received ${describe(dir)}.`, { path: 'dir' })
  return resolve(dir)
}

/**
 * Writes a new generation of `dir` (see the protocol above) and returns its number. `write` fills
 * the temporary folder and may return fields for the manifest. The folder's lock is taken for the
 * call (QuarryError LOCKED when another writer holds it), or `options.lock` is used when the
 * caller holds it already. Runs to its end at once; see {@link writeGenerationInSlices}.
 *
 * Throws when the generation was not committed (CURRENT still names the one before). Once CURRENT
 * names it, a failure to remove the generations it replaces leaves them to the next save. One
 * failure after the switch is reported: the folder's fsync that makes the switch itself durable
 * ({@link GenerationWriteOptions.onUnconfirmed}).
 */
export function writeGeneration(dir: string, format: GenerationFormat, write: GenerationWrite, options: GenerationWriteOptions = {}): number {
  return runSteps(generationSteps(dir, format, write, options))
}

/** Options of {@link writeGeneration} and {@link writeGenerationInSlices}. */
export interface GenerationWriteOptions {
  /** The folder's lock, when the caller holds it already (else it is taken for the call). */
  readonly lock?: DirectoryLock
  /**
   * Called when the generation was committed (CURRENT names it) but the folder could not be
   * fsynced after the switch (EIO, say): the switch may not survive a power loss, so CURRENT may
   * then name the generation before, which is kept (not removed) for that case. A caller that
   * keeps something the generation before needs (the server's write-ahead log) keeps it too, until
   * a later save is confirmed. Without this option the write throws instead, after the commit.
   */
  readonly onUnconfirmed?: (error: Error) => void
}

/**
 * {@link writeGeneration} in slices: the event loop runs between slices of about `sliceMs` and
 * blocking calls (fsyncs, hnswlib's write, removals) run off the main thread. Whatever `write`
 * reads must not change until the promise settles (hold the writers off).
 */
export function writeGenerationInSlices(dir: string, format: GenerationFormat, write: GenerationWrite, options: GenerationWriteOptions & SliceOptions = {}): Promise<number> {
  return runStepsInSlices(generationSteps(dir, format, write, options), options)
}

/** A save's refusal when the folder's LOCK is no longer the lock it holds. */
function lockLost(root: string): QuarryError {
  return new QuarryError('LOCKED', `${root}/LOCK was removed or replaced while this process held it (the folder deleted, or the lock taken by another process): nothing is written into the folder. Restart this process to take the folder again.`)
}

function* generationSteps(dir: string, format: GenerationFormat, write: GenerationWrite, options: GenerationWriteOptions): Steps<number> {
  const root = folderArgument(dir)
  // A held lock whose LOCK is gone or another's: the folder was deleted (it would be made anew
  // here, beside whoever started on the path since) or taken over. Nothing is written.
  if (options.lock?.held === true && options.lock.dir === root && !options.lock.intact) throw lockLost(root)
  try {
    mkdirSync(root, { recursive: true })
  } catch (error) {
    const code = errorCode(error)
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new QuarryError('INVALID_OPTION', `${root} is a file (or lies under one), not a folder: save into a folder (it is created if it does not exist).`, { path: 'dir', cause: error })
    throw error
  }
  const given = options.lock
  if (given && (!given.held || given.dir !== root)) throw new QuarryError('INVALID_OPTION', `the lock given is ${given.held ? `for ${given.dir}` : 'released'}, not held for ${root}: pass the lock DirectoryLock.acquire(dir) returned for the folder saved to, while it is held, or leave it out.`, { path: 'lock' })
  const lock = given ?? DirectoryLock.acquire(root)
  let switched = false
  try {
    const number = (currentNumber(root) ?? 0) + 1
    const name = generationName(number)
    const tmp = join(root, `.${name}.tmp-${process.pid}`)
    rmSync(tmp, { recursive: true, force: true })
    mkdirSync(tmp)
    const out = new FolderWriter(root, tmp)
    let committed: CommittedGeneration | undefined
    try {
      try {
        const fields = (yield* write(out)) ?? {}
        const files = yield* out.seal()
        const own = { format: format.format, version: format.version, generation: number }
        const manifest: Manifest = { ...own, ...fields, ...own, files }
        // The manifest is written last: a folder without a sealed one is never a generation.
        const { bytes, seal } = sealManifest(manifest)
        const fd = openSync(join(tmp, 'manifest.json'), 'w')
        try {
          writeSync(fd, bytes)
          yield fsyncCall(fd)
        } finally {
          closeSync(fd)
        }
        yield fsyncDirCall(tmp)
        // Taken over while this generation was written (this process stopped longer than its LOCK's
        // grace, persist/lock.ts): the folder is the new owner's, and nothing is put into it.
        if (!lock.intact) throw lockLost(root)
        // A folder with this name that CURRENT does not name is debris of a save that died before its switch.
        rmSync(join(root, name), { recursive: true, force: true })
        renameSync(tmp, join(root, name))
        yield fsyncDirCall(root)
        committed = { folder: join(root, name), seal, files }
      } catch (error) {
        rmSync(tmp, { recursive: true, force: true })
        throw error
      }
      if (!lock.intact) throw lockLost(root)
      yield* writeCurrent(root, name)
      switched = true
    } catch (error) {
      out.settle(undefined)
      throw error
    }
    // Committed: CURRENT names the new generation. Nothing after this may report it as failed (a
    // caller would drop what it names, e.g. the server's next log, and go on with the old one):
    // removing the generations it replaces is done as far as it can be; an older generation left
    // behind (a file in it held open elsewhere) goes with the next save.
    out.settle(committed)
    let unconfirmed: Error | undefined
    try {
      yield fsyncDirCall(root)
    } catch (error) {
      unconfirmed = error as Error
    }
    if (unconfirmed === undefined) {
      try {
        for (const entry of readdirSync(root)) if (entry !== name && NAME.test(entry)) yield removal(join(root, entry))
        yield fsyncDirCall(root)
      } catch {
        // See above.
      }
    } else {
      // The switch may be undone by a power loss: the generations before stay, for CURRENT may name them then.
      if (options.onUnconfirmed === undefined) throw unconfirmedSwitch(root, name, unconfirmed)
      options.onUnconfirmed(unconfirmed)
    }
    return number
  } finally {
    if (!given) releaseAfter(lock, switched)
  }
}

/** The error of a save committed whose switch could not be made durable: what the folder holds, what to do. No user data. */
function unconfirmedSwitch(root: string, name: string, cause: Error): Error {
  const code = errorCode(cause)
  return Object.assign(new Error(`${root}: CURRENT names the save just written (${name}), but the folder could not be synced after the switch (${code}): after a power loss it may name the save before, which is kept. Check the disk, then save again.`, { cause }), { code })
}

/** Releases a generation writer's lock; after a commit, a failure to (the LOCK left) is not the write's. */
function releaseAfter(lock: DirectoryLock, committed: boolean): void {
  try {
    lock.release()
  } catch (error) {
    if (!committed) throw error
  }
}

/** Removes a folder (a replaced generation: large files take a while to unlink), as a blocking call. */
function removal(path: string): BlockingCall {
  return { sync: () => rmSync(path, { recursive: true, force: true }), async: () => rm(path, { recursive: true, force: true }) }
}

/** The refusal every reader gives: the folder, the file and its problem, what to do. No user data. */
export function unreadable(root: string, format: GenerationFormat, what: string, cause?: unknown): QuarryError {
  return new QuarryError('INVALID_SNAPSHOT', `${root} is not a readable ${format.kind}: ${what}. ${format.remedy}`, cause === undefined ? {} : { cause })
}

/** The error code of a failed system call, for messages (never its message, which may hold data). */
function errorCode(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | null)?.code
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'error'
}

/** A file summed on the worker: its descriptor, place in the worker's order, and the memory the worker reads it into, if any. */
interface Ahead {
  readonly fd: number
  readonly i: number
  readonly target: Uint8Array<SharedArrayBuffer> | undefined
}

function isShared(view: Uint8Array): view is Uint8Array<SharedArrayBuffer> {
  return typeof SharedArrayBuffer === 'function' && view.buffer instanceof SharedArrayBuffer
}

function sameView(a: Uint8Array, b: Uint8Array): boolean {
  return a.buffer === b.buffer && a.byteOffset === b.byteOffset && a.byteLength === b.byteLength
}

/**
 * The generation CURRENT names, its manifest sealed and checked; files are opened through it and
 * each checked against its size and sha256.
 */
export class Generation {
  readonly root: string
  readonly format: GenerationFormat
  /** The folder's name, `snapshot-N`. */
  readonly name: string
  readonly number: number
  readonly folder: string
  readonly manifest: Manifest
  /** The manifest's own sha256: names this generation's exact content (see {@link sealedManifest}). */
  readonly seal: string
  /** The file being read, for messages about a failure inside it. */
  reading: string | undefined
  readonly #pinned = new Map<string, number>()
  readonly #readers = new Set<ChunkReader>()
  /** Files being summed on a worker (sumAhead): their descriptors, places in its order and targets. */
  readonly #ahead = new Map<string, Ahead>()
  #sums: BackgroundSums | undefined

  constructor(root: string, format: GenerationFormat, name: string, manifest: Manifest, seal: string) {
    this.root = root
    this.seal = seal
    this.format = format
    this.name = name
    this.number = Number(NAME.exec(name)?.[1])
    this.folder = join(root, name)
    this.manifest = manifest
  }

  path(name: string): string {
    return join(this.folder, ...name.split('/'))
  }

  /**
   * Opens every listed file now, so a writer removing this generation after switching CURRENT
   * cannot pull them away mid-read (an open file outlives its name on POSIX). For small file
   * lists (an index); `close` releases what was not read.
   */
  pin(): void {
    for (const name of Object.keys(this.manifest.files)) {
      try {
        this.#pinned.set(name, openSync(this.path(name), 'r'))
      } catch {
        // reported by open(), with the file's name
      }
    }
  }

  /** Closes files pinned but not read, and readers a failed read left open. */
  close(): void {
    // The worker first: it reads the descriptors about to be closed.
    this.#sums?.close()
    this.#sums = undefined
    for (const { fd } of this.#ahead.values()) closeSync(fd)
    this.#ahead.clear()
    for (const fd of this.#pinned.values()) closeSync(fd)
    this.#pinned.clear()
    for (const reader of this.#readers) reader.abandon()
    this.#readers.clear()
  }

  /** Opens a listed file after checking that it is a file of the listed size. */
  open(name: string): ChunkReader {
    this.reading = name
    const want = this.manifest.files[name]
    if (!want) throw this.#fail(`${name} is not listed in its manifest`)
    let fd = this.#pinned.get(name)
    this.#pinned.delete(name)
    try {
      fd ??= openSync(this.path(name), 'r')
    } catch (error) {
      throw this.#fail(`${name} is missing or unreadable (${errorCode(error)})`)
    }
    let stat: Stats
    try {
      stat = fstatSync(fd)
    } catch (error) {
      closeSync(fd)
      throw this.#fail(`${name} is missing or unreadable (${errorCode(error)})`)
    }
    if (!stat.isFile() || stat.size !== want.bytes) {
      closeSync(fd)
      throw this.#fail(stat.isFile() ? `${name} has ${stat.size} bytes, the manifest says ${want.bytes} (truncated?)` : `${name} is not a file`)
    }
    const reader = new ChunkReader(fd)
    this.#readers.add(reader)
    return reader
  }

  /** Closes the reader and compares what it read with the manifest. */
  verify(name: string, reader: ChunkReader): void {
    this.#readers.delete(reader)
    let got: FileSum
    try {
      got = reader.close()
    } catch (error) {
      reader.abandon()
      throw this.#fail(`${name} could not be read (${errorCode(error)})`)
    }
    this.#check(name, got)
  }

  /**
   * Hands a listed file to `read`, a reader that checks everything it parses (so it may parse bytes
   * not yet checked), and returns its result once the file's size and sha256 match: a file the
   * worker sums ({@link sumAhead}) is given as its open descriptor and size, read there while the
   * worker hashes it; any other is read whole and checked first, and given as bytes.
   */
  readChecking<T>(name: string, read: (source: Uint8Array | { readonly fd: number; readonly size: number }) => T): T {
    const ahead = this.#ahead.get(name)
    if (!ahead || !this.#sums) return read(this.readWhole(name))
    this.reading = name
    // A reader's refusal is reported only when the sum matches: damage is named as such.
    let outcome: { ok: true; value: T } | { ok: false; error: unknown }
    try {
      outcome = { ok: true, value: read({ fd: ahead.fd, size: this.manifest.files[name]?.bytes ?? 0 }) }
    } catch (error) {
      outcome = { ok: false, error }
    }
    const got = this.#sums.sum(ahead.i)
    if (got === undefined) {
      // The worker failed on it or was given up: hash it here.
      this.#ahead.delete(name)
      this.#pinned.set(name, ahead.fd)
      this.verify(name, this.open(name))
    } else this.#check(name, got)
    if (!outcome.ok) throw outcome.error
    return outcome.value
  }

  /**
   * Starts hashing the listed files `names` on a worker thread, in this order (background-sums.ts),
   * when they are large enough for it to pay: `readWhole` of one of them then reads it without
   * hashing and waits for its sum before returning it, so hashing the next file overlaps reading
   * and parsing this one. A file given a view of shared memory in `fill` (of its exact size) is
   * read by the worker into it: `readWhole(name, thatView)` then only waits for its sum, and the
   * main thread parses the files before it meanwhile. Files that cannot be opened or have the
   * wrong size are left to `readWhole`'s own checks.
   */
  sumAhead(names: readonly string[], fill: ReadonlyMap<string, Uint8Array> = new Map()): void {
    const fds: number[] = []
    const targets: (Uint8Array<SharedArrayBuffer> | undefined)[] = []
    let bytes = 0
    for (const name of names) {
      const want = this.manifest.files[name]
      const fd = this.#pinned.get(name)
      if (!want || fd === undefined || this.#ahead.has(name)) continue
      try {
        const stat = fstatSync(fd)
        if (!stat.isFile() || stat.size !== want.bytes) continue
      } catch {
        continue
      }
      this.#pinned.delete(name)
      const into = fill.get(name)
      const target = into !== undefined && into.byteLength === want.bytes && isShared(into) ? into : undefined
      this.#ahead.set(name, { fd, i: fds.length, target })
      fds.push(fd)
      targets.push(target)
      bytes += want.bytes
    }
    this.#sums = BackgroundSums.start(fds, bytes, targets)
    if (this.#sums) return
    // Not worth a worker: back to the pinned files, hashed as they are read.
    for (const [name, { fd }] of this.#ahead) this.#pinned.set(name, fd)
    this.#ahead.clear()
  }

  /**
   * Reads a listed file whole into memory and checks its size and sha256 before returning it:
   * into `into` when given (its length must be the file's), else a fresh buffer (8-byte aligned,
   * for typed-array views of it). `into` may be a view of a SharedArrayBuffer.
   */
  readWhole(name: string): Uint8Array<ArrayBuffer>
  readWhole<B extends ArrayBufferLike>(name: string, into: Uint8Array<B>): Uint8Array<B>
  readWhole(name: string, into?: Uint8Array): Uint8Array {
    const ahead = this.#ahead.get(name)
    if (ahead && this.#sums) return this.#readAhead(name, ahead, into)
    if (ahead) {
      // The worker was given up: hash it here after all.
      this.#ahead.delete(name)
      this.#pinned.set(name, ahead.fd)
    }
    const reader = this.open(name)
    const size = this.manifest.files[name]?.bytes ?? 0
    if (into !== undefined && into.byteLength !== size) {
      this.#readers.delete(reader)
      reader.abandon()
      throw this.#fail(`${name} has ${size} bytes, ${into.byteLength} were expected`)
    }
    const bytes = into ?? new Uint8Array(Buffer.allocUnsafeSlow(size).buffer as ArrayBuffer, 0, size)
    try {
      reader.readDirect(bytes)
    } catch (error) {
      this.#readers.delete(reader)
      reader.abandon()
      throw this.#fail(`${name} could not be read (${errorCode(error)})`)
    }
    this.verify(name, reader)
    return bytes
  }

  /**
   * readWhole of a file the worker sums: read unhashed (or, into the worker's target, not read
   * here at all), then its sum waited for and checked.
   */
  #readAhead(name: string, ahead: Ahead, into: Uint8Array | undefined): Uint8Array {
    this.reading = name
    const size = this.manifest.files[name]?.bytes ?? 0
    if (into !== undefined && into.byteLength !== size) throw this.#fail(`${name} has ${size} bytes, ${into.byteLength} were expected`)
    const bytes = into ?? new Uint8Array(Buffer.allocUnsafeSlow(size).buffer as ArrayBuffer, 0, size)
    let filled = size
    const byWorker = ahead.target !== undefined && sameView(ahead.target, bytes)
    try {
      if (!byWorker) filled = readFully(ahead.fd, bytes)
    } catch (error) {
      throw this.#fail(`${name} could not be read (${errorCode(error)})`)
    }
    const got = this.#sums?.sum(ahead.i)
    if (got === undefined) {
      // The worker failed on it or was given up: hash it here (into a target too: a worker given
      // up may still be writing the same bytes there).
      this.#ahead.delete(name)
      this.#pinned.set(name, ahead.fd)
      return into === undefined ? this.readWhole(name) : this.readWhole(name, into)
    }
    this.#check(name, filled === size ? got : { bytes: filled, sha256: '' })
    return bytes
  }

  /** Compares a file's size and sha256 with the manifest's. */
  #check(name: string, got: FileSum): void {
    const want = this.manifest.files[name] as FileSum
    if (got.bytes !== want.bytes) throw this.#fail(`${name} has ${got.bytes} bytes, the manifest says ${want.bytes} (truncated?)`)
    if (got.sha256 !== want.sha256) throw this.#fail(`${name} does not match its checksum (corrupted)`)
    this.reading = undefined
  }

  /**
   * Checks every listed file (size and sha256) before any is used; with `nested`, files of the
   * generations nested in this one are left to their own readers (see {@link nestedFiles}).
   */
  verifyAll(options: { readonly nested?: boolean } = {}): void {
    const skip = options.nested === true ? nestedFiles(Object.keys(this.manifest.files)) : new Set<string>()
    for (const name of Object.keys(this.manifest.files)) if (!skip.has(name)) this.verify(name, this.open(name))
  }

  #fail(what: string): QuarryError {
    return unreadable(this.root, this.format, `${this.name}/${what}`)
  }
}

/**
 * Opens the generation CURRENT names in `dir`: CURRENT parsed, the manifest's seal, format,
 * version and shape checked. Undefined when the folder holds no generation at all (no CURRENT, no
 * `snapshot-*`); anything else unreadable is INVALID_SNAPSHOT.
 */
export function openGeneration(dir: string, format: GenerationFormat): Generation | undefined {
  const root = resolve(dir)
  const fail = (what: string): QuarryError => unreadable(root, format, what)
  let text: string
  try {
    const stat = statSync(join(root, 'CURRENT'))
    if (!stat.isFile() || stat.size > 64) throw fail('CURRENT does not name a snapshot (it should hold one line, "snapshot-N")')
    text = readFileSync(join(root, 'CURRENT'), 'latin1')
  } catch (error) {
    if (error instanceof QuarryError) throw error
    if (errorCode(error) !== 'ENOENT' && errorCode(error) !== 'ENOTDIR') throw fail(`CURRENT could not be read (${errorCode(error)})`)
    const orphans = listing(root).filter((e) => NAME.test(e))
    if (orphans.length > 0) throw fail(`CURRENT is missing although ${orphans.sort().join(', ')} exist${orphans.length === 1 ? 's' : ''} (if a first save was interrupted, remove the folder; otherwise write the generation's name into CURRENT)`)
    return undefined
  }
  const name = /^(snapshot-\d{1,15})\n?$/.exec(text)?.[1]
  if (name === undefined) throw fail('CURRENT does not name a snapshot (it should hold one line, "snapshot-N")')
  return openNamed(root, format, name)
}

/** The generation `name` of `root`: its manifest read, its seal, format, version and shape checked. */
function openNamed(root: string, format: GenerationFormat, name: string): Generation {
  const fail = (what: string): QuarryError => unreadable(root, format, what)
  const file = `${name}/manifest.json`
  let bytes: Buffer
  try {
    const stat = statSync(join(root, name, 'manifest.json'))
    if (!stat.isFile()) throw new Error('not a file')
    bytes = readFileSync(join(root, name, 'manifest.json'))
  } catch {
    throw fail(`${file} is missing or not JSON`)
  }
  const decoded = decodeManifest(bytes)
  if (decoded.kind === 'not-json') throw fail(`${file} is missing or not JSON`)
  if (decoded.kind === 'corrupted') throw fail(`${file} does not match its checksum (corrupted)`)
  const manifest = decoded.manifest as Partial<Manifest> | null
  if (typeof manifest !== 'object' || manifest === null || manifest.format !== format.format) throw fail(`${file} is not a ${format.kind} manifest`)
  const version = manifest.version
  const versions = [...(format.reads ?? []), format.version]
  if (!versions.includes(version as number)) throw fail(`${format.kind} version ${String(version)} is not supported by this Quarry (reads version ${versions.join(' or ')})`)
  if (decoded.kind === 'legacy') throw fail(`${file} carries no checksum of its own (edited by hand?)`)
  const problem = manifestProblem(manifest)
  if (problem !== undefined) throw fail(`${file} ${problem}`)
  if (manifest.generation !== undefined && generationName(manifest.generation) !== name && `snapshot-${manifest.generation}` !== name) {
    throw fail(`${file} belongs to generation ${manifest.generation}, not to ${name}`)
  }
  return new Generation(root, format, name, manifest as Manifest, decoded.seal)
}

/**
 * Completes a first save whose switch was interrupted: CURRENT missing, `snapshot-000001` the
 * folder's only generation, and its manifest sealed and of `format` (it was renamed into place
 * after the manifest was synced, so it is whole; its files are checked as they are read). Writes
 * CURRENT naming it and returns true; false, touching nothing, for a folder in any other state (a
 * load then says what it finds). Call it holding the folder's lock: a server killed in its first
 * checkpoint, before serving, left this, and every later start was refused until the folder was
 * removed by hand.
 */
export function completeFirstGeneration(dir: string, format: GenerationFormat): boolean {
  const root = folderArgument(dir)
  if (existsSync(join(root, 'CURRENT'))) return false
  const generations = listing(root).filter((e) => NAME.test(e))
  if (generations.length !== 1 || generations[0] !== generationName(1)) return false
  try {
    openNamed(root, format, generationName(1))
  } catch {
    return false
  }
  runSteps(writeCurrent(root, generationName(1)))
  fsyncDir(root)
  return true
}

function listing(root: string): string[] {
  try {
    return readdirSync(root)
  } catch {
    return []
  }
}

/**
 * Runs a read of `dir`'s current generation, again if it failed while a writer switched CURRENT
 * underneath it (readers take no lock, and a writer removes the generation it replaced right after
 * the switch). Each retry means a writer finished a generation; after 8 the failure stands.
 */
export function whileCurrentHolds<T>(dir: string, read: () => T): T {
  const root = folderArgument(dir)
  for (let attempt = 0; ; attempt++) {
    const before = currentText(root)
    try {
      return read()
    } catch (error) {
      if (attempt < 8 && error instanceof QuarryError && error.code === 'INVALID_SNAPSHOT' && currentText(root) !== before) continue
      throw error
    }
  }
}

/**
 * The data files of generations nested in a generation: `P/snapshot-N/F` (F not its manifest)
 * where `P/CURRENT` and `P/snapshot-N/manifest.json` are listed too (an index saved into a
 * subfolder). Their reader (loadIndex) checks each against the nested manifest as it reads it; the
 * nested manifest and CURRENT are checked by the outer generation like any file. So every byte
 * used is still checked once, before it is used.
 */
function nestedFiles(names: readonly string[]): Set<string> {
  const listed = new Set(names)
  const out = new Set<string>()
  for (const name of names) {
    const match = /^((?:.+\/)?)(snapshot-\d{1,15})\/(.+)$/.exec(name)
    if (!match) continue
    const [, prefix, generation, rest] = match as unknown as [string, string, string, string]
    if (rest !== 'manifest.json' && listed.has(`${prefix}CURRENT`) && listed.has(`${prefix}${generation}/manifest.json`)) out.add(name)
  }
  return out
}

/** What `readGeneration` hands its reader: the verified generation's folder, number and manifest fields. */
export interface GenerationView {
  /** The generation's folder (read only). */
  readonly folder: string
  readonly number: number
  /** The manifest, including the fields the writer returned. */
  readonly manifest: Readonly<Record<string, unknown>>
  /**
   * The size and sha256 the manifest gives a file of this generation, by its path; undefined for
   * a path it does not list. Checked before the reader ran, except the data files of nested
   * generations with `nested` (their reader, loadIndex, checks them).
   */
  sumOf(path: string): FileSum | undefined
}

/** How {@link readGeneration} checks files before its reader runs. */
export interface ReadGenerationOptions {
  /**
   * Leave the data files of generations nested in this one (an index saved into a subfolder
   * with `index.save`) to their reader, `loadIndex`, which checks each one's size and sha256
   * against the nested manifest (checked here) as it reads it, instead of hashing them twice.
   * Only for readers that read nested generations through `loadIndex`.
   * @defaultValue false
   */
  readonly nested?: boolean
}

/**
 * Reads `dir`'s current generation: the manifest is checked, then every file's size and sha256,
 * and only then `read` runs on the folder. Undefined when `dir` holds no generation; a missing,
 * truncated, altered or other-version one is refused with INVALID_SNAPSHOT, and so is anything
 * but a QuarryError that `read` throws (the folder passed its checks, so it means a bug or a
 * format this Quarry does not know).
 */
export function readGeneration<T>(dir: string, format: GenerationFormat, read: (generation: GenerationView) => T, options: ReadGenerationOptions = {}): T | undefined {
  return whileCurrentHolds(dir, () => {
    const generation = openGeneration(dir, format)
    if (!generation) return undefined
    try {
      generation.verifyAll(options)
    } finally {
      generation.close()
    }
    try {
      const { folder, number, manifest } = generation
      const sumOf = (path: string): FileSum | undefined => {
        const name = relative(folder, resolve(path)).split(sep).join('/')
        return Object.hasOwn(manifest.files, name) ? manifest.files[name] : undefined
      }
      return read({ folder, number, manifest, sumOf })
    } catch (error) {
      throw asUnreadable(error, generation)
    }
  })
}

/** Codes a read may fail with as they are; anything else from reading a checked generation becomes INVALID_SNAPSHOT. */
const READ_CODES: ReadonlySet<string> = new Set(['INVALID_SNAPSHOT', 'EMBEDDER_MISMATCH', 'NATIVE_UNAVAILABLE', 'LOCKED'])

/** Turns a failure while reading `generation` into INVALID_SNAPSHOT naming the file (its message left out: it may hold data). */
export function asUnreadable(error: unknown, generation: Generation): unknown {
  if (error instanceof QuarryError && READ_CODES.has(error.code)) return error
  const where = generation.reading === undefined ? generation.name : `${generation.name}/${generation.reading}`
  return unreadable(generation.root, generation.format, `${where} could not be read (${error instanceof QuarryError ? error.code : errorCode(error)})`)
}
