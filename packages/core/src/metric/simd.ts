/**
 * The exact scan's kernels as WebAssembly SIMD, bit for bit the JavaScript ones of kernels.ts.
 *
 * `dotAt` and `l2SquaredAt` keep four float64 partial sums, one per component index mod 4, and add
 * them left to right at the end. Here one 128-bit load takes four float32 components of a row, they
 * are widened to two float64 pairs, and two float64x2 accumulators hold exactly those four partial
 * sums, each lane summing the same products (or squared differences) in the same order; the
 * remainder (dim mod 4) goes to the first sum and the four are added as JavaScript adds them. So a
 * key is the same number whichever kernel computes it, while a scan runs faster on one thread
 * (bench/README.md, exact: "SIMD vs JS kernels").
 *
 * The module is written here byte by byte (a few kB, no toolchain): four functions, dot or
 * squared distance, over consecutive rows (one at a time) or over a list of labels (four at a
 * time, each row's sums kept as `dotAt` keeps them). They read a store's rows where they are: the
 * store keeps its rows in a WebAssembly memory (dense/vector-store.ts) whose first bytes are
 * scratch slots, one per thread that scans (the calling thread and up to `SIMD_SLOTS - 1` scan
 * pool workers), each holding the query as float64, a block of raw sums and a block of labels.
 */

/**
 * The part of the WebAssembly JavaScript API used here, typed behind a small interface: the Node
 * types this repository builds against (@types/node 20) do not declare `WebAssembly`.
 */
export interface WasmMemory {
  /** The memory's bytes (a SharedArrayBuffer: every memory made here is shared). */
  readonly buffer: SharedArrayBuffer
  /** Adds `pages` pages of 64 KiB in place; returns the previous size in pages. */
  grow(pages: number): number
}

/** A compiled module (opaque; posted to the scan pool's workers as it is). */
export interface WasmModule {
  readonly [wasmModule]: never
}
declare const wasmModule: unique symbol

interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => WasmModule
  readonly Instance: new (module: WasmModule, imports: object) => { readonly exports: object }
  readonly Memory: new (descriptor: { initial: number; maximum: number; shared: boolean }) => WasmMemory
}

const wasm = (globalThis as unknown as { readonly WebAssembly: WasmApi }).WebAssembly

/** Scratch slots at the start of a store's memory: the calling thread's (0) and scan pool workers'. */
export const SIMD_SLOTS = 8

/** Rows one kernel call computes: the raw sums block of a slot. */
export const SIMD_BLOCK_ROWS = 256

/** The largest memory a store may use: 65,535 pages of 64 KiB (just under 4 GiB). */
export const SIMD_MAX_BYTES = 65_535 * 65_536

/** Where things are in a store's memory for vectors of `dim` components. */
export interface SimdLayout {
  /** Bytes of one slot: the query (float64, 16-aligned), the sums block, the labels block, the norms block. */
  readonly slotBytes: number
  /** Offset of the first row: after `SIMD_SLOTS` slots, 16-aligned. */
  readonly dataOffset: number
}

/** The layout of a store of `dim`-component rows. */
export function simdLayout(dim: number): SimdLayout {
  const slotBytes = align16(dim * 8) + SIMD_BLOCK_ROWS * 8 + SIMD_BLOCK_ROWS * 4 + SIMD_BLOCK_ROWS * 4
  return { slotBytes, dataOffset: align16(SIMD_SLOTS * slotBytes) }
}

function align16(n: number): number {
  return Math.ceil(n / 16) * 16
}

