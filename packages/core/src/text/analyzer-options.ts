import { QuarryError, describe } from '../errors.js'

/** How text becomes terms. Stored with the index, so a reloaded index analyzes text identically. */
export interface AnalyzerOptions {
  /**
   * 'wink': wink-nlp's tokenizer (contractions, e-mails, URLs, hashtags, numbers with units);
   * 'unicode': a split on anything that is not a letter or digit, much faster (`pnpm bench text-speed`).
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
  /**
   * Truncate tokens longer than this many characters (UTF-16 code units, as `String.length`
   * counts) to their first `maxTokenLength`, as Lucene's StandardTokenizer caps tokens at 255:
   * the term is the truncated prefix, so the same long token in a query still matches, and no
   * document can make analysis slow (both tokenizers are linear in the text length).
   * With the 'wink' tokenizer, a run of non-space characters longer than
   * max(256, maxTokenLength) is also cut into pieces of at most that length at its punctuation
   * before wink-nlp sees it (wink's own cost grows with the square of a run's length); a word of
   * letters and digits longer than that is tokenized from its head, the rest skipped.
   * An integer from 1 to 1024.
   * @defaultValue 255
   */
  maxTokenLength?: number
  /**
   * With the 'wink' tokenizer: read the words wink's English tokenizer leaves out (it reads
   * Latin-1 letters only) as the 'unicode' tokenizer does — Cyrillic, Greek, Hebrew, CJK, and Latin
   * words with a letter such as ł or ế, each whole. false keeps wink's tokens alone; an index saved
   * before this option existed loads with false, so it analyzes as it did when saved.
   * @defaultValue true
   */
  otherScripts?: boolean
  /**
   * Read Chinese, Japanese and Korean text as overlapping pairs of characters ("東京タワー" →
   * "東京", "京タ", "タワ", "ワー"), as Lucene's CJKAnalyzer does: these scripts do not space their
   * words, so otherwise a whole clause is one term and a word in it is never found. With either
   * tokenizer. false keeps each run whole; an index saved before this option existed loads with
   * false, so it analyzes as it did when saved.
   * @defaultValue true
   */
  cjkBigrams?: boolean
}

export interface ResolvedAnalyzerOptions {
  readonly tokenizer: 'wink' | 'unicode'
  readonly lowercase: boolean
  readonly foldAccents: boolean
  readonly stopWords: boolean | readonly string[]
  readonly stem: boolean
  readonly minLength: number
  readonly maxTokenLength: number
  readonly otherScripts: boolean
  readonly cjkBigrams: boolean
}

/**
 * The largest maxTokenLength accepted: wink-nlp's cost per character grows with the longest run
 * it sees (max(256, maxTokenLength)), so this bounds the worst text's cost per character.
 */
const MAX_TOKEN_LENGTH_LIMIT = 1024

export const ANALYZER_DEFAULTS: ResolvedAnalyzerOptions = { tokenizer: 'wink', lowercase: true, foldAccents: true, stopWords: true, stem: true, minLength: 1, maxTokenLength: 255, otherScripts: true, cjkBigrams: true }

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
    if (!['tokenizer', 'lowercase', 'foldAccents', 'stopWords', 'stem', 'minLength', 'maxTokenLength', 'otherScripts', 'cjkBigrams'].includes(key)) {
      throw new QuarryError('INVALID_OPTION', `unknown option ${path}.${key}; known options are tokenizer, lowercase, foldAccents, stopWords, stem, minLength, maxTokenLength, otherScripts, cjkBigrams.`, { path: `${path}.${key}` })
    }
  }
  let stopWords: boolean | readonly string[] = ANALYZER_DEFAULTS.stopWords
  // One message for every wrong kind (bool's "true or false" would leave the list out).
  const badStopWords = (received: string): QuarryError => new QuarryError('INVALID_OPTION', `${path}.stopWords must be true, false or a list of strings; received ${received}.`, { path: `${path}.stopWords` })
  if (Array.isArray(o.stopWords)) {
    const at = o.stopWords.findIndex((w) => typeof w !== 'string')
    if (at !== -1) throw badStopWords(`a list holding ${describe(o.stopWords[at])} at [${at}]`)
    stopWords = [...(o.stopWords as string[])]
  } else if (o.stopWords !== undefined) {
    if (typeof o.stopWords !== 'boolean') throw badStopWords(describe(o.stopWords))
    stopWords = o.stopWords
  }
  const minLength = o.minLength ?? ANALYZER_DEFAULTS.minLength
  if (typeof minLength !== 'number' || !Number.isInteger(minLength) || minLength < 1 || minLength > 100) {
    throw new QuarryError('INVALID_OPTION', `${path}.minLength must be an integer from 1 to 100; received ${describe(minLength)}.`, { path: `${path}.minLength` })
  }
  const maxTokenLength = o.maxTokenLength ?? ANALYZER_DEFAULTS.maxTokenLength
  if (typeof maxTokenLength !== 'number' || !Number.isInteger(maxTokenLength) || maxTokenLength < 1 || maxTokenLength > MAX_TOKEN_LENGTH_LIMIT) {
    throw new QuarryError('INVALID_OPTION', `${path}.maxTokenLength must be an integer from 1 to ${MAX_TOKEN_LENGTH_LIMIT}; received ${describe(maxTokenLength)}.`, { path: `${path}.maxTokenLength` })
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
    maxTokenLength,
    otherScripts: bool(o.otherScripts, `${path}.otherScripts`, ANALYZER_DEFAULTS.otherScripts),
    cjkBigrams: bool(o.cjkBigrams, `${path}.cjkBigrams`, ANALYZER_DEFAULTS.cjkBigrams),
  }
}
