// Spawned by scan-pool.test.ts: searches with the scan pool, prints what it found, then simply
// ends. The test asserts that the process exits by itself (no worker keeps it alive).
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
process.stdout.write(`${JSON.stringify({ workers: scanPool().size, chunksByWorkers: scanPool().chunksByWorkers, ids: ids[0], same: ids.every((x) => x.join() === ids[0]?.join()) })}\n`)
