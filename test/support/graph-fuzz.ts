import { closeSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import type { Graph as GraphClass } from '@quarry/hnsw'
import { gaussian, prng } from './random.js'

// Crafted graph bytes against either build of @quarry/hnsw's Graph (test/property/graph-fuzz.test.ts):
// a saved graph mutated (bit flips, overwritten bytes, header and element fields set to edge values)
// and truncated, then loaded (from memory and from an open file), searched, added to, saved and
// loaded again. `exercise` runs in the test's process for the WebAssembly build and in a child
// process for the native one (a crash there is a failed case with its seed, not a lost test
// worker); it returns what it saw, and what it saw that should not be, as data.

type GraphBuild = typeof GraphClass

/** hnswlib's saveIndex header on 64-bit: each field's offset and width. */
const HEADER_FIELDS = {
  offsetLevel0: [0, 'u64'],
  maxElements: [8, 'u64'],
  count: [16, 'u64'],
  sizeDataPerElement: [24, 'u64'],
  labelOffset: [32, 'u64'],
  offsetData: [40, 'u64'],
  maxLevel: [48, 'i32'],
  enterpoint: [52, 'u32'],
  maxM: [56, 'u64'],
  maxM0: [64, 'u64'],
  m: [72, 'u64'],
  mult: [80, 'f64'],
  efConstruction: [88, 'u64'],
} as const
const HEADER = 96
type Field = keyof typeof HEADER_FIELDS

/** Every refusal saved-graph.h makes; "not enough memory" is none of them: the bounds come first. */
export const REFUSALS = new Set([
  'it ends early',
  'its degree is invalid',
  "its element layout does not match the index's dimensions",
  'its element counts are invalid',
  'it reserves room for more elements than twice its count plus 1024',
  'its level multiplier is invalid',
  'its construction breadth is invalid',
  'it is empty but has an entry point',
  'its entry point is invalid',
  'a link list is invalid',
  'a label is not a uint32',
  'two elements have the same label',
  'it has bytes after the last element',
  'an element has more layers than the entry point',
  'a link list is too long',
  'a link names no element of its layer',
])

/** A graph to mutate: how it was made, and its bytes. */
export interface BaseGraph {
  readonly space: 'l2' | 'ip'
  readonly dim: number
  readonly bytes: Uint8Array
}

/** Saved graphs of a few shapes (built by `Build`): many layers (M = 2), a common one, and an empty one. */
export function baseGraphs(Build: GraphBuild, dir: string): BaseGraph[] {
  const make = (space: 'l2' | 'ip', dim: number, m: number, count: number, seed: number): BaseGraph => {
    const rand = prng(seed)
    const g = new Build(space, dim)
    g.init(8, m, 20, seed)
    for (let i = 0; i < count; i++) {
      if (g.size() >= g.maxElements()) g.resize(g.maxElements() * 2)
      g.add(Float32Array.from({ length: dim }, () => gaussian(rand)), 5 * i + 1)
    }
    for (let i = 0; i < count; i += 7) g.markDelete(5 * i + 1)
    const file = join(dir, `base-${space}-${dim}-${m}-${count}.bin`)
    g.saveSync(file)
    const bytes = readFileSync(file)
    rmSync(file)
    return { space, dim, bytes }
  }
  return [make('ip', 5, 2, 60, 3), make('l2', 8, 6, 150, 4), make('l2', 8, 6, 0, 5)]
}

/** One change to a saved graph's bytes; positions are fractions of the part they fall in. */
type Edit =
  | { readonly kind: 'flip'; readonly at: number; readonly bit: number }
  | { readonly kind: 'bytes'; readonly at: number; readonly bytes: readonly number[] }
  | { readonly kind: 'field'; readonly field: Field; readonly value: FieldValue }
  | { readonly kind: 'element'; readonly at: number; readonly part: 'links' | 'link' | 'label' | 'deleted'; readonly value: bigint }
  | { readonly kind: 'upper'; readonly at: number; readonly value: number }
  | { readonly kind: 'same-label'; readonly at: number; readonly from: number }

/** A header field's new value: a constant, or relative to the graph's own count. */
type FieldValue = { readonly to: bigint } | { readonly count: bigint; readonly plus: bigint } | { readonly float: number }

export interface FuzzCase {
  readonly base: number
  readonly edits: readonly Edit[]
  /** Keep this fraction of the bytes (after the edits); 1 keeps all. */
  readonly keep: number
  readonly appended: readonly number[]
  readonly seed: number
}

const fraction = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true })
const edgeValue = fc.oneof(
  fc.constantFrom(0n, 1n, 2n, 3n, 0x7fffn, 0xffffn, 0x7fff_ffffn, 0xffff_ffffn, 1n << 32n, 1n << 63n, (1n << 64n) - 1n),
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
  fc.bigInt({ min: 0n, max: 4095n }),
)
const fieldValue: fc.Arbitrary<FieldValue> = fc.oneof(
  edgeValue.map((to) => ({ to })),
  // Around the loader's bounds: count ± 1, and twice the count plus 1024 ± 1.
  fc.record({ count: fc.constantFrom(1n, 2n), plus: fc.constantFrom(-1n, 0n, 1n, 1023n, 1024n, 1025n) }),
  fc.double().map((float) => ({ float })),
)
// The layout fields are checked against the dimensions first: edited often, they would hide the rest.
const layoutFields: Field[] = ['offsetLevel0', 'sizeDataPerElement', 'labelOffset', 'offsetData']
const otherFields = (Object.keys(HEADER_FIELDS) as Field[]).filter((f) => !layoutFields.includes(f))
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fraction, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('bytes' as const), at: fraction, bytes: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant('field' as const), field: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...otherFields) }, { weight: 1, arbitrary: fc.constantFrom(...layoutFields) }), value: fieldValue }),
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('element' as const), at: fraction, part: fc.constantFrom('links' as const, 'link' as const, 'label' as const, 'deleted' as const), value: fc.oneof(edgeValue, fc.bigInt({ min: 0n, max: 300n })) }),
  },
  fc.record({ kind: fc.constant('upper' as const), at: fraction, value: fc.oneof(fc.constantFrom(0, 1, 4, 0xffff, 0xffff_ffff), fc.nat()) }),
  fc.record({ kind: fc.constant('same-label' as const), at: fraction, from: fraction }),
)

