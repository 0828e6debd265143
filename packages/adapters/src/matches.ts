import type { Analyzer, AnalyzedToken } from '@quarry/core'

/**
 * Which words of a result match its query, the one rule the CLI's snippets (cli/snippet.ts) and
 * the console's highlights (console/explain.ts) mark by: a word matches when its analyzed term
 * (the index's analyzer: lowercased, accents folded, stemmed, so inflections match) is one of
 * the query's analyzed terms. Stop words have no term and never match.
 */

/** The query's terms as `analyzer` makes them. */
export function queryTerms(analyzer: Analyzer, query: string): ReadonlySet<string> {
  return new Set(analyzer.terms(query))
}

/** For each token, whether its term is one of `terms`. */
export function matchedTokens(tokens: readonly AnalyzedToken[], terms: ReadonlySet<string>): boolean[] {
  return tokens.map((t) => t.term !== null && terms.has(t.term))
}

/** The character ranges `[start, end)` of the words of `text` that match `terms`, in text order. */
export function matchRanges(analyzer: Analyzer, text: string, terms: ReadonlySet<string>): [number, number][] {
  const tokens = analyzer.tokens(text)
  const matched = matchedTokens(tokens, terms)
  return tokens.flatMap((t, i): [number, number][] => (matched[i] ? [[t.start, t.end]] : []))
}
