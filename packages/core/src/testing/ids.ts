import fc from 'fast-check'
import { MAX_ID_LENGTH } from '../ids.js'
import { intOption } from './check.js'

/** Options of {@link idArbitrary}. */
export interface IdArbitraryOptions {
  /** Longest id, in UTF-16 code units (Quarry accepts up to 1,024). @defaultValue 8 */
  readonly maxLength?: number
  /**
   * `'ascii'`: printable ASCII; `'unicode'`: any Unicode graphemes (accents, emoji, scripts), to
   * fuzz how a store compares, hashes and orders ids. @defaultValue 'ascii'
   */
  readonly unit?: 'ascii' | 'unicode'
}

/**
 * Record ids Quarry accepts: non-empty strings of at most `maxLength` code units. Short ids repeat
 * often, so use `recordsArbitrary` (unique by id) for a collection.
 */
export function idArbitrary(options: IdArbitraryOptions = {}): fc.Arbitrary<string> {
  const maxLength = intOption(options.maxLength, 'maxLength', 1, MAX_ID_LENGTH, 8)
  const unit = options.unit === 'unicode' ? 'grapheme' : 'grapheme-ascii'
  // A grapheme may take several code units: cut at the limit, never inside a surrogate pair.
  return fc
    .string({ unit, minLength: 1, maxLength })
    .map((s) => {
      const cut = s.slice(0, maxLength)
      return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut
    })
    .filter((s) => s.length > 0)
}
