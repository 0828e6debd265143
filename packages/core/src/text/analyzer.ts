import { resolveAnalyzerOptions, type ResolvedAnalyzerOptions } from './analyzer-options.js'
import type { RawToken } from './token.js'
import { unicodeTokens } from './unicode-tokens.js'
import { defaultStopWords, porter2, winkTokens } from './wink.js'

/** Token types that carry searchable text; punctuation, symbols and emoticons are dropped. */
const KEPT_TYPES = new Set(['word', 'number', 'email', 'url', 'hashtag', 'mention', 'ordinal', 'currency', 'alpha-numeric'])

/** An analyzed token: its term (null when dropped) and where it came from. */
export interface AnalyzedToken {
  readonly term: string | null
  readonly start: number
  readonly end: number
}

/**
 * Text → terms: tokenize (wink-nlp or a Unicode split), drop punctuation, lowercase, fold
 * accents, drop stop words, stem (Porter2). The same analyzer serves documents and queries.
 * Stems and normal forms are memoized: a vocabulary is small next to the text it comes from.
 * Tokens are capped at `maxTokenLength` characters, so the cost is linear in the text length.
 */
export class Analyzer {
  readonly options: ResolvedAnalyzerOptions
  readonly #stopSet: ReadonlySet<string> | undefined
  readonly #memo = new Map<string, string | null>()

  constructor(options: unknown = undefined) {
    this.options = resolveAnalyzerOptions(options)
    const stop = this.options.stopWords
    this.#stopSet = stop === false ? undefined : new Set([...(stop === true ? defaultStopWords() : stop)].map((w) => this.#normalize(w)))
  }

  /** The terms of a text, in order (repeats kept: they are term frequencies). */
  terms(text: string): string[] {
    const out: string[] = []
    for (const token of this.#raw(text)) {
      const term = this.#term(token)
      if (term !== null) out.push(term)
    }
    return out
  }

  /** Every kept-type token with its offsets and term (null if a stop word or too short). */
  tokens(text: string): AnalyzedToken[] {
    const out: AnalyzedToken[] = []
    for (const token of this.#raw(text)) {
      if (!KEPT_TYPES.has(token.type)) continue
      out.push({ term: this.#term(token), start: token.start, end: token.end })
    }
    return out
  }

  #raw(text: string): RawToken[] {
    const max = this.options.maxTokenLength
    return this.options.tokenizer === 'wink' ? winkTokens(text, max) : unicodeTokens(text, max)
  }

  #normalize(value: string): string {
    let v = this.options.lowercase ? value.toLowerCase() : value
    if (this.options.foldAccents && /[^\u0000-\u007f]/.test(v)) v = v.normalize('NFD').replace(/\p{M}/gu, '')
    return v
  }

  #term(token: RawToken): string | null {
    if (!KEPT_TYPES.has(token.type)) return null
    const cached = this.#memo.get(token.value)
    if (cached !== undefined) return cached
    const normal = this.#normalize(token.value)
    let term: string | null = normal
    if (this.#stopSet?.has(normal)) term = null
    else if (normal.length < this.options.minLength) term = null
    else if (this.options.stem && token.type === 'word') term = porter2(normal)
    if (this.#memo.size > 500_000) this.#memo.clear()
    this.#memo.set(token.value, term)
    return term
  }
}