/** The kernels as exported by an instance: every argument is a byte offset or a count. */
export interface SimdExports {
  /** Raw dot products of `n` consecutive rows from byte `rows` with the query at `q`, into float64 `out`. */
  readonly dot: (q: number, rows: number, dim: number, n: number, out: number) => void
  /** Squared distances of `n` consecutive rows, as `dot`. */
  readonly l2: (q: number, rows: number, dim: number, n: number, out: number) => void
  /** Raw dot products of the rows whose labels are the `n` uint32 at `labels` (row i at `rows + i·dim·4`). */
  readonly dotLabels: (q: number, rows: number, dim: number, n: number, out: number, labels: number) => void
  /** Squared distances of the labelled rows, as `dotLabels`. */
  readonly l2Labels: (q: number, rows: number, dim: number, n: number, out: number, labels: number) => void
  /**
   * Turns the `n` raw sums (float64) at `sums` into keys in place, as `scanKeys` does: kind 0
   * (cosine) `1 − sum·norm` with the float32 norms at `norms`, kind 1 (dot) `−sum`.
   */
  readonly keys: (sums: number, norms: number, n: number, kind: number) => void
}

/** A store's rows as the SIMD kernels see them: the memory, its layout, the module and the calling thread's instance. */
export interface SimdRows {
  /** The memory's number in this process (a new memory, a new number): what the scan pool's workers know it by. */
  readonly id: number
  readonly memory: WasmMemory
  readonly layout: SimdLayout
  readonly module: WasmModule
  readonly kernels: SimdExports
}

let compiled: WasmModule | null | undefined

/**
 * The compiled module, or null where this Node cannot run WebAssembly SIMD (stores then keep
 * their rows in plain typed arrays and scan with kernels.ts).
 */
export function simdModule(): WasmModule | null {
  if (compiled === undefined) {
    try {
      compiled = new wasm.Module(simdModuleBytes())
    } catch {
      compiled = null
    }
  }
  return compiled
}

/** An instance of the kernels over `memory` (a store's). */
export function simdInstance(module: WasmModule, memory: WasmMemory): SimdExports {
  return new wasm.Instance(module, { quarry: { memory } }).exports as SimdExports
}

/**
 * A shared memory of at least `bytes` for a store's rows (its maximum what the kernels' import
 * allows, so it grows in place), or undefined where the kernels cannot run, past 4 GiB, or when
 * the process cannot reserve another memory: each reserves address space, and V8 refuses new ones
 * after about 13,000 live ones on these machines (or far fewer under `ulimit -v`), each refusal
 * taking 0.1–0.3 s. After a refusal none is tried again until fewer memories are live than then.
 * The store keeps a typed array meanwhile.
 */
export function simdMemory(bytes: number): WasmMemory | undefined {
  if (simdModule() === null || bytes > SIMD_MAX_BYTES) return undefined
  if (refusedAt !== undefined && liveMemories >= refusedAt) return undefined
  try {
    const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil(bytes / SIMD_PAGE_BYTES)), maximum: 65_536, shared: true })
    liveMemories++
    released.register(memory, undefined)
    refusedAt = undefined
    return memory
  } catch {
    refusedAt = liveMemories
    return undefined
  }
}

/** Memories made by `simdMemory` and not yet collected. */
let liveMemories = 0
/** `liveMemories` when the last allocation was refused (undefined once one succeeds again). */
let refusedAt: number | undefined
const released = new FinalizationRegistry<undefined>(() => {
  liveMemories--
})

/**
 * Grows `memory` in place to at least `bytes`; false when the pages cannot be had (the store then
 * moves its rows to a typed array).
 */
export function growSimdMemory(memory: WasmMemory, bytes: number): boolean {
  const pages = Math.ceil(bytes / SIMD_PAGE_BYTES) - memory.buffer.byteLength / SIMD_PAGE_BYTES
  if (pages <= 0) return true
  try {
    memory.grow(pages)
    return true
  } catch {
    return false
  }
}

/**
 * A store moves its rows into a memory once it holds this many components (256 KiB of rows:
 * 1,024 rows of 64 dimensions, counting up to its highest row written). Smaller stores, whose
 * scans take microseconds either way, keep a typed array and spend no memory's address space.
 */
export const SIMD_STORE_MIN_COMPONENTS = 65_536

/** Bytes of a WebAssembly page. */
const SIMD_PAGE_BYTES = 65_536

