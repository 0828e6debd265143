import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** A test collection in the generic layout: corpus.jsonl, queries.jsonl, qrels.tsv. */
export interface Collection {
  readonly name: string
  readonly docs: readonly { id: string; title: string; text: string }[]
  readonly queries: readonly { id: string; text: string }[]
  /** query id → doc id → grade (≥ 1 relevant). */
  readonly qrels: ReadonlyMap<string, ReadonlyMap<string, number>>
}

/** Reads `dir` if it holds the three files, else undefined (the caller skips with a message). */
export function readCollection(dir: string, name: string): Collection | undefined {
  const files = ['corpus.jsonl', 'queries.jsonl', 'qrels.tsv'].map((f) => join(dir, f))
  if (!files.every((f) => existsSync(f))) return undefined
  const lines = (f: string): string[] => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim() !== '')
  const docs = lines(files[0] as string).map((l) => JSON.parse(l) as { id: string; title?: string; text?: string })
  const queries = lines(files[1] as string).map((l) => JSON.parse(l) as { id: string; text: string })
  const qrels = new Map<string, Map<string, number>>()
  for (const line of lines(files[2] as string)) {
    const [q, d, g] = line.split('\t')
    if (q === undefined || d === undefined || g === undefined) continue
    const grades = qrels.get(q) ?? new Map<string, number>()
    grades.set(d, Number(g))
    qrels.set(q, grades)
  }
  return { name, docs: docs.map((d) => ({ id: String(d.id), title: d.title ?? '', text: d.text ?? '' })), queries: queries.map((q) => ({ id: String(q.id), text: q.text })), qrels }
}

export interface Metrics {
  ndcg10: number
  map100: number
  recall100: number
  queries: number
}

/**
 * trec_eval's definitions: nDCG@10 with linear gain = grade and the ideal DCG over all judged
 * relevant docs (ndcg_cut.10), MAP cut at 100 (map_cut.100), Recall@100; averaged over queries
 * with at least one relevant doc; a run's ties are broken by doc id (the caller sorts).
 */
export function evaluate(collection: Collection, run: ReadonlyMap<string, readonly string[]>): Metrics {
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
  return { ndcg10: ndcg / n, map100: map / n, recall100: recall / n, queries: n }
}

/** Sorts (doc, score) pairs by score descending, ties by doc id ascending, and keeps the ids. */
export function rankIds(scored: readonly { id: string; score: number }[], k: number): string[] {
  return [...scored].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, k).map((s) => s.id)
}
