import type { Label } from '../ids.js'
import type { Bitset } from '../util/bitset.js'
import { estimateSelectivity, materialize, testLabel, type FilterFn, type FilterSubject } from './predicate.js'

/**
 * A search's filter as the planner sees it: a function (tested record by record, selectivity
 * estimated from a sample) or a declarative filter already answered by the value indexes (the
 * passing labels and their exact count, no record tested).
 */
export type FilterInput =
  /** `selectivity`: estimated already (a broad declarative filter tested record by record); sampled when absent. */
  | { readonly kind: 'function'; readonly fn: FilterFn; readonly selectivity?: number }
  | { readonly kind: 'indexed'; readonly allowed: Bitset; readonly count: number }

/** Fraction of live records passing: exact for indexed filters, sampled for functions. */
export function selectivityOf(filter: FilterInput, subject: FilterSubject, live: number): number {
  if (filter.kind === 'indexed') return live === 0 ? 0 : filter.count / live
  return filter.selectivity ?? estimateSelectivity(filter.fn, subject).selectivity
}

/** A per-label test (cheap bitset lookup for indexed filters). */
export function testerOf(filter: FilterInput, subject: FilterSubject): (label: Label) => boolean {
  if (filter.kind === 'indexed') {
    const allowed = filter.allowed
    return (label) => allowed.has(label)
  }
  const fn = filter.fn
  return (label) => testLabel(fn, subject, label)
}

/** Every passing label, ascending. */
export function passingLabels(filter: FilterInput, subject: FilterSubject, expected: number): Uint32Array {
  return filter.kind === 'indexed' ? filter.allowed.toArray(filter.count) : materialize(filter.fn, subject, expected).labels
}
