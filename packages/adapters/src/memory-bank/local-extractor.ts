import { isUserTurn } from '../rpc/content.js'
import { CAPS, characterCount } from '../rpc/limits.js'
import type { ExtractEvent, ExtractRequest } from './extractor.js'
import { normalizeFact, withoutFinal } from './facts.js'

/**
 * The local extractor: Quarry's deterministic stand-in for the model Memory Bank extracts facts
 * with (Gemini). It is no language model: it keeps what the user says about themselves, word for
 * word, and nothing else. The rule:
 *
 * 1. Only the user's turns: events whose content's role is "user"; without a role, whose author is
 *    "user", and a turn with neither (a directContentsSource's) is the user's, as generateContent reads it.
 * 2. Their text parts, split into sentences: at line breaks, and at `.`, `!` or `?` followed by a
 *    space — but not after an abbreviation ("Dr.", "St.", "e.g."), "No." or "Jan." before a number,
 *    or an initial before a capitalized word ("J. R. Tolkien"), unless a first-person word follows.
 * 3. A sentence is a fact when it is a statement about the user: it does not end with `?`, it has
 *    at least three words, and its first word — after a lead-in such as "Remember that" — is
 *    a first-person one: I, I'm, I've, I'd, I'll, My, Me, We, We're, We've, Our, Mine; and its
 *    fact (rule 4) is at most 10,000 characters, the most a memory's fact holds (CAPS.text, as
 *    createMemory takes it): a longer one could not be stored, and a page of text with no line
 *    break or end mark is no statement about the user.
 * 4. The fact keeps the user's words, in the first person as Google's generate-memories guide
 *    shows them ("This is my original fact"): the lead-in dropped, spaces collapsed, the first
 *    letter upper case, a final period added when there is no end mark.
 * 5. A fact equal to an earlier one of the same request (normalizeFact) is dropped.
 *
 * "I live in Paris. What's the weather?" gives ["I live in Paris."]; "Remember that my
 * daughter is Eva" gives ["My daughter is Eva."].
 */
const FIRST_PERSON = new Set(['i', "i'm", "i've", "i'd", "i'll", 'my', 'me', 'we', "we're", "we've", 'our', 'mine'])

/** Lead-ins that announce a statement ("Remember that I ...", "Actually, my ..."), lower case, longest first. */
const LEAD_INS = ['please remember that', 'please remember', 'remember that', 'note that', 'for the record', 'fyi', 'btw', 'by the way', 'actually', 'also', 'and', 'so', 'well', 'oh', 'remember']

/** The text parts of a turn written by the user, or undefined for a turn of anyone else (isUserTurn: as generateContent reads a turn). */
function userText(event: ExtractEvent): string | undefined {
  const content = event.content
  if (!isUserTurn(content, event.author)) return undefined
  const parts = Array.isArray(content?.['parts']) ? (content['parts'] as unknown[]) : []
  const texts = parts.flatMap((p) => (typeof p === 'object' && p !== null && typeof (p as Record<string, unknown>)['text'] === 'string' ? [(p as Record<string, string>)['text'] as string] : []))
  return texts.join('\n')
}

/**
 * The sentence without its lead-ins ("Remember that", "Actually,"): each step lower-cases only the
 * characters a lead-in could span and moves an offset past the one it finds, so a row of lead-ins
 * ("so so so …") costs its length, not its length times the count of lead-ins.
 */
function withoutLeadIn(sentence: string): string {
  let at = 0
  for (;;) {
    // A character lower-cases alone (Σ aside, which becomes no ASCII either way): the few a lead-in could span read as within the sentence.
    const head = sentence.slice(at, at + LONGEST_LEAD_IN).toLowerCase()
    const lead = LEAD_INS.find((l) => head.startsWith(l) && LEAD_IN_END.test(sentence.charAt(at + l.length)))
    if (lead === undefined) return sentence.slice(at)
    at += lead.length
    while (at < sentence.length && LEAD_IN_END.test(sentence.charAt(at))) at++
  }
}

const LONGEST_LEAD_IN = Math.max(...LEAD_INS.map((l) => l.length))

/** What follows a lead-in (and is dropped with it). */
const LEAD_IN_END = /^[\s,:;-]$/

/** The fact a sentence states about the user, or undefined when it states none (rule 3). */
export function factOf(sentence: string): string | undefined {
  const s = withoutLeadIn(sentence.replace(/\s+/g, ' ').trim())
  if (s === '' || s.endsWith('?')) return undefined
  // Words are one space apart: three words hold two spaces.
  const space = s.indexOf(' ')
  const first = (space < 0 ? s : s.slice(0, space)).toLowerCase().replace(/[’]/g, "'").replace(/[,;:]$/, '')
  if (space < 0 || s.indexOf(' ', space + 1) < 0 || !FIRST_PERSON.has(first)) return undefined
  const fact = s.charAt(0).toUpperCase() + s.slice(1)
  const whole = /[.!]$/.test(fact) ? fact : `${fact}.`
  return characterCount(whole) > CAPS.text.max ? undefined : whole
}

