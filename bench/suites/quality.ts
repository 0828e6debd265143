import { existsSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { evaluateRun, rankIds, readCollection, renderSvg, type Metrics } from '@quarry/adapters'
import { printTable } from '../lib/table.js'
import { miniSearch, orama, quarryText, winkBm25, type TextEngine } from '../lib/text-engines.js'
import type { SuiteContext } from '../run.js'

/** Where the evaluation collections live: ../shared/data next to the repository (ours, not the users'). */
const DATA = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'data')

const engines = (): TextEngine[] => [
  quarryText(),
  quarryText('quarry-bm25 (unicode tokenizer)', { tokenizer: 'unicode' }),
  miniSearch(false),
  miniSearch(true),
  orama(false),
  orama(true),
  winkBm25(),
]

/** nDCG@10, MAP@100 and Recall@100 on every collection found under ../shared/data. */
export async function runQuality(ctx: SuiteContext): Promise<void> {
  const out: Record<string, Record<string, Metrics>> = {}
  for (const name of ['cranfield', 'cisi']) {
    const files = { corpus: join(DATA, name, 'corpus.jsonl'), queries: join(DATA, name, 'queries.jsonl'), qrels: join(DATA, name, 'qrels.tsv') }
    if (!Object.values(files).every((f) => existsSync(f))) {
      console.log(`skipping ${name}: ${join(DATA, name)} has no corpus.jsonl, queries.jsonl and qrels.tsv (the collections live in ../shared/data, not in this repository)`)
      continue
    }
    const collection = readCollection(files, name)
    const rows: Record<string, Metrics> = {}
    for (const engine of engines()) {
      await engine.add(collection.docs)
      const run = new Map<string, string[]>()
      for (const q of collection.queries) run.set(q.id, rankIds(await engine.search(q.text, 100), 100))
      rows[engine.name] = evaluateRun(collection, run)
    }
    out[name] = rows
    printTable(
      `${name}: ${collection.docs.length} docs, ${Object.values(rows)[0]?.queries ?? 0} judged queries (title + text indexed)`,
      Object.entries(rows).map(([engine, m]) => ({ engine, 'nDCG@10': m.ndcg10, 'MAP@100': m.map100, 'R@100': m.recall100 })),
    )
  }
  if (Object.keys(out).length === 0) return
  writeFileSync(join(ctx.resultsDir, 'quality.json'), `${JSON.stringify({ suite: 'quality', date: new Date().toISOString(), node: process.version, collections: out }, null, 1)}\n`)
  const names = Object.keys(Object.values(out)[0] ?? {})
  writeFileSync(
    join(ctx.resultsDir, 'quality.svg'),
    renderSvg(
      'nDCG@10 by engine',
      Object.entries(out).map(([collection, rows]) => ({
        title: `${collection}: nDCG@10 (x = engine index)`,
        xLabel: names.map((n, i) => `${i}=${n}`).join(' '),
        yLabel: 'nDCG@10',
        series: names.map((n, i) => ({ name: n, points: [{ x: i, y: rows[n]?.ndcg10 ?? 0 }, { x: i + 0.6, y: rows[n]?.ndcg10 ?? 0 }] })),
      })),
    ),
  )
}
