import { createRequire } from 'node:module'
import { QuarryError } from '../errors.js'
import { cappedToken, ownCopy, type RawToken } from './token.js'
import { hashRange, UnitTable } from './unit-table.js'
import { forEachWinkUnit } from './wink-pieces.js'

/**
 * Runs of non-space characters up to this long reach wink-nlp whole (longer ones are cut, see
 * {@link winkPieces}): above any ordinary word, URL or e-mail, and small enough that wink's
 * O(run²) regexes stay cheap per character.
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
  /** The tokenizer's regexes, as compile-trex.js reads them. */
  readonly trex: unknown
  /** Token categories by name (`unk` is 0). */
  readonly tcat: { readonly hash: Readonly<Record<string, number>> }
  /** Hyphenated words wink keeps whole: by their first part (`anti`, `co`, `e`, ...) or their last (`less`, `wise`, ...). */
  readonly preserve: { readonly prefix: Readonly<Record<string, unknown>>; readonly suffix: Readonly<Record<string, unknown>> }
  /** The model's words' features, `packing.size` Uint32s per word. */
  readonly lexicon: Uint32Array
  readonly packing: { readonly size: number; readonly layout: { readonly tokenType: WinkLayout; readonly isContraction: WinkLayout; readonly lemma: WinkLayout } }
  /** Contractions' expansions: per expansion, [lexeme index, normal, lemma, pos]. */
  readonly xpansions: ArrayLike<number>
}
interface WinkModel {
  core(): WinkCore
  addons: { stem(word: string): string }
}
/** The model's core file as its package stores it (read-core-model.js unpacks a copy: see {@link readCore}). */
interface WinkCoreFile {
  readonly features: { readonly lexeme: { readonly list: readonly string[] }; readonly tokenType: { readonly list: readonly string[] } }
  readonly trex: unknown
  readonly tcat: WinkCore['tcat']
  readonly preserve: WinkCore['preserve']
  readonly packing: WinkCore['packing']
  /** Base64 of the packed Uint32s. */
  readonly lexicon: string
  readonly xpansions: string
}

/** What the tokenizer and the Analyzer read of the model's core: never changed once read. */
interface CoreData {
  /** The model's words by lexeme index (a word listed twice is found at its last index, as in wink's hash). */
  readonly words: readonly string[]
  readonly tokenTypes: readonly string[]
  readonly trex: unknown
  readonly tcat: WinkCore['tcat']
  readonly preserve: WinkCore['preserve']
  readonly packing: WinkCore['packing']
  readonly lexicon: Uint32Array
  readonly xpansions: Uint32Array
}

interface Instance {
  readonly nlp: WinkNlp
  readonly lexemes: WinkLexemes
  readonly core: WinkCore
}

interface Loaded {
  /** The model's core, read once and never changed (a wink instance changes its own copy). */
  readonly core: CoreData
  /** A wink-nlp instance, made on first use by {@link winkUnitTokens} (indexing needs none). */
  instance: Instance | undefined
  readonly make: () => Instance
  /** wink's own tokenizer function (tokenizer.js), for {@link directUnitTokens}. */
  readonly tokenize: WinkTokenize
}

/**
 * What wink's tokenizer (tokenizer.js, recursive-tokenizer.js) calls on the document it fills:
 * dd-wrapper.js's three methods, called as plain functions (not as methods).
 */
interface WinkTokenizerDoc {
  readonly _addToken: (text: string, category: number, precedingSpaces: number, nbsp: unknown) => boolean
  readonly _addTokenIfInCache: (text: string, precedingSpaces: number, nbsp: unknown) => number
  readonly isLexeme: (text: string) => boolean
}
type WinkTokenize = (doc: WinkTokenizerDoc, text: string) => void
type WinkTokenizerFactory = (trex: unknown, categories: Readonly<Record<string, number>>, preserve: WinkCore['preserve']) => WinkTokenize

let loaded: Loaded | undefined

