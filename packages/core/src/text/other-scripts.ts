import { classOf, LETTER, NUMBER, width } from './char-class.js'
import type { RawToken } from './token.js'
import { unicodeTokens } from './unicode-tokens.js'

/**
 * wink-nlp's tokenizer is English's: it reads the letters of Latin-1 only. A word in another
 * script (Cyrillic, Greek, Hebrew, Arabic, Devanagari, CJK) gave it no token at all, and a Latin
 * word with a letter past Latin-1 was cut at that letter or lost it ("Tiếng" → "ti", "ng";
 * "łódź" → "od"; "İstanbul" → "stanbul"), so such text could never be found by its words.
 *
 * Here the unit's words as the 'unicode' tokenizer reads them (runs of letters, digits and marks)
 * take the place of wink's tokens wherever a run holds a non-ASCII letter or digit that no token
 * wink kept covers: the whole run is one token, and wink's tokens overlapping it go. Everything wink
 * covers is left as it tokenized it (contractions, e-mails, URLs, hyphenated words, accented
 * Latin-1 words), and a unit of ASCII alone is never looked at: English text tokenizes as before.
 *
 * `kept`: the token types the analyzer keeps (a punctuation token covers nothing).
 */
export function withOtherScripts(unit: string, tokens: readonly RawToken[], maxTokenLength: number, kept: ReadonlySet<string>): readonly RawToken[] {
  let ascii = true
  for (let i = 0; i < unit.length; i++) {
    if (unit.charCodeAt(i) > 0x7f) {
      ascii = false
      break
    }
  }
  if (ascii) return tokens
  const covered = new Uint8Array(unit.length)
  for (const t of tokens) if (kept.has(t.type)) covered.fill(1, t.start, t.end)
  const words: RawToken[] = []
  for (const word of unicodeTokens(unit, maxTokenLength)) {
    for (let i = word.start; i < word.end; ) {
      const cp = unit.codePointAt(i) as number
      // A letter or digit: a run of marks alone (the emoji variation selector after ❤) is no word.
      if (cp > 0x7f && covered[i] === 0 && (classOf(cp) & (LETTER | NUMBER)) !== 0) {
        words.push(word)
        break
      }
      i += width(cp)
    }
  }
  if (words.length === 0) return tokens
  const out: RawToken[] = []
  let w = 0
  for (const t of tokens) {
    // The words that start before this token go first (tokens and words are in text order).
    while (w < words.length && (words[w] as RawToken).start < t.start) out.push(words[w++] as RawToken)
    if (!words.some((word) => t.start < word.end && word.start < t.end)) out.push(t)
  }
  while (w < words.length) out.push(words[w++] as RawToken)
  return out
}
