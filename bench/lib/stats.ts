/** Small statistics helpers for benchmarks: medians and percentiles over samples. */
export function median(xs: readonly number[]): number {
  return percentile(xs, 0.5)
}

export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  const i = (s.length - 1) * p
  const lo = Math.floor(i)
  const hi = Math.ceil(i)
  return (s[lo] as number) + ((s[hi] as number) - (s[lo] as number)) * (i - lo)
}

/** Milliseconds taken by `f`. */
export function time(f: () => void): number {
  const t = performance.now()
  f()
  return performance.now() - t
}

export async function timeAsync(f: () => Promise<void>): Promise<number> {
  const t = performance.now()
  await f()
  return performance.now() - t
}

/** Resident memory in MB after a garbage collection (when node runs with --expose-gc). */
export function rssMB(): number {
  collectGarbage()
  collectGarbage()
  return process.memoryUsage().rss / 1048576
}

/** A full garbage collection now, when node runs with --expose-gc (else nothing). */
export function collectGarbage(): void {
  ;(globalThis as { gc?: () => void }).gc?.()
}

/** recall@k of result id lists against ground-truth id lists. */
export function meanRecall(results: readonly (readonly number[])[], truth: readonly (readonly number[])[]): number {
  let sum = 0
  results.forEach((ids, q) => {
    const want = new Set(truth[q])
    if (want.size === 0) {
      sum += 1
      return
    }
    sum += ids.filter((id) => want.has(id)).length / want.size
  })
  return sum / results.length
}

/**
 * QPS at a target recall, interpolated (log-linear) between the two sweep points that bracket it;
 * undefined when no point reaches the target.
 */
export function qpsAtRecall(points: readonly { recall: number; qps: number }[], target: number): number | undefined {
  const sorted = [...points].sort((a, b) => a.recall - b.recall || b.qps - a.qps)
  const above = sorted.filter((p) => p.recall >= target)
  if (above.length === 0) return undefined
  const hi = above.reduce((best, p) => (p.qps > best.qps ? p : best))
  const below = sorted.filter((p) => p.recall < target && p.qps > hi.qps)
  if (below.length === 0) return hi.qps
  const lo = below.reduce((best, p) => (p.recall > best.recall ? p : best))
  const t = (target - lo.recall) / (hi.recall - lo.recall)
  return Math.exp(Math.log(lo.qps) + t * (Math.log(hi.qps) - Math.log(lo.qps)))
}

/** One engine's QPS over another's at each target recall, each interpolated on its own QPS of one sweep. */
export function qpsRatioAtRecall<P extends { recall: number }>(sweep: readonly P[], targets: readonly number[], over: (p: P) => number, under: (p: P) => number): Record<string, number | undefined> {
  const at = (qps: (p: P) => number, t: number): number | undefined => qpsAtRecall(sweep.map((p) => ({ recall: p.recall, qps: qps(p) })), t)
  return Object.fromEntries(
    targets.map((t) => {
      const a = at(over, t)
      const b = at(under, t)
      return [String(t), a === undefined || b === undefined ? undefined : a / b]
    }),
  )
}
