/** mulberry32: a tiny seeded PRNG so test data is reproducible from a printed seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Standard normal sample (Box-Muller). */
export function gaussian(rand: () => number): number {
  const u = Math.max(rand(), 1e-12)
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand())
}

/** `n` points of dimension `dim` around `clusters` gaussian centres (spread 1, noise `noise`). */
export function clustered(seed: number, n: number, dim: number, clusters: number, noise = 0.35): number[][] {
  const rand = prng(seed)
  const centres = Array.from({ length: clusters }, () => Array.from({ length: dim }, () => gaussian(rand)))
  return Array.from({ length: n }, () => {
    const c = centres[Math.floor(rand() * clusters)] as number[]
    return c.map((x) => x + noise * gaussian(rand))
  })
}
