import { resolveAnalyzerOptions, type ResolvedAnalyzerOptions } from './analyzer-options.js'
import type { RawToken } from './token.js'
import { unicodeTokens } from './unicode-tokens.js'
import { UnitTable } from './unit-table.js'
import { forEachWinkUnit } from './wink-pieces.js'
import { defaultStopWords, porter2, WINK_MAX_RUN, winkUnitTokens } from './wink.js'
import { shapeTokens } from './wink-shapes.js'

/** Token types that carry searchable text; punctuation, symbols and emoticons are dropped. */
const KEPT_TYPES = new Set(['word', 'number', 'email', 'url', 'hashtag', 'mention', 'ordinal', 'currency', 'alpha-numeric'])

/** An analyzed token: its term (null when dropped) and where it came from. */
export interface AnalyzedToken {
  readonly term: string | null
  readonly start: number
  readonly end: number
}

/** A wink unit analyzed: its terms (none, one — most units are one word: no array — or several) and its kept tokens, offsets within the unit. */
interface UnitAnalysis {
  readonly terms: string | readonly string[]
  readonly tokens: readonly AnalyzedToken[]
}

/**
 * Distinct units whose analysis is memoized before the memo starts over (a few hundred bytes
 * each; the npm corpus of `bench/` has ~170,000 distinct units in 23 MB of text).
 */
export const UNIT_MEMO_LIMIT = 500_000

/**
 * Text → terms: tokenize (wink-nlp or a Unicode split), drop punctuation, lowercase, fold
 * accents, drop stop words, stem (Porter2). The same analyzer serves documents and queries.
 * With wink, text is analyzed unit by unit (runs between wink's spaces, see
 * `forEachWinkUnit`; wink reads each on its own): a unit seen before costs one lookup
 * in a `UnitTable` (hashed while the text is scanned: no substring), and wink sees each
 * distinct unit once at most. Tokens are capped at `maxTokenLength` characters, so
 * the cost is linear in the text length.
 */
export class Analyzer {
  readonly options: ResolvedAnalyzerOptions
  readonly #stopSet: ReadonlySet<string> | undefined
  /** Terms by token type and value (the type decides stemming). */
  readonly #memo = new Map<string, string | null>()
  /** Terms by unit (what indexing reads), and tokens by unit, kept apart: only {@link tokens} (chunks, snippets) fills the second. */
  readonly #units = new UnitTable<string | readonly string[]>()
  readonly #unitTokens = new UnitTable<readonly AnalyzedToken[]>()
  readonly #maxRun: number

  constructor(options: unknown = undefined) {
    this.options = resolveAnalyzerOptions(options)
    const stop = this.options.stopWords
    this.#stopSet = stop === false ? undefined : new Set([...(stop === true ? defaultStopWords() : stop)].map((w) => this.#normalize(w)))
    this.#maxRun = Math.max(WINK_MAX_RUN, this.options.maxTokenLength)
  }

  /** The terms of a text, in order (repeats kept: they are term frequencies). */
  terms(text: string): string[] {
    const out: string[] = []
    if (this.options.tokenizer === 'wink') {
      forEachWinkUnit(text, this.#maxRun, (start, end, hash) => {
        const terms = this.#units.find(text, start, end, hash) ?? this.#unit(text, start, end, hash)
        if (typeof terms === 'string') out.push(terms)
        else for (let i = 0; i < terms.length; i++) out.push(terms[i] as string)
      })
      return out
    }
    for (const token of unicodeTokens(text, this.options.maxTokenLength)) {
      const term = this.#term(token)
      if (term !== null) out.push(term)
    }
    return out
  }

  /** Every kept-type token with its offsets and term (null if a stop word or too short). */
  tokens(text: string): AnalyzedToken[] {
    const out: AnalyzedToken[] = []
    if (this.options.tokenizer === 'wink') {
      forEachWinkUnit(text, this.#maxRun, (start, end, hash) => {
        let tokens = this.#unitTokens.find(text, start, end, hash)
        if (tokens === undefined) {
          tokens = this.#analyzeUnit(text.slice(start, end)).tokens
          if (this.#unitTokens.size >= UNIT_MEMO_LIMIT) this.#unitTokens.clear()
          this.#unitTokens.add(text, start, end, hash, tokens)
        }
        for (const t of tokens) out.push({ term: t.term, start: t.start + start, end: t.end + start })
      })
      return out
    }
    for (const token of unicodeTokens(text, this.options.maxTokenLength)) {
      if (!KEPT_TYPES.has(token.type)) continue
      out.push({ term: this.#term(token), start: token.start, end: token.end })
    }
    return out
  }

  /** The terms of the unit text[start, end), not memoized yet (`hash` is its hashRange), memoized. */
  #unit(text: string, start: number, end: number, hash: number): string | readonly string[] {
    const terms = this.#analyzeUnit(text.slice(start, end)).terms
    if (this.#units.size >= UNIT_MEMO_LIMIT) this.#units.clear()
    this.#units.add(text, start, end, hash, terms)
    return terms
  }

  /**
   * A unit's analysis: wink's tokens (see {@link winkUnitTokens}), analyzed. A unit whose shape
   * fixes wink's tokens (a word of the model's lexicon, letters, numbers, hyphenated words,
   * letters or numbers between punctuation: see `shapeTokens`) is read without calling wink.
   */
  #analyzeUnit(unit: string): UnitAnalysis {
    const max = this.options.maxTokenLength
    return this.#analyzed(shapeTokens(unit, max) ?? winkUnitTokens(unit, max))
  }

  #analyzed(raw: readonly RawToken[]): UnitAnalysis {
    const tokens: AnalyzedToken[] = []
    const terms: string[] = []
    for (const token of raw) {
      if (!KEPT_TYPES.has(token.type)) continue
      const term = this.#term(token)
      tokens.push({ term, start: token.start, end: token.end })
      if (term !== null) terms.push(term)
    }
    return { terms: terms.length === 1 ? (terms[0] as string) : terms, tokens }
  }

  #normalize(value: string): string {
    let v = this.options.lowercase ? value.toLowerCase() : value
    if (this.options.foldAccents && /[^\u0000-\u007f]/.test(v)) v = v.normalize('NFD').replace(/\p{M}/gu, '')
    return v
  }

  #term(token: RawToken): string | null {
    if (!KEPT_TYPES.has(token.type)) return null
    const key = token.type === 'word' ? token.value : `${token.type}\u0000${token.value}`
    const cached = this.#memo.get(key)
    if (cached !== undefined) return cached
    const normal = this.#normalize(token.value)
    let term: string | null = normal
    if (this.#stopSet?.has(normal)) term = null
    else if (normal.length < this.options.minLength) term = null
    else if (this.options.stem && token.type === 'word') term = porter2(normal)
    if (term !== null) term = ownCopy(term)
    if (this.#memo.size > 500_000) this.#memo.clear()
    this.#memo.set(ownCopy(key), term)
    return term
  }
}

/** A flat copy of a string that shares no storage with the one it was sliced from. */
function ownCopy(s: string): string {
  // V8 slices strings of 13+ characters as views into their parent; a concatenation flattened
  // by a slice is a new string. Shorter slices are copies already.
  return s.length < 13 ? s : (s + ' ').slice(0, -1)
}
