/**
 * Lucene's BM25 as small pure functions. Field boosts enter as weighted term frequencies and
 * weighted document lengths (the simple form of BM25F), so one formula serves both.
 */

/** BM25 parameters: k1 saturates term frequency, b normalizes by document length. */
export interface Bm25Params {
  readonly k1: number
  readonly b: number
}

/** Lucene's defaults. */
export const BM25_DEFAULTS: Bm25Params = { k1: 1.2, b: 0.75 }

/** idf = ln(1 + (N - df + 0.5) / (df + 0.5)); always positive. */
export function idf(documents: number, df: number): number {
  return Math.log(1 + (documents - df + 0.5) / (df + 0.5))
}

/** The saturated, length-normalized term frequency part: tf·(k1+1) / (tf + k1·(1 - b + b·dl/avgdl)). */
export function tfPart(tf: number, length: number, averageLength: number, p: Bm25Params): number {
  const norm = averageLength > 0 ? length / averageLength : 1
  return (tf * (p.k1 + 1)) / (tf + p.k1 * (1 - p.b + p.b * norm))
}

/**
 * An upper bound of any document's score for a term, from the largest tf and the smallest length
 * among its postings (tfPart grows with tf and shrinks with length).
 */
export function upperBound(idfValue: number, maxTf: number, minLength: number, averageLength: number, p: Bm25Params): number {
  return idfValue * tfPart(maxTf, minLength, averageLength, p)
}
