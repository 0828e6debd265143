import { QuarryError, describe } from '../errors.js'

/** How text becomes terms. Stored with the index, so a reloaded index analyzes text identically. */
export interface AnalyzerOptions {
  /**
   * 'wink': wink-nlp's tokenizer (contractions, e-mails, URLs, hashtags, numbers with units);
   * 'unicode': a split on anything that is not a letter or digit, about 10x faster.
   * @defaultValue 'wink'
   */
  tokenizer?: 'wink' | 'unicode'
  /** Lowercase every token. @defaultValue true */
  lowercase?: boolean
  /** Remove diacritics (é → e) after Unicode NFD decomposition. @defaultValue true */
  foldAccents?: boolean
  /** Drop English stop words (wink-nlp-utils' list of 153), or give your own list. @defaultValue true */
  stopWords?: boolean | readonly string[]
  /** Reduce words to their Porter2 (Snowball English) stem. @defaultValue true */
  stem?: boolean
  /** Drop terms shorter than this many characters. @defaultValue 1 */
  minLength?: number
}

export interface ResolvedAnalyzerOptions {
  readonly tokenizer: 'wink' | 'unicode'
  readonly lowercase: boolean
  readonly foldAccents: boolean
  readonly stopWords: boolean | readonly string[]
  readonly stem: boolean
  readonly minLength: number
}

export const ANALYZER_DEFAULTS: ResolvedAnalyzerOptions = { tokenizer: 'wink', lowercase: true, foldAccents: true, stopWords: true, stem: true, minLength: 1 }

function bool(value: unknown, path: string, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') throw new QuarryError('INVALID_OPTION', `${path} must be true or false; received ${describe(value)}.`, { path })
  return value
}

/** Validates analyzer options and fills in defaults. */
export function resolveAnalyzerOptions(options: unknown, path = 'text.analyzer'): ResolvedAnalyzerOptions {
  if (options === undefined) return ANALYZER_DEFAULTS
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new QuarryError('INVALID_OPTION', `${path} must be an object like { stem: true, stopWords: true }; received ${describe(options)}.`, { path })
  }
  const o = options as Record<string, unknown>
  for (const key of Object.keys(o)) {
    if (!['tokenizer', 'lowercase', 'foldAccents', 'stopWords', 'stem', 'minLength'].includes(key)) {
      throw new QuarryError('INVALID_OPTION', `unknown option ${path}.${key}; known options are tokenizer, lowercase, foldAccents, stopWords, stem, minLength.`, { path: `${path}.${key}` })
    }
  }
  let stopWords: boolean | readonly string[] = ANALYZER_DEFAULTS.stopWords
  if (Array.isArray(o.stopWords)) {
    if (!o.stopWords.every((w): w is string => typeof w === 'string')) {
      throw new QuarryError('INVALID_OPTION', `${path}.stopWords must be true, false or a list of strings.`, { path: `${path}.stopWords` })
    }
    stopWords = [...o.stopWords]
  } else {
    stopWords = bool(o.stopWords, `${path}.stopWords`, ANALYZER_DEFAULTS.stopWords as boolean)
  }
  const minLength = o.minLength ?? ANALYZER_DEFAULTS.minLength
  if (typeof minLength !== 'number' || !Number.isInteger(minLength) || minLength < 1 || minLength > 100) {
    throw new QuarryError('INVALID_OPTION', `${path}.minLength must be an integer from 1 to 100; received ${describe(minLength)}.`, { path: `${path}.minLength` })
  }
  const tokenizer = o.tokenizer ?? ANALYZER_DEFAULTS.tokenizer
  if (tokenizer !== 'wink' && tokenizer !== 'unicode') {
    throw new QuarryError('INVALID_OPTION', `${path}.tokenizer must be "wink" or "unicode"; received ${describe(tokenizer)}.`, { path: `${path}.tokenizer` })
  }
  return {
    tokenizer,
    lowercase: bool(o.lowercase, `${path}.lowercase`, ANALYZER_DEFAULTS.lowercase),
    foldAccents: bool(o.foldAccents, `${path}.foldAccents`, ANALYZER_DEFAULTS.foldAccents),
    stopWords,
    stem: bool(o.stem, `${path}.stem`, ANALYZER_DEFAULTS.stem),
    minLength,
  }
}
