import { Analyzer } from '../text/analyzer.js'
import type { Embedder } from './embedder.js'
import { withRecipe } from './recipes.js'

/** FNV-1a 32-bit hash of a string (stable across runs and machines). */
function fnv1a(s: string, seed: number): number {
  let h = (0x811c9dc5 ^ seed) >>> 0
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

/**
 * A deterministic embedder with no model: the analyzer's terms (and their character trigrams,
 * so related spellings overlap) are hashed into `dimensions` signed buckets, then the vector is
 * L2-normalized. Zero setup cost; it captures word overlap, not meaning.
 */
export function createHashingEmbedder(options: { dimensions?: number } = {}): Embedder {
  const dimensions = options.dimensions ?? 256
  const analyzer = new Analyzer({ tokenizer: 'unicode' })
  return withRecipe({
    name: `hashing-${dimensions}`,
    dimensions,
    embed: async (texts) =>
      texts.map((text) => {
        const v = new Float32Array(dimensions)
        const add = (feature: string, weight: number): void => {
          const h = fnv1a(feature, 0)
          v[h % dimensions] = (v[h % dimensions] as number) + ((fnv1a(feature, 1) & 1) === 0 ? weight : -weight)
        }
        for (const term of analyzer.terms(text)) {
          add(`w:${term}`, 1)
          const padded = `^${term}$`
          for (let i = 0; i + 3 <= padded.length; i++) add(`g:${padded.slice(i, i + 3)}`, 0.25)
        }
        let norm = 0
        for (const x of v) norm += x * x
        norm = Math.sqrt(norm)
        // An empty text has no features: give it a fixed unit vector instead of zeros (cosine needs a direction).
        if (norm === 0) v[0] = 1
        else for (let i = 0; i < dimensions; i++) v[i] = (v[i] as number) / norm
        return v
      }),
  }, { kind: 'hashing', dimensions })
}
