import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { extractFacts, type ExtractEvent } from '@quarry/adapters'
import { normalizeFact } from '../../packages/adapters/src/memory-bank/facts.js'
import { factOf, sentencesOf } from '../../packages/adapters/src/memory-bank/local-extractor.js'
import { runs } from '../support/runs.js'

/**
 * The local extractor and the normal form of facts read a text in time proportional to its length,
 * whatever it holds, and give what the regular expressions they replaced gave. Those took time
 * growing with the square of a run of end marks ("I like" and 200,000 periods: 26 s), of a
 * sentence of joined abbreviations ("Dr. " 20,000 times: 2.6 s), of a row of lead-ins, of the
 * punctuation ending the word after a period, or of a run of periods inside a fact (normalizeFact).
 */
const user = (text: string): ExtractEvent => ({ content: { role: 'user', parts: [{ text }] } })

/** `unit` repeated to `chars` characters, after `head`, before `tail`. */
const repeated = (head: string, unit: string, chars: number, tail = ''): string => head + unit.repeat(Math.ceil(chars / unit.length)) + tail

/** Milliseconds of processor time this process has used: what other processes run meanwhile does not count. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/**
 * Processor milliseconds one call of `fn` takes: the least over a few batches, each of as many
 * calls as take 20 ms (one, for a call that takes longer), the batches ending after 200 ms.
 */
function msPerCall(fn: () => unknown): number {
  let best = Infinity
  const started = cpuMs()
  do {
    const batch = cpuMs()
    let calls = 0
    let spent: number
    do {
      fn()
      calls++
      spent = cpuMs() - batch
    } while (spent < 20)
    best = Math.min(best, spent / calls)
  } while (cpuMs() - started < 200)
  return best
}

/** Ordinary chat: the yardstick an adversarial text of the same length is timed against. */
const PROSE = 'I live in St. Louis now. My name is Ann! Is it sunny? We like tea, e.g. Earl Grey... '

/**
 * `of(n)` and `of(4n)` timed: four times the text must take less than eight times as long (a
 * reading whose time grows with the square of the text takes sixteen), and `of(4n)` not much longer
 * than `yardstick(4n)`, ordinary text of that length. Texts of tens of thousands of characters:
 * the reading it replaced took seconds at 4n, and the text stays in the processor's cache, whose
 * edge would add to a linear reading's ratio.
 */
function expectLinear(of: (chars: number) => unknown, yardstick: (chars: number) => unknown, n: number): void {
  const small = msPerCall(() => of(n))
  const large = msPerCall(() => of(4 * n))
  expect(large / small, `${small.toFixed(3)} ms for ${n} characters, ${large.toFixed(3)} ms for ${4 * n}`).toBeLessThan(8)
  const ordinary = msPerCall(() => yardstick(4 * n))
  expect(large, `${large.toFixed(3)} ms for ${4 * n} characters; as much ordinary text takes ${ordinary.toFixed(3)} ms`).toBeLessThan(8 * ordinary + 1)
}

describe('the local extractor reads a text in time proportional to its length', () => {
  const N = 10_000
  const prose = (chars: number): unknown => extractFacts([user(repeated('', PROSE, chars))])
  it.each([
    ['a run of periods with no space after it', (chars: number) => repeated('I like ', '.', chars)],
    ['a run of ! and ?', (chars: number) => repeated('I like ', '!?', chars)],
    ['abbreviations joined into one sentence', (chars: number) => repeated('I like ', 'Dr. ', chars)],
    ['initials joined into one sentence', (chars: number) => repeated('I read ', 'J. ', chars, 'Tolkien')],
    ['a row of lead-ins', (chars: number) => repeated('', 'so ', chars, 'I like tea')],
    ['punctuation ending the word after a period', (chars: number) => repeated('I like x. ', ',', chars, 'y')],
    ['a run of periods inside a fact', (chars: number) => repeated('I like ', '.', chars, 'x')],
  ])('%s', (_, text) => {
    expectLinear((chars) => extractFacts([user(text(chars))]), prose, N)
  })

  it('normalizeFact: a run of end marks inside a fact', () => {
    expectLinear((chars) => normalizeFact(repeated('I like ', '.', chars, 'x')), (chars) => normalizeFact(repeated('', PROSE, chars)), N)
    expectLinear((chars) => normalizeFact(repeated('I like ', '!?', chars, 'x')), (chars) => normalizeFact(repeated('', PROSE, chars)), N)
  })
})

