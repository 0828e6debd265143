import { createRequire } from 'node:module'
import { QuarryError } from '../errors.js'
import { cappedToken, type RawToken } from './token.js'
import { hashRange, UnitTable } from './unit-table.js'
import { forEachWinkUnit } from './wink-pieces.js'

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
/** The lexicon of one instance: the model's words (indexes below intrinsicSize), then the ones it learned. */
interface WinkLexemes {
  readonly list: string[]
  readonly hash: Record<string, number>
  readonly intrinsicSize: number
}
/** A field of the packed lexicon: [word offset, mask, shift, ...]. */
type WinkLayout = readonly number[]
interface WinkCore {
  readonly features: { readonly lexeme: WinkLexemes; readonly tokenType: { readonly list: readonly string[] } }
  /** Hyphenated words wink keeps whole: by their first part (`anti`, `co`, `e`, ...) or their last (`less`, `wise`, ...). */
  readonly preserve: { readonly prefix: Readonly<Record<string, unknown>>; readonly suffix: Readonly<Record<string, unknown>> }
  /** The model's words' features, `packing.size` Uint32s per word. */
  readonly lexicon: Uint32Array
  readonly packing: { readonly size: number; readonly layout: { readonly tokenType: WinkLayout; readonly isContraction: WinkLayout } }
}
interface WinkModel {
  core(): WinkCore
  addons: { stem(word: string): string }
}

interface Instance {
  readonly nlp: WinkNlp
  readonly lexemes: WinkLexemes
  readonly core: WinkCore
}

interface Loaded {
  instance: Instance
  readonly stem: (word: string) => string
  readonly make: () => Instance
}

let loaded: Loaded | undefined

/**
 * wink appends every token it tokenizes to its lexicon's list (about 150 bytes a token) and never
 * drops one. After this many appended entries the instance is replaced (~0.4 s), bounding that
 * memory to about 100 MB; the Analyzer memoizes units, so wink sees each distinct unit once.
 */
export const WINK_RENEW_AFTER = 500_000
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
    const make = (): Instance => {
      // The instance's own copy of the model (core() unpacks a fresh one), kept to reach its lexicon.
      let core: WinkCore | undefined
      const nlp = winkNLP({ ...model, core: () => (core = model.core()) }, [])
      if (core === undefined) throw new Error('wink-nlp did not load the model core')
      return { nlp, lexemes: core.features.lexeme, core }
    }
    loaded = { instance: make(), stem: (word) => model.addons.stem(word), make }
    return loaded
  } catch (cause) {
    throw new QuarryError('NATIVE_UNAVAILABLE', 'wink-nlp or wink-eng-lite-web-model could not be loaded; reinstall the dependencies of @quarry/core.', { cause })
  }
}

/**
 * wink's tokens of one unit (a run between wink's spaces, see {@link forEachWinkUnit}), offsets
 * relative to it, exactly as a fresh wink instance gives them. wink-nlp alone is not a function
 * of its input: a token it has added to its lexicon is looked up whole afterwards, so after
 * "root's:" it reads "root's" as one token where a fresh instance reads "root" "'s". The words it
 * learned while reading the unit are therefore forgotten (taken out of the lexicon's hash, which
 * only its lookups read) before the next unit: every unit is tokenized as by a fresh instance,
 * whatever came before, and the same text always gives the same tokens.
 */
export function winkUnitTokens(unit: string, maxTokenLength: number): RawToken[] {
  const state = wink()
  if (state.instance.lexemes.list.length - state.instance.lexemes.intrinsicSize >= WINK_RENEW_AFTER) {
    renewals++
    state.instance = state.make()
  }
  const { nlp, lexemes } = state.instance
  const mark = lexemes.list.length
  const tokens = nlp.readDoc(unit).tokens()
  const values = tokens.out(nlp.its.value) as string[]
  const types = tokens.out(nlp.its.type) as string[]
  forgetLearned(lexemes, mark)
  const out: RawToken[] = []
  let offset = 0
  for (let i = 0; i < values.length; i++) {
    const value = values[i] as string
    // wink keeps tokens verbatim but drops what String.trim() removes inside a run (U+3000,
    // U+2028, ...): then the value starts a little later, within the unit.
    const start = unit.startsWith(value, offset) ? offset : unit.indexOf(value, offset)
    if (start < 0) continue // not seen in any test; a token without exact offsets is dropped, not misplaced
    out.push(cappedToken(unit, start, start + value.length, types[i] as string, maxTokenLength))
    offset = start + value.length
  }
  return out
}