/** Words a period ends without ending the sentence (lower case, without the period): titles and the like. */
const ABBREVIATIONS = new Set(['dr', 'mr', 'mrs', 'ms', 'prof', 'st', 'mt', 'jr', 'sr', 'ave', 'blvd', 'vs', 'etc', 'approx', 'dept', 'inc', 'ltd', 'corp', 'e.g', 'i.e'])

/** Words a period ends without ending the sentence only before a number ("No. 1", "Jan. 3rd"): "I said no. My name is Ann." is two. */
const BEFORE_NUMBERS = new Set(['no', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec', 'vol', 'p', 'pp'])

/**
 * A text's sentences (rule 2): split at line breaks and after `.`, `!` or `?` and a space, except
 * after a single period that ends an abbreviation ("Dr. Smith", "St. Louis"), a word such as
 * "No." or "Jan." before a number, or an initial before a capitalized word ("J. R. R. Tolkien").
 * A next word in the first person (I, my, we, …) always starts a sentence: "… etc. My dog is Rex."
 *
 * The text is read once: each run of end marks from its first mark, then the spaces after it, the
 * word before a period back to a space, the word after it up to one. (A pattern such as
 * /[.!?]+\s+/ tries a run with no space after it again from each of its marks, and one that reads
 * the word before a period at the end of the sentence so far reads that sentence again at each
 * period joined to it: their time grows with the square of a run's or a sentence's length.)
 */
export function sentencesOf(text: string): string[] {
  const sentences: string[] = []
  for (const line of text.split(/\n+/)) {
    let start = 0
    const marks = /[.!?]+/g
    const spaces = /\s+/y
    for (let run = marks.exec(line); run !== null; run = marks.exec(line)) {
      spaces.lastIndex = marks.lastIndex
      // No space after the run: no sentence ends there, and the search goes on after it.
      if (!spaces.test(line)) continue
      const cut = spaces.lastIndex
      marks.lastIndex = cut
      if (run[0] === '.' && joined(line, start, run.index, cut)) continue
      sentences.push(line.slice(start, cut))
      start = cut
    }
    sentences.push(line.slice(start))
  }
  return sentences
}

/**
 * Whether the single period at `at` (of the sentence begun at `start`; the next word begins at
 * `next`) ends no sentence: it ends an abbreviation, a word such as "No." before a number, or an
 * initial before a capitalized word, and the next word is not in the first person.
 */
function joined(line: string, start: number, at: number, next: number): boolean {
  const before = wordBefore(line, start, at)
  if (before === undefined || FIRST_PERSON.has(wordAt(line, next))) return false
  const word = before.toLowerCase()
  return ABBREVIATIONS.has(word) || (BEFORE_NUMBERS.has(word) && startsAt(NUMBER, line, next)) || (UPPER_ONLY.test(before) && startsAt(UPPER, line, next))
}

/**
 * The word a period at `at` ends, read back from it: its letters and periods ("Dr", "e.g"), which
 * must follow a space or `start`, the sentence's start; undefined when there is none or when
 * something else comes before it ("(Dr.", "3rd."). Letters are code points: a surrogate pair is one.
 */
function wordBefore(line: string, start: number, at: number): string | undefined {
  let from = at
  while (from > start) {
    const last = line.charCodeAt(from - 1)
    const width = last >= 0xdc00 && last <= 0xdfff && from - 2 >= start && isHighSurrogate(line.charCodeAt(from - 2)) ? 2 : 1
    if (!WORD_CHARACTER.test(line.slice(from - width, from))) break
    from -= width
  }
  if (from === at || (from > start && !SPACE.test(line.charAt(from - 1)))) return undefined
  return line.slice(from, at)
}

/** The word at `at` (up to a space), as a first-person word is looked up: lower case, ’ as ', without its final punctuation. */
function wordAt(line: string, at: number): string {
  WORD.lastIndex = at
  return withoutFinal((WORD.exec(line)?.[0] ?? '').toLowerCase().replace(/[’]/g, "'"), ',;:.!?')
}

/** Whether the code point at `at` matches `pattern` (sticky, of one code point). */
function startsAt(pattern: RegExp, line: string, at: number): boolean {
  pattern.lastIndex = at
  return pattern.test(line)
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff
const WORD_CHARACTER = /^[\p{L}.]$/u
const SPACE = /^\s$/
const WORD = /[^\s]+/y
const UPPER_ONLY = /^\p{Lu}$/u
const NUMBER = /\p{N}/uy
const UPPER = /\p{Lu}/uy

/** The facts of a conversation, in order (the rule above). */
export function extractFacts(events: readonly ExtractEvent[]): string[] {
  const facts: string[] = []
  const seen = new Set<string>()
  for (const event of events) {
    const text = userText(event)
    if (text === undefined) continue
    for (const sentence of sentencesOf(text)) {
      const fact = factOf(sentence)
      if (fact === undefined || seen.has(normalizeFact(fact))) continue
      seen.add(normalizeFact(fact))
      facts.push(fact)
    }
  }
  return facts
}

/** The default `extractor` of Memory Bank: {@link extractFacts} over the request's events. */
export async function localExtractor(request: ExtractRequest): Promise<readonly string[]> {
  return extractFacts(request.events)
}