export const fuzzCaseArb = (bases: number): fc.Arbitrary<FuzzCase> =>
  fc.record({
    base: fc.integer({ min: 0, max: bases - 1 }),
    edits: fc.array(editArb, { minLength: 1, maxLength: 3 }),
    keep: fc.oneof({ weight: 3, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fraction }),
    appended: fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 12 }) }),
    seed: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  })

const u64 = (view: DataView, at: number): number => Number(view.getBigUint64(at, true))

/** The case's bytes: the base graph's, edited, truncated and extended. */
export function mutated(base: BaseGraph, c: FuzzCase): Uint8Array {
  const out = Uint8Array.from(base.bytes)
  const original = new DataView(base.bytes.buffer, base.bytes.byteOffset, base.bytes.byteLength)
  const count = u64(original, 16)
  const perElement = u64(original, 24)
  const labelOffset = u64(original, 32)
  const upperStart = HEADER + count * perElement
  const put = (at: number, bytes: ArrayLike<number>): void => {
    for (let i = 0; i < bytes.length && at + i < out.length; i++) out[at + i] = bytes[i] as number
  }
  for (const edit of c.edits) {
    if (edit.kind === 'flip') {
      const at = Math.floor(edit.at * out.length)
      out[at] = (out[at] as number) ^ (1 << edit.bit)
    } else if (edit.kind === 'bytes') {
      put(Math.floor(edit.at * out.length), edit.bytes)
    } else if (edit.kind === 'field') {
      const [at, width] = HEADER_FIELDS[edit.field]
      const v = edit.value
      const value = 'to' in v ? v.to : 'count' in v ? BigInt(count) * v.count + v.plus : 0n
      const field = new DataView(new ArrayBuffer(8))
      if (width === 'f64') field.setFloat64(0, 'float' in v ? v.float : Number(value), true)
      else field.setBigUint64(0, BigInt.asUintN(64, value), true)
      put(at, new Uint8Array(field.buffer, 0, width === 'u64' || width === 'f64' ? 8 : 4))
    } else if (edit.kind === 'element' && count > 0) {
      const element = HEADER + Math.floor(edit.at * count) * perElement
      const bytes = new Uint8Array(new BigUint64Array([BigInt.asUintN(64, edit.value)]).buffer)
      if (edit.part === 'links') put(element, bytes.subarray(0, 2))
      else if (edit.part === 'deleted') put(element + 2, bytes.subarray(0, 1))
      else if (edit.part === 'link') put(element + 4 + 4 * Math.floor(edit.at * 7), bytes.subarray(0, 4))
      else put(element + labelOffset, bytes)
    } else if (edit.kind === 'same-label' && count > 0) {
      const label = (at: number): number => HEADER + Math.floor(at * count) * perElement + labelOffset
      put(label(edit.at), base.bytes.subarray(label(edit.from), label(edit.from) + 8))
    } else if (edit.kind === 'upper' && out.length > upperStart + 4) {
      put(upperStart + Math.floor(edit.at * (out.length - upperStart - 4)), new Uint8Array(new Uint32Array([edit.value >>> 0]).buffer))
    }
  }
  const kept = out.subarray(0, Math.floor(c.keep * out.length))
  const whole = new Uint8Array(kept.length + c.appended.length)
  whole.set(kept)
  whole.set(c.appended, kept.length)
  return whole
}

