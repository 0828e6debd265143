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

function filterFailed(id: string | undefined, cause: unknown): QuarryError {
  const reason = cause instanceof Error ? cause.message : String(cause)
  return new QuarryError('FILTER_FAILED', `the filter function threw on record "${id ?? '?'}": ${reason}. Fix the filter; the index is unchanged.`, {
    path: 'filter',
    cause,
  })
}

/** Calls the filter on one label, converting a thrown error into FILTER_FAILED. */
export function testLabel(filter: FilterFn, subject: FilterSubject, label: Label): boolean {
  const id = subject.ids[label]
  if (id === undefined) return false
  try {
    return Boolean(filter(subject.metadata[label] ?? EMPTY, id))
  } catch (cause) {
    throw filterFailed(id, cause)
  }
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

/**
 * Evaluates the filter on every live record in one tight loop (no per-record closure or
 * try/catch: this is the cost of a narrow filtered search). `expected` sizes the output.
 */
export function materialize(filter: FilterFn, subject: FilterSubject, expected = 64): FilterMatch {
  const { ids, metadata } = subject
  const extent = ids.length
  let labels = new Uint32Array(Math.max(64, Math.min(extent, expected)))
  let count = 0
  let label = 0
  try {
    for (; label < extent; label++) {
      // Metadata is set for every live label and undefined for free ones.
      const m = metadata[label]
      if (m === undefined || !filter(m, ids[label] as string)) continue
      if (count === labels.length) {
        const grown = new Uint32Array(labels.length * 2)
        grown.set(labels)
        labels = grown
      }
      labels[count++] = label
    }
  } catch (cause) {
    throw filterFailed(ids[label], cause)
  }
  return { labels: labels.subarray(0, count) }
}

/** The labels as a bitset (for the graph's filtered search). */
export function toBitset(labels: Uint32Array, capacity: number): Bitset {
  const bitset = new Bitset(capacity)
  for (let i = 0; i < labels.length; i++) bitset.add(labels[i] as number)
  return bitset
}