/**
 * Writes the raw sums (`dot` or `l2` kernel) of rows `from .. to-1` (row i, or `labels[i]`) into
 * `out[from .. to-1]` through scratch slot `slot` of `memory`, and turns them into the metric's
 * keys as `scanKeys` does (kind 0 cosine: 1 − dot·(1/‖v‖); 1 dot: −dot; 2 l2: the sum). Uses only
 * its arguments, so that the scan pool's workers run its source text.
 */
export function simdScanKeys(
  kernels: SimdExports,
  memory: WasmMemory,
  slotBytes: number,
  dataOffset: number,
  slot: number,
  kind: number,
  q: Float32Array,
  invNorms: Float32Array,
  dim: number,
  labels: ArrayLike<number> | null,
  from: number,
  to: number,
  out: Float64Array,
): void {
  const block = 256 // SIMD_BLOCK_ROWS (the workers' copy sees no module constants; a test ties the two)
  const buffer = memory.buffer
  const base = slot * slotBytes
  const qBytes = Math.ceil((dim * 8) / 16) * 16
  new Float64Array(buffer, base, dim).set(q)
  const sumsAt = base + qBytes
  const labelsAt = sumsAt + block * 8
  const normsAt = labelsAt + block * 4
  const sums = new Float64Array(buffer, sumsAt, block)
  const labelBlock = new Uint32Array(buffer, labelsAt, block)
  const normBlock = new Float32Array(buffer, normsAt, block)
  // No loop here runs once per row of consecutive rows: the kernels make the keys, and blocks are
  // copied whole. A loop per row ran unoptimized through a process's first scans, and again after
  // each new store's instance (new functions) made V8 throw its optimized code away.
  for (let start = from; start < to; start += block) {
    const n = Math.min(block, to - start)
    if (labels === null) {
      const rows = dataOffset + start * dim * 4
      if (kind === 2) kernels.l2(base, rows, dim, n, sumsAt)
      else kernels.dot(base, rows, dim, n, sumsAt)
      if (kind === 0) normBlock.set(invNorms.subarray(start, start + n))
    } else {
      for (let i = 0; i < n; i++) {
        const row = labels[start + i] as number
        labelBlock[i] = row
        if (kind === 0) normBlock[i] = invNorms[row] as number
      }
      if (kind === 2) kernels.l2Labels(base, dataOffset, dim, n, sumsAt, labelsAt)
      else kernels.dotLabels(base, dataOffset, dim, n, sumsAt, labelsAt)
    }
    if (kind !== 2) kernels.keys(sumsAt, normsAt, n, kind)
    out.set(n === block ? sums : sums.subarray(0, n), start)
  }
}

/*
 * The module's bytes. Opcodes from the WebAssembly core specification 2.0 (binary format, §5.4)
 * and its SIMD instructions (prefix 0xfd).
 */

const I32 = 0x7f
const F64 = 0x7c
const V128 = 0x7b

function uleb(n: number): number[] {
  const out: number[] = []
  do {
    let byte = n & 0x7f
    n >>>= 7
    if (n !== 0) byte |= 0x80
    out.push(byte)
  } while (n !== 0)
  return out
}

function sleb(n: number): number[] {
  const out: number[] = []
  for (;;) {
    const byte = n & 0x7f
    n >>= 7
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte)
      return out
    }
    out.push(byte | 0x80)
  }
}

function vec(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()]
}

function name(text: string): number[] {
  return vec([...Buffer.from(text, 'utf8')].map((b) => [b]))
}

function section(id: number, bytes: number[]): number[] {
  return [id, ...uleb(bytes.length), ...bytes]
}

