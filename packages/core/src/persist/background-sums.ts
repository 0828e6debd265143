import type { Worker } from 'node:worker_threads'
import { startEvalWorker } from '../util/eval-worker.js'
import type { FileSum } from './manifest.js'

/**
 * sha256 sums of open files computed on a worker thread, in order, while the main thread reads
 * and parses the files before them: a load waits for a file's sum before it parses the file (so
 * every checksum is still checked before its data is used), but hashing file k+1 overlaps reading
 * and parsing file k. The worker reads the files itself (positional reads of the same
 * descriptors, through one reused buffer) and reports through shared memory, so a synchronous
 * load can wait for it with `Atomics.wait`. A file given a target in shared memory (a store's
 * rows) is read by the worker straight into it and hashed there: the main thread does not read it
 * at all, and goes on parsing other files meanwhile. It never keeps the process alive (unref'd), and a
 * worker that makes no progress for a while (it could not start) is given up: the caller hashes
 * the file itself. {@link prepareLoad} boots one ahead, so that a program about to load
 * (a server reading its data folder) pays the worker's start while it does other work.
 */

/** Below this many bytes in all, a worker's start (tens of milliseconds) costs more than it saves. */
const DEFAULT_THRESHOLD = 32 << 20

let threshold = DEFAULT_THRESHOLD

/**
 * Sets the size from which loads hash on a worker; returns a function restoring the previous one.
 * For tests only (to run the worker on small snapshots): not exported by the package.
 */
export function replaceBackgroundSumThreshold(bytes: number): () => void {
  const previous = threshold
  threshold = bytes
  return () => {
    threshold = previous
  }
}

let started = 0

/** Workers started so far (for tests: that a load did hash on one). */
export function backgroundSumsStarted(): number {
  return started
}

let missed = 0

/** Sums a load asked a worker for and hashed itself instead (the worker failed on the file, or was given up): for tests. */
export function backgroundSumsMissed(): number {
  return missed
}

let filled = 0

/** Files the worker read into their targets, summed and handed over (the main thread read none of them): for tests. */
export function backgroundSumsFilled(): number {
  return filled
}

/** How long a wait may see no progress before the worker is given up (it could not start, or died). */
const STALL_MS = 10_000

const PENDING = 0
const DONE = 1
const FAILED = 2

/**
 * The worker's code (evaluated, see startEvalWorker: its modules taken with import()): it boots,
 * then waits for its one job in a message, so that a worker booted ahead can be given it later.
 */
const SOURCE = `
Promise.all([import('node:worker_threads'), import('node:fs'), import('node:crypto')]).then(([{ parentPort }, { readSync }, { createHash }]) => parentPort.once('message', (job) => {
  const { fds, targets, state, sizes, digests, progress } = job
  const buffer = Buffer.allocUnsafe(1 << 20)
  for (let i = 0; i < fds.length; i++) {
    try {
      const hash = createHash('sha256')
      // A target is filled in place, a piece at a time (hashed while it is in the cache); it is
      // exactly the file's size, so one more read past it must find the end of the file.
      const target = targets[i] ? new Uint8Array(targets[i].buffer, targets[i].offset, targets[i].length) : undefined
      let at = 0
      for (;;) {
        const into = target === undefined || at >= target.length ? buffer : target.subarray(at, at + buffer.length)
        const n = readSync(fds[i], into, 0, into.length, at)
        if (n === 0) break
        hash.update(into.subarray(0, n))
        at += n
        Atomics.add(progress, 0, 1)
      }
      digests.set(hash.digest(), i * 32)
      sizes[i] = at
      Atomics.store(state, i, ${DONE})
    } catch {
      Atomics.store(state, i, ${FAILED})
    }
    Atomics.notify(state, i)
    Atomics.notify(progress, 0)
  }
  process.exit(0)
}))
`

/** How long a worker booted ahead waits to be given a load before it goes. */
const SPARE_MS = 30_000

let spare: { readonly worker: Worker; readonly expiry: NodeJS.Timeout } | undefined

let prepared = 0

/** Loads that hashed on a worker booted ahead (for tests). */
export function backgroundSumsPrepared(): number {
  return prepared
}

function bootWorker(): Worker {
  const worker = startEvalWorker(SOURCE)
  worker.unref()
  // A failure to start shows as no progress (the main thread may be blocked and never see the event).
  worker.on('error', () => undefined)
  return worker
}

