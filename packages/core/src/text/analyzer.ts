import { QuarryError, describe } from '../errors.js'
import { resolveAnalyzerOptions, type ResolvedAnalyzerOptions } from './analyzer-options.js'
import { isWinkSpace } from './char-class.js'
import { TermCounts } from './term-counts.js'
import { ownCopy, type RawToken } from './token.js'
import { unicodeTokens } from './unicode-tokens.js'
import { mayHoldCjk, withCjkBigrams } from './cjk-bigrams.js'
import { hashRange, UnitTable } from './unit-table.js'
import { forEachWinkUnit } from './wink-pieces.js'
import { defaultStopWords, directUnitTokens, porter2, WINK_MAX_RUN } from './wink.js'
import { shapeTokens } from './wink-shapes.js'
import { withOtherScripts } from './other-scripts.js'

/** Token types that carry searchable text; punctuation, symbols and emoticons are dropped. */
const KEPT_TYPES = new Set(['word', 'number', 'email', 'url', 'hashtag', 'mention', 'ordinal', 'currency', 'alpha-numeric'])

/** An analyzed token: its term (null when dropped) and where it came from. */
export interface AnalyzedToken {
  readonly term: string | null
  readonly start: number
  readonly end: number
}

/**
 * A token as the memo of units keeps it: `id` is its term's id in the Analyzer's token
 * vocabulary (NO_TERM: none), numbered in `generation` of that vocabulary, when
 * {@link Analyzer.tokenized} first needs it (generation -1: not yet).
 */
interface MemoToken extends AnalyzedToken {
  id: number
  generation: number
}

const NO_TERM = -1

/**
 * Distinct terms the token vocabulary ({@link Analyzer.tokenized}'s ids) numbers before it starts
 * over, between two texts. Its ids are read only while an index counts the chunks of a text, so
 * it is bounded more tightly than indexing's vocabulary: the RAG adapter's one chunking Analyzer
 * numbers the words of every upload.
 */
const TOKEN_VOCABULARY_LIMIT = 250_000

/** Indexes whose term ids an Analyzer's tokenized texts keep translated into, at most. */
const TRANSLATIONS_KEPT = 4

/** What the Analyzer's `#forEachToken` gives of each token beside its offsets: nothing, its term, or its term and id. */
const OFFSETS = 0
const TERMS = 1
const IDS = 2
type TokenParts = typeof OFFSETS | typeof TERMS | typeof IDS

/** A wink unit analyzed: its terms (none, one — most units are one word: no array — or several) and its kept tokens, offsets within the unit. */
interface UnitAnalysis {
  readonly terms: string | readonly string[]
  readonly tokens: readonly MemoToken[]
}

/**
 * Distinct units whose analysis is memoized before the memo starts over (a few hundred bytes
 * each; the npm corpus of `bench/` has ~170,000 distinct units in 23 MB of text).
 */
const UNIT_MEMO_LIMIT = 500_000

/**
 * Distinct terms the Analyzer numbers before its ids start over (a new epoch, between two texts;
 * indexing reads ids, queries add the terms they bring).
 */
const VOCABULARY_LIMIT = 2_000_000

/**
 * The units an Analyzer read for the first time, with their tokens: what one thread's Analyzer
 * hands another with the same options, so that it need not read the units again (the RAG
 * adapter's import worker does this). A structured-cloneable value.
 */
export interface UnitLog {
  /** The options of the Analyzer that read them: another's log is ignored. */
  readonly options: string
  /** The units, end to end; unit u ends at `unitEnds[u]`. */
  readonly units: string
  readonly unitEnds: Int32Array
  /** Unit u's tokens end at `tokenEnds[u]` among the tokens below. */
  readonly tokenEnds: Int32Array
  /** Each token's start and end within its unit. */
  readonly offsets: Int32Array
  /** Each token's term (null: a stop word or too short). */
  readonly terms: readonly (string | null)[]
}