/** What a build made of a case's bytes. */
export interface Outcome {
  /** The load's refusal, or undefined when it loaded. */
  readonly refused: string | undefined
  /** The first searches after a load (labels, and distances as float32 bits): the builds must agree. */
  readonly answers: readonly (readonly number[])[]
  /** What should not have happened. */
  readonly violations: readonly string[]
}

/** The labels the bytes hold, as a saved graph that loaded lays them out. */
function savedLabels(bytes: Uint8Array): Set<number> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const count = u64(view, 16)
  const perElement = u64(view, 24)
  const labelOffset = u64(view, 32)
  const labels = new Set<number>()
  for (let i = 0; i < count; i++) labels.add(view.getUint32(HEADER + i * perElement + labelOffset, true))
  return labels
}

function message(error: unknown): string {
  return error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error)
}

/** What load(fd, size) of the bytes written to `file` throws, or undefined when it loads. */
function refusalFromFile(Build: GraphBuild, base: BaseGraph, bytes: Uint8Array, file: string): string | undefined {
  writeFileSync(file, bytes)
  const fd = openSync(file, 'r')
  try {
    new Build(base.space, base.dim).load(fd, bytes.length)
    return undefined
  } catch (error) {
    return error instanceof Error && error.constructor === Error ? error.message : message(error)
  } finally {
    closeSync(fd)
    rmSync(file)
  }
}

/**
 * Loads the bytes into a `Build` graph and, when they load, uses it as @quarry/core does: searches
 * (plain and filtered), adds past its room (growing it by doubling), deletes, saves, and loads what
 * it saved. Nothing may throw but the loader's own refusals; labels found must be the file's or
 * added ones; the room kept must be within the loader's bound; the saved graph must load again.
 */
export function exercise(Build: GraphBuild, base: BaseGraph, bytes: Uint8Array, seed: number, file: string): Outcome {
  const violations: string[] = []
  const answers: number[][] = []
  // The same bytes read from an open file (how @quarry/core reads a snapshot's graph) are refused alike.
  const fromFile = refusalFromFile(Build, base, bytes, file)
  const g = new Build(base.space, base.dim)
  try {
    g.load(bytes)
    if (fromFile !== undefined) violations.push(`read from a file, it was refused (${fromFile}); from memory it loaded`)
  } catch (error) {
    const refused = error instanceof Error && error.constructor === Error ? error.message : message(error)
    if (!REFUSALS.has(refused)) violations.push(`load threw ${refused}`)
    if (fromFile !== refused) violations.push(`read from a file: ${fromFile ?? 'loaded'}; from memory: ${refused}`)
    try {
      g.size()
      violations.push('a refused load left a usable graph')
    } catch (after) {
      if (!(after instanceof Error && /not been initialized or loaded/.test(after.message))) violations.push(`after a refusal: ${message(after)}`)
    }
    return { refused, answers, violations }
  }
  const rand = prng(seed)
  const vector = (): Float32Array => Float32Array.from({ length: base.dim }, () => gaussian(rand))
  const known = savedLabels(bytes)
  try {
    const size = g.size()
    if (g.maxElements() > 2 * size + 1024) violations.push(`room for ${g.maxElements()} elements with ${size} loaded`)
    const search = (k: number, allow?: Uint32Array): number[] => {
      const labels = new Uint32Array(k)
      const distances = new Float32Array(k)
      const n = g.search(vector(), k, labels, distances, allow)
      const found = Array.from(labels.subarray(0, n))
      for (const label of found) {
        if (!known.has(label)) violations.push(`found label ${label}, which is neither saved nor added`)
        if (allow && ((allow[label >>> 5] ?? 0) >>> (label & 31)) % 2 === 0) violations.push(`found label ${label}, which the filter leaves out`)
      }
      return [...found, ...new Uint32Array(distances.buffer, 0, n)]
    }
    const allow = new Uint32Array(64).map(() => (rand() * 2 ** 32) >>> 0)
    g.setEf(16)
    answers.push(search(5), search(7, allow))
    for (let i = 0; i < 12; i++) {
      if (g.size() >= g.maxElements()) g.resize(Math.max(1, g.maxElements() * 2))
      const label = 1_000_000 + i
      g.add(vector(), label)
      known.add(label)
    }
    g.markDelete(1_000_003)
    g.add(vector(), 1_000_003)
    search(10)
    search(3, allow)
    g.saveSync(file)
    const again = new Build(base.space, base.dim)
    again.load(readFileSync(file))
    if (again.size() !== g.size() || again.maxElements() !== g.maxElements()) violations.push('its saved graph loads with another size or room')
  } catch (error) {
    violations.push(`after the load: ${message(error)}`)
  } finally {
    rmSync(file, { force: true })
  }
  return { refused: undefined, answers, violations }
}
