import { notInsidePair } from './char-class.js'

/** A token with its character offsets in the source text: `value === text.slice(start, end)`. */
export interface RawToken {
  readonly value: string
  readonly start: number
  readonly end: number
  /** wink's token type: word, number, email, url, hashtag, mention, punctuation, ... */
  readonly type: string
}

/**
 * The token from `start` to `end` of `text`, cut to its first `maxLength` UTF-16 code units if
 * longer (never inside a surrogate pair; an astral first character is kept whole). The type is
 * the whole token's: a truncated URL is still a URL.
 */
export function cappedToken(text: string, start: number, end: number, type: string, maxLength: number): RawToken {
  if (end - start > maxLength) {
    const cut = notInsidePair(text, start + maxLength)
    end = cut > start ? cut : start + 2
  }
  return { value: text.slice(start, end), start, end, type }
}

/** A flat copy of a string that shares no storage with the one it was sliced from (for keys kept in memos). */
export function ownCopy(s: string): string {
  // V8 slices strings of 13+ characters as views into their parent; a concatenation flattened
  // by a slice is a new string. Shorter slices are copies already.
  return s.length < 13 ? s : (s + ' ').slice(0, -1)
}
