import { QuarryError, checkOptionsObject, describe } from '../errors.js'
import { Analyzer } from '../text/analyzer.js'
import { checkTexts, type Embedder } from './embedder.js'
import { withRecipe } from './recipes.js'
import { fnv1a, hashedDirection } from './hashed-direction.js'

/**
 * A deterministic embedder with no model: the analyzer's terms (and their character trigrams,
 * so related spellings overlap) are hashed into `dimensions` signed buckets, then the vector is
 * L2-normalized. Zero setup cost; it captures word overlap, not meaning.
 */
export function createHashingEmbedder(options: { dimensions?: number } = {}): Embedder {
  checkOptionsObject(options, ['dimensions'], 'dimensions: 256')
  const dimensions = options.dimensions ?? 256
  if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65_536) {
    throw new QuarryError('INVALID_OPTION', `dimensions must be an integer from 1 to 65536 (the vector length; 256 by default), received ${describe(dimensions)}.`, { path: 'dimensions' })
  }
  // cjkBigrams false: the embedder's name records its recipe, and a vector saved under it must stay what a query makes.
  const analyzer = new Analyzer({ tokenizer: 'unicode', cjkBigrams: false })
  return withRecipe({
    name: `hashing-${dimensions}`,
    dimensions,
    embed: async (texts) => {
      checkTexts(texts, 'embed')
      return texts.map((text) => {
        const v = new Float32Array(dimensions)
        const add = (feature: string, weight: number): void => {
          const h = fnv1a(feature, 0)
          v[h % dimensions] = (v[h % dimensions] as number) + ((fnv1a(feature, 1) & 1) === 0 ? weight : -weight)
        }
        const terms = analyzer.terms(text)
        for (const term of terms) {
          add(`w:${term}`, 1)
          const padded = `^${term}$`
          for (let i = 0; i + 3 <= padded.length; i++) add(`g:${padded.slice(i, i + 3)}`, 0.25)
        }
        let norm = 0
        for (const x of v) norm += x * x
        norm = Math.sqrt(norm)
        // A text with no term (or whose features cancel): a direction of its own, not zeros (cosine needs one).
        if (norm === 0) return hashedDirection(terms, text, dimensions)
        for (let i = 0; i < dimensions; i++) v[i] = (v[i] as number) / norm
        return v
      })
    },
  }, { kind: 'hashing', dimensions })
}
