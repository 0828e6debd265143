/** Unicode general category bits of a code point: letter, number, mark. */
export const LETTER = 1
export const NUMBER = 2
const MARK = 4
const KNOWN = 8

// One byte per code point (1.1 MB), filled on first sight: Unicode property regexes are exact
// but each call costs orders of magnitude more than a table lookup, and text repeats few distinct code points.
let table: Uint8Array | undefined

/** LETTER | NUMBER | MARK bits of a code point (\p{L}, \p{N}, \p{M}); 0 for anything else, lone surrogates included. */
export function classOf(codePoint: number): number {
  table ??= new Uint8Array(0x110000)
  const known = table[codePoint] as number
  if (known !== 0) return known & ~KNOWN
  const c = String.fromCodePoint(codePoint)
  const bits = (/\p{L}/u.test(c) ? LETTER : 0) | (/\p{N}/u.test(c) ? NUMBER : 0) | (/\p{M}/u.test(c) ? MARK : 0)
  table[codePoint] = bits | KNOWN
  return bits
}

/** A letter, number or mark: the characters a word is made of (the 'unicode' tokenizer's token characters). */
export function isWordChar(codePoint: number): boolean {
  return classOf(codePoint) !== 0
}

/** UTF-16 code units of a code point. */
export function width(codePoint: number): 1 | 2 {
  return codePoint > 0xffff ? 2 : 1
}

/**
 * The characters wink-nlp splits text on before anything else (its `splitter`:
 * `[ \u00a0\u2002-\u2005\u2009\u200a\u202f\u205f]+|[\n\r\t]+`): no wink token contains one.
 */
export function isWinkSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09 || code === 0xa0 || (code >= 0x2002 && code <= 0x2005) || code === 0x2009 || code === 0x200a || code === 0x202f || code === 0x205f
}

/** `end` moved back by one if it would cut a surrogate pair in two (so a cut never leaves half a character). */
export function notInsidePair(text: string, end: number): number {
  const before = text.charCodeAt(end - 1)
  const after = text.charCodeAt(end)
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff ? end - 1 : end
}