/** The reading this file's costs replaced, kept as the oracle of what they give. */
const old = {
  FIRST_PERSON: new Set(['i', "i'm", "i've", "i'd", "i'll", 'my', 'me', 'we', "we're", "we've", 'our', 'mine']),
  LEAD_INS: ['please remember that', 'please remember', 'remember that', 'note that', 'for the record', 'fyi', 'btw', 'by the way', 'actually', 'also', 'and', 'so', 'well', 'oh', 'remember'],
  ABBREVIATIONS: new Set(['dr', 'mr', 'mrs', 'ms', 'prof', 'st', 'mt', 'jr', 'sr', 'ave', 'blvd', 'vs', 'etc', 'approx', 'dept', 'inc', 'ltd', 'corp', 'e.g', 'i.e']),
  BEFORE_NUMBERS: new Set(['no', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept', 'oct', 'nov', 'dec', 'vol', 'p', 'pp']),
  withoutLeadIn(sentence: string): string {
    let s = sentence
    for (;;) {
      const lower = s.toLowerCase()
      const lead = old.LEAD_INS.find((l) => lower.startsWith(l) && /^[\s,:;-]/.test(s.slice(l.length)))
      if (lead === undefined) return s
      s = s.slice(lead.length).replace(/^[\s,:;-]+/, '')
    }
  },
  factOf(sentence: string): string | undefined {
    const s = old.withoutLeadIn(sentence.replace(/\s+/g, ' ').trim())
    if (s === '' || s.endsWith('?')) return undefined
    const words = s.split(' ')
    const first = (words[0] ?? '').toLowerCase().replace(/[’]/g, "'").replace(/[,;:]$/, '')
    if (words.length < 3 || !old.FIRST_PERSON.has(first)) return undefined
    const fact = s.charAt(0).toUpperCase() + s.slice(1)
    return /[.!]$/.test(fact) ? fact : `${fact}.`
  },
  sentencesOf(text: string): string[] {
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
          !old.FIRST_PERSON.has(nextWord) &&
          (old.ABBREVIATIONS.has(word) || (old.BEFORE_NUMBERS.has(word) && /^\p{N}/u.test(rest)) || (/^\p{Lu}$/u.test(before as string) && /^\p{Lu}/u.test(rest)))
        if (joined) continue
        sentences.push(line.slice(start, cut))
        start = cut
      }
      sentences.push(line.slice(start))
    }
    return sentences
  },
  normalizeFact(fact: string): string {
    return fact.normalize('NFKC').toLowerCase().replace(/[’]/g, "'").replace(/\s+/g, ' ').trim().replace(/[.!?]+$/, '')
  },
}

describe('the linear reading gives what the regular expressions gave', () => {
  // Pieces that meet every rule: end marks with and without spaces, abbreviations, numbers, initials,
  // first-person words, lead-ins, curly apostrophes, letters outside the BMP (𝐀 is upper case, 𝑥
  // lower), İ (lower case: two code units), lone surrogates, and every kind of space.
  const PIECES = ['I', 'i', 'my', 'My', 'We', 'I’m', "we're", 'me,', 'Dr', 'dr', 'St', 'e.g', 'i.e', 'No', 'no', 'Jan', 'p', 'etc', 'J', 'R', 'Ann', 'paris', 'like', 'tea', '3rd', '1', '٣', 'İ', 'FYİ', 'fyi', 'so', 'So,', 'Remember that', 'actually', 'please remember', 'by the way', '𝐀', '𝑥', '😀', 'Σ', '\ud800', '\udc00', '(', ')', '"', "'", '’', ' ', ' ', ' ', '  ', '\t', '\n', '\u00a0', '\u2028', '\u3000', '.', '.', '..', '...', '!', '?', '!?', '?!', ',', ';', ':', '-', '—']
  const texts = fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((pieces) => pieces.join(''))

  it('sentencesOf, factOf and normalizeFact, on texts made of the pieces the rules read', () => {
    fc.assert(
      fc.property(texts, (text) => {
        const sentences = sentencesOf(text)
        expect(sentences).toEqual(old.sentencesOf(text))
        for (const s of sentences) expect(factOf(s)).toEqual(old.factOf(s))
        expect(factOf(text)).toEqual(old.factOf(text))
        expect(normalizeFact(text)).toBe(old.normalizeFact(text))
      }),
      { numRuns: runs(2000) },
    )
  })

  it('on any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
        expect(sentencesOf(text)).toEqual(old.sentencesOf(text))
        expect(factOf(text)).toEqual(old.factOf(text))
        expect(normalizeFact(text)).toBe(old.normalizeFact(text))
      }),
      { numRuns: runs(1000) },
    )
  })
})
