import { QuarryError } from '../errors.js'
import type { Label } from '../ids.js'
import type { Metadata } from './values.js'
import { Bitset } from '../util/bitset.js'

/**
 * A filter as a function of a record's metadata and id; records for which it returns a truthy
 * value are kept. It runs in JavaScript only (never inside the native HNSW callback), so a filter
 * that throws fails the search with FILTER_FAILED instead of aborting the process.
 */
export type FilterFn = (metadata: Readonly<Metadata>, id: string) => boolean

/** The records a filter is evaluated on, addressed by label (undefined = free label). */
export interface FilterSubject {
  readonly ids: readonly (string | undefined)[]
  readonly metadata: readonly (Readonly<Metadata> | undefined)[]
}

const EMPTY: Readonly<Metadata> = Object.freeze({})

/** Why a filter that answered a Promise fails (the same words as the loop's, which can use no module constant). */
const NOT_A_PROMISE = 'a filter must answer true or false at once, not a Promise: read what it needs first, then filter with a plain function'

function filterFailed(id: string | undefined, cause: unknown): QuarryError {
  const reason = cause instanceof Error ? cause.message : String(cause)
  const what = cause instanceof TypeError && reason === NOT_A_PROMISE ? 'answered a Promise' : 'threw'
  // A reason that ends its own sentence (ours do, as well-written errors do) gets no second period.
  const sentence = /[.!?]$/.test(reason) ? reason : `${reason}.`
  return new QuarryError('FILTER_FAILED', `the filter function ${what} on record "${id ?? '?'}": ${sentence} Fix the filter; the index is unchanged.`, {
    path: 'filter',
    cause,
  })
}

/** Calls the filter on one label, converting a thrown error into FILTER_FAILED. */
export function testLabel(filter: FilterFn, subject: FilterSubject, label: Label): boolean {
  const id = subject.ids[label]
  if (id === undefined) return false
  let keep: unknown
  try {
    keep = filter(subject.metadata[label] ?? EMPTY, id)
  } catch (cause) {
    throw filterFailed(id, cause)
  }
  if (keep === true) return true
  if (typeof keep === 'object' && keep !== null && typeof (keep as { then?: unknown }).then === 'function') throw filterFailed(id, new TypeError(NOT_A_PROMISE))
  return Boolean(keep)
}

/**
 * Estimates the fraction of live records that pass, from up to `sampleSize` labels spread evenly
 * over the label range (deterministic, so the same query plans the same way).
 */
export function estimateSelectivity(filter: FilterFn, subject: FilterSubject, sampleSize = 256): { selectivity: number; sampled: number } {
  const extent = subject.ids.length
  const step = Math.max(1, extent / sampleSize)
  let sampled = 0
  let passed = 0
  for (let x = 0; x < extent; x += step) {
    const label = Math.floor(x) as Label
    if (subject.ids[label] === undefined) continue
    sampled++
    if (testLabel(filter, subject, label)) passed++
  }
  return { selectivity: sampled === 0 ? 0 : passed / sampled, sampled }
}

/** Labels that pass a filter, ascending. */
interface FilterMatch {
  readonly labels: Uint32Array
}

/** What one run of {@link passingLoop} found: the passing labels in `labels[0..count)`, and the label whose filter call threw, if one did. */
interface LoopResult {
  readonly labels: Uint32Array
  readonly count: number
  /** The label the filter threw on, or -1. */
  readonly failed: number
  readonly cause: unknown
}

/**
 * Evaluates the filter on every live label below `extent` in one tight loop (no per-record closure or
 * try/catch: this is the cost of a narrow filtered search), into `out` (grown when full). With
 * `ids` null the filter is called without the id (see {@link ignoresId}). It uses nothing but its
 * arguments: {@link loopFor} compiles copies of this very source text.
 */
function passingLoop(filter: FilterFn, ids: readonly (string | undefined)[] | null, metadata: readonly (Readonly<Metadata> | undefined)[], extent: number, out: Uint32Array): LoopResult {
  let labels = out
  let count = 0
  let label = 0
  try {
    for (; label < extent; label++) {
      // Metadata is set for every live label and undefined for free ones.
      const m = metadata[label]
      if (m === undefined) continue
      const keep: unknown = ids === null ? (filter as (m: Readonly<Metadata>) => boolean)(m) : filter(m, ids[label] as string)
      if (keep !== true) {
        if (!keep) continue
        // A Promise (a filter that awaits) is truthy: it would keep every record.
        if (typeof keep === 'object' && typeof (keep as { then?: unknown }).then === 'function') throw new TypeError('a filter must answer true or false at once, not a Promise: read what it needs first, then filter with a plain function')
      }
      if (count === labels.length) {
        const grown = new Uint32Array(labels.length * 2)
        grown.set(labels)
        labels = grown
      }
      labels[count++] = label
    }
  } catch (cause) {
    return { labels, count, failed: label, cause }
  }
  return { labels, count, failed: -1, cause: undefined }
}