/**
 * wink appends every token it tokenizes to its lexicon's list (about 150 bytes a token) and never
 * drops one. After this many appended entries the instance is replaced (a rebuild, rare), bounding that
 * memory to about 100 MB. Only {@link winkUnitTokens} uses an instance (the Analyzer reads units
 * with {@link directUnitTokens}, which learns nothing beyond the unit).
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
    const make = (): Instance => {
      try {
        // Required here, on first use: indexing needs neither, and loading them is slow.
        const winkNLP = require('wink-nlp') as (model: WinkModel, pipe: string[]) => WinkNlp
        const model = require('wink-eng-lite-web-model') as WinkModel
        // The instance's own copy of the model (core() unpacks a fresh one), kept to reach its lexicon.
        let core: WinkCore | undefined
        const nlp = winkNLP({ ...model, core: () => (core = model.core()) }, [])
        if (core === undefined) throw new Error('wink-nlp did not load the model core')
        return { nlp, lexemes: core.features.lexeme, core }
      } catch (cause) {
        throw new QuarryError('NATIVE_UNAVAILABLE', 'wink-nlp or wink-eng-lite-web-model could not be loaded; reinstall the dependencies of @quarry/core.', { cause })
      }
    }
    const core = readCore(require('wink-eng-lite-web-model/dist/languages/cur/models/eng-core-web-model.json') as WinkCoreFile)
    // wink-nlp's own tokenizer and regex compiler (both CommonJS files of its package), set up as wink-nlp.js `load` does.
    const tokenizer = require('wink-nlp/src/tokenizer.js') as WinkTokenizerFactory
    const compileTRex = require('wink-nlp/src/compile-trex.js') as (trex: unknown) => unknown
    loaded = { core, instance: undefined, make, tokenize: tokenizer(compileTRex(core.trex), core.tcat.hash, core.preserve) }
    return loaded
  } catch (cause) {
    throw new QuarryError('NATIVE_UNAVAILABLE', 'wink-nlp or wink-eng-lite-web-model could not be loaded; reinstall the dependencies of @quarry/core.', { cause })
  }
}

/**
 * The parts of the model's core file that tokenizing reads, as read-core-model.js reads them
 * (the lexicon and expansions decoded from base64 into Uint32s, the lexeme list as the model's
 * words), without what `core()` adds on every call: a deep copy of the whole file, a hash
 * object of 87k words, POS clusters. The file is require's cached object, shared with wink: it
 * is only read.
 */
