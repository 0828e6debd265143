// Imported by scan-pool.test.ts from `node --input-type=module -e …`, a process whose string code
// (and so every worker's evaluated source) runs as a module: the scan pool's worker and a load's
// checksum worker must work there as anywhere. Prints what it saw, then simply ends.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createIndex, loadIndex } from '@quarry/core'
import { scanPool } from '../../packages/core/src/dense/scan-pool.js'
import { backgroundSumsMissed, backgroundSumsStarted, replaceBackgroundSumThreshold } from '../../packages/core/src/persist/background-sums.js'

const warnings: string[] = []
process.on('warning', (w) => warnings.push(w.message))

const dim = 16
const vectorOf = (i: number): Float32Array => Float32Array.from({ length: dim }, (_, j) => ((i * 7 + j * 13) % 17) - 8 + j / 10)
const index = createIndex({ dimensions: dim, metric: 'l2', dense: 'exact', scan: { workers: 1, parallelAbove: 0 } })
for (let i = 0; i < 5000; i++) index.add({ id: `r${i}`, vector: vectorOf(i), text: `word${i % 13}` })
const query = Float32Array.from({ length: dim }, (_, j) => (j % 5) - 2)
await new Promise((resolve) => setTimeout(resolve, 100))
let hits: string[] = []
const until = Date.now() + 5000
do hits = index.search({ vector: query, topK: 5 }).hits.map((h) => h.id)
while (scanPool().chunksByWorkers === 0 && Date.now() < until)

// The oracle: a plain loop over the same vectors (squared L2, ties by id).
const oracle = Array.from({ length: 5000 }, (_, i) => ({ id: `r${i}`, d: vectorOf(i).reduce((sum, x, j) => sum + (x - (query[j] as number)) ** 2, 0) }))
  .sort((a, b) => a.d - b.d || (a.id < b.id ? -1 : 1))
  .slice(0, 5)
  .map((x) => x.id)

const dir = mkdtempSync(join(tmpdir(), 'quarry-module-input-'))
replaceBackgroundSumThreshold(0)
index.save(dir)
const started = backgroundSumsStarted()
const loaded = loadIndex(dir)
const loadedHits = loaded.search({ vector: query, topK: 5 }).hits.map((h) => h.id)
rmSync(dir, { recursive: true, force: true })
process.stdout.write(
  `${JSON.stringify({ chunksByWorkers: scanPool().chunksByWorkers, hits, oracle, sumWorkers: backgroundSumsStarted() - started, missed: backgroundSumsMissed(), loadedHits, warnings })}\n`,
)
