import type { AnalyzedToken } from '@quarry/core'
import { matchedTokens } from '../matches.js'

/** A piece of a snippet: plain text, or a word that matched a query term. */
export interface SnippetPart {
  readonly text: string
  readonly match: boolean
}

/** A snippet: its parts and whether text was left out before and after it. */
export interface Snippet {
  readonly parts: readonly SnippetPart[]
  readonly cutStart: boolean
  readonly cutEnd: boolean
}

/** What a character of a passage is: between tokens, in a token, in a matched token. */
const BETWEEN = 0
const IN_TOKEN = 1
const MATCHED = 2

/**
 * The passage of `text` that best matches the query: at most `width` characters of whole words,
 * the window holding the most distinct query terms (then the most matches; the earliest on a
 * tie), widened evenly around its matches; the words whose term is a query term are marked.
 * Without any match it is the text's beginning. Whitespace runs read as one space.
 *
 * @param tokens the text's tokens as the index's analyzer sees them (offsets and terms)
 * @param terms the query's terms (same analyzer)
 */
export function bestPassage(text: string, tokens: readonly AnalyzedToken[], terms: ReadonlySet<string>, width: number): Snippet {
  const n = tokens.length
  if (n === 0) return { parts: [], cutStart: false, cutEnd: false }
  const tok = (i: number): AnalyzedToken => tokens[i] as AnalyzedToken
  const matched = matchedTokens(tokens, terms)
  const span = (first: number, last: number): number => tok(last).end - tok(first).start

  // Two pointers: for each first token, the window runs to the furthest token that fits.
  const counts = new Map<string, number>()
  let best = { first: 0, last: 0, distinct: -1, total: -1 }
  let last = -1
  let total = 0
  for (let first = 0; first < n; first++) {
    if (last < first) {
      last = first
      if (matched[first]) {
        counts.set(tok(first).term as string, (counts.get(tok(first).term as string) ?? 0) + 1)
        total++
      }
    }
    while (last + 1 < n && span(first, last + 1) <= width) {
      last++
      if (matched[last]) {
        counts.set(tok(last).term as string, (counts.get(tok(last).term as string) ?? 0) + 1)
        total++
      }
    }
    if (counts.size > best.distinct || (counts.size === best.distinct && total > best.total)) best = { first, last, distinct: counts.size, total }
    if (matched[first]) {
      const term = tok(first).term as string
      const c = (counts.get(term) as number) - 1
      if (c === 0) counts.delete(term)
      else counts.set(term, c)
      total--
    }
  }

  // Widen around the matches of the best window, alternately left and right, while it fits.
  let lo = best.first
  let hi = best.last
  if (best.distinct > 0) {
    while (!matched[lo]) lo++
    while (!matched[hi]) hi--
    for (let grew = true; grew; ) {
      grew = false
      if (lo > 0 && span(lo - 1, hi) <= width) {
        lo--
        grew = true
      }
      if (hi + 1 < n && span(lo, hi + 1) <= width) {
        hi++
        grew = true
      }
    }
  }

  // By character: tokens may overlap (CJK pairs "東京", "京タ"), so each character is marked once,
  // matched when any matched token covers it; the text between tokens has its spaces collapsed.
  const from = tok(lo).start
  const kinds = new Uint8Array(tok(hi).end - from)
  for (let i = lo; i <= hi; i++) {
    const t = tok(i)
    for (let c = t.start - from; c < t.end - from; c++) kinds[c] = matched[i] === true ? MATCHED : Math.max(kinds[c] as number, IN_TOKEN)
  }
  const parts: SnippetPart[] = []
  for (let c = 0; c < kinds.length; ) {
    const kind = kinds[c] as number
    let end = c + 1
    while (end < kinds.length && kinds[end] === kind) end++
    const piece = text.slice(from + c, from + end)
    parts.push({ text: kind === BETWEEN ? piece.replace(/\s+/g, ' ') : piece, match: kind === MATCHED })
    c = end
  }
  return { parts, cutStart: lo > 0, cutEnd: hi < n - 1 }
}

/**
 * Text from indexed files or their names, made safe to print: control characters (an escape
 * sequence that would clear the screen or retitle the window) shown as `\u001b`, not sent.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

/** A snippet as one line: cut ends as `…`, matched words through `mark`, control characters escaped (`printable`). */
export function renderSnippet(snippet: Snippet, mark: (word: string) => string): string {
  const body = snippet.parts.map((p) => (p.match ? mark(printable(p.text)) : printable(p.text))).join('')
  return `${snippet.cutStart ? '…' : ''}${body}${snippet.cutEnd ? '…' : ''}`
}

/**
 * How matched words are marked: bold on a terminal, `**word**` on a terminal with NO_COLOR set,
 * not at all when the output is piped or redirected (plain text for other programs).
 */
export function markerFor(stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): (word: string) => string {
  if (stream.isTTY !== true) return (word) => word
  return env.NO_COLOR === undefined ? (word) => `\x1b[1m${word}\x1b[22m` : (word) => `**${word}**`
}

/** A path shortened to `max` characters by its start, keeping whole trailing segments: `…/guide/install.md`. */
export function shortenPath(name: string, max: number): string {
  const path = printable(name)
  if (path.length <= max) return path
  const tail = path.slice(path.length - (max - 1))
  const slash = tail.indexOf('/')
  return `…${slash >= 0 && slash < tail.length - 1 ? tail.slice(slash) : tail}`
}
