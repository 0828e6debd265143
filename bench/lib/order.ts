/**
 * A copy of `items` in a random order drawn from `random` (Fisher–Yates): the order engines run
 * in, chunk by chunk, so that each follows every other about equally often (a chunk run right
 * after one on the same graph, or after a smaller one, finds more of its memory in cache).
 */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}
