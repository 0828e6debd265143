import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Graph as GraphClass } from '@quarry/hnsw'
import { exercise, type BaseGraph, type Outcome } from './graph-fuzz.js'

// The native half of test/property/graph-fuzz.test.ts, in a child process so that a crash fails
// the case (the parent sees the signal) instead of taking the test worker with it. Argument: the
// native binary to load and a scratch folder. Each message is a case; each reply its outcome and
// how far the process's resident memory rose during the case.

const [binary, dir] = process.argv.slice(2) as [string, string]
const { Graph } = createRequire(import.meta.url)(binary) as { Graph: typeof GraphClass }

export interface FuzzRequest {
  readonly base: BaseGraph
  readonly bytes: Uint8Array
  readonly seed: number
}

export interface FuzzReply {
  readonly outcome: Outcome
  /** Bytes the resident set grew by during the case. */
  readonly grew: number
}

process.on('message', (request: FuzzRequest) => {
  const peakBefore = process.resourceUsage().maxRSS * 1024
  const before = process.memoryUsage.rss()
  const outcome = exercise(Graph, request.base, request.bytes, request.seed, join(dir, 'saved.bin'))
  // The case's graphs are still alive here (nothing has collected them): a new peak is the case's
  // own, else what it holds now is the best measure (an earlier peak, e.g. at start, hides it).
  const peak = process.resourceUsage().maxRSS * 1024
  const reply: FuzzReply = { outcome, grew: Math.max(0, (peak > peakBefore ? peak : process.memoryUsage.rss()) - before) }
  process.send?.(reply)
})
process.send?.('ready')
