import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createIndex, loadIndex, type QuarryIndex } from '@quarry/core'
import { prng } from '../../test/support/random.js'
import { renderSvg } from '@quarry/adapters'
import { sizeOf } from '../lib/disk.js'
import { npmCorpus } from '../lib/npm-corpus.js'
import { median } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

const DIM = 64

/**
 * Save and load of a large index at two sizes in one run (100k and 1M records; --quick: 10k and
 * 100k), and at the larger size again with an HNSW graph (issue 43: load ≤ save at 1M with text,
 * metadata and a graph): each record a 64-d vector, a passage of the npm text corpus and two
 * metadata fields (a number and a Date). Saves and loads alternate; medians reported, and a probe
 * query checks the loaded index answers as the saved one did.
 */
export async function runPersistScale(ctx: SuiteContext): Promise<void> {
  const large = ctx.quick ? 100_000 : 1_000_000
  const sizes = [{ n: ctx.quick ? 10_000 : 100_000, dense: 'exact' as const }, { n: large, dense: 'exact' as const }, { n: large, dense: 'hnsw' as const }]
  const texts = npmCorpus()
  const rows: Record<string, string | number>[] = []
  for (const { n, dense } of sizes) {
    const rand = prng(11)
    const index = createIndex({ dimensions: DIM, metric: 'l2', dense })
    let t = performance.now()
    const batch = 10_000
    for (let from = 0; from < n; from += batch) {
      index.addMany(
        Array.from({ length: Math.min(batch, n - from) }, (_, k) => {
          const i = from + k
          return {
            id: `r${i}`,
            vector: Array.from({ length: DIM }, () => rand()),
            text: texts[i % texts.length]?.text ?? '',
            metadata: { bucket: i % 1000, when: new Date(1_700_000_000_000 + i * 1000) },
          }
        }),
      )
    }
    const buildSeconds = (performance.now() - t) / 1000
    const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-scale-'))
    try {
      const v5 = join(dir, 'v5')
      const times = { save5: [] as number[], load5: [] as number[] }
      const probe = { text: 'the value of the option', vector: Array.from({ length: DIM }, () => 0.5), topK: 10, filter: { op: 'lt' as const, field: 'bucket', value: 300 } }
      const expected = JSON.stringify(index.search(probe))
      const same = { v5: true }
      const seconds = (f: () => void): number => {
        const start = performance.now()
        f()
        return (performance.now() - start) / 1000
      }
      const rounds = n >= 1_000_000 ? 3 : 5
      for (let round = 0; round < rounds; round++) {
        // Every round writes the files (an unchanged index would link the last snapshot's otherwise).
        times.save5.push(seconds(() => index.save(v5, { linkUnchanged: false })))
        let loaded: QuarryIndex | undefined
        times.load5.push(seconds(() => (loaded = loadIndex(v5))))
        same.v5 &&= JSON.stringify(loaded?.search(probe)) === expected
      }
      const m = { save5: median(times.save5), load5: median(times.load5) }
      const row = {
        records: n,
        dense,
        'build s': buildSeconds,
        'v5 save s': m.save5,
        'v5 load s': m.load5,
        'load / save': m.load5 / m.save5,
        'v5 MB': sizeOf(v5) / 1e6,
        rounds,
        'same results': same.v5 ? 'yes' : 'NO',
      }
      rows.push(row)
      printTable(`snapshot of ${n} records (${DIM}-d ${dense}, a passage, 2 metadata fields): medians of ${rounds} rounds`, [row])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  printTable('load / save side by side', rows)
  writeFileSync(
    join(ctx.resultsDir, 'persist-scale.svg'),
    renderSvg('Snapshot save and load by size', [
      {
        title: 'seconds by records',
        xLabel: 'records',
        yLabel: 'seconds',
        logY: true,
        series: (['v5 save s', 'v5 load s'] as const).flatMap((key) =>
          (['exact', 'hnsw'] as const).map((dense) => ({ name: `${key.replace(' s', '')} (${dense})`, points: rows.filter((r) => r.dense === dense).map((r) => ({ x: r.records as number, y: r[key] as number })) })),
        ),
      },
    ]),
  )
  writeFileSync(join(ctx.resultsDir, 'persist-scale.json'), `${JSON.stringify({ suite: 'persist-scale', date: new Date().toISOString(), node: process.version, quick: ctx.quick, rows }, null, 1)}\n`)
}
