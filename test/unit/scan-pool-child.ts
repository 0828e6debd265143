// Spawned by scan-pool.test.ts (with --expose-gc): searches with the scan pool, prints what it
// found, then simply ends. The test asserts that the process exits by itself (no worker keeps it
// alive), and that once a store the pool scanned is collected, the worker that was posted its memory
// is retired and the memory given back (the process's address space, on Linux), while the live
// index still searches, with a new worker, to the same answer.
import { readFileSync } from 'node:fs'
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
/** The process's address space in bytes (Linux; else undefined): a store's memory reserves gigabytes of it. */
function addressSpace(): number | undefined {
  if (process.platform !== 'linux') return undefined
  return Number(/VmSize:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024
}
const gc = (globalThis as { gc?: () => void }).gc
const collect = async (until: () => boolean): Promise<void> => {
  const deadline = Date.now() + 5000
  while (!until() && Date.now() < deadline) {
    gc?.()
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
const before = addressSpace()
scanAndDrop()
const heldWithBoth = scanPool().memoriesHeld
const withBoth = addressSpace()
await collect(() => scanPool().retired > 0)
const workersAfter = scanPool().size
// The retired worker's isolate is torn down in the background: wait for the memory to go.
await collect(() => before === undefined || (addressSpace() as number) < before + (1 << 30))
const after = addressSpace()
const again = index.search({ vector: query, topK: 5 }).hits.map((h) => h.id)
process.stdout.write(
  `${JSON.stringify({ workers: scanPool().size, chunksByWorkers: scanPool().chunksByWorkers, ids: ids[0], same: ids.every((x) => x.join() === ids[0]?.join()), again, heldWithBoth, retired: scanPool().retired, workersAfter, heldAfter: scanPool().memoriesHeld, before, withBoth, after })}\n`,
)
