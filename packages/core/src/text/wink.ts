import { createRequire } from 'node:module'
import { QuarryError } from '../errors.js'
import { cappedToken, type RawToken } from './token.js'
import { winkPieces } from './wink-pieces.js'

/**
 * Runs of non-space characters up to this long reach wink-nlp whole (longer ones are cut, see
 * {@link winkPieces}): above any ordinary word, URL or e-mail, and small enough that wink's
 * O(run²) regexes cost at most ~1 µs per character.
 */
export const WINK_MAX_RUN = 256

/** The part of wink-nlp that Quarry uses, typed here once. */
interface WinkItsFn {
  readonly __brand?: 'its'
}
interface WinkTokens {
  out(f: WinkItsFn): unknown[]
}
interface WinkDoc {
  tokens(): WinkTokens
}
interface WinkNlp {
  readDoc(text: string): WinkDoc
  its: { value: WinkItsFn; type: WinkItsFn; precedingSpaces: WinkItsFn }
}
interface WinkModel {
  addons: { stem(word: string): string }
}

interface Loaded {
  nlp: WinkNlp
  readonly stem: (word: string) => string
  readonly make: () => WinkNlp
}

let loaded: Loaded | undefined

/**
 * wink adds every token it has not seen to its lexicon and never forgets one (about 150 bytes a
 * token: a long-running server fed distinct tokens grows without bound). The lexicon is only a
 * memo of the model's features, so a fresh instance tokenizes the same: after this many distinct
 * token values the instance is replaced (~0.4 s, next to ~1 s of tokenizing them), bounding that
 * memory to about 100 MB.
 */
export const WINK_RENEW_AFTER = 500_000
const seen = new Set<string>()
let renewals = 0

/** How often the wink instance was renewed (for tests and diagnostics). */
export function winkRenewals(): number {
  return renewals
}

/** wink-nlp with the English lite model, tokenizer only (no sentence, POS or entity passes). */
function wink(): Loaded {
  if (loaded) return loaded
  try {
    // Both packages are CommonJS.
    const require = createRequire(import.meta.url)
    const winkNLP = require('wink-nlp') as (model: WinkModel, pipe: string[]) => WinkNlp
    const model = require('wink-eng-lite-web-model') as WinkModel
    const make = (): WinkNlp => winkNLP(model, [])
    loaded = { nlp: make(), stem: (word) => model.addons.stem(word), make }
    return loaded
  } catch (cause) {
    throw new QuarryError('NATIVE_UNAVAILABLE', 'wink-nlp or wink-eng-lite-web-model could not be loaded; reinstall the dependencies of @quarry/core.', { cause })
  }
}

/** Counts distinct token values; renews the wink instance (dropping its lexicon) past WINK_RENEW_AFTER. */
function noteTokens(instance: Loaded, values: readonly string[]): void {
  for (const v of values) seen.add(v)
  if (seen.size < WINK_RENEW_AFTER) return
  seen.clear()
  renewals++
  instance.nlp = instance.make()
}

/**
 * Tokenizes with wink-nlp, keeping each token's character offsets; tokens longer than
 * `maxTokenLength` are truncated (see {@link cappedToken}). The text reaches wink in bounded
 * pieces (see {@link winkPieces}), so the cost is linear in its length whatever it holds.
 */
export function winkTokens(text: string, maxTokenLength: number): RawToken[] {
  const instance = wink()
  const maxRun = Math.max(WINK_MAX_RUN, maxTokenLength)
  const out: RawToken[] = []
  for (const piece of winkPieces(text, maxRun)) {
    const source = piece.start === 0 && piece.end === text.length ? text : text.slice(piece.start, piece.end)
    const its = instance.nlp.its
    const tokens = instance.nlp.readDoc(source).tokens()
    const values = tokens.out(its.value) as string[]
    noteTokens(instance, values)
    const types = tokens.out(its.type) as string[]
    const spaces = tokens.out(its.precedingSpaces) as string[]
    let offset = 0
    for (let i = 0; i < values.length; i++) {
      const value = values[i] as string
      offset += (spaces[i] as string).length
      // wink keeps tokens verbatim but drops what String.trim() removes inside a run (U+3000,
      // U+2028, ...): then the value starts a little later, within the run (at most maxRun long).
      const start = source.startsWith(value, offset) ? offset : locate(source, value, offset, maxRun)
      if (start < 0) continue // not seen in any test; a token without exact offsets is dropped, not misplaced
      out.push(cappedToken(text, piece.start + start, piece.start + start + value.length, types[i] as string, maxTokenLength))
      offset = start + value.length
    }
  }
  return out
}

/** Where `value` starts in `source` at or after `from`, looking no further than one run: -1 if not there. */
function locate(source: string, value: string, from: number, maxRun: number): number {
  const at = source.slice(from, from + maxRun + value.length).indexOf(value)
  return at < 0 ? -1 : from + at
}

/** Porter2 (Snowball English) stem, from the wink model. */
export function porter2(word: string): string {
  return wink().stem(word)
}

let englishStopWords: ReadonlySet<string> | undefined

/** The English stop-word list of wink-nlp-utils (153 words; the list wink's BM25 search uses). */
export function defaultStopWords(): ReadonlySet<string> {
  if (englishStopWords) return englishStopWords
  try {
    const require = createRequire(import.meta.url)
    englishStopWords = new Set(require('wink-nlp-utils/src/dictionaries/stop_words.json') as string[])
    return englishStopWords
  } catch (cause) {
    throw new QuarryError('NATIVE_UNAVAILABLE', 'wink-nlp-utils could not be loaded (its stop-word list is the default); reinstall the dependencies of @quarry/core.', { cause })
  }
}
