// Spawned by scan-pool.test.ts (with --expose-gc): searches with the scan pool, prints what it
// found, then simply ends. The test asserts that the process exits by itself (no worker keeps it
// alive), and that a worker is told to forget a store's memory once the store is collected.
import { createIndex } from '@quarry/core'
import { scanPool } from '../../packages/core/src/dense/scan-pool.js'

const dim = 32
const index = createIndex({ dimensions: dim, metric: 'l2', dense: 'exact', scan: { workers: 1, parallelAbove: 0 } })
for (let i = 0; i < 20_000; i++) index.add({ id: `r${i}`, vector: Float32Array.from({ length: dim }, (_, j) => ((i * 7 + j * 13) % 17) - 8) })
const query = Float32Array.from({ length: dim }, (_, j) => (j % 5) - 2)
// Give the worker a moment to start, then search until it has taken part (or a few seconds pass).
await new Promise((resolve) => setTimeout(resolve, 100))
const ids: string[][] = []
const until = Date.now() + 5000
do ids.push(index.search({ vector: query, topK: 5 }).hits.map((h) => h.id))
while (scanPool().chunksByWorkers === 0 && Date.now() < until)

/** Another store in a memory, scanned by the pool once, then dropped. */
function scanAndDrop(): void {
  const other = createIndex({ dimensions: dim, metric: 'dot', dense: 'exact', scan: { workers: 1, parallelAbove: 0 } })
  for (let i = 0; i < 4000; i++) other.add({ id: `o${i}`, vector: Float32Array.from({ length: dim }, (_, j) => ((i + j) % 7) - 3) })
  other.search({ vector: query, topK: 3 })
}
scanAndDrop()
const heldWithBoth = scanPool().memoriesHeld
const gc = (globalThis as { gc?: () => void }).gc
const forgetUntil = Date.now() + 5000
while (scanPool().memoriesHeld >= heldWithBoth && Date.now() < forgetUntil) {
  gc?.()
  await new Promise((resolve) => setTimeout(resolve, 20))
}
process.stdout.write(
  `${JSON.stringify({ workers: scanPool().size, chunksByWorkers: scanPool().chunksByWorkers, ids: ids[0], same: ids.every((x) => x.join() === ids[0]?.join()), heldWithBoth, heldAfter: scanPool().memoriesHeld })}\n`,
)
