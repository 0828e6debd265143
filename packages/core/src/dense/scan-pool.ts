import { availableParallelism } from 'node:os'
import type { Worker } from 'node:worker_threads'
import { startEvalWorker } from '../util/eval-worker.js'
import { cosineKeyAt, dotAt, dotAt2, dotKeyAt, keyAt, l2KeyAt, l2SquaredAt, l2SquaredAt2, metricKind, scanKeys } from '../metric/kernels.js'
import { SIMD_SLOTS, simdScanKeys, type SimdExports, type SimdRows, type WasmMemory, type WasmModule } from '../metric/simd.js'
import type { Metric } from '../metric/metric.js'

/** How exact scans (brute force over many rows: `dense: 'exact'`, small indexes, filtered scans) use the machine's cores. */
export interface ScanOptions {
  /**
   * Worker threads that compute one exact scan's distances beside the calling thread, from a pool
   * the process shares (started by the first scan that needs it; it never keeps the process
   * alive; `search` stays synchronous). 0 scans on the calling thread only. `'auto'` is one per
   * core beside the caller's, at most 7 (`os.availableParallelism() − 1`). Results are identical
   * either way. @defaultValue 'auto'
   */
  workers?: number | 'auto'
  /**
   * Scans of at most this many vector components (rows × dimensions) stay on the calling thread,
   * where handing work to other threads costs more than it saves. @defaultValue 1000000 (10,000 rows of 100-d)
   */
  parallelAbove?: number
}

export type ResolvedScanOptions = Required<ScanOptions>

export const SCAN_DEFAULTS: ResolvedScanOptions = { workers: 'auto', parallelAbove: 1_000_000 }

/**
 * A process-wide pool of worker threads that compute the keys of one exact scan together with the
 * calling thread, over shared memory, while `search` stays synchronous:
 *
 * - the vector store's rows and norms are in shared memory (`VectorStore.shared`); the keys
 *   are written into a shared Float64Array, one per scanned row;
 * - where the rows are in a WebAssembly memory, every thread computes keys with the SIMD kernels
 *   (its own instance and its own scratch slot: the caller 0, worker w slot w + 1; workers beyond
 *   the slots use kernels.ts, which give the same keys). A worker is sent a memory and the module
 *   once, with its first job over that memory (or ahead of it: a load shares the memory it read
 *   the rows into, `share`), and keeps its instance for the jobs that follow (one per memory:
 *   posting a memory with every job would add a fixed cost to every job);
 * - the scan is cut into chunks of rows; every thread (the caller too) claims the next chunk with
 *   `Atomics.add` until none is left, so a busy or not yet started worker only does less;
 * - the caller waits with `Atomics.wait` (about one chunk's time) for the chunks that workers
 *   claimed, computes any still unfinished itself (a worker waiting for a core on a busy machine
 *   never holds a search up for long; keys do not depend on who computes them), then selects the
 *   top k itself, with the index's liveness and id tie rule (neither crosses threads), in the
 *   order of the single-thread scan: same keys (the same kernel source runs on every thread, see
 *   metric/kernels.ts), same pushes, the same answer.
 *
 * Workers are created on the first scan that asks for them, are `unref`ed (they never keep a
 * process alive) and are built from source text (`eval`), so the pool runs the same from the
 * TypeScript sources, from dist/ and from an installed tarball. A worker that fails sends that
 * scan and every later one back to the calling thread alone (with a process warning).
 *
 * A worker is retired (terminated; the next scan that needs its slot starts a new one) once a
 * shared buffer it was posted, a store's memory or rows, is collected here. A worker's isolate lets
 * go of a shared buffer only when it collects its own garbage, which an idle worker never does:
 * told to drop its references instead, it kept every dropped index's rows (and their memory's
 * address space) alive for the life of the process.
 */
class ScanPool {
  /** By slot (worker w computes with scratch slot w + 1); a retired worker's slot is empty until a scan needs it. */
  #workers: (Worker | undefined)[] = []
  /** The memories (their ids) each worker was sent, and so holds an instance over. */
  #sent: Set<number>[] = []
  #memoriesSent = 0
  /** The shared buffers (by their number, see #owner) each worker was posted, and so may still hold. */
  #reached: Set<number>[] = []
  readonly #owners = new WeakMap<object, number>()
  #ownersSeen = 0
  readonly #collected = new FinalizationRegistry<number>((owner) => this.#retireReaching(owner))
  #retired = 0
  #keys = new Float64Array(new SharedArrayBuffer(8))
  #labels = new Uint32Array(new SharedArrayBuffer(4))
  #failed = false
  #chunksByWorkers = 0
  #chunksByWorkerKernels = 0
  #takenOver = 0