function readCore(file: WinkCoreFile): CoreData {
  const uint32s = (base64: string): Uint32Array => {
    const bytes = Buffer.from(base64, 'base64')
    // A copy: Buffer.from may return a view at an offset that is not a multiple of 4.
    return new Uint32Array(new Uint8Array(bytes).buffer)
  }
  return {
    words: file.features.lexeme.list,
    tokenTypes: file.features.tokenType.list,
    trex: file.trex,
    tcat: file.tcat,
    preserve: file.preserve,
    packing: file.packing,
    lexicon: uint32s(file.lexicon),
    xpansions: uint32s(file.xpansions),
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
  state.instance ??= state.make()
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
  return placed(unit, values, types, maxTokenLength)
}

/** Token values and types, in order, as tokens of `unit` with their offsets (capped at `maxTokenLength`). */
function placed(unit: string, values: readonly string[], types: readonly string[], maxTokenLength: number): RawToken[] {
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

/** addTokenIfInCache's answer when the text was not found (wink's UNK), and when it was. */
const NOT_IN_CACHE = 0
const IN_CACHE = 99

/**
 * The document wink's tokenizer fills, standing in for dd-wrapper.js over wink's cache, for
 * one unit at a time. wink's cache (cache.js) answers a lookup from the model's lexicon or
 * from the tokens it learned (`add` files a new token, and its lowercase form, under the
 * category it was added with, then extracts its features: the costly part).
 * Here the model's words are read from {@link lexicon} and the unit's learned tokens kept in a
 * Map, forgotten after the unit as {@link winkUnitTokens} forgets them: the same answers, the
 * same tokens and types, without the features no one reads. A model word that is a
 * contraction (wink expands it from the model's expansions) makes the unit go to wink itself.
 */
class UnitDocument implements WinkTokenizerDoc {
  values: string[] = []
  types: string[] = []
  /** The unit met what this stand-in does not reproduce (not seen in the model): its tokens are wink's own. */
  unsure = false
  readonly #learned = new Map<string, number>()
  readonly #model: Model

  constructor(model: Model) {
    this.#model = model
  }

  reset(): void {
    this.values = []
    this.types = []
    this.unsure = false
    this.#learned.clear()
  }

  /** cache.add: the token's type is its lexeme's (the model's, or the category it was first learned with). */
  readonly _addToken = (text: string, category: number): boolean => {
    const model = this.#model
    const index = modelIndex(text)
    let type: string
    if (index !== undefined) type = model.typeOf(index)
    else {
      const learned = this.#learned.get(text)
      if (learned === undefined) this.#learned.set(text, category)
      type = model.typeNames[learned ?? category] as string
    }
    // cache.add files the lowercase form too, under the same category, when it is new.
    const lower = text.toLowerCase()
    if (lower !== text && !this.#learned.has(lower) && modelIndex(lower) === undefined) this.#learned.set(lower, category)
    this.values.push(text)
    this.types.push(type)
    return true
  }

  /** dd-wrapper.js addTokenIfInCache: the token (a contraction: its expansions) if its text is a lexeme, else UNK. */
  readonly _addTokenIfInCache = (text: string): number => {
    const model = this.#model
    const index = modelIndex(text)
    if (index === undefined) {
      const learned = this.#learned.get(text)
      if (learned === undefined) return NOT_IN_CACHE
      this.values.push(text)
      this.types.push(model.typeNames[learned] as string)
    } else if (model.isContraction(index)) {
      // cache.js lookup: the expansions' lexemes, each with its own type.
      const expansions = model.expansions(index)
      for (const x of expansions) {
        if (x >= model.intrinsicSize) this.unsure = true
        this.values.push(model.words[x] as string)
        this.types.push(model.typeOf(x))
      }
    } else {
      this.values.push(text)
      this.types.push(model.typeOf(index))
    }
    return IN_CACHE
  }

  readonly isLexeme = (text: string): boolean => modelIndex(text) !== undefined || this.#learned.has(text)
}

let unitDocument: UnitDocument | undefined

/**
 * {@link winkUnitTokens}, computed by wink's own tokenizer (its regexes and rules, tokenizer.js
 * and recursive-tokenizer.js) on a {@link UnitDocument} instead of a wink document over its
 * cache: the same tokens, several times faster (no document, no feature extraction per token).
 * test/property/analyzer-units.test.ts checks it against {@link winkUnitTokens}.
 */
export function directUnitTokens(unit: string, maxTokenLength: number): RawToken[] {
  const state = wink()
  unitDocument ??= new UnitDocument(model())
  const doc = unitDocument
  doc.reset()
  state.tokenize(doc, unit)
  if (doc.unsure) return winkUnitTokens(unit, maxTokenLength)
  return placed(unit, doc.values, doc.types, maxTokenLength)
}

/**
 * How the model's own lexicon (what wink looks a run up in before anything else) reads `word`:
 * undefined when it is not there, null when it is a contraction (wink expands it into several
 * tokens), else the type of the one token wink makes of it (`its.type`: the word's packed
 * tokenType, as cache.js `property` reads it).
 */
export function winkLexicon(word: string): string | null | undefined {
  const index = modelIndex(word)
  if (index === undefined) return undefined
  const m = model()
  return m.isContraction(index) ? null : m.typeOf(index)
}

/** The model's index of `word` (as wink's lexicon object files it), or undefined when it is not a word of the model. */
function modelIndex(word: string): number | undefined {
  return model().table.find(word, 0, word.length, hashRange(word, 0, word.length))
}

/** The model's words and what the tokenizer reads of them, from its packed lexicon. */
interface Model {
  /** The model's own words (what wink's lexicon object holds below `intrinsicSize`) → their index. */
  readonly table: UnitTable<number>
  readonly words: readonly string[]
  readonly intrinsicSize: number
  /** Token type names by category (`its.type`). */
  readonly typeNames: readonly string[]
  typeOf(index: number): string
  isContraction(index: number): boolean
  /** A contraction's expansions, as lexeme indexes (cache.js `lookup`). */
  expansions(index: number): number[]
}

let theModel: Model | undefined

/**
 * The model's words, read once from the packed lexicon. A lookup in wink's object is slow
 * for a string V8 has not seen as a property name before, as most strings the Analyzer looks
 * up are; here it costs a hash and a probe.
 */
function model(): Model {
  if (theModel) return theModel
  const { core } = wink()
  const { words } = core
  const { size, layout } = core.packing
  const field = (f: WinkLayout, index: number): number => (((core.lexicon[(f[0] as number) + index * size] as number) & (f[1] as number)) >>> (f[2] as number))
  const table = new UnitTable<number>(words.length)
  // Last to first: a word listed twice keeps its last index, as in wink's hash (filled first to last).
  for (let i = words.length - 1; i >= 0; i--) {
    const w = words[i] as string
    const hash = hashRange(w, 0, w.length)
    if (table.find(w, 0, w.length, hash) === undefined) table.add(w, 0, w.length, hash, i)
  }
  const typeNames = core.tokenTypes
  theModel = {
    table,
    words,
    intrinsicSize: words.length,
    typeNames,
    typeOf: (index) => typeNames[field(layout.tokenType, index)] as string,
    isContraction: (index) => field(layout.isContraction, index) !== 0,
    expansions: (index) => {
      // constants.js: the lemma field holds the expansions' offset (14 bits) and their count × 4 (5 bits).
      const lemma = field(layout.lemma, index)
      const at = lemma & 0x3fff
      const count = (lemma >> 14) & 0x1f
      const out: number[] = []
      for (let k = 0; k < count; k += 4) out.push(core.xpansions[at + k] as number)
      return out
    },
  }
  return theModel
}

/**
 * Whether wink keeps a hyphenated word whole, by its first and last parts (recursive-tokenizer.js
 * `pushHyphenatedToken`: `preserve.prefix[first] || preserve.suffix[last]`, the same lookups on the
 * same objects, so a name such as "constructor" reads as wink reads it).
 */
export function winkPreserves(first: string, last: string): boolean {
  const { preserve } = wink().core
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
  forEachWinkUnit(text, Math.max(WINK_MAX_RUN, maxTokenLength), false, (start, end) => {
    for (const t of winkUnitTokens(text.slice(start, end), maxTokenLength)) {
      out.push({ value: t.value, start: t.start + start, end: t.end + start, type: t.type })
    }
  })
  return out
}

let stemmer: ((word: string) => string) | undefined

/**
 * The model's Porter2 (what its `addons.stem` is), alone: stemming needs neither the model's core
 * file nor wink-nlp (slow to load), so an analyzer of unicode tokens (the hashing embedder's)
 * never loads them.
 */
function loadStemmer(): (word: string) => string {
  try {
    return createRequire(import.meta.url)('wink-eng-lite-web-model/dist/porter-stemmer.js') as (word: string) => string
  } catch (cause) {
    throw new QuarryError('NATIVE_UNAVAILABLE', 'wink-eng-lite-web-model could not be loaded; reinstall the dependencies of @quarry/core.', { cause })
  }
}

/** Distinct words whose stems {@link porter2} keeps before it starts over (~100 bytes each). */
const STEM_MEMO_LIMIT = 200_000
const stems = new Map<string, string>()

/**
 * Porter2 (Snowball English) stem, from the wink model. Stems are memoized for the process
 * (the stemmer is a pure function of the word, and a lookup is far cheaper than a stem), so every
 * Analyzer, and every index built in the process, stems a word once.
 */
export function porter2(word: string): string {
  let stem = stems.get(word)
  if (stem === undefined) {
    stem = ownCopy((stemmer ??= loadStemmer())(word))
    if (stems.size >= STEM_MEMO_LIMIT) stems.clear()
    stems.set(ownCopy(word), stem)
  }
  return stem
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
