import { isWinkSpace, isWordChar, notInsidePair, width } from './char-class.js'
import { characterStart, isCjkLetter } from './cjk-bigrams.js'
import { HASH_PRIME, HASH_SEED, hashRange } from './unit-table.js'

// Module-level copies of imports used per character: under a CommonJS transform (tsx), every
// use of an imported name is a property read through a getter.
const isSpace = isWinkSpace
const PRIME = HASH_PRIME
const SEED = HASH_SEED

/** A range of the source text handed to wink-nlp in one call. */
interface Piece {
  readonly start: number
  readonly end: number
}

/**
 * Characters kept inside wink tokens (URLs, e-mails, numbers, abbreviations, contractions,
 * hyphenated words, hashtags): a long run is cut after one of these only when it has no other
 * punctuation, so fewer real tokens are cut in two.
 */
const JOINERS = new Set([...".,:/\\-–—'’@#&_+=?%~$"].map((c) => c.charCodeAt(0)))

/** Characters of text per wink call: enough to amortize a call's fixed cost, fewer than the 65,535 spaces wink counts. */
export const SEGMENT_CHARS = 32_768

/**
 * Cuts `text` into the pieces wink-nlp tokenizes, so that its cost is linear in the text length.
 *
 * wink-nlp splits text on spaces, tabs and line breaks, then runs regexes over each run of the
 * other characters that backtrack in O(run²) (its e-mail pattern, its `isAbbrev` feature), and
 * overflow V8's regex stack (RangeError) on runs of a few million characters. So:
 * - runs of at most `maxRun` characters reach wink unchanged, grouped into segments of about
 *   {@link SEGMENT_CHARS} cut where a run starts: wink tokenizes each run on its own, so this
 *   changes no token, and offsets stay exact (no token in a segment follows 65,535 spaces or
 *   more, where wink stops counting preceding spaces);
 * - a longer run is cut into pieces of at most `maxRun` characters, each ending after its last
 *   character that is not a letter, digit or mark (after its last {@link JOINERS} character
 *   only if it has no other);
 * - a piece with only letters, digits and marks starts a word longer than `maxRun`: wink sees
 *   its first `maxRun` characters and the rest of the word is skipped (it would be truncated to
 *   the maximum token length anyway). With `cjkPairs` (the analyzer's `cjkBigrams`), a run of CJK
 *   letters is no word but a string of pairs (cjk-bigrams.ts): it is cut into pieces of at most
 *   `maxRun`, each after the first starting at the last character of the one before, so that the
 *   pair across each cut is read; and a skipped word ends where such a run starts.
 *
 * Every character is scanned a bounded number of times and wink never sees a run longer than
 * `maxRun`, so the total cost is O(text length · maxRun).
 */
export function winkPieces(text: string, maxRun: number, cjkPairs = false): Piece[] {
  const pieces: Piece[] = []
  const n = text.length
  let segment = 0
  let i = 0
  while (i < n) {
    if (isWinkSpace(text.charCodeAt(i))) {
      i++
      continue
    }
    let j = i + 1
    while (j < n && !isWinkSpace(text.charCodeAt(j))) j++
    if (j - i > maxRun) {
      if (i > segment) pieces.push({ start: segment, end: i })
      cutLongRun(text, i, j, maxRun, cjkPairs, pieces)
      segment = j
    } else if (j - segment > SEGMENT_CHARS && i > segment) {
      pieces.push({ start: segment, end: i })
      segment = i
    }
    i = j
  }
  if (n > segment) pieces.push({ start: segment, end: n })
  return pieces
}

/**
 * Calls `visit` with each unit wink-nlp tokenizes on its own, in text order, and its
 * {@link hashRange}: every run of non-space characters of at most `maxRun`, and the pieces a
 * longer run is cut into (exactly the pieces {@link winkPieces} hands wink for it). wink reads
 * each run between its spaces independently, so the tokens of a text are the tokens of its
 * units, shifted by their offsets.
 */
