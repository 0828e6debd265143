import { invalidOption } from './check.js'

/**
 * recall@k: the fraction of the true top k that a result's top k found.
 *
 * `recallAtK(expected, actual, k) = |E ∩ A| / |E|`, where E is the set of the first k ids of
 * `expectedIds` (the exact answer, e.g. from `exactOracle`) and A the set of the first k
 * ids of `actualIds` (the answer under test). Order inside the top k does not matter, and an id
 * repeated in `actualIds` counts once. When E is empty (nothing to find) the recall is 1.
 *
 * Ties at the k-th place make "the" true top k ambiguous: recall then penalizes a correct answer
 * that picked another tied id. Use `sameRanking` with a tolerance where ties are likely.
 */
export function recallAtK(expectedIds: readonly string[], actualIds: readonly string[], k: number): number {
  if (!Number.isInteger(k) || k < 1) throw invalidOption('k', 'a positive integer (the number of results compared)', k)
  const expected = new Set(expectedIds.slice(0, k))
  if (expected.size === 0) return 1
  let found = 0
  for (const id of new Set(actualIds.slice(0, k))) if (expected.has(id)) found++
  return found / expected.size
}
