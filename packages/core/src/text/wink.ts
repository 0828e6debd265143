import { createRequire } from 'node:module'
import { QuarryError } from '../errors.js'

/** A token with its character offsets in the source text. */
export interface RawToken {
  readonly value: string
  readonly start: number
  readonly end: number
  /** wink's token type: word, number, email, url, hashtag, mention, punctuation, ... */
  readonly type: string
}

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

let loaded: { nlp: WinkNlp; stem: (word: string) => string } | undefined

/** wink-nlp with the English lite model, tokenizer only (no sentence, POS or entity passes). */
function wink(): { nlp: WinkNlp; stem: (word: string) => string } {
  if (loaded) return loaded
  try {
    // Both packages are CommonJS.
    const require = createRequire(import.meta.url)
    const winkNLP = require('wink-nlp') as (model: WinkModel, pipe: string[]) => WinkNlp
    const model = require('wink-eng-lite-web-model') as WinkModel
    loaded = { nlp: winkNLP(model, []), stem: (word) => model.addons.stem(word) }
    return loaded
  } catch (cause) {
    throw new QuarryError('NATIVE_UNAVAILABLE', 'wink-nlp or wink-eng-lite-web-model could not be loaded; reinstall the dependencies of @quarry/core.', { cause })
  }
}

/** Tokenizes with wink-nlp, keeping each token's character offsets. */
export function winkTokens(text: string): RawToken[] {
  const { nlp } = wink()
  const doc = nlp.readDoc(text)
  const its = nlp.its
  const values = doc.tokens().out(its.value) as string[]
  const types = doc.tokens().out(its.type) as string[]
  const spaces = doc.tokens().out(its.precedingSpaces) as string[]
  const out: RawToken[] = []
  let offset = 0
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as string
    offset += (spaces[i] as string).length
    // wink keeps tokens verbatim; re-find the value if its spacing was normalized (robust offsets).
    const start = text.startsWith(value, offset) ? offset : Math.max(offset, text.indexOf(value, offset))
    out.push({ value, start, end: start + value.length, type: types[i] as string })
    offset = start + value.length
  }
  return out
}

/** Porter2 (Snowball English) stem, from the wink model. */
export function porter2(word: string): string {
  return wink().stem(word)
}

/** A token of a run of letters/digits (the 'unicode' tokenizer), with offsets. */
export function unicodeTokens(text: string): RawToken[] {
  const out: RawToken[] = []
  for (const match of text.matchAll(/[\p{L}\p{N}\p{M}]+(?:['’][\p{L}]+)*/gu)) {
    const start = match.index
    out.push({ value: match[0], start, end: start + match[0].length, type: /^\p{N}+$/u.test(match[0]) ? 'number' : 'word' })
  }
  return out
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
