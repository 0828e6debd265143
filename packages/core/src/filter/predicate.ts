import { QuarryError } from '../errors.js'
import type { Label } from '../ids.js'
import type { Metadata } from '../engine/record.js'
import { Bitset } from '../util/bitset.js'

/**
 * A filter as a function of a record's metadata and id; records for which it returns a truthy
 * value are kept. It runs in JavaScript only (never inside the native HNSW callback), so a filter
 * that throws fails the search with FILTER_FAILED instead of aborting the process.
 */
export type FilterFn = (metadata: Readonly<Metadata>, id: string) => boolean

/** Source of the records a filter is evaluated on. */
export interface FilterSubject {
  readonly extent: number
  idOf(label: Label): string | undefined
  metadataOf(label: Label): Readonly<Metadata>
}

/** Labels that pass a filter, as a list (for exact scans) and a bitset (for the graph). */
export interface FilterMatch {
  readonly labels: Uint32Array
  readonly bitset: Bitset
}

/** Calls the filter on one label, converting a thrown error into FILTER_FAILED. */
export function testLabel(filter: FilterFn, subject: FilterSubject, label: Label): boolean {
  const id = subject.idOf(label)
  if (id === undefined) return false
  try {
    return Boolean(filter(subject.metadataOf(label), id))
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause)
    throw new QuarryError('FILTER_FAILED', `the filter function threw on record "${id}": ${reason}. Fix the filter; the index is unchanged.`, {
      path: 'filter',
      cause,
    })
  }
}

/**
 * Estimates the fraction of live records that pass, from up to `sampleSize` labels spread evenly
 * over the label range (deterministic, so the same query plans the same way).
 */
export function estimateSelectivity(filter: FilterFn, subject: FilterSubject, live: number, sampleSize = 256): { selectivity: number; sampled: number } {
  const extent = subject.extent
  if (live === 0) return { selectivity: 0, sampled: 0 }
  const step = Math.max(1, extent / sampleSize)
  let sampled = 0
  let passed = 0
  for (let x = 0; x < extent; x += step) {
    const label = Math.floor(x) as Label
    if (subject.idOf(label) === undefined) continue
    sampled++
    if (testLabel(filter, subject, label)) passed++
  }
  return { selectivity: sampled === 0 ? 0 : passed / sampled, sampled }
}

/** Evaluates the filter on every live record. */
export function materialize(filter: FilterFn, subject: FilterSubject): FilterMatch {
  const extent = subject.extent
  const bitset = new Bitset(extent)
  let labels = new Uint32Array(64)
  let count = 0
  for (let label = 0; label < extent; label++) {
    if (!testLabel(filter, subject, label as Label)) continue
    bitset.add(label)
    if (count === labels.length) {
      const grown = new Uint32Array(labels.length * 2)
      grown.set(labels)
      labels = grown
    }
    labels[count++] = label
  }
  return { labels: labels.subarray(0, count), bitset }
}
