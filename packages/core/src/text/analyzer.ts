import { resolveAnalyzerOptions, type ResolvedAnalyzerOptions } from './analyzer-options.js'
import type { RawToken } from './token.js'
import { unicodeTokens } from './unicode-tokens.js'
import { cappedToken } from './token.js'
import { UnitTable } from './unit-table.js'
import { forEachWinkUnit } from './wink-pieces.js'
import { defaultStopWords, porter2, WINK_MAX_RUN, winkLexicon, winkUnitTokens } from './wink.js'

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
  /** wink read the unit as one token, the whole of it. */
  readonly whole: boolean
}

/** What the memo keeps of a unit: its tokens only once {@link Analyzer.tokens} asked for them (indexing needs only terms). */
interface UnitEntry {
  readonly terms: string | readonly string[]
  tokens: readonly AnalyzedToken[] | undefined
}

/** ASCII letters: a unit wink's first category regex (`^[a-z…]+$`, flag i) types 'word'. */
const LETTERS = /^[A-Za-z]+$/
/** Letters and one of the characters of wink's `wordRP` category (a word, then right punctuation). */
const LETTERS_RP = /^[A-Za-z]+[’”"\])}…,.!;?/:]$/
/** One of the left punctuation characters wink's `anyWithLP` splits off (apostrophes aside), then letters. */
const LP_LETTERS = /^[(\[{“"][A-Za-z]{2,}$/

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
  readonly #units = new UnitTable<UnitEntry>()
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
        const terms = (this.#units.find(text, start, end, hash) ?? this.#unit(text.slice(start, end), hash, false)).terms
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
        const entry = this.#units.find(text, start, end, hash) ?? this.#unit(text.slice(start, end), hash, true)
        entry.tokens ??= this.#analyzeUnit(text.slice(start, end)).tokens
        for (const t of entry.tokens) out.push({ term: t.term, start: t.start + start, end: t.end + start })
      })
      return out
    }
    for (const token of unicodeTokens(text, this.options.maxTokenLength)) {
      if (!KEPT_TYPES.has(token.type)) continue
      out.push({ term: this.#term(token), start: token.start, end: token.end })
    }
    return out
  }

  /** The analysis of a unit not memoized yet (`hash` is its hashRange), memoized; its tokens kept if asked. */
  #unit(unit: string, hash: number, keepTokens: boolean): UnitEntry {
    const analysis = this.#analyzeUnit(unit)
    const entry: UnitEntry = { terms: analysis.terms, tokens: keepTokens ? analysis.tokens : undefined }
    if (this.#units.size >= UNIT_MEMO_LIMIT) this.#units.clear()
    // A key of its own: a slice would keep the caller's whole text alive as long as the memo.
    this.#units.add(ownCopy(unit), hash, entry)
    return entry
  }

  /**
   * A unit's analysis: wink's tokens (see {@link winkUnitTokens}), analyzed. Letters found in
   * the model's lexicon, not a contraction, are one token of the lexicon's type (see
   * {@link winkLexicon}); three shapes wink reads by fixed rules (tokenizer.js, for a unit not in
   * its lexicon) skip wink too, which costs ~2 µs a call and ~10 µs more per token it learns:
   * - letters: one token, typed 'word';
   * - letters + one `wordRP` character (3+ characters, or a second character other than '.'):
   *   the letters as wink reads them alone (when that is one whole token), then punctuation;
   * - one `anyWithLP` character (not an apostrophe) + two or more letters: punctuation, then the
   *   letters as wink reads them alone.
   * test/property/analyzer-units.test.ts checks these against wink itself.
   */
  #analyzeUnit(unit: string): UnitAnalysis {
    const max = this.options.maxTokenLength
    const known = winkLexicon(unit)
    if (typeof known === 'string' && LETTERS.test(unit)) return this.#analyzed([cappedToken(unit, 0, unit.length, known, max)], true)
    if (known === undefined) {
      if (LETTERS.test(unit)) return this.#analyzed([cappedToken(unit, 0, unit.length, 'word', max)], true)
      if (LETTERS_RP.test(unit) && (unit.length > 2 || !unit.endsWith('.'))) {
        const word = this.#analyzeUnit(unit.slice(0, -1))
        if (word.whole) return { terms: word.terms, tokens: word.tokens, whole: false }
      } else if (LP_LETTERS.test(unit)) {
        const word = this.#analyzeUnit(unit.slice(1))
        return { terms: word.terms, tokens: word.tokens.map((t) => ({ term: t.term, start: t.start + 1, end: t.end + 1 })), whole: false }
      }
    }
    const tokens = winkUnitTokens(unit, max)
    const only = tokens[0]
    return this.#analyzed(tokens, tokens.length === 1 && only !== undefined && only.start === 0 && only.end === unit.length)
  }

  #analyzed(raw: readonly RawToken[], whole: boolean): UnitAnalysis {
    const tokens: AnalyzedToken[] = []
    const terms: string[] = []
    for (const token of raw) {
      if (!KEPT_TYPES.has(token.type)) continue
      const term = this.#term(token)
      tokens.push({ term, start: token.start, end: token.end })
      if (term !== null) terms.push(term)
    }
    return { terms: terms.length === 1 ? (terms[0] as string) : terms, tokens, whole }
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
