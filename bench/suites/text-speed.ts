import { existsSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { npmCorpus } from '../lib/npm-corpus.js'
import { makeQueries } from '../lib/queries.js'
import { median, percentile } from '../lib/stats.js'
import { readCollection, renderSvg } from '@quarry/adapters'
import { printTable } from '../lib/table.js'
import { flexSearch, miniSearch, orama, quarryText, winkBm25, type TextDoc, type TextEngine } from '../lib/text-engines.js'
import type { SuiteContext } from '../run.js'

const K = 10
const BUILD_CHUNK = 5000
const QUERY_CHUNK = 20
/** Builds of Cranfield + CISI per engine (each a fresh index of all 2,860 documents). */
const COLLECTION_ROUNDS = 7
/** Whole builds of the npm corpus per engine in `repeatedIndexing` (each 3–6 s here). */
const NPM_ROUNDS = 5

/** Where the judged collections live (as in the quality suite): ../shared/data next to the repository. */
const DATA = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared', 'data')

/** Collects the heap in full (twice: what a first collection frees can free more), when the bench runs with --expose-gc. */
function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  gc?.()
}

function heapMB(): number {
  collect()
  const m = process.memoryUsage()
  return (m.heapUsed + m.external) / 1048576
}

interface EngineRow {
  engine: string
  buildSeconds: number
  docsPerSecond: number
  mbPerSecond: number
  bytesPerDoc: number
  latency: Record<string, { p50: number; p99: number }>
}

/** Indexing throughput, memory per document and query latency on ≥ 50,000 real-text documents. */
export async function runTextSpeed(ctx: SuiteContext): Promise<void> {
  const all = npmCorpus()
  const docs = ctx.quick ? all.slice(0, 5000) : all
  const megabytes = docs.reduce((s, d) => s + Buffer.byteLength(d.title) + Buffer.byteLength(d.text), 0) / 1e6
  const queries = makeQueries(docs, ctx.quick ? 25 : 200)
  console.log(`\n== npm text corpus: ${docs.length} documents, ${megabytes.toFixed(1)} MB, ${queries.length} queries (1-4 terms)`)
  const engines: TextEngine[] = [
    quarryText(),
    quarryText('quarry-bm25 (unicode)', { tokenizer: 'unicode' }),
    miniSearch(false),
    miniSearch(true),
    orama(true),
    flexSearch(),
    winkBm25(),
  ]
  // Builds interleaved chunk by chunk, rotating who goes first.
  const build = new Map(engines.map((e) => [e.name, { seconds: 0, mb: 0 }]))
  for (let start = 0, c = 0; start < docs.length; start += BUILD_CHUNK, c++) {
    const chunk = docs.slice(start, start + BUILD_CHUNK)
    for (let j = 0; j < engines.length; j++) {
      const engine = engines[(j + c) % engines.length] as TextEngine
      const before = heapMB()
      const t = performance.now()
      await engine.add(chunk)
      const b = build.get(engine.name) as { seconds: number; mb: number }
      b.seconds += (performance.now() - t) / 1000
      b.mb += heapMB() - before
    }
  }
  // Warm up (wink-bm25 consolidates on its first search), then interleave query chunks.
  for (const engine of engines) for (const q of queries.slice(0, 20)) await engine.search(q.text, K)
  const lat = new Map(engines.map((e) => [e.name, new Map<number, number[]>()]))
  for (let start = 0, c = 0; start < queries.length; start += QUERY_CHUNK, c++) {
    for (let j = 0; j < engines.length; j++) {
      const engine = engines[(j + c) % engines.length] as TextEngine
      for (const q of queries.slice(start, start + QUERY_CHUNK)) {
        const t = performance.now()
        await engine.search(q.text, K)
        const byLength = lat.get(engine.name) as Map<number, number[]>
        byLength.set(q.terms, [...(byLength.get(q.terms) ?? []), performance.now() - t])
      }
    }
  }
  const rows: EngineRow[] = engines.map((e) => {
    const b = build.get(e.name) as { seconds: number; mb: number }
    const byLength = lat.get(e.name) as Map<number, number[]>
    const allLat = [...byLength.values()].flat()
    const latency: Record<string, { p50: number; p99: number }> = { all: { p50: median(allLat), p99: percentile(allLat, 0.99) } }
    for (const [terms, xs] of byLength) latency[`${terms}`] = { p50: median(xs), p99: percentile(xs, 0.99) }
    return { engine: e.name, buildSeconds: b.seconds, docsPerSecond: docs.length / b.seconds, mbPerSecond: megabytes / b.seconds, bytesPerDoc: (b.mb * 1048576) / docs.length, latency }
  })
  printTable(`indexing ${docs.length} documents (${megabytes.toFixed(1)} MB)`, rows.map((r) => ({ engine: r.engine, 'build s': r.buildSeconds, 'docs/s': r.docsPerSecond, 'MB/s': r.mbPerSecond, 'bytes/doc': r.bytesPerDoc })))
  printTable('query latency, ms (p50 / p99) by number of query terms', rows.map((r) => ({
    engine: r.engine,
    ...Object.fromEntries(['1', '2', '3', '4', 'all'].map((t) => [t === 'all' ? 'all' : `${t} term${t === '1' ? '' : 's'}`, `${(r.latency[t]?.p50 ?? 0).toFixed(3)} / ${(r.latency[t]?.p99 ?? 0).toFixed(3)}`])),
  })))
  const quarry = rows[0] as EngineRow
  const docsRatio = (name: string): number => quarry.docsPerSecond / (rows.find((r) => r.engine === name)?.docsPerSecond ?? Number.NaN)
  printTable('indexing ratios (quarry-bm25 docs/s / peer docs/s)', [{ 'vs minisearch (defaults)': docsRatio('minisearch'), 'vs minisearch+stem': docsRatio('minisearch+stem') }])
  // The same corpus built whole, Quarry and MiniSearch alone, repeatedly: the issue 20 indexing figure
  // (the interleaved build above holds seven engines' indexes at once, and builds each once). Those
  // indexes go first: held, every full collection during a build would mark them too.
  engines.length = 0
  const npm = await repeatedIndexing('the npm corpus', docs, ctx.quick ? 2 : NPM_ROUNDS)
  const collections = await collectionIndexing(ctx)
  const ratio = (name: string): number | undefined => {
    const other = rows.find((r) => r.engine === name)
    return other ? (quarry.latency.all?.p50 ?? 0) / (other.latency.all?.p50 ?? 1) : undefined
  }
  const ratios = { 'quarry p50 / minisearch p50': ratio('minisearch'), 'quarry p50 / minisearch+stem p50': ratio('minisearch+stem'), 'quarry p50 / flexsearch p50': ratio('flexsearch'), 'quarry docs/s / minisearch+stem docs/s': quarry.docsPerSecond / (rows.find((r) => r.engine === 'minisearch+stem')?.docsPerSecond ?? 1) }
  printTable('ratios (lower latency ratio is better)', [Object.fromEntries(Object.entries(ratios).map(([k, v]) => [k, v]))])
  writeFileSync(join(ctx.resultsDir, 'text-speed.json'), `${JSON.stringify({ suite: 'text-speed', date: new Date().toISOString(), node: process.version, quick: ctx.quick, documents: docs.length, megabytes, queries: queries.length, rows, ratios, npm, collections }, null, 1)}\n`)
  writeFileSync(
    join(ctx.resultsDir, 'text-speed.svg'),
    renderSvg('Text search latency', [
      { title: 'p50 latency by query terms', xLabel: 'query terms', yLabel: 'p50 ms', logY: true, series: rows.map((r) => ({ name: r.engine, points: [1, 2, 3, 4].map((t) => ({ x: t, y: r.latency[`${t}`]?.p50 ?? Number.NaN })) })) },
    ]),
  )
}