const get = (i: number): number[] => [0x20, ...uleb(i)]
const set = (i: number): number[] => [0x21, ...uleb(i)]
const i32 = (n: number): number[] => [0x41, ...sleb(n)]
const simd = (op: number): number[] => [0xfd, ...uleb(op)]
/** memarg: alignment (log2) and offset. */
const at = (align: number, offset = 0): number[] => [...uleb(align), ...uleb(offset)]
const add = [0x6a]
const mul = [0x6c]
const geU = [0x4f]
const v128Load = (offset = 0): number[] => [...simd(0x00), ...at(0, offset)]
const v128Zero = [...simd(0x0c), ...new Array<number>(16).fill(0)]
/** f64x2.promote_low_f32x4 */
const widenLow = simd(0x5f)
/** i8x16.shuffle moving the high 8 bytes low: then widenLow takes components 2 and 3. */
const highToLow = [...simd(0x0d), 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7]
const f64x2Add = simd(0xf0)
const f64x2Sub = simd(0xf1)
const f64x2Mul = simd(0xf2)
const lane = (l: number): number[] => [...simd(0x21), l]
const f32Load = [0x2a, ...at(2)]
const f64Load = [0x2b, ...at(3)]
const f64Store = (offset = 0): number[] => [0x39, ...at(3, offset)]
const f64Promote = [0xbb]
const f64Add = [0xa0]
const f64Sub = [0xa1]
const f64Mul = [0xa2]
const f64Neg = [0x9a]
const i32Eqz = [0x45]
/** `if` whose two arms each leave one f64, and the `else` between them. */
const ifF64 = [0x04, F64]
const orElse = [0x05]
const i32Load = [0x28, ...at(2)]
const block = [0x02, 0x40]
const loop = [0x03, 0x40]
const end = [0x0b]
const brIf = (depth: number): number[] => [0x0d, ...uleb(depth)]
const br = (depth: number): number[] => [0x0c, ...uleb(depth)]
const inc = (local: number, by: number): number[] => [...get(local), ...i32(by), ...add, ...set(local)]
/** The address of element `index` (a local) of `bytes`-byte elements from the address in local `base`. */
const elementAt = (base: number, index: number, bytes: number): number[] => [...get(base), ...get(index), ...i32(bytes), ...mul, ...add]
/** `f(0) … f(m - 1)`, one after another. */
const eachOf = (m: number, f: (i: number) => number[]): number[] => Array.from({ length: m }, (_, i) => f(i)).flat()
/** Runs `body` while the (unsigned) value `counter` computes is below local `limit`. */
const whileBelow = (counter: number[], limit: number, body: number[]): number[] => [...block, ...loop, ...counter, ...get(limit), ...geU, ...brIf(1), ...body, ...br(0), ...end, ...end]

/** Parameters: q, rows, dim, n, out, (labels); then these locals. */
const Q = 0
const ROWS = 1
const DIM = 2
const N = 3
const OUT = 4
const LABELS = 5

/** Listed rows per pass of a labelled kernel (each row of a pass has locals of its own). */
const LABELLED_ROWS = 4

/**
 * One kernel: `l2` picks squared distance over dot, `labelled` reads row numbers from `labels`.
 * Consecutive rows go one per pass of the outer loop: read as one stream, they come from memory
 * at its full speed at every dimension. Two rows at a time (row r and row r + 1, each read
 * forward) read as two streams a row apart, and once rows are about 480 bytes or longer (120
 * dimensions) the processor's prefetching stops keeping up with them: a scan of rows that are not
 * in the caches then ran several times slower on these machines (bench exact, 128-d). Listed
 * rows, read wherever the labels point, go `LABELLED_ROWS` per pass, each pass loading every row
 * before any arithmetic, so that their cache misses are in flight together (a list scattered
 * over memory is bound by those misses, not by the arithmetic); then the rest one at a time.
 */
