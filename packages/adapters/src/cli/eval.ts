import { accessSync, constants, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { EXAMPLE_FILES } from '../eval/example.js'
import { createIndex, embedAll, type SearchRequest } from '@quarry/core'
import { CollectionError, readCollection, type Collection } from '../eval/collection.js'
import { evaluateRun, rankIds, type Metrics } from '../eval/metrics.js'
import { renderSvg } from '../eval/svg.js'
import { optionLines, parseArgs, specOf, type OptionDoc } from './args.js'
import { createCliEmbedder, embedderKind } from './embedders.js'
import { CliError, usageError } from './fail.js'
import { quarryCommand } from './invocation.js'
import { shown } from './local-index.js'
import { progress } from './progress.js'
import { renderTable } from './table.js'

const DEFAULT_ALPHAS = [0.25, 0.5, 0.75]
const DEFAULT_PLOT = 'quarry-eval.svg'
/** Results per query scored (MAP@100, Recall@100) and candidates per side before fusion. */
const TOP_K = 100
const DEPTH = 200

/** Where `--example` writes the judged example shipped with Quarry (src/eval/example.ts), in the working directory. */
export const EXAMPLE_DIR = 'quarry-eval-example'

/** The options of `quarry eval`: its parser and its help. */
export const EVAL_OPTIONS: readonly OptionDoc[] = [
  { name: 'corpus', value: 'FILE', help: 'JSON lines {"_id", "title", "text"}: the documents (indexed whole)' },
  { name: 'queries', value: 'FILE', help: 'JSON lines {"_id", "text"}' },
  { name: 'qrels', value: 'FILE', help: 'query-id <tab> corpus-id <tab> score (a header line allowed; TREC\'s 4\ncolumns too: query-id iteration corpus-id score); score >= 1 is relevant,\nnDCG\'s gain is the score' },
  { name: 'example', help: `score the small judged example shipped with Quarry (8 documents, 4 queries):\nwrites ${EXAMPLE_DIR}/corpus.jsonl, queries.jsonl and qrels.tsv\n(files already there are kept: edit them and run again) and reads them` },
  { name: 'alpha', value: 'LIST', help: `hybrid weights between 0 (BM25) and 1 (dense), comma-separated\n(default ${DEFAULT_ALPHAS.join(',')})` },
  { name: 'embedder', value: 'glove|hashing', help: 'glove (default: offline GloVe SIF) or hashing (instant, word overlap only)' },
  { name: 'plot', value: 'FILE', help: `where to write the SVG plot of the metrics by alpha\n(default ${DEFAULT_PLOT})` },
  { name: 'json', help: 'print the results as JSON instead of a table' },
]

function usage(): string {
  return `usage: ${quarryCommand()} eval (--corpus corpus.jsonl --queries queries.jsonl --qrels qrels.tsv | --example)
                  [--alpha 0.25,0.5,0.75] [--embedder glove|hashing] [--plot FILE] [--json]

  Scores BM25, dense (GloVe SIF) and hybrid search at each alpha on your own judged queries:
  nDCG@10, MAP@100 and Recall@100 as trec_eval defines them, averaged over the queries with at
  least one relevant document. Every score is higher for better search.
${optionLines(EVAL_OPTIONS)}

  Files: a BEIR dataset is read as it is (corpus.jsonl, queries.jsonl, qrels/test.tsv). From
  TREC: qrels are read as they are (4 columns); topics and documents become JSON lines, one
  object a line: {"_id": "<num>", "text": "<title>"} per topic and
  {"_id": "<DOCNO>", "title": "", "text": "<TEXT>"} per document (docs/cli.md shows a converter).
  Start from the example: ${quarryCommand()} eval --example`
}

/** Writes the example's files into `dir` (those already there are kept); their paths. */
/** Refuses a plot path whose folder is missing or not writable, or that is a folder. */
function checkWritable(path: string): void {
  const folder = dirname(path)
  try {
    if (!statSync(folder).isDirectory()) throw new CliError(`--plot: ${shown(folder)} is not a folder`)
    accessSync(folder, constants.W_OK)
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError(`--plot: cannot write into ${shown(folder)} (${(error as NodeJS.ErrnoException).code ?? 'error'}); give a path in an existing folder`)
  }
  if (existsSync(path) && statSync(path).isDirectory()) throw new CliError(`--plot: ${shown(path)} is a folder; give a file path such as ${shown(join(path, 'eval.svg'))}`)
}

function writeExample(dir: string): { corpus: string; queries: string; qrels: string } {
  mkdirSync(dir, { recursive: true })
  for (const [name, text] of Object.entries(EXAMPLE_FILES)) if (!existsSync(join(dir, name))) writeFileSync(join(dir, name), text)
  return { corpus: join(dir, 'corpus.jsonl'), queries: join(dir, 'queries.jsonl'), qrels: join(dir, 'qrels.tsv') }
}

/** One evaluated configuration. */
export interface EvalRow {
  readonly mode: 'bm25' | 'hybrid' | 'dense'
  readonly alpha: number
  readonly metrics: Metrics
}

function parseAlphas(raw: string | undefined, help: string): number[] {
  if (raw === undefined) return DEFAULT_ALPHAS
  const values = raw.split(',').map((s) => s.trim())
  const alphas = values.map(Number)
  const bad = values.find((s, i) => s === '' || !((alphas[i] as number) >= 0 && (alphas[i] as number) <= 1))
  if (bad !== undefined) throw usageError(`--alpha takes numbers from 0 to 1 separated by commas; received "${bad}"`, help)
  // 0 and 1 are the BM25 and dense rows, always there.
  return [...new Set(alphas)].filter((a) => a > 0 && a < 1).sort((a, b) => a - b)
}

/** BM25 (alpha 0), dense (alpha 1) and hybrid at each alpha over the collection, searched exactly. */
async function evaluateModes(collection: Collection, kind: 'glove' | 'hashing', alphas: readonly number[]): Promise<{ embedder: string; rows: EvalRow[] }> {
  const embedder = createCliEmbedder(kind)
  const index = createIndex({ embedder, dense: 'exact' })
  const bar = progress('Embedding documents', collection.docs.length, 'docs')
  const vectors = await embedAll(embedder, collection.docs.map((d) => `${d.title}\n${d.text}`), { batchSize: 128, onProgress: (done) => bar.tick(done) })
  bar.done()
  index.addMany(collection.docs.map((d, i) => ({ id: d.id, vector: vectors[i] as Float32Array, text: { title: d.title, text: d.text } })))
  const judged = collection.queries.filter((q) => [...(collection.qrels.get(q.id)?.values() ?? [])].some((g) => g >= 1))
  const queryVectors = await embedAll(embedder, judged.map((q) => q.text))
  const modes: { mode: EvalRow['mode']; alpha: number }[] = [{ mode: 'bm25', alpha: 0 }, ...alphas.map((alpha) => ({ mode: 'hybrid' as const, alpha })), { mode: 'dense', alpha: 1 }]
  const rows = modes.map(({ mode, alpha }) => {
    const run = new Map<string, string[]>()
    judged.forEach((q, i) => {
      const request: SearchRequest = { text: q.text, vector: queryVectors[i] as Float32Array, alpha, topK: TOP_K, depth: DEPTH }
      run.set(q.id, rankIds(index.search(request).hits, TOP_K))
    })
    return { mode, alpha, metrics: evaluateRun(collection, run) }
  })
  return { embedder: embedder.name, rows }
}

/** The metrics against alpha: BM25 at 0, dense at 1. */
function evalPlot(title: string, rows: readonly EvalRow[]): string {
  const series = [
    { name: 'nDCG@10', value: (m: Metrics) => m.ndcg10 },
    { name: 'MAP@100', value: (m: Metrics) => m.map100 },
    { name: 'Recall@100', value: (m: Metrics) => m.recall100 },
  ]
  return renderSvg(title, [
    {
      title: 'quarry eval: metrics by alpha',
      xLabel: 'alpha (0 = BM25 only, 1 = dense only)',
      yLabel: 'score',
      series: series.map((s) => ({ name: s.name, points: rows.map((r) => ({ x: r.alpha, y: s.value(r.metrics) })) })),
    },
  ])
}

/** `quarry eval`: resolves to the exit code. */
export async function runEval(args: readonly string[]): Promise<number> {
  const help = usage()
  const parsed = parseArgs(args, specOf(EVAL_OPTIONS, false), help)
  if (parsed.has('help')) {
    console.log(help)
    return 0
  }
  const files = ['corpus', 'queries', 'qrels']
  const given = files.filter((n) => parsed.value(n) !== undefined)
  if (parsed.has('example') && given.length > 0) throw usageError(`--example evaluates the shipped files; leave out ${given.map((n) => `--${n}`).join(', ')}`, help)
  if (!parsed.has('example') && given.length < files.length) {
    throw usageError(`give ${files.filter((n) => !given.includes(n)).map((n) => `--${n}`).join(', ')} (or --example: the judged example shipped with Quarry)`, help)
  }
  // Every option is checked before --example writes its files.
  const alphas = parseAlphas(parsed.value('alpha'), help)
  const kind = embedderKind(parsed.value('embedder'), help)
  const example = parsed.has('example') ? writeExample(resolve(EXAMPLE_DIR)) : undefined
  const corpus = example?.corpus ?? (parsed.value('corpus') as string)
  const queries = example?.queries ?? (parsed.value('queries') as string)
  const qrels = example?.qrels ?? (parsed.value('qrels') as string)
  const plot = resolve(parsed.value('plot') ?? DEFAULT_PLOT)
  // Before the work: a plot that cannot be written would fail only after every query ran.
  checkWritable(plot)
  let collection: Collection
  try {
    collection = readCollection({ corpus, queries, qrels })
  } catch (error) {
    if (error instanceof CollectionError) throw new CliError(error.message)
    throw error
  }
  if (collection.docs.length === 0) throw new CliError(`${corpus} holds no documents`)
  // A judged id that names no document (a typo) scores as a miss: said, not silently counted.
  const ids = new Set(collection.docs.map((d) => d.id))
  const unknown = [...new Set([...collection.qrels.values()].flatMap((judged) => [...judged.keys()].filter((id) => !ids.has(id))))]
  if (unknown.length > 0) console.error(`quarry eval: ${qrels} judges ${unknown.length} document id${unknown.length === 1 ? '' : 's'} not in ${corpus} (${unknown.slice(0, 3).map((id) => `"${id}"`).join(', ')}${unknown.length > 3 ? ', …' : ''}): they count as misses; check the ids`)
  const { embedder, rows } = await evaluateModes(collection, kind, alphas)
  const judged = rows[0]?.metrics.queries ?? 0
  if (judged === 0) throw new CliError(`no query in ${queries} has a relevant document (score >= 1) in ${qrels}`)
  const title = `${collection.docs.length} documents, ${judged} judged queries, embedder ${embedder}`
  writeFileSync(plot, evalPlot(title, rows))
  if (parsed.has('json')) {
    console.log(JSON.stringify({ documents: collection.docs.length, queries: judged, embedder, plot, results: rows.map((r) => ({ mode: r.mode, alpha: r.alpha, ndcg10: r.metrics.ndcg10, map100: r.metrics.map100, recall100: r.metrics.recall100 })) }, null, 2))
    return 0
  }
  if (example) console.log(`The judged example: ${shown(example.corpus)}, queries.jsonl and qrels.tsv (edit them and run again, or pass your own files with --corpus, --queries and --qrels)`)
  console.log(title)
  console.log(renderTable(['mode', 'alpha', 'nDCG@10', 'MAP@100', 'Recall@100'], rows.map((r) => [r.mode === 'bm25' ? 'BM25' : r.mode, r.alpha.toFixed(2), r.metrics.ndcg10.toFixed(4), r.metrics.map100.toFixed(4), r.metrics.recall100.toFixed(4)])))
  console.log(`Plot: ${shown(plot)}`)
  return 0
}