/**
 * How the model's own lexicon (what wink looks a run up in before anything else) reads `word`:
 * undefined when it is not there, null when it is a contraction (wink expands it into several
 * tokens), else the type of the one token wink makes of it (`its.type`: the word's packed
 * tokenType, as cache.js `property` reads it).
 */
export function winkLexicon(word: string): string | null | undefined {
  const code = lexicon().find(word, 0, word.length, hashRange(word, 0, word.length))
  if (code === undefined) return undefined
  return code === CONTRACTION ? null : (wink().instance.core.features.tokenType.list[code] ?? null)
}

/** A word of the model that is a contraction, in {@link lexicon}; other words map to their tokenType index. */
const CONTRACTION = -1
let lexiconTable: UnitTable<number> | undefined

/**
 * The model's own words (what wink's lexicon object holds below `intrinsicSize`) → their token
 * type index, or CONTRACTION: read once from the packed lexicon (~10 ms). A lookup in wink's object
 * costs ~1 µs for a string V8 has not seen as a property name before, as most strings the
 * Analyzer looks up are; here it costs a hash and a probe. Every instance has the same model, so
 * the table serves them all.
 */
function lexicon(): UnitTable<number> {
  if (lexiconTable) return lexiconTable
  const { lexemes, core } = wink().instance
  const { size, layout } = core.packing
  const field = (f: WinkLayout, index: number): number => (((core.lexicon[(f[0] as number) + index * size] as number) & (f[1] as number)) >>> (f[2] as number))
  const table = new UnitTable<number>(lexemes.intrinsicSize)
  for (let i = 0; i < lexemes.intrinsicSize; i++) {
    const w = lexemes.list[i] as string
    // The word as the object files it (a word listed twice keeps the index the object has).
    if (lexemes.hash[w] !== i) continue
    table.add(w, 0, w.length, hashRange(w, 0, w.length), field(layout.isContraction, i) !== 0 ? CONTRACTION : field(layout.tokenType, i))
  }
  lexiconTable = table
  return table
}

/**
 * Whether wink keeps a hyphenated word whole, by its first and last parts (recursive-tokenizer.js
 * `pushHyphenatedToken`: `preserve.prefix[first] || preserve.suffix[last]`, the same lookups on the
 * same objects, so a name such as "constructor" reads as wink reads it).
 */
export function winkPreserves(first: string, last: string): boolean {
  const { preserve } = wink().instance.core
  return Boolean(preserve.prefix[first]) || Boolean(preserve.suffix[last])
}

/** Takes the lexemes added since `mark` out of the hash wink looks tokens up in (the list keeps them: tokens point there). */
function forgetLearned(lexemes: WinkLexemes, mark: number): void {
  const { list, hash } = lexemes
  for (let i = mark; i < list.length; i++) {
    const v = list[i] as string
    if (hash[v] === i) delete hash[v]
  }
}

/**
 * Tokenizes with wink-nlp, keeping each token's character offsets; tokens longer than
 * `maxTokenLength` are truncated (see {@link cappedToken}). wink reads each unit of the text on
 * its own (see {@link forEachWinkUnit} and {@link winkUnitTokens}), so the cost is linear in the
 * text's length whatever it holds, and a text's tokens are its units' tokens.
 */
export function winkTokens(text: string, maxTokenLength: number): RawToken[] {
  const out: RawToken[] = []
  forEachWinkUnit(text, Math.max(WINK_MAX_RUN, maxTokenLength), (start, end) => {
    for (const t of winkUnitTokens(text.slice(start, end), maxTokenLength)) {
      out.push({ value: t.value, start: t.start + start, end: t.end + start, type: t.type })
    }
  })
  return out
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
