import { randomBytes } from 'node:crypto'
import { closeSync, fstatSync, fsyncSync, futimesSync, linkSync, mkdirSync, openSync, readFileSync, readlinkSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'
import { QuarryError } from '../errors.js'
import { fsyncDir, removeDebris } from './debris.js'
import { REFRESH_MS, refreshLock } from './lock-refresher.js'

/** What a LOCK file holds. */
interface Owner {
  readonly pid: number
  readonly host: string
  /** The owner's start time in clock ticks since boot (Linux /proc), to detect a reused pid. */
  readonly started?: number
  readonly token: string
  /**
   * How often the owner refreshes LOCK's modification time, ms, while it holds it. Another host
   * cannot ask whether a pid runs, but it can watch the file: one left unrefreshed is a dead
   * owner's. Absent in LOCKs of Quarry before this (held unless deleted by hand).
   */
  readonly refreshMs?: number
  /**
   * The owner's pid namespace (Linux: /proc/self/ns/pid). Two containers can share a hostname and
   * a volume, and their pids mean nothing to each other: such a LOCK is judged as another host's.
   */
  readonly pidns?: string
}

/**
 * Another host's LOCK counts as its dead owner's once it has gone unrefreshed for ten of the
 * refreshes it promises (`refreshMs`, at least REFRESH_MS: 10 s), and when it already looks that old
 * by this host's clock, once it has gone unrefreshed for two and a half of them while watched from
 * here (a live owner refreshes in that time whatever the two hosts' clocks say). The refresh runs
 * on a worker thread (persist/lock-refresher.ts), so an owner whose main thread is busy keeps its
 * lock; one stopped whole (SIGSTOP, a paused VM) may lose it, and then finds LOCK not its own
 * before its next write or generation switch (DirectoryLock.intact), never writing beside the new
 * owner.
 */
const STALE_REFRESHES = 10
const CONFIRM_REFRESHES = 2.5
/** The longest refresh interval a LOCK's word is taken for (a minute: stale after ten minutes). */
const MAX_REFRESH_MS = 60_000
/** How often a watched LOCK is looked at again. */
const WATCH_STEP_MS = 200

/** A LOCK younger than this that cannot be parsed may be being written: treat it as held. */
const FRESH_MS = 5_000

/** Folders this process holds, by resolved path: a second lock here is refused too. */
const heldHere = new Map<string, string>()

/**
 * One writer per folder: `dir/LOCK`, created atomically (a hard link that fails if it exists),
 * holds the owner's pid, host, process start time and a random token, and the owner refreshes its
 * modification time every second while it holds it. A second writer finds it and is refused
 * (LOCKED) unless the owner is gone: on this host, its pid is not running (or runs a process that
 * started at another time: the pid was reused); from another host or pid namespace (a container
 * recreated under a new hostname, a shared volume), its LOCK goes unrefreshed for ten refreshes,
 * watched from here before it is taken over (up to that long). A dead owner's LOCK is taken over
 * under a short guard file (`LOCK.takeover`, also O_EXCL), so two processes recovering the same
 * stale lock cannot both win.
 * Whoever takes the lock removes the debris of interrupted saves (no live writer can own any).
 */
export class DirectoryLock {
  /** The folder it locks (resolved). */
  readonly dir: string
  readonly #token: string
  #held = true
  /** LOCK's file as it was taken (device and inode): another file there is another holder's. */
  readonly #file: { readonly dev: number; readonly ino: number } | undefined
  /** Stops refreshing LOCK's time: from the refresher's worker (persist/lock-refresher.ts), or else from this thread. */
  readonly #stopRefresh: () => void

  private constructor(dir: string, token: string) {
    this.dir = dir
    this.#token = token
    this.#file = fileOf(join(dir, 'LOCK'))
    this.#stopRefresh = this.#file === undefined ? () => undefined : refreshing(join(dir, 'LOCK'), this.#file)
  }

  /**
   * Takes `dir/LOCK` (creating `dir` if needed) and removes debris of interrupted saves. Throws
   * QuarryError LOCKED when a live process (this one included) holds it.
   */
  static acquire(dir: string): DirectoryLock {
    const root = resolve(dir)
    mkdirSync(root, { recursive: true })
    if (heldHere.has(root)) throw locked(root, `this process (pid ${process.pid}), which is saving into it already or keeps it open (a server's data folder)`, false)
    const path = join(root, 'LOCK')
    for (let attempt = 0; attempt < 100; attempt++) {
      const token = randomBytes(12).toString('hex')
      if (createdOrFailed(root, path, token)) {
        fsyncDir(root)
        heldHere.set(root, token)
        removeDebris(root)
        return new DirectoryLock(root, token)
      }
      const raw = readRaw(path)
      if (raw === undefined) continue
      const verdict = judge(path, raw)
      const alive = verdict.alive === 'watch' ? watch(path, verdict.how.refreshMs) : verdict.alive
      // Replaced or removed while watched: someone else is at work there; look again.
      if (alive === 'changed') continue
      if (alive) throw locked(root, verdict.who, verdict.how)
      takeOver(root, raw)
    }
    throw locked(root, `other processes (the lock kept changing hands; if none is starting there, delete ${join(root, 'LOCK.takeover')})`, false)
  }

  /** Whether this lock is still held (not released). */
  get held(): boolean {
    return this.#held
  }

  /**
   * Whether LOCK is still this lock's file: false once released, or when LOCK was removed (the
   * folder deleted, or the file "cleaned up") or replaced (taken by another process meanwhile).
   * One stat: cheap enough to ask before every write.
   */
  get intact(): boolean {
    if (!this.#held || this.#file === undefined) return this.#held
    const now = fileOf(join(this.dir, 'LOCK'))
    return now !== undefined && now.dev === this.#file.dev && now.ino === this.#file.ino
  }

  /** Removes LOCK if it is still ours. Safe to call twice. */
  release(): void {
    if (!this.#held) return
    this.#held = false
    heldHere.delete(this.dir)
    this.#stopRefresh()
    const path = join(this.dir, 'LOCK')
    const raw = readRaw(path)
    if (raw !== undefined && parseOwner(raw)?.token === this.#token) {
      unlinkSync(path)
      fsyncDir(this.dir)
    }
  }
}

/**
 * Starts refreshing LOCK (the file `file` the lock took) every REFRESH_MS, from the refresher's
 * worker; where none can run, from this thread (stalled with it), through LOCK kept open.
 */
function refreshing(path: string, file: { readonly dev: number; readonly ino: number }): () => void {
  const stop = refreshLock(path, file.dev, file.ino)
  if (stop) return stop
  const fd = openQuietly(path)
  if (fd === undefined) return () => undefined
  // Never keeps the process alive; a failed refresh (the disk gone) is left for `intact` to find.
  const timer = setInterval(() => {
    try {
      const now = new Date()
      futimesSync(fd, now, now)
    } catch {
      // not refreshed this time
    }
  }, REFRESH_MS).unref()
  return () => {
    clearInterval(timer)
    closeQuietly(fd)
  }
}

/** A file's device and inode, or undefined when it is not there. */
function fileOf(path: string): { readonly dev: number; readonly ino: number } | undefined {
  try {
    const { dev, ino } = statSync(path)
    return { dev, ino }
  } catch {
    return undefined
  }
}

/** How a LOCK this process cannot judge by pid was judged: refreshed lately (and the refresh it promises, ms), or from a Quarry that does not refresh it. */
type Remote = { readonly refreshMs: number } | 'unrefreshed' | false

/** What {@link judge} makes of a LOCK: its owner alive or not, or to be watched (another host's, refreshed every `how.refreshMs`). */
type Verdict = { readonly alive: boolean; readonly who: string; readonly how: 'unrefreshed' | false } | { readonly alive: 'watch'; readonly who: string; readonly how: { readonly refreshMs: number } }

function locked(root: string, who: string, remote: Remote): QuarryError {
  const way =
    remote === 'unrefreshed'
      ? ` If that process is no longer running, delete ${join(root, 'LOCK')} (its Quarry does not refresh its LOCK, so another host cannot tell).`
      : remote !== false
        ? ` Its LOCK is refreshed, so that process is running; once it stops, its LOCK is taken over ${(STALE_REFRESHES * remote.refreshMs) / 1000} s after its last refresh.`
        : ''
  return new QuarryError('LOCKED', `${root} is in use by ${who}: a folder has one writer at a time. Close the index or server using it (or wait for its save to finish) and retry.${way}`)
}

/** {@link tryCreate}, its failures (a read-only folder, a full disk) said with the file and the fix. */
function createdOrFailed(root: string, path: string, token: string): boolean {
  try {
    return tryCreate(path, token)
  } catch (error) {
    // Still the system's error (its code: a full disk is ENOSPC to the callers that tell the
    // client so), with the file and the fix in its message.
    const code = (error as NodeJS.ErrnoException).code
    const failure: NodeJS.ErrnoException = new Error(`cannot take the lock of ${root}: creating ${path} failed (${code ?? 'error'}); the folder must be writable by this process, on a disk with free space.`, { cause: error })
    if (code !== undefined) failure.code = code
    throw failure
  }
}

/**
 * Creates LOCK whole: the owner is written to `LOCK.<token>`, fsynced, then hard-linked to LOCK,
 * which fails if LOCK exists (atomic, so nobody sees a LOCK without its owner). Where the file
 * system has no hard links, LOCK is created with O_EXCL and then written.
 */
function tryCreate(path: string, token: string): boolean {
  const started = procStat(process.pid)?.started
  const pidns = pidNamespace()
  const owner: Owner = { pid: process.pid, host: hostname(), ...(started === undefined ? {} : { started }), token, refreshMs: REFRESH_MS, ...(pidns === undefined ? {} : { pidns }) }
  const text = `${JSON.stringify(owner)}\n`
  const tmp = `${path}.${token}`
  writeSynced(tmp, text, 'wx')
  try {
    linkSync(tmp, path)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    // The holder removed our temporary file as debris: try again.
    if (code === 'ENOENT') return false
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV') throw error
  } finally {
    unlinkQuietly(tmp)
  }
  try {
    writeSynced(path, text, 'wx')
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

function writeSynced(path: string, text: string, flag: 'wx'): void {
  const fd = openSync(path, flag)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } catch (error) {
    closeSync(fd)
    unlinkQuietly(path)
    throw error
  }
  closeSync(fd)
}

function readRaw(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new QuarryError('LOCKED', `${path} could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): remove it if no process uses the folder.`)
  }
}

function parseOwner(raw: string): Owner | undefined {
  try {
    const v = JSON.parse(raw) as Partial<Owner> | null
    if (v && typeof v.pid === 'number' && Number.isInteger(v.pid) && v.pid > 0 && typeof v.host === 'string' && typeof v.token === 'string') {
      return {
        pid: v.pid,
        host: v.host,
        token: v.token,
        ...(typeof v.started === 'number' ? { started: v.started } : {}),
        ...(typeof v.refreshMs === 'number' ? { refreshMs: v.refreshMs } : {}),
        ...(typeof v.pidns === 'string' ? { pidns: v.pidns } : {}),
      }
    }
  } catch {
    // not JSON: judged below
  }
  return undefined
}

/**
 * Whether the LOCK's owner may still be running (`watch`: another host's, judged by whether it is
 * refreshed), and who it is for the message.
 */
function judge(path: string, raw: string): Verdict {
  const owner = parseOwner(raw)
  if (!owner) {
    // Only on file systems without hard links can a LOCK be seen before it is written: give a live
    // writer a moment; an old one was left half-written by a crash.
    const fresh = ageMs(path) < FRESH_MS
    return { alive: fresh, who: 'another process (its LOCK is being written)', how: false }
  }
  const pidns = pidNamespace()
  const otherPids = owner.pidns !== undefined && pidns !== undefined && owner.pidns !== pidns
  const who = `process ${owner.pid} on ${owner.host}${otherPids && owner.host === hostname() ? ' (in another pid namespace: another container)' : ''}`
  // Another host (a container recreated under a new name, a shared volume), or another container
  // under this hostname: its pids mean nothing here. Judged by whether it is refreshed, if it says
  // how often it is (a number of ms, within bounds); else held.
  if (owner.host !== hostname() || otherPids) {
    const promised = owner.refreshMs
    if (promised === undefined || !Number.isFinite(promised) || promised <= 0) return { alive: true, who, how: 'unrefreshed' }
    return { alive: 'watch', who, how: { refreshMs: Math.min(MAX_REFRESH_MS, Math.max(REFRESH_MS, promised)) } }
  }
  // Our own pid but not in heldHere: left by this process without a release (e.g. a lost lock object).
  if (owner.pid === process.pid) return { alive: false, who, how: false }
  if (!running(owner.pid)) return { alive: false, who, how: false }
  const stat = procStat(owner.pid)
  // A zombie (killed, not yet reaped by a parent that never waits) answers signals but holds nothing.
  if (stat?.state === 'Z' || stat?.state === 'X') return { alive: false, who, how: false }
  const started = stat?.started
  if (owner.started !== undefined && started !== undefined && started !== owner.started) return { alive: false, who, how: false }
  return { alive: true, who, how: false }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** A process's state letter and start time (clock ticks since boot) from /proc, where there is one. */
function procStat(pid: number): { state: string | undefined; started: number | undefined } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the parenthesized command name start at field 3 (the state); starttime is field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const started = Number(fields[19])
    return { state: fields[0], started: Number.isFinite(started) ? started : undefined }
  } catch {
    return undefined
  }
}

/**
 * Watches a LOCK refreshed every `refreshMs` (another host's): true (alive) as soon as it is
 * refreshed; `changed` when it is replaced or removed meanwhile (another process is at work there:
 * the caller looks again); false (stale) once it has gone unrefreshed for STALE_REFRESHES
 * refreshes, or for CONFIRM_REFRESHES when it was already that old by this host's clock. The file
 * is opened for each look, so that a network file system's cached attributes are read afresh. This
 * thread waits meanwhile; the locks it holds are refreshed by the refresher's worker.
 */
function watch(path: string, refreshMs: number): boolean | 'changed' {
  const first = lookAt(path)
  if (first === undefined) return 'changed'
  const staleMs = STALE_REFRESHES * refreshMs
  const watchFrom = Date.now()
  for (;;) {
    const watched = Date.now() - watchFrom
    if (watched >= staleMs || (watched >= CONFIRM_REFRESHES * refreshMs && Date.now() - first.mtimeMs >= staleMs)) return false
    sleepSync(WATCH_STEP_MS)
    const now = lookAt(path)
    if (now === undefined || now.ino !== first.ino) return 'changed'
    if (now.mtimeMs !== first.mtimeMs) return true
  }
}

/** A file's inode and modification time, read through a fresh open, or undefined when it is not there. */
function lookAt(path: string): { readonly ino: number; readonly mtimeMs: number } | undefined {
  const fd = openQuietly(path)
  if (fd === undefined) return undefined
  try {
    const { ino, mtimeMs } = fstatSync(fd)
    return { ino, mtimeMs }
  } finally {
    closeQuietly(fd)
  }
}

function openQuietly(path: string): number | undefined {
  try {
    return openSync(path, 'r')
  } catch {
    return undefined
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd)
  } catch {
    // closed
  }
}

let ownPidNamespace: string | null | undefined

/** This process's pid namespace, as Linux names it ("pid:[4026531836]"), or undefined elsewhere. */
function pidNamespace(): string | undefined {
  if (ownPidNamespace === undefined) {
    try {
      ownPidNamespace = readlinkSync('/proc/self/ns/pid')
    } catch {
      ownPidNamespace = null
    }
  }
  return ownPidNamespace ?? undefined
}

/** Waits `ms` on this thread (acquire is synchronous: nothing else may run meanwhile). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}

function ageMs(path: string): number {
  try {
    return Date.now() - statSync(path).mtimeMs
  } catch {
    return 0
  }
}

/** Removes a stale LOCK (still holding `raw`) under the O_EXCL guard `LOCK.takeover`. */
function takeOver(root: string, raw: string): void {
  const guard = join(root, 'LOCK.takeover')
  let fd: number
  try {
    fd = openSync(guard, 'wx')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    // Another process is taking over; a guard left by a crash expires (one dated ahead, by a
    // clock stepped back since, as well).
    if (Math.abs(ageMs(guard)) > FRESH_MS) unlinkQuietly(guard)
    else sleepSync(10)
    return
  }
  closeSync(fd)
  try {
    if (readRaw(join(root, 'LOCK')) === raw) unlinkQuietly(join(root, 'LOCK'))
  } finally {
    unlinkQuietly(guard)
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch {
    // already gone
  }
}
