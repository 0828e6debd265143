import { passingLabels, selectivityOf, testerOf, type FilterInput } from '../filter/plan-input.js'
import { toBitset } from '../filter/predicate.js'
import type { Label } from '../ids.js'
import type { MetricOps } from '../metric/metric.js'
import type { QueryTerm, SparseDocument } from '../sparse/sparse-index.js'
import type { Analyzer, TokenizedText } from '../text/analyzer.js'
import type { ResolvedTextOptions } from './options.js'
import type { TextInput } from './record.js'
import type { Hit, SearchResult } from './results.js'
import { filterSubject, type IndexState } from './state.js'

/**
 * A record's text as the sparse index sees it: field-boosted term frequencies and length, as
 * the analyzer's term ids (its reused counts: index the document before analyzing the next).
 * `tokensFrom` and `within`: see {@link QuarryIndex.prepareText}.
 */
export function sparseDocument(analyzer: Analyzer, text: TextInput, options: ResolvedTextOptions, tokensFrom?: Analyzer, within?: TextWithin): SparseDocument {
  const counts = analyzer.documentCounts()
  if (typeof text === 'string' && within !== undefined) analyzer.countTermsWithin(within.tokens, within.start, text, options.fields.text?.boost ?? 1, counts)
  else if (typeof text === 'string') analyzer.countTerms(text, options.fields.text?.boost ?? 1, counts, tokensFrom)
  else for (const field of Object.keys(text)) analyzer.countTerms(text[field] as string, options.fields[field]?.boost ?? 1, counts, tokensFrom)
  return { counts, length: counts.length }
}

/** Where a record's text sits in a text tokenized already: it is `tokens.source` from `start` on. */
export interface TextWithin {
  readonly tokens: TokenizedText
  readonly start: number
}

/** Query text → weighted terms (a repeated query term counts once per occurrence, as in Lucene). */
export function queryTerms(analyzer: Analyzer, text: string): QueryTerm[] {
  const weights = new Map<string, number>()
  for (const term of analyzer.terms(text)) weights.set(term, (weights.get(term) ?? 0) + 1)
  return [...weights].map(([term, weight]) => ({ term, weight }))
}

interface SparseQuery {
  readonly text: string
  readonly k: number
  readonly filter: FilterInput | undefined
  readonly explain: boolean
  /** The query's analyzed terms, when the caller has them already (hybrid search). */
  readonly terms?: readonly QueryTerm[]
  /** A query vector beside the text (alpha 0): each hit's dense key, and which keys pass the request's threshold. */
  readonly dense?: DenseSide
}

/** The dense side of a text search given a query vector. */
export interface DenseSide {
  readonly ops: MetricOps
  /** The key of a record against the query. */
  key(label: Label): number
  /** Whether a key passes the request's threshold; undefined when there is none. */
  readonly passes: ((key: number) => boolean) | undefined
}

/**
 * BM25 search. A filter goes through the same planner inputs as dense search: narrow filters
 * (estimated below `planner.postFilterAbove`) are evaluated once into a bitset, broad ones are
 * tested lazily on the documents that match a query term.
 */
export function sparseSearch(state: IndexState, q: SparseQuery): SearchResult {
  const live = state.ids.size
  const terms = q.terms ?? queryTerms(state.analyzer, q.text)
  let accept: ((label: Label) => boolean) | undefined
  let reason = 'text query: BM25 with MaxScore pruning'
  let estimatedSelectivity: number | undefined
  if (q.filter && live > 0) {
    const filter = q.filter
    const subject = filterSubject(state)
    estimatedSelectivity = selectivityOf(filter, subject, live)
    if (filter.kind === 'indexed') {
      accept = testerOf(filter, subject)
      reason += '; declarative filter answered by the value indexes'
    } else if (estimatedSelectivity < state.options.planner.postFilterAbove) {
      const bitset = toBitset(passingLabels(filter, subject, 64), state.ids.extent)
      accept = (label) => bitset.has(label)
      reason += '; narrow filter function evaluated once into a bitset'
    } else {
      accept = testerOf(filter, subject)
      reason += '; broad filter function tested on matching documents'
    }
  }
  const dense = q.dense
  const passes = dense?.passes
  if (dense && passes) {
    const filtered = accept
    accept = filtered ? (label) => filtered(label) && passes(dense.key(label)) : (label) => passes(dense.key(label))
    reason += '; the dense threshold tested on matching documents'
  }
  const { hits, stats } = state.sparse.search(terms, Math.min(q.k, Math.max(live, 1)), state.tie, accept)
  const out: Hit[] = hits.map(({ label, score }) => {
    const id = state.ids.idOf(label) as string
    const metadata = state.metadata[label] ?? {}
    const key = dense?.key(label)
    const hit: Hit = key === undefined || dense === undefined ? { id, score, metadata } : { id, score, distance: dense.ops.distance(key), key, metadata }
    return q.explain ? { ...hit, explain: { bm25: state.sparse.explain(label, terms) } } : hit
  })
  return {
    hits: out,
    stats: { strategy: 'bm25', reason, live, ...(estimatedSelectivity === undefined ? {} : { estimatedSelectivity }), bm25: stats },
  }
}
