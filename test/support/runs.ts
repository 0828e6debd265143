/**
 * How many runs a property gets: its base count times `FC_RUNS` (a factor, default 1; the quick
 * tier sets 0.25). Every `fc.assert` passes `runs(base)` (or none, for the global default set in
 * setup.ts from `runs(100)`), so the factor scales each property alike and none overrides it.
 */
export const RUNS_FACTOR = factorOf(process.env.FC_RUNS)

function factorOf(text: string | undefined): number {
  if (text === undefined || text === '') return 1
  const factor = Number(text)
  if (!Number.isFinite(factor) || factor <= 0) throw new Error(`FC_RUNS=${text}: give a positive factor, e.g. FC_RUNS=0.25 or FC_RUNS=4`)
  return factor
}

/** `base` runs scaled by `FC_RUNS`, at least one. */
export function runs(base: number): number {
  return Math.max(1, Math.round(base * RUNS_FACTOR))
}
