import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createIndex, loadIndex } from '@quarry/core'
import { prng } from '../../test/support/random.js'
import { renderSvg } from '@quarry/adapters'
import { sizeOf } from '../lib/disk.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'


/**
 * A 1M-record index (8-d vectors, exact path, a short text and two metadata fields each) saves and
 * loads: the snapshot is streamed in ~1 MB pieces, so no whole-index string is ever built (a
 * JSON.stringify of it would exceed V8's 512 MB string limit long before this size matters).
 */
export async function runPersistScale(ctx: SuiteContext): Promise<void> {
  const n = ctx.quick ? 100_000 : 1_000_000
  const rand = prng(11)
  const words = ['alpha', 'beta', 'gamma', 'delta', 'flow', 'wing', 'shock', 'plate', 'heat', 'layer']
  const index = createIndex({ dimensions: 8, metric: 'l2', dense: 'exact', text: { analyzer: { tokenizer: 'unicode' } } })
  let t = performance.now()
  for (let i = 0; i < n; i++) {
    index.add({
      id: `r${i}`,
      vector: Array.from({ length: 8 }, () => rand()),
      text: `${words[i % 10]} ${words[(i * 7) % 10]} ${words[(i * 3) % 10]}`,
      metadata: { bucket: i % 1000, when: new Date(1_700_000_000_000 + i * 1000) },
    })
  }
  const buildSeconds = (performance.now() - t) / 1000
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-scale-'))
  try {
    const path = join(dir, 'index')
    t = performance.now()
    index.save(path)
    const saveSeconds = (performance.now() - t) / 1000
    const heapBefore = process.memoryUsage().heapUsed
    t = performance.now()
    const loaded = loadIndex(path)
    const loadSeconds = (performance.now() - t) / 1000
    const probe = { text: 'gamma flow', vector: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5], topK: 5, filter: { op: 'lt' as const, field: 'bucket', value: 3 } }
    const same = JSON.stringify(loaded.search(probe)) === JSON.stringify(index.search(probe))
    const row = { records: n, 'build s': buildSeconds, 'save s': saveSeconds, 'load s': loadSeconds, 'snapshot MB': sizeOf(path) / 1e6, 'heap growth on load MB': (process.memoryUsage().heapUsed - heapBefore) / 1048576, 'same results': same ? 'yes' : 'NO' }
    printTable('streamed snapshot of a large index', [row])
    writeFileSync(
      join(ctx.resultsDir, 'persist-scale.svg'),
      renderSvg(`Snapshot of ${n} records`, [
        { title: 'seconds (x: 0 = build, 1 = save, 2 = load)', xLabel: 'step', yLabel: 'seconds', series: [{ name: 'quarry', points: [0, 1, 2].map((x) => ({ x, y: [buildSeconds, saveSeconds, loadSeconds][x] as number })) }] },
      ]),
    )
    writeFileSync(join(ctx.resultsDir, 'persist-scale.json'), `${JSON.stringify({ suite: 'persist-scale', date: new Date().toISOString(), node: process.version, quick: ctx.quick, ...row }, null, 1)}\n`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
