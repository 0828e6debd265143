import { Analyzer, type Hit, type QuarryIndex } from '@quarry/core'
import { queryTerms } from '../matches.js'
import { bestPassage, markerFor, renderSnippet, shortenPath } from './snippet.js'
import { renderTable, scoreHeader } from './table.js'

/** Widths of the result table's columns. */
const SOURCE_WIDTH = 40
export const SNIPPET_WIDTH = 100

/** The stored text of a hit (a record's `text`, or its fields joined). */
export function hitText(index: QuarryIndex, hit: Hit): string {
  const text = index.text(hit.id)
  return typeof text === 'string' ? text : text === undefined ? '' : Object.values(text).join('\n')
}

/** Where a hit comes from: its `source` metadata, else its id. */
export function hitSource(hit: Hit): string {
  const source = hit.metadata.source
  return typeof source === 'string' ? source : hit.id
}

/**
 * Hits as a table: rank, score, file (long paths keep their end) and the passage that matched,
 * query terms marked (analyzed like the index analyzes text: stems match their inflections).
 */
export function hitsTable(index: QuarryIndex, query: string, hits: readonly Hit[], options: { mark?: (word: string) => string; snippetWidth?: number } = {}): string {
  const analyzer = new Analyzer(index.options.text.analyzer)
  const terms = queryTerms(analyzer, query)
  const mark = options.mark ?? markerFor(process.stdout)
  const rows = hits.map((hit, i) => {
    const text = hitText(index, hit)
    const snippet = renderSnippet(bestPassage(text, analyzer.tokens(text), terms, options.snippetWidth ?? SNIPPET_WIDTH), mark)
    return [i + 1, hit.score.toFixed(4), shortenPath(hitSource(hit), SOURCE_WIDTH), snippet]
  })
  return renderTable(['rank', scoreHeader('score', 'higher'), 'file', 'passage'], rows)
}
