import { classOf, LETTER, NUMBER, width } from './char-class.js'
import { cappedToken, type RawToken } from './token.js'

/**
 * The 'unicode' tokenizer: the matches of the regex `[\p{L}\p{N}\p{M}]+(?:['’]\p{L}+)*` with
 * flags `gu` (letters, digits and marks, with inner apostrophes followed by letters), typed
 * 'number' when every character is a number (\p{N}). Written as one forward scan rather than
 * that regex because V8 runs out of backtracking stack on a long match (a RangeError at a few
 * million marks or astral letters); the scan is linear. Tokens longer than `maxTokenLength` are
 * truncated (see {@link cappedToken}); the scan still consumes the whole token.
 */
export function unicodeTokens(text: string, maxTokenLength: number): RawToken[] {
  const out: RawToken[] = []
  const n = text.length
  let i = 0
  while (i < n) {
    let cp = text.codePointAt(i) as number
    let bits = classOf(cp)
    if (bits === 0) {
      i += width(cp)
      continue
    }
    const start = i
    let numeric = true
    // [\p{L}\p{N}\p{M}]+
    while (bits !== 0) {
      if ((bits & NUMBER) === 0) numeric = false
      i += width(cp)
      if (i >= n) break
      cp = text.codePointAt(i) as number
      bits = classOf(cp)
    }
    // (?:['’]\p{L}+)*: each apostrophe only if a letter follows it.
    while (i + 1 < n) {
      const q = text.charCodeAt(i)
      if (q !== 0x27 && q !== 0x2019) break
      cp = text.codePointAt(i + 1) as number
      if ((classOf(cp) & LETTER) === 0) break
      numeric = false
      i += 1
      while (i < n) {
        cp = text.codePointAt(i) as number
        if ((classOf(cp) & LETTER) === 0) break
        i += width(cp)
      }
    }
    out.push(cappedToken(text, start, i, numeric ? 'number' : 'word', maxTokenLength))
  }
  return out
}