/**
 * Boots the worker thread the next large load hashes its files on (see loadIndex and
 * readGeneration), in the background, so that its start (tens of milliseconds of its own thread)
 * overlaps what the caller does before it loads. It never keeps the process alive, and goes after
 * 30 seconds unless a load took it. Calling it again while one waits does nothing.
 */
export function prepareLoad(): void {
  if (spare !== undefined) return
  try {
    const worker = bootWorker()
    const expiry = setTimeout(() => {
      if (spare?.worker !== worker) return
      spare = undefined
      void worker.terminate()
    }, SPARE_MS)
    expiry.unref()
    spare = { worker, expiry }
    // One that died before a load took it (it could not start) is forgotten, not handed a job
    // that would wait out the stall before the load hashed the files itself.
    worker.once('exit', () => {
      if (spare?.worker !== worker) return
      clearTimeout(expiry)
      spare = undefined
    })
  } catch {
    // No worker can start here: loads hash on the calling thread, as they would anyway.
  }
}

/** The worker booted ahead, if one waits (it is the caller's now); else a new one. */
function takeWorker(): Worker {
  const ahead = spare
  if (ahead === undefined) return bootWorker()
  spare = undefined
  clearTimeout(ahead.expiry)
  prepared++
  return ahead.worker
}

/** Sums of open files, computed ahead on a worker thread. */
export class BackgroundSums {
  readonly #worker: Worker
  readonly #state: Int32Array
  readonly #sizes: Float64Array
  readonly #digests: Uint8Array
  readonly #progress: Int32Array
  readonly #targets: readonly (Uint8Array<SharedArrayBuffer> | undefined)[]
  #abandoned = false

  private constructor(fds: readonly number[], targets: readonly (Uint8Array<SharedArrayBuffer> | undefined)[]) {
    this.#state = new Int32Array(new SharedArrayBuffer(4 * fds.length))
    this.#sizes = new Float64Array(new SharedArrayBuffer(8 * fds.length))
    this.#digests = new Uint8Array(new SharedArrayBuffer(32 * fds.length))
    this.#progress = new Int32Array(new SharedArrayBuffer(4))
    this.#targets = targets
    const places = fds.map((_, i) => {
      const target = targets[i]
      return target === undefined ? null : { buffer: target.buffer, offset: target.byteOffset, length: target.byteLength }
    })
    this.#worker = takeWorker()
    // Queued until the worker listens; delivered even while this thread waits in Atomics.wait.
    this.#worker.postMessage({ fds, targets: places, state: this.#state, sizes: this.#sizes, digests: this.#digests, progress: this.#progress })
    started++
  }

  /**
   * Starts summing the open files `fds` (in this order) when they hold enough bytes to pay; else
   * undefined. The i-th file is read into `targets[i]` when given (its length must be the file's):
   * its bytes are there once {@link sum} returns its sum.
   */
  static start(fds: readonly number[], bytes: number, targets: readonly (Uint8Array<SharedArrayBuffer> | undefined)[] = []): BackgroundSums | undefined {
    if (fds.length === 0 || bytes < threshold) return undefined
    try {
      return new BackgroundSums(fds, targets)
    } catch {
      return undefined
    }
  }

  /**
   * Waits for the sum of the i-th file (and its target filled, when it had one): undefined when
   * the worker failed on it or was given up (the caller then reads and hashes the file itself).
   */
  sum(i: number): FileSum | undefined {
    let seen = Atomics.load(this.#progress, 0)
    while (!this.#abandoned && Atomics.load(this.#state, i) === PENDING) {
      if (Atomics.wait(this.#state, i, PENDING, STALL_MS) === 'timed-out') {
        const now = Atomics.load(this.#progress, 0)
        if (now === seen) this.close()
        seen = now
      }
    }
    if (this.#abandoned || Atomics.load(this.#state, i) !== DONE) {
      missed++
      return undefined
    }
    if (this.#targets[i] !== undefined) filled++
    return { bytes: this.#sizes[i] as number, sha256: Buffer.from(this.#digests.subarray(i * 32, i * 32 + 32)).toString('hex') }
  }

  /** Stops the worker (what it has not summed is not waited for). Call before closing the files. */
  close(): void {
    if (this.#abandoned) return
    this.#abandoned = true
    void this.#worker.terminate()
  }
}