/**
 * True when a filter cannot read its second argument, the id: an arrow function of one plain
 * parameter (a name, or a flat destructuring), by its text. An arrow has no `arguments` of its
 * own and no `.caller` to read them through, so an argument it declares no parameter for is out
 * of its reach. Its loop then leaves each record's id unread, about a fifth of the loop's time.
 * Any other filter (a `function`, a method, a bound function, a second or rest parameter, a
 * comment in the parameter list) is called with the id.
 */
export function ignoresId(source: string): boolean {
  return ARROW_OF_ONE_PARAMETER.test(source)
}

const NAME = '[A-Za-z_$][\\w$]*'
const ARROW_OF_ONE_PARAMETER = new RegExp(`^(?:async\\s*)?(?:${NAME}|\\(\\s*(?:${NAME}|\\{[\\w$\\s,:]*\\})\\s*\\))\\s*=>`)

/**
 * The loop each filter runs in, by the filter's source text. V8 inlines the filter into the loop
 * only while the loop's call site has seen one function (closures of one function count as one):
 * with a single loop for every filter, a process that has searched with a second filter function
 * runs every function-filtered scan about half as fast (docs/filters.md). So a
 * filter source searched with more than once gets a copy of the loop of its own, compiled from
 * its text (a fresh copy runs interpreted at first: a source seen once keeps the shared loop).
 * Up to {@link MAX_LOOPS} sources are kept, the least recently used dropped first; where code
 * cannot be compiled from strings (`--disallow-code-generation-from-strings`), every filter runs
 * in the shared loop.
 */
const loops = new Map<string, { seen: number; loop: typeof passingLoop | undefined; ignoresId: boolean }>()
const MAX_LOOPS = 64
let compiled = 0
let compiling = true

/** Loops compiled for filter sources so far (for tests). */
export function filterLoopsCompiled(): number {
  return compiled
}

/** The loop a filter runs in, and whether it is called without the id. */
function loopFor(filter: FilterFn): { loop: typeof passingLoop; ignoresId: boolean } {
  const source = Function.prototype.toString.call(filter)
  let entry = loops.get(source)
  if (entry === undefined) {
    if (loops.size >= MAX_LOOPS) loops.delete(loops.keys().next().value as string)
    entry = { seen: 0, loop: undefined, ignoresId: ignoresId(source) }
  } else loops.delete(source)
  loops.set(source, entry)
  if (!compiling || ++entry.seen < 2) return { loop: passingLoop, ignoresId: entry.ignoresId }
  if (entry.loop === undefined) {
    try {
      // The counter makes each copy's text unique: V8 would hand identical texts one compiled function, and with it one call site.
      entry.loop = new Function('__name', `'use strict'\nreturn ${String(passingLoop)} // ${compiled}`)((f: unknown) => f) as typeof passingLoop
      compiled++
    } catch {
      compiling = false
      return { loop: passingLoop, ignoresId: entry.ignoresId }
    }
  }
  return { loop: entry.loop, ignoresId: entry.ignoresId }
}

/** Evaluates the filter on every live record (see {@link passingLoop}). `expected` sizes the output. */
export function materialize(filter: FilterFn, subject: FilterSubject, expected = 64): FilterMatch {
  const { ids, metadata } = subject
  const { loop, ignoresId } = loopFor(filter)
  const found = loop(filter, ignoresId ? null : ids, metadata, ids.length, new Uint32Array(Math.max(64, Math.min(ids.length, expected))))
  if (found.failed >= 0) throw filterFailed(ids[found.failed], found.cause)
  return { labels: found.labels.subarray(0, found.count) }
}

/** The labels as a bitset (for the graph's filtered search). */
export function toBitset(labels: Uint32Array, capacity: number): Bitset {
  const bitset = new Bitset(capacity)
  for (let i = 0; i < labels.length; i++) bitset.add(labels[i] as number)
  return bitset
}
