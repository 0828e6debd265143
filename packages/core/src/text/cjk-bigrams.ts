import { width } from './char-class.js'
import type { RawToken } from './token.js'

/**
 * Chinese and Japanese are written without spaces, so a tokenizer that splits at spaces and
 * punctuation reads a whole clause as one word: "東京タワーは日本の首都にあります" could be found by
 * that exact clause only, never by "東京". Here, as Lucene's CJKAnalyzer does (StandardTokenizer,
 * then CJKBigramFilter), each run of Han, Hiragana, Katakana and Hangul letters becomes its
 * overlapping pairs of characters ("東京", "京タ", "タワ", …; a run of one character is itself), so a
 * query's pairs meet a document's wherever the words are the same. Korean is bigrammed too, as
 * Lucene does by default: its particles are written joined to the word ("텍스트입니다").
 *
 * Call it on a text {@link mayHoldCjk} says may hold a run. Runs are found in the text itself,
 * not in the tokens, so a run longer than `maxTokenLength` is read whole. A token that overlaps a
 * run keeps only its pieces outside the runs that hold a letter or digit ("iPhone用" → "iPhone", "用").
 */
export function withCjkBigrams(text: string, tokens: readonly RawToken[]): readonly RawToken[] {
  const runs: [number, number][] = []
  for (const m of text.matchAll(CJK_RUN)) runs.push([m.index, m.index + m[0].length])
  if (runs.length === 0) return tokens
  const out: RawToken[] = []
  // Tokens and runs are both in text order: one pass over each, not every run for every token.
  let first = 0
  for (const t of tokens) {
    while (first < runs.length && (runs[first] as [number, number])[1] <= t.start) first++
    let from = t.start
    for (let r = first; r < runs.length && (runs[r] as [number, number])[0] < t.end; r++) {
      const [start, end] = runs[r] as [number, number]
      if (start > from) piece(text, from, start, t.type, out)
      from = Math.max(from, end)
    }
    if (from === t.start) out.push(t)
    else if (from < t.end) piece(text, from, t.end, t.type, out)
  }
  for (const [start, end] of runs) {
    // Characters as written: a base with the marks after it (か + U+3099 is が decomposed) and a
    // Hangul syllable's conjoining vowel and final jamo are one, so NFD text pairs as NFC does.
    const chars: number[] = []
    for (let i = start; i < end; ) {
      chars.push(i)
      i += width(text.codePointAt(i) as number)
      while (i < end && continues(text.codePointAt(i) as number)) i += width(text.codePointAt(i) as number)
    }
    chars.push(end)
    if (chars.length === 2) out.push({ value: text.slice(start, end), start, end, type: 'word' })
    for (let i = 0; i + 2 < chars.length; i++) {
      const a = chars[i] as number
      const b = chars[i + 2] as number
      out.push({ value: text.slice(a, b), start: a, end: b, type: 'word' })
    }
  }
  // Text order, as every token stream is.
  return out.sort((a, b) => a.start - b.start || a.end - b.end)
}

/** Whether a code point is a letter of the CJK scripts: one that starts or continues a run. */
export function isCjkLetter(cp: number): boolean {
  return CJK_LETTER.test(String.fromCodePoint(cp))
}

const CJK_LETTER = /^(?=[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}])\p{L}$/u

/**
 * Where the character holding the code unit at `at` starts (a base with the marks and conjoining
 * jamo after it are one, as the pairs read them), not before `from`.
 */
export function characterStart(text: string, from: number, at: number): number {
  let i = at > from && isLowSurrogate(text.charCodeAt(at)) && isHighSurrogate(text.charCodeAt(at - 1)) ? at - 1 : at
  while (i > from && continues(text.codePointAt(i) as number)) i = i - 2 >= from && isLowSurrogate(text.charCodeAt(i - 1)) && isHighSurrogate(text.charCodeAt(i - 2)) ? i - 2 : i - 1
  return i
}

const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff
const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff

/** Whether a code point continues the character before it: a mark, or a Hangul vowel or final jamo (conjoining). */
function continues(cp: number): boolean {
  return (cp >= 0x1160 && cp <= 0x11ff) || (cp >= 0xd7b0 && cp <= 0xd7ff) || MARK.test(String.fromCodePoint(cp))
}

const MARK = /^\p{M}$/u

/** A piece of a token outside the runs, kept when it holds a letter or digit. */
function piece(text: string, start: number, end: number, type: string, out: RawToken[]): void {
  const value = text.slice(start, end)
  if (/[\p{L}\p{N}]/u.test(value)) out.push({ value, start, end, type })
}

/**
 * Whether `text` has a character of the blocks CJK letters lie in (Hangul Jamo, the CJK and kana
 * blocks, Hangul syllables, compatibility and half-width forms, the supplementary ideographs): one
 * without has no CJK run, and is passed over (curly quotes and dashes do not count).
 */
export function mayHoldCjk(text: string): boolean {
  return CJK_LIKELY.test(text)
}

const CJK_LIKELY = /[\u1100-\u11ff\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff00-\uffef\u{16fe0}-\u{16fff}\u{1aff0}-\u{1b16f}\u{1f200}-\u{1f2ff}\u{20000}-\u{3ffff}]/u

/**
 * A run of letters (and their marks) of the CJK scripts, from a letter: Script_Extensions, so that
 * the prolonged sound mark "ー" and the iteration mark "々" belong to the run, while CJK
 * punctuation ("。", "、"), which are no letters, end it. A combining mark some CJK text shares
 * (U+0323, say) starts none: after a Latin letter it is that letter's.
 */
const CJK_RUN = /(?=[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}])\p{L}(?:(?=[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}])[\p{L}\p{M}])*/gu
