import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { create, insertMultiple, search as oramaSearch, type AnyOrama } from '@orama/orama'
import { persistToFile, restoreFromFile } from '@orama/plugin-data-persistence/server'
import { createIndex, loadIndex, type QuarryIndex } from '@quarry/core'
import { clusteredDataset, row } from '../lib/datasets.js'
import { npmCorpus } from '../lib/npm-corpus.js'
import { median } from '../lib/stats.js'
import { renderSvg } from '@quarry/adapters'
import { sizeOf } from '../lib/disk.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'


interface Row {
  engine: string
  /** Why the engine could not save or load, when it could not. */
  error?: string
  records: number
  saveSeconds: number
  loadSeconds: number
  megabytes: number
  identical: boolean
}

/**
 * Save and load time and snapshot size per 100k records (vector + text + metadata), against Orama's
 * persistence plugin. 100k records (--quick: 10k); PERSIST_RECORDS=N overrides (issue 20's end
 * check is load / save at 50k).
 */
export async function runPersist(ctx: SuiteContext): Promise<void> {
  const n = Number(process.env['PERSIST_RECORDS'] ?? (ctx.quick ? 10_000 : 100_000))
  const ds = clusteredDataset(n, 20)
  const texts = npmCorpus()
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-persist-'))
  const rows: Row[] = []
  try {
    for (const dense of ['hnsw', 'exact'] as const) {
      const index: QuarryIndex = createIndex({ dimensions: ds.dim, metric: 'l2', dense })
      for (let i = 0; i < n; i++) index.add({ id: `r${i}`, vector: row(ds.base, ds.dim, i), text: texts[i % texts.length]?.text ?? '', metadata: { bucket: i % 1000, year: 1990 + (i % 30) } })
      const path = join(dir, `quarry-${dense}`)
      const saves: number[] = []
      const loads: number[] = []
      let loaded: QuarryIndex | undefined
      for (let rep = 0; rep < (ctx.quick ? 1 : 3); rep++) {
        let t = performance.now()
        // Every save writes its files (an unchanged index would link the last snapshot's otherwise).
        index.save(path, { linkUnchanged: false })
        saves.push((performance.now() - t) / 1000)
        t = performance.now()
        loaded = loadIndex(path)
        loads.push((performance.now() - t) / 1000)
      }
      const probe = { vector: row(ds.queries, ds.dim, 0), text: 'the value of the option', topK: 10 }
      rows.push({
        engine: `quarry (${dense})`,
        records: n,
        saveSeconds: median(saves),
        loadSeconds: median(loads),
        megabytes: sizeOf(path) / 1e6,
        identical: JSON.stringify(loaded?.search(probe)) === JSON.stringify(index.search(probe)),
      })
    }
    const db: AnyOrama = create({ schema: { id: 'string', text: 'string', embedding: `vector[${ds.dim}]`, bucket: 'number', year: 'number' } as const })
    await insertMultiple(db, Array.from({ length: n }, (_, i) => ({ id: `r${i}`, text: texts[i % texts.length]?.text ?? '', embedding: Array.from(row(ds.base, ds.dim, i)), bucket: i % 1000, year: 1990 + (i % 30) })), 1000)
    for (const format of ['binary', 'dpack', 'json', 'seqproto'] as const) {
      const file = join(dir, `orama.${format}`)
      try {
        let t = performance.now()
        await persistToFile(db, format, file)
        const saveSeconds = (performance.now() - t) / 1000
        t = performance.now()
        const restored: AnyOrama = await restoreFromFile(format, file)
        const loadSeconds = (performance.now() - t) / 1000
        const a = await oramaSearch(db, { term: 'the value of the option', limit: 10 })
        const b = await oramaSearch(restored, { term: 'the value of the option', limit: 10 })
        rows.push({ engine: `orama persistence (${format})`, records: n, saveSeconds, loadSeconds, megabytes: sizeOf(file) / 1e6, identical: JSON.stringify(a.hits.map((h) => h.id)) === JSON.stringify(b.hits.map((h) => h.id)) })
      } catch (error) {
        rows.push({ engine: `orama persistence (${format})`, records: n, saveSeconds: Number.NaN, loadSeconds: Number.NaN, megabytes: Number.NaN, identical: false, error: error instanceof Error ? error.message.slice(0, 80) : String(error) })
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const per100k = (x: number, records: number): number => (x * 100_000) / records
  printTable(`save / load of ${n} records (${ds.dim}-d vector + text + 2 metadata fields)`, rows.map((r) => ({
    engine: r.engine,
    'save s': r.saveSeconds,
    'load s': r.loadSeconds,
    'load / save': r.loadSeconds / r.saveSeconds,
    'size MB': r.megabytes,
    'save s / 100k': per100k(r.saveSeconds, r.records),
    'load s / 100k': per100k(r.loadSeconds, r.records),
    'MB / 100k': per100k(r.megabytes, r.records),
    'same results after load': r.error ? `failed: ${r.error}` : r.identical ? 'yes' : 'NO',
  })))
  writeFileSync(join(ctx.resultsDir, 'persist.json'), `${JSON.stringify({ suite: 'persist', date: new Date().toISOString(), node: process.version, quick: ctx.quick, rows }, null, 1)}\n`)
  writeFileSync(
    join(ctx.resultsDir, 'persist.svg'),
    renderSvg('Snapshot save / load per 100k records', [
      { title: 'seconds per 100k (x: 0 = save, 1 = load)', xLabel: 'operation', yLabel: 'seconds', logY: true, series: rows.map((r) => ({ name: r.engine, points: [{ x: 0, y: per100k(r.saveSeconds, r.records) }, { x: 1, y: per100k(r.loadSeconds, r.records) }] })) },
    ]),
  )
}