/**
 * A text's kept tokens as an Analyzer read them, in flat arrays: what chunking reads
 * (`chunkTokenized`), and what an index with the same analyzer options counts a chunk's terms
 * from without reading the chunk's words again (`QuarryIndex.prepareText`'s `within`).
 */
export interface TokenizedText {
  /** The Analyzer that read the text: its options made the terms. */
  readonly analyzer: Analyzer
  readonly source: string
  /** Token i spans `offsets[2i]` to `offsets[2i + 1]` of the source. */
  readonly offsets: Int32Array
  /** Token i's term id in the analyzer's token vocabulary (-1: none, a stop word or too short). */
  readonly ids: Int32Array
  /** The token vocabulary's epoch the ids are of: once it starts over, they are not read. */
  readonly epoch: object
}

/** See the Analyzer's `#translations`. */
interface Translation {
  readonly to: WeakRef<Analyzer>
  readonly toEpoch: object
  readonly epoch: object
  table: Int32Array
}

/** Entries of the token-offset buffer an Analyzer keeps between texts (4 MB: texts of up to 512k tokens). */
const OFFSETS_KEPT = 1 << 20

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
  /**
   * Term ids by unit (what indexing reads: one id, or an array for none or several), and tokens
   * by unit, kept apart: only {@link tokens} (chunks, snippets) fills the second.
   */
  #units = new UnitTable<number | readonly number[]>()
  readonly #unitTokens = new UnitTable<readonly MemoToken[]>()
  readonly #maxRun: number
  /** Indexing's term ids, for the current {@link epoch}. */
  #vocabulary = new Vocabulary()
  #unitsAnalyzed = 0
  /** The buffer {@link tokenOffsets} fills, reused text after text. */
  #offsets = new Int32Array(1024)
  /** The counts {@link countTerms} fills for indexing, reused document after document. */
  #counts: TermCounts | undefined
  /** Units read for the first time and their tokens, since the last {@link takeUnitLog}, once {@link logUnits} is called. */
  #log: { units: string[]; tokens: (readonly AnalyzedToken[])[] } | undefined
  /** The token vocabulary: {@link tokenized}'s term ids, apart from indexing's; `#tokenGeneration` counts its starts. */
  #tokenVocabulary = new Vocabulary()
  #tokenGeneration = 0
  /**
   * Token-vocabulary ids → another Analyzer's term ids + 1 (0: not looked up yet), for that one's
   * {@link countTermsWithin}: kept here, for the last few Analyzers that counted (weakly held: a
   * dropped index's analyzer is not kept alive), most recent first.
   */
  #translations: Translation[] = []
  /** The options as {@link UnitLog.options} gives them (computed on first use). */
  #optionsKey: string | undefined

  constructor(options: unknown = undefined) {
    this.options = resolveAnalyzerOptions(options)
    const stop = this.options.stopWords
    this.#stopSet = stop === false ? undefined : new Set([...(stop === true ? defaultStopWords() : stop)].map((w) => this.#normalize(w)))
    this.#maxRun = Math.max(WINK_MAX_RUN, this.options.maxTokenLength)
  }

  /** The terms of a text, in order (repeats kept: they are term frequencies). */
  terms(text: string): string[] {
    checkText(text, 'terms')
    this.#renewIfFull()
    const out: string[] = []
    // The same array all along: ids start over only between texts.
    const list = this.#vocabulary.terms
    this.#forEachTermId(text, (id) => out.push(list[id] as string))
    return out
  }

  /**
   * @internal Adds the terms of `text`, each with `weight`, to `into` (its ids are this
   * Analyzer's: see {@link termOf}); the same terms in the same order as {@link terms}, without
   * a string per term. Reading the ids ends with the next call that may start a new epoch.
   */
  countTerms(text: string, weight: number, into: TermCounts, tokensFrom?: Analyzer): void {
    this.#forEachTermId(text, (id) => into.add(id, weight), tokensFrom !== undefined && this.#sameAs(tokensFrom) ? tokensFrom : undefined)
  }

  /**
   * @internal {@link countTerms} of `text`, the part of `tokenized.source` from `start` on (a
   * chunk), read from the tokens `tokenized` holds rather than from the text: the same terms in
   * the same order. wink reads each run between its spaces on its own, so the part's whole runs
   * have the tokens they have in the source; a run at either end that the cut split is read
   * as text. Reads all of `text` when `tokenized` was made by an Analyzer with
   * other options (or of another copy of this library), by the Unicode tokenizer, in a token
   * vocabulary that has started over since, or of another text (`start` an integer from 0).
   */
  countTermsWithin(tokenized: TokenizedText, start: number, text: string, weight: number, into: TermCounts): void {
    const { source, offsets, ids, analyzer: from } = tokenized
    const usable = this.options.tokenizer === 'wink' && #tokenVocabulary in from && this.#sameAs(from) && tokenized.epoch === from.#tokenVocabulary.epoch
    if (!usable || !Number.isInteger(start) || start < 0 || !source.startsWith(text, start)) {
      this.countTerms(text, weight, into, usable ? from : undefined)
      return
    }
    const end = start + text.length
    // A run at the part's start (end) that starts (ends) the source, or follows (precedes) a space
    // there, is whole in the part too. So [headEnd, tailStart) holds the whole runs only; if the
    // part has no space and a cut end, it is empty.
    let headEnd = start
    if (start > 0 && !isWinkSpace(source.charCodeAt(start - 1))) while (headEnd < end && !isWinkSpace(source.charCodeAt(headEnd))) headEnd++
    let tailStart = end
    if (end < source.length && !isWinkSpace(source.charCodeAt(end))) while (tailStart > headEnd && !isWinkSpace(source.charCodeAt(tailStart - 1))) tailStart--
    if (headEnd > start) this.countTerms(source.slice(start, headEnd), weight, into, from)
    // Tokens never cross a space: those starting in [headEnd, tailStart) lie inside it.
    const count = ids.length
    let lo = 0
    let hi = count
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((offsets[2 * mid] as number) < headEnd) lo = mid + 1
      else hi = mid
    }
    const translation = from.#translationTo(this)
    let table = translation.table
    for (let i = lo; i < count && (offsets[2 * i] as number) < tailStart; i++) {
      const theirs = ids[i] as number
      if (theirs < 0) continue
      if (theirs >= table.length) table = translation.table = grown(table, theirs + 1)
      let mine = table[theirs] as number
      if (mine === 0) {
        mine = this.#vocabulary.idOf(from.#tokenVocabulary.terms[theirs] as string) + 1
        table[theirs] = mine
      }
      into.add(mine - 1, weight)
    }
    if (tailStart < end) this.countTerms(source.slice(tailStart, end), weight, into, from)
  }

  /** The translation of this token vocabulary into `to`'s term ids (see `#translations`), made if need be. */
  #translationTo(to: Analyzer): Translation {
    const kept = this.#translations
    const at = kept.findIndex((t) => t.to.deref() === to)
    const found = at < 0 ? undefined : kept[at]
    if (at >= 0) kept.splice(at, 1)
    // Grown as ids come (a table as long as the whole vocabulary would be mostly unread).
    const translation = found !== undefined && found.toEpoch === to.#vocabulary.epoch && found.epoch === this.#tokenVocabulary.epoch ? found : { to: new WeakRef(to), toEpoch: to.#vocabulary.epoch, epoch: this.#tokenVocabulary.epoch, table: new Int32Array(1024) }
    kept.unshift(translation)
    if (kept.length > TRANSLATIONS_KEPT) kept.pop()
    return translation
  }

  /**
   * Whether `other` has these options, so that its tokens of a unit carry the terms this Analyzer
   * would make of it (the tokenizer, the token length and every rule from token to term match).
   */
  #sameAs(other: Analyzer): boolean {
    const a = this.options
    const b = other.options
    if (a === b) return true
    return (
      sameWords(a.stopWords, b.stopWords) &&
      a.tokenizer === b.tokenizer &&
      a.lowercase === b.lowercase &&
      a.foldAccents === b.foldAccents &&
      a.stem === b.stem &&
      a.minLength === b.minLength &&
      a.maxTokenLength === b.maxTokenLength &&
      a.otherScripts === b.otherScripts &&
      a.cjkBigrams === b.cjkBigrams
    )
  }

  /** @internal Units this Analyzer has analyzed (read with wink or its shapes) rather than found memoized: tests check that a unit is not analyzed twice. */
  get unitsAnalyzed(): number {
    return this.#unitsAnalyzed
  }

  /** @internal Empty counts over this Analyzer's ids, reused by every call (read them before the next). */
  documentCounts(): TermCounts {
    this.#renewIfFull()
    this.#counts ??= new TermCounts(this)
    this.#counts.clear()
    return this.#counts
  }

  /** @internal Changes (a new object) whenever term ids start over. */
  get epoch(): object {
    return this.#vocabulary.epoch
  }

  /** @internal The term numbered `id` (see {@link countTerms}). */
  termOf(id: number): string {
    return this.#vocabulary.terms[id] as string
  }

  /** `tokensFrom`: an Analyzer with these options whose memoized tokens of a unit give its terms, instead of reading the unit again. */
  #forEachTermId(text: string, visit: (id: number) => void, tokensFrom?: Analyzer): void {
    if (this.options.tokenizer === 'wink') {
      forEachWinkUnit(text, this.#maxRun, this.options.cjkBigrams, (start, end, hash) => {
        const ids = this.#units.find(text, start, end, hash) ?? this.#unit(text, start, end, hash, tokensFrom)
        if (typeof ids === 'number') visit(ids)
        else for (let i = 0; i < ids.length; i++) visit(ids[i] as number)
      })
      return
    }
    for (const token of this.#unicodeTokens(text)) {
      const term = this.#term(token)
      if (term !== null) visit(this.#vocabulary.idOf(term))
    }
  }

  /**
   * Between two texts: when the vocabulary is full, ids start over (a new epoch), and so do the
   * units memoized as ids and the counts over them.
   */
  #renewIfFull(): void {
    if (this.#vocabulary.terms.length < VOCABULARY_LIMIT) return
    this.#vocabulary = new Vocabulary()
    this.#units = new UnitTable()
  }

  /**
   * Forgets what this Analyzer memoized: each unit's tokens and terms, each token's term. The next
   * texts are read as new ones are; term ids stay. For a long-lived Analyzer whose texts will not
   * come back, and for measuring a first reading.
   */
  forgetMemos(): void {
    this.#units = new UnitTable()
    this.#unitTokens.clear()
    this.#memo.clear()
  }

  /**
   * @internal From now on, notes the tokens of every unit this Analyzer reads for the first time
   * (from {@link tokens} and {@link tokenOffsets}) until {@link takeUnitLog} hands them out.
   */
  logUnits(): void {
    this.#log ??= { units: [], tokens: [] }
  }

  /** @internal The units noted since the last call (see {@link logUnits}), or undefined if none; the note starts over. */
  takeUnitLog(): UnitLog | undefined {
    const log = this.#log
    if (log === undefined || log.units.length === 0) return undefined
    this.#log = { units: [], tokens: [] }
    const unitEnds = new Int32Array(log.units.length)
    const tokenEnds = new Int32Array(log.units.length)
    let chars = 0
    let count = 0
    for (let u = 0; u < log.units.length; u++) {
      chars += (log.units[u] as string).length
      count += (log.tokens[u] as readonly AnalyzedToken[]).length
      unitEnds[u] = chars
      tokenEnds[u] = count
    }
    const offsets = new Int32Array(2 * count)
    const terms: (string | null)[] = []
    for (const tokens of log.tokens) {
      for (const t of tokens) {
        offsets[2 * terms.length] = t.start
        offsets[2 * terms.length + 1] = t.end
        terms.push(t.term)
      }
    }
    return { options: this.#optionsOf(), units: log.units.join(''), unitEnds, tokenEnds, offsets, terms }
  }

  /**
   * @internal Memoizes the tokens of the units in `log` (another Analyzer's {@link takeUnitLog}),
   * so that reading them here, or `tokensFrom` this Analyzer, finds them instead of reading them
   * again. A log of an Analyzer with other options is ignored: its tokens might differ.
   */
  learnUnits(log: UnitLog): void {
    if (log.options !== this.#optionsOf()) return
    const { units, unitEnds, tokenEnds, offsets, terms } = log
    for (let u = 0, start = 0, first = 0; u < unitEnds.length; u++) {
      const end = unitEnds[u] as number
      const last = tokenEnds[u] as number
      const hash = hashRange(units, start, end)
      if (this.#unitTokens.find(units, start, end, hash) === undefined) {
        const tokens: MemoToken[] = []
        for (let t = first; t < last; t++) tokens.push({ term: terms[t] ?? null, start: offsets[2 * t] as number, end: offsets[2 * t + 1] as number, id: NO_TERM, generation: -1 })
        this.#memoizeTokens(units, start, end, hash, tokens)
      }
      start = end
      first = last
    }
  }

  #optionsOf(): string {
    return (this.#optionsKey ??= JSON.stringify(this.options))
  }

  /** Every kept-type token with its offsets and term (null if a stop word or too short). */
  tokens(text: string): AnalyzedToken[] {
    checkText(text, 'tokens')
    const out: AnalyzedToken[] = []
    this.#forEachToken(text, TERMS, (start, end, term) => out.push({ term, start, end }))
    return out
  }

  /**
   * The tokens {@link tokens} returns, in flat arrays, their terms as ids of this Analyzer's token
   * vocabulary: chunk them with `chunkTokenized`, and an index with these analyzer options counts
   * each chunk's terms from them (`QuarryIndex.prepareText`'s `within`). With `progress`, when the
   * tokens read first reach each of `marks` (character offsets into `text`; those that are not
   * finite numbers are ignored), `onPart` is given the tokens read so far (valid during the call
   * only; it must not use this Analyzer): the chunks `chunkTokenized` makes of them, all but the
   * last, are chunks of the whole text, so their embedding can start.
   */
  tokenized(text: string, progress?: { readonly marks: readonly number[]; readonly onPart: (sofar: TokenizedText) => void }): TokenizedText {
    checkText(text, 'tokenized')
    if (progress !== undefined) {
      if (typeof progress !== 'object' || progress === null || !Array.isArray(progress.marks) || typeof progress.onPart !== 'function') {
        throw new QuarryError('INVALID_OPTION', `Analyzer.tokenized's progress is { marks: number[], onPart: (sofar) => void }, or left out; received ${describe(progress)}.`, { path: 'progress' })
      }
    }
    if (this.#tokenVocabulary.terms.length >= TOKEN_VOCABULARY_LIMIT) {
      this.#tokenVocabulary = new Vocabulary()
      this.#tokenGeneration++
    }
    let epoch = this.#tokenVocabulary.epoch
    let offsets = new Int32Array(1024)
    let ids = new Int32Array(512)
    let n = 0
    const marks = (progress?.marks ?? []).filter(Number.isFinite).sort((a, b) => a - b)
    let next = 0
    let mark = marks[0] ?? Infinity
    this.#forEachToken(text, IDS, (start, end, _term, id) => {
      if (start >= mark) {
        progress?.onPart({ analyzer: this, source: text, offsets: offsets.subarray(0, 2 * n), ids: ids.subarray(0, n), epoch })
        // A part that tokenized with this Analyzer may have started its token vocabulary over: these ids are then not read.
        if (this.#tokenVocabulary.epoch !== epoch) epoch = {}
        while (next < marks.length && (marks[next] as number) <= start) next++
        mark = marks[next] ?? Infinity
      }
      if (n === ids.length) {
        offsets = grown(offsets, 2 * n + 2)
        ids = grown(ids, n + 1)
      }
      offsets[2 * n] = start
      offsets[2 * n + 1] = end
      ids[n++] = id
    })
    return { analyzer: this, source: text, offsets: offsets.subarray(0, 2 * n), ids: ids.subarray(0, n), epoch }
  }

  /**
   * @internal The offsets of the tokens {@link tokens} returns, without their terms and without an
   * object per token: `[start0, end0, start1, end1, …]`. A view of a buffer this Analyzer reuses:
   * read it before the next call.
   */
  tokenOffsets(text: string): Int32Array {
    checkText(text, 'tokenOffsets')
    let out = this.#offsets
    let n = 0
    this.#forEachToken(text, OFFSETS, (start, end) => {
      if (n + 2 > out.length) out = grown(out, n + 2)
      out[n++] = start
      out[n++] = end
    })
    // A buffer grown for a very long text is not kept (the view returned still holds it).
    this.#offsets = out.length <= OFFSETS_KEPT ? out : new Int32Array(1024)
    return out.subarray(0, n)
  }

  /**
   * Visits every kept-type token in order: its offsets and, as `parts` asks, its term (null if a
   * stop word or too short; with OFFSETS the unicode tokenizer's tokens are not analyzed: null)
   * and its term id (IDS; else NO_TERM).
   */
  #forEachToken(text: string, parts: TokenParts, visit: (start: number, end: number, term: string | null, id: number) => void): void {
    if (this.options.tokenizer === 'wink') {
      forEachWinkUnit(text, this.#maxRun, this.options.cjkBigrams, (start, end, hash) => {
        const tokens = this.#unitTokens.find(text, start, end, hash) ?? this.#unitTokensOf(text, start, end, hash)
        for (let i = 0; i < tokens.length; i++) {
          const t = tokens[i] as MemoToken
          visit(t.start + start, t.end + start, t.term, parts === IDS ? this.#numbered(t) : NO_TERM)
        }
      })
      return
    }
    for (const token of this.#unicodeTokens(text)) {
      if (!KEPT_TYPES.has(token.type)) continue
      const term = parts === OFFSETS ? null : this.#term(token)
      visit(token.start, token.end, term, parts === IDS && term !== null ? this.#tokenVocabulary.idOf(term) : NO_TERM)
    }
  }

  /** A memoized token's id in the token vocabulary, numbered on first need in each of its generations. */
  #numbered(token: MemoToken): number {
    if (token.generation !== this.#tokenGeneration) {
      token.id = token.term === null ? NO_TERM : this.#tokenVocabulary.idOf(token.term)
      token.generation = this.#tokenGeneration
    }
    return token.id
  }

  /** @internal The term of a token-vocabulary id (a {@link TokenizedText}'s `ids`). */
  tokenTermOf(id: number): string {
    return this.#tokenVocabulary.terms[id] as string
  }

  /** The analyzed tokens of the unit text[start, end), not memoized yet (`hash` is its hashRange), memoized. */
  #unitTokensOf(text: string, start: number, end: number, hash: number): readonly MemoToken[] {
    const unit = text.slice(start, end)
    const tokens = this.#analyzeUnit(unit).tokens
    if (this.#log !== undefined) {
      // Nobody takes it: not kept without bound.
      if (this.#log.units.length >= UNIT_MEMO_LIMIT) this.#log = { units: [], tokens: [] }
      this.#log.units.push(unit)
      this.#log.tokens.push(tokens)
    }
    this.#memoizeTokens(text, start, end, hash, tokens)
    return tokens
  }

  /** Files a unit's tokens in the memo, which starts over when full. */
  #memoizeTokens(text: string, start: number, end: number, hash: number, tokens: readonly MemoToken[]): void {
    if (this.#unitTokens.size >= UNIT_MEMO_LIMIT) this.#unitTokens.clear()
    this.#unitTokens.add(text, start, end, hash, tokens)
  }

  /**
   * The term ids of the unit text[start, end), not memoized yet (`hash` is its hashRange), memoized;
   * its terms are those of the tokens `tokensFrom` (else this Analyzer) has of it, if any.
   */
  #unit(text: string, start: number, end: number, hash: number, tokensFrom: Analyzer | undefined): number | readonly number[] {
    const tokens = (tokensFrom ?? this).#unitTokens.find(text, start, end, hash)
    const terms = tokens ? termsOf(tokens) : this.#analyzeUnit(text.slice(start, end)).terms
    const ids = typeof terms === 'string' ? this.#vocabulary.idOf(terms) : terms.map((t) => this.#vocabulary.idOf(t))
    if (this.#units.size >= UNIT_MEMO_LIMIT) this.#units.clear()
    this.#units.add(text, start, end, hash, ids)
    return ids
  }

  /**
   * A unit's analysis: wink's tokens (see `directUnitTokens`), analyzed. A unit whose shape
   * fixes wink's tokens (a word of the model's lexicon, letters, numbers, hyphenated words,
   * letters or numbers between punctuation: see `shapeTokens`) is read without calling wink. The
   * words of other scripts, which wink's English tokenizer does not read, are the 'unicode'
   * tokenizer's (`withOtherScripts`).
   */
  #analyzeUnit(unit: string): UnitAnalysis {
    this.#unitsAnalyzed++
    const max = this.options.maxTokenLength
    const tokens = shapeTokens(unit, max) ?? directUnitTokens(unit, max)
    const read = this.options.otherScripts ? withOtherScripts(unit, tokens, max, KEPT_TYPES) : tokens
    return this.#analyzed(this.options.cjkBigrams && mayHoldCjk(unit) ? withCjkBigrams(unit, read) : read)
  }

  /** The 'unicode' tokenizer's tokens of `text`, CJK runs as pairs with `cjkBigrams`. */
  #unicodeTokens(text: string): Iterable<RawToken> {
    const tokens = unicodeTokens(text, this.options.maxTokenLength)
    // Only a text that may hold CJK is gathered into a list; the rest streams as before.
    return this.options.cjkBigrams && mayHoldCjk(text) ? withCjkBigrams(text, [...tokens]) : tokens
  }

  #analyzed(raw: readonly RawToken[]): UnitAnalysis {
    const tokens: MemoToken[] = []
    for (const token of raw) {
      if (KEPT_TYPES.has(token.type)) tokens.push({ term: this.#term(token), start: token.start, end: token.end, id: NO_TERM, generation: -1 })
    }
    return { terms: termsOf(tokens), tokens }
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

/** A unit's terms from its analyzed tokens (stop words and short tokens have none): one term as itself, else a list. */
function termsOf(tokens: readonly AnalyzedToken[]): string | string[] {
  const terms: string[] = []
  for (const t of tokens) if (t.term !== null) terms.push(t.term)
  return terms.length === 1 ? (terms[0] as string) : terms
}

/** Whether two stopWords options are the same: the same flag, or the same words in the same order. */
function sameWords(a: boolean | readonly string[], b: boolean | readonly string[]): boolean {
  if (typeof a === 'boolean' || typeof b === 'boolean') return a === b
  return a.length === b.length && a.every((w, i) => w === b[i])
}

/** A copy of `array` with room for at least `min` entries (its length doubled as often as needed; the new entries 0). */
function grown(array: Int32Array, min: number): Int32Array<ArrayBuffer> {
  let size = Math.max(array.length, 1) * 2
  while (size < min) size *= 2
  const out = new Int32Array(size)
  out.set(array)
  return out
}

/** Terms numbered densely from 0 in the order first seen; a new Vocabulary (a new `epoch`) when one starts over. */
class Vocabulary {
  readonly #ids = new Map<string, number>()
  /** The terms by id. */
  readonly terms: string[] = []
  readonly epoch: object = {}

  /** The id of a term (numbered on first sight). */
  idOf(term: string): number {
    let id = this.#ids.get(term)
    if (id === undefined) {
      id = this.terms.length
      this.#ids.set(term, id)
      this.terms.push(term)
    }
    return id
  }
}

/** The text an Analyzer method reads: a string, else the error saying so (not a TypeError from inside). */
function checkText(text: unknown, method: string): void {
  if (typeof text !== 'string') throw new QuarryError('INVALID_OPTION', `Analyzer.${method} takes the text as a string; received ${describe(text)}.`, { path: 'text' })
}
