import { isUserTurn } from '../rpc/content.js'
import type { ExtractEvent, ExtractRequest } from './extractor.js'
import { normalizeFact } from './facts.js'

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
 *    a first-person one: I, I'm, I've, I'd, I'll, My, Me, We, We're, We've, Our, Mine.
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

function withoutLeadIn(sentence: string): string {
  let s = sentence
  for (;;) {
    const lower = s.toLowerCase()
    const lead = LEAD_INS.find((l) => lower.startsWith(l) && /^[\s,:;-]/.test(s.slice(l.length)))
    if (lead === undefined) return s
    s = s.slice(lead.length).replace(/^[\s,:;-]+/, '')
  }
}

/** The fact a sentence states about the user, or undefined when it states none (rule 3). */
export function factOf(sentence: string): string | undefined {
  const s = withoutLeadIn(sentence.replace(/\s+/g, ' ').trim())
  if (s === '' || s.endsWith('?')) return undefined
  const words = s.split(' ')
  const first = (words[0] ?? '').toLowerCase().replace(/[’]/g, "'").replace(/[,;:]$/, '')
  if (words.length < 3 || !FIRST_PERSON.has(first)) return undefined
  const fact = s.charAt(0).toUpperCase() + s.slice(1)
  return /[.!]$/.test(fact) ? fact : `${fact}.`
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
 */
export function sentencesOf(text: string): string[] {
  const sentences: string[] = []
  for (const line of text.split(/\n+/)) {
    let start = 0
    for (const end of line.matchAll(/[.!?]+\s+/g)) {
      const cut = end.index + end[0].length
      const rest = line.slice(cut)
      const nextWord = (/^[^\s]+/.exec(rest)?.[0] ?? '').toLowerCase().replace(/[’]/g, "'").replace(/[,;:.!?]+$/, '')
      const before = /(?:^|\s)([\p{L}.]+)\.$/u.exec(line.slice(start, end.index + 1))?.[1]
      const word = before?.toLowerCase()
      const joined =
        end[0].trimEnd() === '.' &&
        word !== undefined &&
        !FIRST_PERSON.has(nextWord) &&
        (ABBREVIATIONS.has(word) || (BEFORE_NUMBERS.has(word) && /^\p{N}/u.test(rest)) || (/^\p{Lu}$/u.test(before as string) && /^\p{Lu}/u.test(rest)))
      if (joined) continue
      sentences.push(line.slice(start, cut))
      start = cut
    }
    sentences.push(line.slice(start))
  }
  return sentences
}

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
