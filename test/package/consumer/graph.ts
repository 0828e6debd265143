// A graph index as an application builds one from the installed packages: 800 seeded vectors,
// saved, then loaded (by this process or another one, with another QUARRY_HNSW) and searched. The
// pack-install test compares its answers with core's exact search over graphData() in the workspace.
import { createRequire } from 'node:module'
import { createIndex, loadIndex } from '@quarry/core'
import type { Ranked } from './scenario.js'

export const GRAPH = { dimensions: 16, count: 800, queries: 12, topK: 10 } as const

/** mulberry32: the same numbers in the workspace and in the installed app. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export function graphData(): { records: { id: string; vector: number[] }[]; queries: number[][] } {
  const next = random(39)
  const vector = (): number[] => Array.from({ length: GRAPH.dimensions }, () => next() * 2 - 1)
  const records = Array.from({ length: GRAPH.count }, (_, i) => ({ id: `v${String(i).padStart(4, '0')}`, vector: vector() }))
  return { records, queries: Array.from({ length: GRAPH.queries }, vector) }
}

/** Builds the graph index (never the exact path: exactBelow 0) and saves it in `dir`. */
export function saveGraph(dir: string): void {
  const index = createIndex({ dimensions: GRAPH.dimensions, planner: { exactBelow: 0 }, hnsw: { efSearch: 400 } })
  index.addMany(graphData().records)
  index.save(dir)
}

/** The saved graph's answers, with the build of @quarry/hnsw that gave them. */
export function graphAnswers(dir: string): { backend: string; source: string; strategies: string[]; hits: Ranked[] } {
  // @quarry/hnsw is @quarry/core's dependency, not the app's: ask it from core's side.
  const hnsw = createRequire(import.meta.resolve('@quarry/core'))('@quarry/hnsw') as { backend: string; source: string }
  const index = loadIndex(dir)
  const results = graphData().queries.map((vector) => index.search({ vector, topK: GRAPH.topK, ef: 400 }))
  return {
    backend: hnsw.backend,
    source: hnsw.source,
    strategies: results.map((r) => r.stats.strategy),
    hits: results.map((r) => r.hits.map((h): [string, number] => [h.id, h.score])),
  }
}
