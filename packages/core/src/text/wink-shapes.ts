import { cappedToken, type RawToken } from './token.js'
import { winkLexicon, winkPreserves } from './wink.js'

/**
 * Units whose wink-nlp tokens follow from their shape, read without calling wink (which has a
 * fixed cost a call and more per token it learns). Each shape below is a path through wink's
 * tokenizer.js (`tokenize`, `processUnk`, `processWordRP`) and recursive-tokenizer.js
 * (`pushHyphenatedToken`) that depends only on the characters of the unit and on the model's
 * lexicon, for a unit that is not in the lexicon itself:
 * - `letters`: `[A-Za-z]+`, one token (its first category regex, `word`);
 * - `number`: `[+-]?\d+` with single `. , - / :` between digit runs (its `number` regex), one token;
 * - `word-rp`: letters + one of `’”"])}…,.!;?/:` (its `wordRP` category): the letters, then the
 *   character; two characters ending in '.' stay one token;
 * - `core-rp`: letters (2+) or a number (2+ characters, no sign), then what `anyWithRP` splits
 *   off: dots, `--`, `––`, `'s` or one of `’'”"…,.!;?-–:` (letters + a `word-rp` character aside);
 * - `lp-core-rp`: one of `‘“"[({…-–`, letters or a number (no sign), one of `’'”"])}…,!;?-–:`
 *   (`LPanyRP`);
 * - `lp-letters`: one of `‘'“"[({…-–`, then two or more letters (`anyWithLP`);
 * - `backticked`: letters between backticks (markdown code): wink's punctuation regex splits the
 *   backticks off, its word regex reads the letters;
 * - `hash-number`: '#' then a number (no sign, no ':'): the number regex takes the digits, '#' is a
 *   symbol (after '#' wink reads `:3` as an emoticon, so `#1:3` is '#' '1' ':3' but `#1:2` is '#' '1:2');
 * - `hyphenated`: letters joined by single '-' (its word regex, then `pushHyphenatedToken`): one
 *   token if wink preserves the word (`anti-…`, `…-less`), else the parts and the hyphens.
 * Not `backticked` or `hyphenated` when `USD`, `AUD`, `INR` or `GBP` occurs in the unit: wink's
 * currency regex (case-sensitive) runs before its word regex and splits there.
 * A token's type is the lexicon's type when its value is a word of the model (as wink reads
 * it: `its.type` is the lexeme's), else the category wink adds it with. A part that is one of
 * the model's contractions (wink may expand it) is left to wink, as is every other shape.
 * test/property/analyzer-units.test.ts checks every shape against wink itself.
 */

/** A token of a unit: its range and the category wink adds it with when it is not a word of the model. */
type Part = readonly [start: number, end: number, category: string]

interface Shape {
  readonly name: string
  readonly pattern: RegExp
  /** The match cut into wink's tokens; undefined leaves the unit to wink. */
  readonly parts: (unit: string, match: RegExpExecArray) => readonly Part[] | undefined
}

const WORD = 'word'
const NUMBER = 'number'
const PUNCTUATION = 'punctuation'
const SYMBOL = 'symbol'

/** A core (letters or a number) and the category wink detects it as. */
function coreCategory(core: string): string {
  return /^[A-Za-z]/.test(core) ? WORD : NUMBER
}

/** wink's currency regex (`rtc`, flag g only) matches these inside a word before its word regex does. */
const CURRENCY_CODES = /USD|AUD|INR|GBP/