function kernel(l2: boolean, labelled: boolean): number[] {
  const first = labelled ? 6 : 5
  const perPass = LABELLED_ROWS
  /** The locals of each row of a pass, numbered from `at`. */
  const ofEachRow = (at: number): number[] => Array.from({ length: perPass }, (_, i) => at + i)
  // i32 locals: the row counter, the component counter, dim rounded down to 4, the query's
  // pointer, the row stride, then one row pointer per row of a pass
  const R = first
  const K = first + 1
  const DIM4 = first + 2
  const QK = first + 3
  const STRIDE = first + 4
  const P = ofEachRow(first + 5)
  const i32Locals = 5 + perPass
  // v128 locals: the query's pairs and a scratch, then per row its two accumulators and its loaded components
  const QL = first + i32Locals
  const QH = QL + 1
  const X = QL + 2
  const ACC_LO = ofEachRow(QL + 3)
  const ACC_HI = ofEachRow(QL + 3 + perPass)
  const V = ofEachRow(QL + 3 + 2 * perPass)
  const v128Locals = 3 + 3 * perPass
  // f64 locals: a scratch, then per row its scalar sum
  const XF = QL + v128Locals
  const S = ofEachRow(XF + 1)
  const f64Locals = 1 + perPass

  /** Byte offset of row number `r + plus` (consecutive) or of `labels[r + plus]`. */
  const rowPtr = (plus: number): number[] =>
    labelled
      ? [...get(ROWS), ...get(LABELS), ...get(R), ...i32(plus), ...add, ...i32(4), ...mul, ...add, ...i32Load, ...get(STRIDE), ...mul, ...add]
      : [...get(ROWS), ...get(R), ...i32(plus), ...add, ...get(STRIDE), ...mul, ...add]

  /** acc += term(v, q) for a vector `v` (its low or high pair widened) and a query pair `qp`. */
  const accumulate = (acc: number, v: number, high: boolean, qp: number): number[] => {
    const widened = high ? [...get(v), ...get(v), ...highToLow, ...widenLow] : [...get(v), ...widenLow]
    const term = l2 ? [...widened, ...get(qp), ...f64x2Sub, 0x22, ...uleb(X), ...get(X), ...f64x2Mul] : [...widened, ...get(qp), ...f64x2Mul]
    return [...get(acc), ...term, ...f64x2Add, ...set(acc)]
  }

  /** sum += term(row component at ptr, query component at QK), scalar. */
  const accumulateOne = (sum: number, ptr: number): number[] => {
    const component = [...get(ptr), ...f32Load, ...f64Promote]
    const term = l2 ? [...component, ...get(QK), ...f64Load, ...f64Sub, 0x22, ...uleb(XF), ...get(XF), ...f64Mul] : [...component, ...get(QK), ...f64Load, ...f64Mul]
    return [...get(sum), ...term, ...f64Add, ...set(sum)]
  }

  /** out[r + plus] = ((s + lane1(lo)) + lane0(hi)) + lane1(hi): the partial sums added as JavaScript does. */
  const store = (plus: number, s: number, lo: number, hi: number): number[] => [
    ...elementAt(OUT, R, 8),
    ...get(s),
    ...get(lo),
    ...lane(1),
    ...f64Add,
    ...get(hi),
    ...lane(0),
    ...f64Add,
    ...get(hi),
    ...lane(1),
    ...f64Add,
    ...f64Store(plus * 8),
  ]

  /** The `m` rows at P[0..m-1]: vector loop, remainder loop, stores. */
  const rows = (m: number): number[] => {
    const each = (f: (i: number) => number[]): number[] => eachOf(m, f)
    return [
      ...each((i) => [...v128Zero, ...set(ACC_LO[i] as number), ...v128Zero, ...set(ACC_HI[i] as number)]),
      ...i32(0),
      ...set(K),
      ...get(Q),
      ...set(QK),
      ...whileBelow(get(K), DIM4, [
        ...get(QK),
        ...v128Load(0),
        ...set(QL),
        ...get(QK),
        ...v128Load(16),
        ...set(QH),
        // Every row's load before any arithmetic: their cache misses are in flight together.
        ...each((i) => [...get(P[i] as number), ...v128Load(), ...set(V[i] as number)]),
        ...each((i) => [...accumulate(ACC_LO[i] as number, V[i] as number, false, QL), ...accumulate(ACC_HI[i] as number, V[i] as number, true, QH), ...inc(P[i] as number, 16)]),
        ...inc(QK, 32),
        ...inc(K, 4),
      ]),
      ...each((i) => [...get(ACC_LO[i] as number), ...lane(0), ...set(S[i] as number)]),
      ...whileBelow(get(K), DIM, [...each((i) => [...accumulateOne(S[i] as number, P[i] as number), ...inc(P[i] as number, 4)]), ...inc(QK, 8), ...inc(K, 1)]),
      ...each((i) => store(i, S[i] as number, ACC_LO[i] as number, ACC_HI[i] as number)),
    ]
  }

  /** Rows `m` at a time while r + m − 1 < n. */
  const pass = (m: number): number[] =>
    whileBelow(m > 1 ? [...get(R), ...i32(m - 1), ...add] : get(R), N, [...eachOf(m, (i) => [...rowPtr(i), ...set(P[i] as number)]), ...rows(m), ...inc(R, m)])

  const body = [
    ...get(DIM),
    ...i32(-4),
    0x71, // i32.and
    ...set(DIM4),
    ...get(DIM),
    ...i32(4),
    ...mul,
    ...set(STRIDE),
    ...i32(0),
    ...set(R),
    // Listed rows LABELLED_ROWS at a time first; then one at a time (all of them when consecutive, the rest of a list).
    ...(labelled ? pass(LABELLED_ROWS) : []),
    ...pass(1),
    ...end,
  ]
  const locals = vec([
    [...uleb(i32Locals), I32],
    [...uleb(v128Locals), V128],
    [...uleb(f64Locals), F64],
  ])
  const code = [...locals, ...body]
  return [...uleb(code.length), ...code]
}