export function forEachWinkUnit(text: string, maxRun: number, cjkPairs: boolean, visit: (start: number, end: number, hash: number) => void): void {
  const n = text.length
  let i = 0
  while (i < n) {
    let c = text.charCodeAt(i)
    if (isSpace(c)) {
      i++
      continue
    }
    // Hashed while scanning (see hashRange): printable ASCII is never a wink space.
    let h = Math.imul(SEED ^ c, PRIME)
    let j = i + 1
    while (j < n) {
      c = text.charCodeAt(j)
      if ((c <= 0x20 || c >= 0x7f) && isSpace(c)) break
      h = Math.imul(h ^ c, PRIME)
      j++
    }
    if (j - i > maxRun) {
      const pieces: Piece[] = []
      cutLongRun(text, i, j, maxRun, cjkPairs, pieces)
      for (const p of pieces) visit(p.start, p.end, hashRange(text, p.start, p.end))
    } else {
      visit(i, j, h >>> 0)
    }
    i = j
  }
}

/** Pieces of the run from `start` to `end` (no wink spaces in it), each at most `maxRun` (≥ 256) long. */
function cutLongRun(text: string, start: number, end: number, maxRun: number, cjkPairs: boolean, pieces: Piece[]): void {
  let p = start
  while (end - p > maxRun) {
    const windowEnd = notInsidePair(text, p + maxRun)
    const cut = lastBreak(text, p, windowEnd)
    if (cut > p) {
      pieces.push({ start: p, end: cut })
      p = cut
      continue
    }
    // No punctuation in maxRun characters: a long word, or CJK letters read as pairs.
    const continued = cjkPairs ? cjkContinuation(text, p, windowEnd) : undefined
    if (continued !== undefined) {
      pieces.push({ start: p, end: continued.end })
      p = continued.next
      continue
    }
    // A word: wink sees its head, the tail is skipped (up to a CJK run, which is read as pairs).
    pieces.push({ start: p, end: windowEnd })
    p = windowEnd
    while (p < end) {
      const cp = text.codePointAt(p) as number
      if (!isWordChar(cp) || (cjkPairs && isCjkLetter(cp))) break
      p += width(cp)
    }
  }
  if (p < end) pieces.push({ start: p, end })
}

/**
 * For a piece from `p` cut at `windowEnd` inside a run of CJK letters (at least two of them before
 * the cut and one after it): where it ends (not inside a character) and where the next one starts,
 * at its last character, so that the pair of that character and the next is read.
 */
function cjkContinuation(text: string, p: number, windowEnd: number): { readonly end: number; readonly next: number } | undefined {
  const end = characterStart(text, p, windowEnd)
  if (end - p < 4 || !isCjkLetter(text.codePointAt(end) as number)) return undefined
  const last = characterStart(text, p, end - 1)
  const before = last > p ? characterStart(text, p, last - 1) : last
  if (before === last || !isCjkLetter(text.codePointAt(last) as number) || !isCjkLetter(text.codePointAt(before) as number)) return undefined
  return { end, next: last }
}

/**
 * The position just after the last non-word character (anything but a letter, digit or mark) in
 * `text` from `from` to `to`, preferring one that is not a {@link JOINERS} character; `from` if
 * there is none.
 */
function lastBreak(text: string, from: number, to: number): number {
  let joiner = from
  let e = to
  while (e > from) {
    // The code point ending at e (a surrogate pair counts as one).
    const low = text.charCodeAt(e - 1)
    const high = e - 2 >= from ? text.charCodeAt(e - 2) : 0
    const pair = low >= 0xdc00 && low <= 0xdfff && high >= 0xd800 && high <= 0xdbff
    const begin = pair ? e - 2 : e - 1
    const cp = text.codePointAt(begin) as number
    if (!isWordChar(cp)) {
      if (!JOINERS.has(cp)) return e
      if (joiner === from) joiner = e
    }
    e = begin
  }
  return joiner
}