  /** Worker threads running now (started and not retired). */
  get size(): number {
    return this.#workers.filter((worker) => worker !== undefined).length
  }

  /** Workers retired so far: each had been posted a shared buffer since collected here. */
  get retired(): number {
    return this.#retired
  }

  /** Chunks of rows the workers have computed so far (the calling thread computes the others). */
  get chunksByWorkers(): number {
    return this.#chunksByWorkers
  }

  /** Of {@link chunksByWorkers}, those a worker computed with its own SIMD instance (the rest, with kernels.ts). */
  get chunksByWorkerKernels(): number {
    return this.#chunksByWorkerKernels
  }

  /** Times a memory (and the module) was sent to a worker: once per worker and memory. */
  get memoriesSent(): number {
    return this.#memoriesSent
  }

  /** Memories the workers hold an instance over now (sent and not yet forgotten), summed over workers. */
  get memoriesHeld(): number {
    let held = 0
    for (const sent of this.#sent) held += sent?.size ?? 0
    return held
  }

  /** Scans in which the calling thread computed chunks a worker had claimed but not finished. */
  get takenOver(): number {
    return this.#takenOver
  }

  /**
   * The keys of the scan's rows (`keys[i]` for row i, or for `labels[i]`), computed by the calling
   * thread and up to `workers` pool threads; valid until the next call. Undefined when the pool
   * has failed: the caller then scans alone.
   */
  keys(scan: KeyScan, workers: number): Float64Array | undefined {
    if (this.#failed) return undefined
    this.#start(workers)
    const job = this.#job(scan, workers)
    const owner = this.#ownerOf(scan)
    for (let w = 0; w < workers; w++) {
      this.#reach(w, owner)
      ;(this.#workers[w] as Worker).postMessage(this.#jobFor(w, job, scan.simd))
    }
    const started = performance.now()
    // The calling thread's kernels (slot 0); functions are not posted, each worker makes its own.
    const simd = scan.simd === undefined ? null : { kernels: scan.simd.kernels, memory: scan.simd.memory, slot: 0, scan: simdScanKeys }
    const own = claimChunks(job, scanKeys, simd, false)
    // Wait about one chunk's time for the chunks workers hold, then compute what is left here.
    const grace = own > 0 ? (performance.now() - started) / own : MIN_GRACE_MS
    const finished = waitForChunks(job.control, job.chunks, Math.max(MIN_GRACE_MS, grace))
    if (Atomics.load(job.control, FAILED) !== 0) {
      this.#fail('a scan worker failed')
      return undefined
    }
    this.#chunksByWorkers += Atomics.load(job.control, BY_WORKERS)
    this.#chunksByWorkerKernels += Atomics.load(job.control, BY_WORKER_KERNELS)
    if (!finished) this.#takeOver(job, simd)
    return job.keys
  }

  /**
   * Computes the chunks a worker holds but has not finished (it waits for a core, on a busy
   * machine): the keys are the same whoever computes them. The worker still writes them later,
   * so the next scans get fresh buffers.
   */
  #takeOver(job: ScanJob, simd: ThreadSimd | null): void {
    for (let chunk = 0; chunk < job.chunks; chunk++) {
      if (Atomics.load(job.control, CHUNK_DONE + chunk) === 0) scanChunk(job, chunk, scanKeys, simd)
    }
    this.#keys = new Float64Array(new SharedArrayBuffer(this.#keys.length * 8))
    this.#labels = new Uint32Array(new SharedArrayBuffer(this.#labels.length * 4))
    this.#takenOver++
  }

  #job(scan: KeyScan, workers: number): ScanJob {
    const { count } = scan
    if (this.#keys.length < count) this.#keys = new Float64Array(new SharedArrayBuffer(grown(this.#keys.length, count) * 8))
    let labels: Uint32Array | null = null
    if (scan.labels) {
      if (this.#labels.length < count) this.#labels = new Uint32Array(new SharedArrayBuffer(grown(this.#labels.length, count) * 4))
      labels = this.#labels
      labels.set(scan.labels)
    }
    const chunkRows = Math.max(MIN_CHUNK_ROWS, Math.ceil(count / ((workers + 1) * CHUNKS_PER_THREAD)))
    const chunks = Math.ceil(count / chunkRows)
    return {
      control: new Int32Array(new SharedArrayBuffer((CHUNK_DONE + chunks) * 4)),
      metric: scan.metric,
      kind: metricKind(scan.metric),
      // A copy: the caller's query may be a view of a big buffer, which posting would clone whole.
      query: scan.query.slice(),
      data: scan.data,
      invNorms: scan.invNorms,
      dim: scan.dim,
      simd: scan.simd === undefined ? null : { id: scan.simd.id, slotBytes: scan.simd.layout.slotBytes, dataOffset: scan.simd.layout.dataOffset, memory: undefined, module: undefined },
      labels,
      keys: this.#keys,
      count,
      chunkRows,
      chunks,
    }
  }

  /** The job as worker `w` gets it: with the memory and module when the worker has not been sent them. */
  #jobFor(w: number, job: ScanJob, rows: SimdRows | undefined): ScanJob {
    if (rows === undefined || !this.#markSent(w, rows)) return job
    return { ...job, simd: { id: rows.id, slotBytes: rows.layout.slotBytes, dataOffset: rows.layout.dataOffset, memory: rows.memory, module: rows.module } }
  }

  /**
   * Sends the first `workers` pool threads (started if need be) a store's memory and module ahead
   * of its first scan, as that scan would: each makes its
   * instance over it in the background, so that scan runs on every thread from its first chunk
   * instead of on the calling thread while they instantiate. A load of an exact index calls it
   * once its rows are read.
   */
  share(rows: SimdRows, workers: number): void {
    if (this.#failed) return
    this.#start(workers)
    const owner = this.#owner(rows.memory)
    for (let w = 0; w < workers; w++) {
      if (!this.#markSent(w, rows)) continue
      this.#reach(w, owner)
      ;(this.#workers[w] as Worker).postMessage({ hold: { id: rows.id, memory: rows.memory, module: rows.module } })
    }
  }

  /** Notes that worker `w` is sent `rows`' memory and module now: false if it was already, or has no SIMD slot. */
  #markSent(w: number, rows: SimdRows): boolean {
    if (w + 1 >= SIMD_SLOTS) return false
    const sent = (this.#sent[w] ??= new Set())
    if (sent.has(rows.id)) return false
    sent.add(rows.id)
    this.#memoriesSent++
    return true
  }

  /**
   * The number of the shared buffer a scan's job brings a worker that frees the store's rows once collected: the
   * rows' memory when they are in one (its `buffer` object changes as it grows, the memory does
   * not), else the rows' SharedArrayBuffer. Not the norms': they move to a new buffer at each
   * growth of a live store (so watching them would retire the workers at every growth), and the
   * old ones a worker keeps, 4 bytes a row, add up to less than the store's own norms.
   */
  #ownerOf(scan: KeyScan): number {
    return this.#owner(scan.simd?.memory ?? scan.data.buffer)
  }

  /** The number of a shared buffer (or memory), watched for collection from the first time it is posted. */
  #owner(buffer: object): number {
    let owner = this.#owners.get(buffer)
    if (owner === undefined) {
      owner = ++this.#ownersSeen
      this.#owners.set(buffer, owner)
      this.#collected.register(buffer, owner)
    }
    return owner
  }

  #reach(w: number, owner: number): void {
    ;(this.#reached[w] ??= new Set()).add(owner)
  }

  /** A shared buffer was collected here: the workers that were posted it are retired (see the class). */
  #retireReaching(owner: number): void {
    this.#workers.forEach((worker, w) => {
      if (worker === undefined || !this.#reached[w]?.has(owner)) return
      void worker.terminate()
      this.#workers[w] = undefined
      this.#sent[w] = new Set()
      this.#reached[w] = new Set()
      this.#retired++
    })
  }

  /**
   * Starts up to `workers` pool threads now (they boot in the background), so that the first scan
   * does not wait for them: a load that read its vectors into shared memory calls it.
   */
  prepare(workers: number): void {
    if (!this.#failed) this.#start(workers)
  }

  #start(workers: number): void {
    for (let w = 0; w < workers; w++) {
      if (this.#workers[w] !== undefined) continue
      const worker = startEvalWorker(WORKER_SOURCE, { name: 'quarry-scan', workerData: { slot: w + 1 } })
      worker.unref()
      worker.on('error', () => this.#fail('a scan worker exited with an error'))
      this.#workers[w] = worker
    }
  }

  #fail(why: string): void {
    if (this.#failed) return
    this.#failed = true
    for (const worker of this.#workers) void worker?.terminate()
    this.#workers = []
    this.#sent = []
    this.#reached = []
    process.emitWarning(`${why}; Quarry's exact scans run on the calling thread from now on.`, { code: 'QUARRY_SCAN_POOL' })
  }
}

/** One scan, as the threads computing its keys see it. */
interface KeyScan {
  readonly metric: Metric
  /** The prepared query (unit length for cosine). */
  readonly query: Float32Array
  /** Rows and 1/‖v‖, in shared memory (`VectorStore.shared`). */
  readonly data: Float32Array
  readonly invNorms: Float32Array
  readonly dim: number
  /** The labels to scan, in order (`count` of them); undefined to scan rows `0..count-1`. */
  readonly labels: ArrayLike<number> | undefined
  /** Rows to scan: the extent, or the number of labels. */
  readonly count: number
  /** The SIMD kernels over the rows' memory (the calling thread's instance), when the rows are in one. */
  readonly simd: SimdRows | undefined
}

/**
 * The SIMD kernels a thread computes a job's keys with: its instance, the memory it is over, its
 * scratch slot and `simdScanKeys` itself (passed, not imported: a test runner's module transform
 * renames imported functions in the source text the workers run).
 */
interface ThreadSimd {
  readonly kernels: SimdExports
  readonly memory: WasmMemory
  readonly slot: number
  readonly scan: typeof simdScanKeys
}

/**
 * The pool threads a scan of `components` (rows × dimensions) uses under the index's `scan`
 * options: none at or below `parallelAbove`, else `workers` ('auto': {@link defaultScanWorkers}).
 */
export function scanWorkers(options: ResolvedScanOptions, components: number): number {
  if (components <= options.parallelAbove) return 0
  return options.workers === 'auto' ? defaultScanWorkers() : options.workers
}

/** The pool threads a scan may use by default: one per core beside the caller's, at most 7. */
export function defaultScanWorkers(): number {
  return Math.max(0, Math.min(availableParallelism(), MAX_DEFAULT_THREADS) - 1)
}

let pool: ScanPool | undefined

/** The process's pool (created empty; workers start with the first scan that asks for them). */
export function scanPool(): ScanPool {
  pool ??= new ScanPool()
  return pool
}

const MAX_DEFAULT_THREADS = 8
/** Chunks per thread: small enough to balance threads slowed by other work, big enough that claiming is free. */
const CHUNKS_PER_THREAD = 8
const MIN_CHUNK_ROWS = 256
/** The least time the calling thread waits for workers' chunks before computing them itself. */
const MIN_GRACE_MS = 0.05

/** Cells of a job's control array. */
const NEXT = 0
const DONE = 1
const FAILED = 2
const BY_WORKERS = 3
/** Of those, the chunks workers computed with their SIMD instance. */
const BY_WORKER_KERNELS = 4
/** Then one cell per chunk: 1 once its keys are written. */
const CHUNK_DONE = 5

/** What is posted to the workers (typed arrays over SharedArrayBuffers are shared, not copied). */
interface ScanJob {
  readonly control: Int32Array
  readonly metric: string
  /** `metricKind(metric)`. */
  readonly kind: number
  readonly query: Float32Array
  readonly data: Float32Array
  readonly invNorms: Float32Array
  readonly dim: number
  /** The rows' memory and where things are in it, when the rows are in one (posted to the workers). */
  readonly simd: {
    /** The memory's id (`SimdRows.id`). */
    readonly id: number
    readonly slotBytes: number
    readonly dataOffset: number
    /** The memory and the module, in the first job a worker gets over this memory only. */
    readonly memory: WasmMemory | undefined
    readonly module: WasmModule | undefined
  } | null
  readonly labels: Uint32Array | null
  readonly keys: Float64Array
  readonly count: number
  readonly chunkRows: number
  readonly chunks: number
}

/**
 * Claims chunks of the job until none is left, writing their keys, and returns how many it did;
 * on any failure marks the job failed. Runs on every thread, so it uses only its arguments and
 * `scanChunk` (workers run their source text).
 */
function claimChunks(job: ScanJob, scan: typeof scanKeys, simd: ThreadSimd | null, worker: boolean): number {
  // Cells as literals (DONE 1, FAILED 2, BY_WORKERS 3, BY_WORKER_KERNELS 4): the workers' copy sees no module constants.
  const c = job.control
  let done = 0
  try {
    for (let chunk = Atomics.add(c, 0, 1); chunk < job.chunks; chunk = Atomics.add(c, 0, 1)) {
      scanChunk(job, chunk, scan, simd)
      done++
      if (worker) {
        Atomics.add(c, 3, 1)
        if (simd !== null) Atomics.add(c, 4, 1)
      }
      if (Atomics.add(c, 1, 1) + 1 === job.chunks) Atomics.notify(c, 1)
    }
  } catch {
    Atomics.store(c, 2, 1)
    Atomics.notify(c, 1)
  }
  return done
}

/** Writes the keys of one chunk (with the thread's SIMD kernels when it has them) and marks it done (cell 5 + chunk, CHUNK_DONE). */
function scanChunk(job: ScanJob, chunk: number, scan: typeof scanKeys, simd: ThreadSimd | null): void {
  const from = chunk * job.chunkRows
  const to = Math.min(job.count, from + job.chunkRows)
  const rows = job.simd
  if (simd !== null && rows !== null) {
    simd.scan(simd.kernels, simd.memory, rows.slotBytes, rows.dataOffset, simd.slot, job.kind, job.query, job.invNorms, job.dim, job.labels, from, to, job.keys)
  } else {
    scan(job.metric, job.query, job.data, job.invNorms, job.dim, job.labels, from, to, job.keys)
  }
  Atomics.store(job.control, 5 + chunk, 1)
}

/** Waits up to `ms` for every chunk to be done (or a thread to fail); whether all are done. */
function waitForChunks(control: Int32Array, chunks: number, ms: number): boolean {
  const deadline = performance.now() + ms
  for (let done = Atomics.load(control, DONE); done < chunks; done = Atomics.load(control, DONE)) {
    const left = deadline - performance.now()
    if (Atomics.load(control, FAILED) !== 0 || left <= 0) return false
    Atomics.wait(control, DONE, done, left)
  }
  return true
}

function grown(length: number, needed: number): number {
  let n = Math.max(1024, length)
  while (n < needed) n *= 2
  return n
}

/**
 * A worker: the kernels' and `claimChunks`' own source text, then a message loop. When its slot
 * exists, it makes its SIMD instance over a memory when a job brings one (instantiating the
 * compiled module is not free) and keeps it, by the memory's id, for the following jobs over that
 * memory, for its life (see ScanPool on retired workers); a `hold` message (ScanPool.share) brings one ahead of any job. `__name` is the helper some TypeScript loaders (esbuild's keepNames) wrap functions in.
 * It takes `worker_threads` with `import()` (see startEvalWorker); jobs posted before that settles
 * wait in the port.
 */
const WORKER_SOURCE = [
  "'use strict'",
  'const __name = (f) => f',
  ...[dotAt, l2SquaredAt, dotAt2, l2SquaredAt2, cosineKeyAt, dotKeyAt, l2KeyAt, keyAt, metricKind, scanKeys, simdScanKeys, scanChunk, claimChunks].map(String),
  'const held = new Map()',
  'const hold = (rows) => held.set(rows.id, { memory: rows.memory, kernels: new WebAssembly.Instance(rows.module, { quarry: { memory: rows.memory } }).exports })',
  "import('node:worker_threads').then(({ parentPort, workerData }) => parentPort.on('message', (job) => {",
  '  if (job.hold !== undefined) {',
  '    hold(job.hold)',
  '    return',
  '  }',
  '  let simd = null',
  `  if (job.simd !== null && workerData.slot < ${SIMD_SLOTS}) {`,
  '    const rows = job.simd',
  '    if (rows.memory !== undefined) hold(rows)',
  '    const own = held.get(rows.id)',
  '    if (own !== undefined) simd = { kernels: own.kernels, memory: own.memory, slot: workerData.slot, scan: simdScanKeys }',
  '  }',
  '  claimChunks(job, scanKeys, simd, true)',
  '}))',
].join('\n')