/**
 * `keys(sums, norms, n, kind)`: each of the `n` float64 sums at `sums` becomes its key in place,
 * with the arithmetic of `scanKeys` (metric/kernels.ts) in its order: kind 0 `1 − sum · norm` (the
 * float32 norm at `norms + 4i` widened), otherwise `−sum`.
 */
function keysFunction(): number[] {
  const SUMS = 0
  const NORMS = 1
  const COUNT = 2
  const KIND = 3
  const I = 4
  const P = 5
  /** f64.const 1 (its little-endian IEEE 754 bits). */
  const f64One = [0x44, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]
  const body = [
    ...i32(0),
    ...set(I),
    ...whileBelow(get(I), COUNT, [
      ...elementAt(SUMS, I, 8),
      ...set(P),
      ...get(P),
      ...get(KIND),
      ...i32Eqz,
      ...ifF64,
      ...f64One,
      ...get(P),
      ...f64Load,
      ...elementAt(NORMS, I, 4),
      ...f32Load,
      ...f64Promote,
      ...f64Mul,
      ...f64Sub,
      ...orElse,
      ...get(P),
      ...f64Load,
      ...f64Neg,
      ...end,
      ...f64Store(),
      ...inc(I, 1),
    ]),
    ...end,
  ]
  const code = [...vec([[...uleb(2), I32]]), ...body]
  return [...uleb(code.length), ...code]
}

/** The module: imports `quarry.memory` (shared, up to 65,536 pages), exports the four kernels and `keys`. */
function simdModuleBytes(): Uint8Array {
  const params4 = [0x60, ...vec([[I32], [I32], [I32], [I32]]), ...vec([])]
  const params5 = [0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), ...vec([])]
  const params6 = [0x60, ...vec([[I32], [I32], [I32], [I32], [I32], [I32]]), ...vec([])]
  const memoryImport = [...name('quarry'), ...name('memory'), 0x02, 0x03, ...uleb(1), ...uleb(65_536)]
  const exports: Array<[string, number]> = [
    ['dot', 0],
    ['l2', 1],
    ['dotLabels', 2],
    ['l2Labels', 3],
    ['keys', 4],
  ]
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d, // \0asm
    0x01,
    0x00,
    0x00,
    0x00, // version 1
    ...section(1, vec([params5, params6, params4])),
    ...section(2, vec([memoryImport])),
    ...section(3, vec([uleb(0), uleb(0), uleb(1), uleb(1), uleb(2)])),
    ...section(
      7,
      vec(exports.map(([n, index]) => [...name(n), 0x00, ...uleb(index)])),
    ),
    ...section(10, vec([kernel(false, false), kernel(true, false), kernel(false, true), kernel(true, true), keysFunction()])),
  ])
}
