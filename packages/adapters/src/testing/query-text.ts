import fc from 'fast-check'
import { CAPS, characterCount } from '../rpc/limits.js'

const WORDS = ['what', 'does', 'the', 'user', 'prefer', 'spice', 'desert', 'ocean', 'storm', 'tea', 'coffee', 'Paris', 'café', 'naïve', 'über', '2024', 'don’t', 'e-mail', '東京']

/**
 * Query texts every service accepts: not blank (after trimming), at most 10,000 characters
 * (Quarry's cap on texts embedded per call). Mostly words, some arbitrary Unicode (scripts,
 * emoji, combining marks, control characters) to fuzz tokenizers and embedders.
 */
export function queryTextArbitrary(): fc.Arbitrary<string> {
  const words = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }).map((w) => w.join(' '))
  const unicode = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 })
  return fc.oneof({ arbitrary: words, weight: 3 }, { arbitrary: unicode, weight: 1 }).filter(validQuery)
}

/** Whether every service takes `text` as a query: not blank, at most 10,000 characters. */
function validQuery(text: string): boolean {
  return text.trim() !== '' && characterCount(text) <= CAPS.query.max
}

/** The caller's query texts (kept to the valid ones: make most of them valid), or the default ones. */
export function queriesOf(query: fc.Arbitrary<string> | undefined): fc.Arbitrary<string> {
  return query === undefined ? queryTextArbitrary() : query.filter(validQuery)
}
