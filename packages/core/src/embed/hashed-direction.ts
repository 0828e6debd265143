/** FNV-1a 32-bit hash of a string (stable across runs and machines). */
export function fnv1a(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

/**
 * A unit vector for a text an embedder has nothing to say about (no word it knows, or no word at
 * all): the sum of one pseudo-random direction per feature, each seeded by the feature's hash. The
 * features are its `terms`, or with none (only punctuation, stop words or spaces) the text itself,
 * trimmed, so that "!!!" and "..." differ. Texts that share features (the same unknown part number)
 * point the same way; others are about orthogonal to them and to every other vector (cosine ≈ 0 ±
 * 1/√dimensions), where one fixed direction for all of them made any two such texts identical
 * (cosine 1) whatever they said. Deterministic: the same features give the same bits on every machine.
 */
export function hashedDirection(terms: readonly string[], text: string, dimensions: number): Float32Array {
  const features = terms.length > 0 ? terms.map((t) => `w:${t}`) : [`t:${text.trim()}`]
  const sum = new Float64Array(dimensions)
  for (const feature of features) {
    // xorshift32 from the feature's hash (never 0): uniform components in [-1, 1).
    let state = fnv1a(feature, 0x9e3779b9) || 1
    for (let j = 0; j < dimensions; j++) {
      state ^= state << 13
      state ^= state >>> 17
      state ^= state << 5
      sum[j] = (sum[j] as number) + (state >>> 0) / 0x80000000 - 1
    }
  }
  let norm = 0
  for (const x of sum) norm += x * x
  const out = new Float32Array(dimensions)
  // Components that cancel exactly: the first axis, still a direction.
  if (norm === 0) {
    out[0] = 1
    return out
  }
  const scale = 1 / Math.sqrt(norm)
  for (let j = 0; j < dimensions; j++) out[j] = (sum[j] as number) * scale
  return out
}