/** The shapes, in the order wink's own tests reach them. */
const SHAPES: readonly Shape[] = [
  { name: 'letters', pattern: /^[A-Za-z]+$/, parts: (unit) => [[0, unit.length, WORD]] },
  { name: 'number', pattern: /^[+-]?\d+(?:[.,\-/:]\d+)*$/, parts: (unit) => [[0, unit.length, NUMBER]] },
  {
    name: 'word-rp',
    pattern: /^[A-Za-z]+[’”"\])}…,.!;?/:]$/,
    parts: (unit) => (unit.length === 2 && unit.endsWith('.') ? [[0, 2, WORD]] : [[0, unit.length - 1, WORD], [unit.length - 1, unit.length, PUNCTUATION]]),
  },
  {
    name: 'core-rp',
    pattern: /^([A-Za-z]{2,}|\d+(?:[.,\-/:]\d+)*)(\.+|--|––|'s|[’'”"…,.!;?\-–:])$/,
    parts: (unit, m) => {
      const core = m[1] as string
      if (core.length < 2) return undefined
      return [[0, core.length, coreCategory(core)], [core.length, unit.length, PUNCTUATION]]
    },
  },
  {
    name: 'lp-core-rp',
    pattern: /^[‘“"[({…\-–]([A-Za-z]+|\d+(?:[.,\-/:]\d+)*)[’'”"\])}…,!;?\-–:]$/,
    parts: (unit, m) => [[0, 1, PUNCTUATION], [1, unit.length - 1, coreCategory(m[1] as string)], [unit.length - 1, unit.length, PUNCTUATION]],
  },
  { name: 'lp-letters', pattern: /^[‘'“"[({…\-–][A-Za-z]{2,}$/, parts: (unit) => [[0, 1, PUNCTUATION], [1, unit.length, WORD]] },
  {
    name: 'backticked',
    pattern: /^`[A-Za-z]+`$/,
    parts: (unit) => (CURRENCY_CODES.test(unit) ? undefined : [[0, 1, PUNCTUATION], [1, unit.length - 1, WORD], [unit.length - 1, unit.length, PUNCTUATION]]),
  },
  { name: 'hash-number', pattern: /^#\d+(?:[.,\-/]\d+)*$/, parts: (unit) => [[0, 1, SYMBOL], [1, unit.length, NUMBER]] },
  {
    name: 'hyphenated',
    pattern: /^[A-Za-z]+(?:-[A-Za-z]+)+$/,
    parts: (unit) => {
      if (CURRENCY_CODES.test(unit)) return undefined
      const words = unit.split('-')
      if (winkPreserves(words[0] as string, words[words.length - 1] as string)) return [[0, unit.length, WORD]]
      const parts: Part[] = []
      let at = 0
      for (const w of words) {
        if (at > 0) parts.push([at - 1, at, PUNCTUATION])
        parts.push([at, at + w.length, WORD])
        at += w.length + 1
      }
      return parts
    },
  },
]

/**
 * wink's tokens of a unit (offsets within it, capped at `maxTokenLength`) when its shape fixes
 * them, or undefined: a word of the model is one token of the lexicon's type (a contraction is
 * left to wink), else the first of the shapes above that matches decides.
 */
export function shapeTokens(unit: string, maxTokenLength: number): RawToken[] | undefined {
  const known = winkLexicon(unit)
  if (known === null) return undefined
  if (known !== undefined) return [cappedToken(unit, 0, unit.length, known, maxTokenLength)]
  for (const shape of SHAPES) {
    const match = shape.pattern.exec(unit)
    if (match === null) continue
    const parts = shape.parts(unit, match)
    return parts === undefined ? undefined : typedTokens(unit, parts, maxTokenLength)
  }
  return undefined
}

/** The parts as tokens, typed as wink types them; undefined if one is a contraction of the model. */
function typedTokens(unit: string, parts: readonly Part[], maxTokenLength: number): RawToken[] | undefined {
  const out: RawToken[] = []
  for (const [start, end, category] of parts) {
    const known = winkLexicon(unit.slice(start, end))
    if (known === null) return undefined
    out.push(cappedToken(unit, start, end, known ?? category, maxTokenLength))
  }
  return out
}

/** The names of the shapes, in order (for tests and diagnostics). */
export const SHAPE_NAMES: readonly string[] = SHAPES.map((s) => s.name)

/** The name of the shape a unit takes the fast path by, or undefined (for tests and diagnostics). */
export function shapeOf(unit: string): string | undefined {
  return SHAPES.find((s) => s.pattern.test(unit))?.name
}
