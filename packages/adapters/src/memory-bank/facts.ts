/**
 * How generateMemories compares facts when it consolidates them with a scope's memories
 * (consolidate.ts): a normal form, the statement a retraction takes back, and the slot a fact fills.
 */

/** Case, spacing and final punctuation do not make two facts different. */
export function normalizeFact(fact: string): string {
  return withoutFinal(fact.normalize('NFKC').toLowerCase().replace(/[’]/g, "'").replace(/\s+/g, ' ').trim(), '.!?')
}

/**
 * `text` without the characters of `marks` it ends with ("tea!?" → "tea"), read back from its end.
 * (/[.!?]+$/ would try every run of marks in the text, each from each of its characters, before
 * the one at the end: its time grows with the square of a run's length, wherever the run is.)
 */
export function withoutFinal(text: string, marks: string): string {
  let end = text.length
  while (end > 0 && marks.includes(text.charAt(end - 1))) end--
  return text.slice(0, end)
}

/** "no longer" takes a statement back; so does a negation with a final "anymore" ("I don't eat meat anymore"). */
const NO_LONGER = /\bno longer\s+/
const ANYMORE = /\s*\bany ?more$/
const NEGATION = /\b(?:(?:do|does|did)(?:n't| not)|not|never)\s+/

/**
 * The statement a retraction takes back, normalized ("I no longer live in Paris." → "i live in
 * paris"; "I don't eat meat anymore" → "i eat meat"); undefined when `fact` retracts nothing.
 */
export function retractedStatement(fact: string): string | undefined {
  return retractionOf(normalizeFact(fact))
}

/** {@link retractedStatement} of a fact already normalized (`normalizeFact`). */
export function retractionOf(text: string): string | undefined {
  if (NO_LONGER.test(text)) return text.replace(NO_LONGER, '').replace(ANYMORE, '')
  if (ANYMORE.test(text) && NEGATION.test(text)) return text.replace(ANYMORE, '').replace(NEGATION, '')
  return undefined
}

/** Verbs of where one lives or works, and the verb of a move: "I moved to Berlin" fills "i live in". */
const PLACE_VERBS = new Set(['live', 'work', 'study', 'stay', 'reside'])
const MOVES = /^(i|we) (?:moved|relocated|have moved|just moved) to\b/

/**
 * The slot a fact fills, of which a person has one value at a time, so a newer fact of the same
 * slot replaces the older: "My <something> is|are|was|were …" (the slot "my <something> is"), and
 * "I|We live|work|study|stay|reside in|at …" (the slot "i live in", "i work at"; "I moved to …" fills "i live in").
 * Undefined for any other fact ("I like cats" and "I like dogs" are both kept).
 */
export function slotOf(fact: string): string | undefined {
  return slotAndValue(fact)?.slot
}

/** A fact's slot (see {@link slotOf}) and the value it gives it ("I moved to Berlin." → "i live in", "berlin"). */
export function slotAndValue(fact: string): { readonly slot: string; readonly value: string } | undefined {
  return slotAndValueOf(normalizeFact(fact))
}

/** {@link slotAndValue} of a fact already normalized (`normalizeFact`). */
export function slotAndValueOf(text: string): { readonly slot: string; readonly value: string } | undefined {
  const move = MOVES.exec(text)
  if (move) return { slot: `${move[1]} live in`, value: text.slice(move[0].length).trim() }
  const copula = /^(my(?: [^ ]+){1,4}?) (?:is|are|was|were)\b/.exec(text)
  if (copula) return { slot: `${copula[1]} is`, value: text.slice(copula[0].length).trim() }
  const place = /^(i|we) ([a-z]+) (in|at)\b/.exec(text)
  if (place && PLACE_VERBS.has(place[2] ?? '')) return { slot: `${place[1]} ${place[2]} ${place[3]}`, value: text.slice(place[0].length).trim() }
  return undefined
}

/** The words of a normalized fact (letters and digits), to test that one fact says all another says. */
export function wordsOf(text: string): Set<string> {
  return new Set(text.split(/[^\p{L}\p{N}']+/u).filter((w) => w !== ''))
}

/** Whether a normalized fact negates what it says ("i never eat meat", "i don't live in paris"): it does not state its words. */
export function isNegated(normal: string): boolean {
  return /\b(?:not|never|no|nor)\b|n't\b/.test(normal)
}
