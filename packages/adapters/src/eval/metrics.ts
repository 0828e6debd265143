import type { Collection } from './collection.js'

/** Retrieval quality of one run, averaged over the judged queries. */
export interface Metrics {
  readonly ndcg10: number
  readonly map100: number
  readonly recall100: number
  /** Queries averaged over: those with at least one relevant document. */
  readonly queries: number
}

/**
 * trec_eval's definitions: nDCG@10 with linear gain = grade and the ideal DCG over all judged
 * relevant docs (ndcg_cut.10), MAP cut at 100 (map_cut.100), Recall@100; averaged over queries
 * with at least one relevant doc (all zero when there is none); a run's ties are broken by doc id
 * (the caller sorts, see {@link rankIds}).
 */
export function evaluateRun(collection: Collection, run: ReadonlyMap<string, readonly string[]>): Metrics {
  let ndcg = 0
  let map = 0
  let recall = 0
  let n = 0
  for (const query of collection.queries) {
    const grades = collection.qrels.get(query.id)
    const relevant = grades ? [...grades].filter(([, g]) => g >= 1) : []
    if (relevant.length === 0) continue
    n++
    const ranked = run.get(query.id) ?? []
    let dcg = 0
    ranked.slice(0, 10).forEach((doc, i) => {
      const g = grades?.get(doc) ?? 0
      if (g > 0) dcg += g / Math.log2(i + 2)
    })
    const ideal = relevant.map(([, g]) => g).sort((a, b) => b - a)
    const idcg = ideal.slice(0, 10).reduce((s, g, i) => s + g / Math.log2(i + 2), 0)
    ndcg += idcg > 0 ? dcg / idcg : 0
    let hits = 0
    let precisionSum = 0
    ranked.slice(0, 100).forEach((doc, i) => {
      if ((grades?.get(doc) ?? 0) >= 1) {
        hits++
        precisionSum += hits / (i + 1)
      }
    })
    map += precisionSum / relevant.length
    recall += hits / relevant.length
  }
  if (n === 0) return { ndcg10: 0, map100: 0, recall100: 0, queries: 0 }
  return { ndcg10: ndcg / n, map100: map / n, recall100: recall / n, queries: n }
}

/** Sorts (doc, score) pairs by score descending, ties by doc id ascending, and keeps the first k ids. */
export function rankIds(scored: readonly { id: string; score: number }[], k: number): string[] {
  return [...scored]
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(0, k)
    .map((s) => s.id)
}