interface RepeatedIndexing {
  readonly documents: number
  readonly megabytes: number
  readonly rounds: number
  /** Median docs/s over the rounds, by engine. */
  readonly docsPerSecond: Record<string, number>
  /** quarry-bm25's docs/s over each peer's, per round, and their median. */
  readonly ratios: Record<string, { readonly median: number; readonly rounds: readonly number[] }>
}

/**
 * Indexing throughput on Cranfield + CISI (title + text, 2,860 documents), by {@link repeatedIndexing}.
 * Skipped when ../shared/data is absent.
 */
async function collectionIndexing(ctx: SuiteContext): Promise<RepeatedIndexing | undefined> {
  const docs: TextDoc[] = []
  for (const name of ['cranfield', 'cisi']) {
    const files = { corpus: join(DATA, name, 'corpus.jsonl'), queries: join(DATA, name, 'queries.jsonl'), qrels: join(DATA, name, 'qrels.tsv') }
    if (!Object.values(files).every((f) => existsSync(f))) {
      console.log(`skipping Cranfield + CISI indexing: ${join(DATA, name)} has no corpus.jsonl, queries.jsonl and qrels.tsv`)
      return undefined
    }
    for (const d of readCollection(files, name).docs) docs.push({ id: `${name}/${d.id}`, title: d.title, text: d.text })
  }
  return repeatedIndexing('Cranfield + CISI', docs, ctx.quick ? 3 : COLLECTION_ROUNDS)
}

/**
 * Indexing throughput by repeated whole builds: every round builds a fresh index of all `docs`
 * per engine (Quarry with its defaults, MiniSearch with and without stemming), engines in rotating
 * order, nothing else held in memory; medians over the rounds, and the median of each round's
 * own ratio (a round's builds run back to back, so a slow moment of the host moves both).
 */
async function repeatedIndexing(label: string, docs: readonly TextDoc[], rounds: number): Promise<RepeatedIndexing> {
  const megabytes = docs.reduce((s, d) => s + Buffer.byteLength(d.title) + Buffer.byteLength(d.text), 0) / 1e6
  const makers: (() => TextEngine)[] = [() => quarryText(), () => miniSearch(false), () => miniSearch(true)]
  const perRound = new Map<string, number[]>()
  for (let r = 0; r < rounds; r++) {
    for (let j = 0; j < makers.length; j++) {
      const engine = (makers[(j + r) % makers.length] as () => TextEngine)()
      // The previous build's index is collected here, untimed, not during this build.
      collect()
      const t = performance.now()
      await engine.add(docs)
      perRound.set(engine.name, [...(perRound.get(engine.name) ?? []), docs.length / ((performance.now() - t) / 1000)])
    }
  }
  const quarry = perRound.get('quarry-bm25') ?? []
  const docsPerSecond = Object.fromEntries([...perRound].map(([name, xs]) => [name, median(xs)]))
  const ratios = Object.fromEntries(
    [...perRound].filter(([name]) => name !== 'quarry-bm25').map(([name, xs]) => {
      const each = xs.map((x, i) => (quarry[i] ?? Number.NaN) / x)
      return [name, { median: median(each), rounds: each }]
    }),
  )
  printTable(`indexing ${label}: ${docs.length} documents (${megabytes.toFixed(1)} MB), median of ${rounds} builds per engine`, [...perRound].map(([engine, xs]) => ({ engine, 'docs/s (median)': median(xs), 'min': Math.min(...xs), 'max': Math.max(...xs), 'quarry / this (median of rounds)': engine === 'quarry-bm25' ? 1 : (ratios[engine]?.median ?? Number.NaN) })))
  return { documents: docs.length, megabytes, rounds, docsPerSecond, ratios }
}
