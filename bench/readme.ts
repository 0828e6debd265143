// `pnpm bench:readme`: writes bench/README.md (and docs/filters.md's crossover figures) from
// bench/results/*.json, so the pages say only what the result files hold. The prose (what each suite measures, its peer, its method) is the
// template below; the figures, dates and machines come from the files. History stays in git.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

type Json = Readonly<Record<string, unknown>>

const NOT_RECORDED = 'not recorded'
const RUN = 'npx -y pnpm@12.4.2 bench'

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
function obj(o: unknown, key: string): Json {
  const v = isObject(o) ? o[key] : undefined
  return isObject(v) ? v : {}
}
function list(o: unknown, key: string): Json[] {
  const v = isObject(o) ? o[key] : undefined
  return Array.isArray(v) ? v.filter(isObject) : []
}
function num(o: unknown, key: string): number | undefined {
  const v = isObject(o) ? o[key] : undefined
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined
}

/** A figure at about three significant digits, thousands grouped; "—" when absent. */
function fmt(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'boolean') return v ? 'yes' : 'no'
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—'
  const a = Math.abs(v)
  if (Number.isInteger(v) || a >= 1000) return Math.round(v).toLocaleString('en-US')
  return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : a >= 0.01 ? v.toFixed(3) : v.toPrecision(2)
}
/** An error message cut at a word near 40 characters. */
function short(message: string): string {
  return message.length <= 40 ? message : `${message.slice(0, message.lastIndexOf(' ', 40))} …`
}
/** A ratio as `1.23×`. */
function ratio(v: unknown): string {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—'
  return `${Math.abs(v) >= 0.1 ? v.toFixed(2) : v.toPrecision(2)}×`
}

function table(columns: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const esc = (c: string): string => c.replace(/\|/g, '\\|')
  return [`| ${columns.map(esc).join(' | ')} |`, `|${columns.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)]
}
/** The scalar columns of flat rows, picked by name, as a table. */
function pick(rows: readonly Json[], columns: readonly (readonly [string, string])[], format: (key: string, v: unknown) => string = (_k, v) => fmt(v)): string[] {
  return table(columns.map(([, label]) => label), rows.map((r) => columns.map(([key]) => format(key, r[key]))))
}

/** One suite's section: the template's words around the tables its results make. */
interface Suite {
  readonly name: string
  /** Result files, relative to bench/results. */
  readonly files: readonly string[]
  readonly measures: string
  readonly peer: string
  /** What makes the figures comparable (the pairing, the order, what is charged to whom). */
  readonly method: string
  readonly command?: string
  /** What the run was made of (sizes, counts), from the results: one more item of the list (none when undefined). */
  readonly data?: (results: readonly Json[]) => string | undefined
  readonly render: (results: readonly Json[]) => string[]
}

/** The highest QPS of a sweep's points that reach the recall (an exact scan has no ef to interpolate over). */
function bestAt(engine: Json, recall: number): number | undefined {
  const qps = list(engine, 'sweep').filter((p) => (num(p, 'recall') ?? 0) >= recall).map((p) => num(p, 'qps') ?? 0)
  return qps.length > 0 ? Math.max(...qps) : undefined
}

/** Engines that scan every vector: one QPS at recall 1, no ef sweep. */
const EXACT_SCANS = new Set(['quarry-exact', 'orama'])

const pct = (v: unknown): string => (typeof v === 'number' ? `${+(v * 100).toPrecision(2)}%` : '—')

export const SUITES: readonly Suite[] = [
  {
    name: 'dense',
    files: ['dense.json'],
    measures: 'recall@10 against QPS over an ef sweep, per dataset; build time and memory',
    peer: 'hnswlib-node 3.0.0 called directly (queries as plain arrays, its best case), usearch 2.26.2, Orama 3.1.18 (exact scan); hnswlib-node on Quarry\'s own saved graph and a second hnswlib-node build as controls',
    method: 'Engines run in one process, interleaved in chunks of 50 queries in a new seeded random order every chunk (`lib/order.ts`), so each follows every other about equally often. The heap is collected in full (untimed) before each ef and each engine is charged the GC pauses inside its own chunks. The ratio is paired: the median over chunks of raw time / Quarry time at the first ef where both reach the recall. QPS@r interpolates log-linearly between the two ef that bracket r. Every graph uses M = 16, efConstruction = 200. WebAssembly against native loads the same saved graph in both builds of @quarry/hnsw and searches it with the same queries (`suites/dense-wasm.ts`). Grown against loaded searches Quarry\'s graph as inserts grew it and the same graph saved and read back, in rounds of every query, chunk by chunk in a seeded random order; the ratio is the median of the rounds\', from wall time and from the process\'s CPU time (`suites/dense-grown.ts`).',
    data: ([r]) => {
      const sets = Object.entries(obj(r, 'datasets'))
      const exact = sets.flatMap(([name, d]) => list(d, 'engines').filter((e) => EXACT_SCANS.has(String(e['engine']))).map((e) => `${String(e['engine'])} ${fmt(bestAt(e, 0))} on ${name}`))
      return `${sets.map(([name, d]) => `${name} ${fmt(num(d, 'n'))} × ${fmt(num(d, 'dim'))}-d ${fmt(isObject(d) ? d['metric'] : undefined)}, ${fmt(num(d, 'queries'))} queries`).join('; ')}; k = 10. Exact scans (QPS at recall 1): ${exact.join(', ')}. One call over a 16-vector graph, µs (raw hnswlib-node / Quarry's whole call): ${sets.map(([name, d]) => `${fmt(num(obj(d, 'callFloorUs'), 'rawUs'))} / ${fmt(num(obj(d, 'callFloorUs'), 'quarryUs'))} on ${name}`).join(', ')}.`
    },
    render: ([r]) => {
      const rows: string[][] = []
      const targets = ['0.9', '0.95', '0.99']
      for (const [name, d] of Object.entries(obj(r, 'datasets'))) {
        const qpsAt = (e: Json, t: string): number | undefined => num(obj(e, 'qpsAt'), t) ?? bestAt(e, Number(t))
        for (const e of list(d, 'engines').filter((x) => !EXACT_SCANS.has(String(x['engine'])))) rows.push([name, fmt(e['engine']), fmt(num(e, 'buildSeconds')), fmt(num(e, 'memoryMB')), ...targets.map((t) => fmt(qpsAt(e, t)))])
        rows.push([name, '**quarry / hnswlib-node, paired**', '', '', ...targets.map((t) => `**${ratio(num(obj(obj(d, 'quarryOverHnswlibPairedAtRecall'), t), 'quarryOverRaw'))}**`)])
        const w = obj(d, 'wasmVsNative')
        if (Object.keys(w).length > 0) rows.push([name, `**wasm / native, paired** (loads ${fmt(num(w, 'graphMB'))} MB in ${fmt(num(obj(w, 'loadSeconds'), 'wasm'))} s vs ${fmt(num(obj(w, 'loadSeconds'), 'native'))} s)`, '', '', ...targets.map((t) => `**${ratio(num(obj(obj(w, 'pairedAtRecall'), t), 'wasmOverNative'))}**`)])
        const g = obj(d, 'grownVsLoaded')
        if (Object.keys(g).length > 0) rows.push([name, `**grown / loaded, paired** (the same graph, ${fmt(num(g, 'rounds'))} rounds)`, '', '', ...targets.map((t) => `**${ratio(num(obj(obj(g, 'pairedAtRecall'), t), 'grownOverLoaded'))}** (CPU ${ratio(num(obj(obj(g, 'pairedAtRecall'), t), 'grownOverLoadedCpu'))})`)])
      }
      return [...table(['dataset', 'engine', 'build s', 'memory MB', 'QPS@0.90', 'QPS@0.95', 'QPS@0.99'], rows), '']
    },
  },
  {
    name: 'filtered',
    files: ['filtered.json'],
    measures: 'filtered top-10 at ef = 64 from 50% to 0.01% of the records passing: p50 latency and recall against the exact filtered top-10',
    peer: "hnswlib-node's own filter callback",
    method: 'Quarry answers with a filter function and with the equivalent declarative filter (value indexes); the planner picks its strategy (in the results). Engines interleave in chunks of 10 queries in a seeded random order per chunk.',
    data: ([r]) => {
      const rows = Object.values(obj(r, 'datasets')).flatMap((rs) => (Array.isArray(rs) ? rs.filter(isObject) : []))
      const least = (k: string): string => fmt(Math.min(...rows.map((x) => num(x, k) ?? Number.NaN)))
      return `Lowest recall@10 of any row: filter function ${least('quarryRecall')}, declarative ${least('declarativeRecall')}, hnswlib-node ${least('hnswlibRecall')}.`
    },
    render: ([r]) => [
      // One row per selectivity, a column per dataset: filter function / declarative filter / hnswlib-node's callback, p50 ms, and raw ÷ declarative.
      ...(() => {
        const sets = Object.entries(obj(r, 'datasets')).map(([name, rows]) => [name, Array.isArray(rows) ? rows.filter(isObject) : []] as const)
        const selectivities = [...new Set(sets.flatMap(([, rows]) => rows.map((x) => num(x, 'selectivity') ?? Number.NaN)))].sort((a, b) => b - a)
        const cell = (x: Record<string, unknown> | undefined): string =>
          x === undefined ? '—' : `${['quarryP50ms', 'declarativeP50ms', 'hnswlibP50ms'].map((k) => fmt(num(x, k))).join(' / ')} (${ratio((num(x, 'hnswlibP50ms') ?? Number.NaN) / (num(x, 'declarativeP50ms') ?? Number.NaN))})`
        return table(['passing', ...sets.map(([name]) => `${name}: fn / declarative / hnswlib ms (hnswlib ÷ declarative)`)], selectivities.map((s) => [pct(s), ...sets.map(([, rows]) => cell(rows.find((x) => num(x, 'selectivity') === s)))]))
      })(),
      '',
    ],
  },
  {
    name: 'exact',
    data: ([r]) => `pool / single thread by rows scanned: ${list(r, 'crossover').map((c) => `${fmt(num(c, 'rows'))}: ${ratio(num(c, 'pool vs single'))}`).join(', ')}.`,
    files: ['exact.json'],
    measures: 'brute-force top-10 p50 on the calling thread and on the scan pool',
    peer: 'a plain JavaScript loop over the same Float32Array, and naive arrays of numbers',
    method: 'Both Quarry indexes hold the same rows (`dense: \'exact\'`); one scans on the calling thread, the other with the scan pool (one worker per core beside the caller). Queries interleave; the pool must return the same ids and scores as the single thread.',
    render: ([r]) => [
      ...pick(list(r, 'rows'), [['dataset', 'dataset'], ['single-thread p50 ms', 'single p50 ms'], ['pool p50 ms', 'pool p50 ms'], ['plain loop p50 ms', 'loop p50 ms'], ['pool vs single', 'pool vs single'], ['pool vs loop', 'pool vs loop'], ['SIMD vs JS kernels', 'SIMD vs JS'], ['pool = single (ids, scores)', 'pool = single']], (k, v) => (k.includes(' vs ') ? ratio(v) : fmt(v))),
      '',
    ],
  },
  {
    name: 'quality',
    files: ['quality.json'],
    measures: 'BM25 relevance on judged collections: nDCG@10, MAP@100, Recall@100 as trec_eval defines them',
    peer: 'MiniSearch, Orama and wink-bm25-text-search, each as its docs recommend (with and without stemming)',
    method: 'Reads `../shared/data/{cranfield,cisi}` and skips without it; title and text indexed, ties by doc id. The reader and metrics are `quarry eval`\'s (`packages/adapters/src/eval/`).',
    render: ([r]) => {
      const cols = obj(r, 'collections')
      const names = Object.keys(cols)
      const engines = [...new Set(names.flatMap((c) => Object.keys(obj(cols, c))))]
      return [...table(['engine', ...names.flatMap((c) => [`${c} nDCG@10`, 'MAP@100', 'R@100'])], engines.map((e) => [e, ...names.flatMap((c) => ['ndcg10', 'map100', 'recall100'].map((m) => fmt(num(obj(obj(cols, c), e), m))))])), '']
    },
  },
  {
    name: 'embed-quality',
    files: ['embed-quality.json'],
    measures: 'nDCG@10 of the default embedder (dense, exact search), BM25 and hybrid fusion at alpha 0.1 … 0.9',
    peer: 'BM25 alone; the float32 GloVe vectors against the shipped 8-bit ones',
    data: ([r]) => `embedder \`${String(r?.['embedder'] ?? NOT_RECORDED)}\`, tuned on ${String(r?.['tunedOn'] ?? NOT_RECORDED)}; figures are nDCG@10.`,
    method: 'The embedder\'s SIF weight and the fusion defaults were chosen on Cranfield; CISI is held out. Reads `../shared/data` and skips without it.',
    render: ([r]) => {
      const cols = obj(r, 'collections')
      const ref = obj(r, 'float32Reference')
      const modes = ['sparse only (BM25)', 'dense only (GloVe SIF)', 'hybrid convex 0.25', 'hybrid convex 0.5', 'hybrid convex 0.75', 'hybrid rrf 0.25', 'hybrid rrf 0.5']
      const rows = Object.keys(cols).flatMap((c) => [
        [`${c} (${String(r?.['vectors'] ?? '8-bit')})`, ...modes.map((m) => fmt(num(obj(obj(cols, c), m), 'ndcg10')))],
        ...(Object.keys(obj(ref, c)).length > 0 ? [[`${c} (float32)`, ...modes.map((m) => fmt(num(obj(obj(ref, c), m), 'ndcg10')))]] : []),
      ])
      return [...table(['collection', ...modes.map((m) => m.replace(/ only \(.*\)$/, '').replace('hybrid ', ''))], rows), '']
    },
  },
  {
    name: 'glove-load',
    files: ['glove-load.json'],
    measures: 'the first embedding call of the GloVe embedder in a fresh process: time and peak RSS',
    peer: 'the default vocabulary (100,000 words) against all 341,479 words',
    method: 'Each round is a fresh `node` that imports the bundled `@quarry/core` (as an installed app does) and times `createGloveEmbedder()` to its first embedding; rounds alternate the two vocabularies; medians and worst.',
    data: ([r]) => `the @quarry/glove file is ${fmt(num(r, 'fileMB'))} MB.`,
    render: ([r]) => [...pick(list(r, 'rows'), [['vocabulary', 'vocabulary'], ['first use ms (median)', 'first use ms (median)'], ['first use ms (worst)', 'worst'], ['peak RSS MB (median)', 'peak RSS MB (median)'], ['RSS after import MB', 'RSS after import MB']]), ''],
  },
  {
    name: 'text-speed',
    files: ['text-speed.json'],
    measures: 'BM25 indexing throughput and query latency (1–4 terms) on the npm text corpus',
    peer: 'MiniSearch (with and without stemming), FlexSearch (no BM25: it intersects terms), Orama, wink-bm25-text-search',
    method: 'The corpus is the paragraphs of the docs and comments in node_modules, built by `lib/npm-corpus.ts` (no network). Builds interleave in chunks of 5,000 documents and queries in chunks of 20; the indexing ratios are medians of per-round ratios.',
    data: ([r]) => `${fmt(num(r, 'documents'))} documents, ${fmt(num(r, 'megabytes'))} MB, ${fmt(num(r, 'queries'))} queries. Ratios: ${[...Object.entries(obj(r, 'ratios')).map(([k, v]) => `${k} ${ratio(v)}`), ...['npm', 'collections'].flatMap((s) => Object.entries(obj(obj(r, s), 'ratios')).map(([peer, v]) => `quarry / ${peer} docs/s on ${s} ${ratio(num(v, 'median'))}`))].join('; ')}.`,
    render: ([r]) => [
      ...pick(list(r, 'rows').map((e) => ({ ...e, p50: num(obj(obj(e, 'latency'), 'all'), 'p50'), p99: num(obj(obj(e, 'latency'), 'all'), 'p99') })), [['engine', 'engine'], ['buildSeconds', 'build s'], ['docsPerSecond', 'docs/s'], ['bytesPerDoc', 'bytes/doc'], ['p50', 'p50 ms'], ['p99', 'p99 ms']]),
      '',
    ],
  },
  {
    name: 'text-limits',
    files: ['text-limits.json'],
    measures: 'time to tokenize one pathological text of 10 KB to 10 MB, per shape and tokenizer',
    peer: 'none: a bound (every shape must finish within the budget)',
    method: 'Each shape is one text of the given length, tokenized once; the table shows the largest size of the four slowest shapes.',
    data: ([r]) => `budget ${fmt(num(r, 'budgetMs'))} ms a text; ${fmt(new Set(list(r, 'rows').map((x) => x['shape'])).size)} shapes.`,
    render: ([r]) => {
      const largest = new Map<string, Json>()
      for (const row of list(r, 'rows')) {
        const key = `${String(row['tokenizer'])}\u0000${String(row['shape'])}`
        if ((num(row, 'chars') ?? 0) >= (num(largest.get(key), 'chars') ?? -1)) largest.set(key, row)
      }
      const shapes = [...new Set([...largest.values()].map((x) => String(x['shape'])))]
      const of = (t: string, s: string): Json | undefined => largest.get(`${t}\u0000${s}`)
      const slowest = (x: string): number => Math.max(num(of('wink', x), 'ms') ?? 0, num(of('unicode', x), 'ms') ?? 0)
      shapes.sort((a, b) => slowest(b) - slowest(a))
      return [...table(['shape', 'chars', 'wink ms', 'unicode ms'], shapes.slice(0, 4).map((s) => [s, fmt(num(of('wink', s), 'chars')), fmt(num(of('wink', s), 'ms')), fmt(num(of('unicode', s), 'ms'))])), '']
    },
  },
  {
    name: 'hybrid',
    files: ['hybrid.json'],
    measures: 'latency of fused search against dense-only and text-only search in one index',
    peer: 'single-mode search on the same index',
    method: 'npm passages embedded as mean GloVe vectors, HNSW cosine + BM25, top-10, depth 50 per side, queries of 1–4 words interleaved in chunks of 20.',
    data: ([r]) => `${fmt(num(r, 'passages'))} passages, ${fmt(num(r, 'queries'))} queries, built in ${fmt(num(r, 'buildSeconds'))} s.`,
    render: ([r]) => [...pick(list(r, 'rows'), [['mode', 'mode'], ['p50 ms', 'p50 ms'], ['p99 ms', 'p99 ms'], ['mean ms', 'mean ms']]), ''],
  },
  {
    name: 'persist',
    files: ['persist.json'],
    measures: 'snapshot save and load (every checksum verified), size, and identical answers after load',
    peer: "Orama 3.1.18's `@orama/plugin-data-persistence`, each of its formats",
    method: 'Records of a 128-d clustered vector, a text passage and two metadata fields, the same for every engine.',
    data: ([r]) => {
      const failed = list(r, 'rows').filter((x) => typeof x['error'] === 'string')
      return failed.length === 0 ? 'every engine saved and loaded.' : `failed: ${failed.map((x) => `${String(x['engine'])} (${short(String(x['error']))})`).join('; ')}.`
    },
    render: ([r]) => [...pick(list(r, 'rows').filter((x) => typeof x['error'] !== 'string'), [['engine', 'engine'], ['records', 'records'], ['saveSeconds', 'save s'], ['loadSeconds', 'load s'], ['megabytes', 'MB'], ['identical', 'same answers']]), ''],
  },
  {
    name: 'persist-scale',
    files: ['persist-scale.json'],
    measures: 'load / save at 100k and 1M records, and at 1M with an HNSW graph',
    peer: 'the save of the same index, in the same process',
    method: 'Saves and loads alternate, the built index held meanwhile; medians of the rounds shown; a probe query checks the loaded index answers as the saved one did.',
    command: `${RUN} persist-scale`,
    // No blank line after the table (the next heading ends it): the page stays within its line cap.
    render: ([r]) => pick(list(r, 'rows'), [['records', 'records'], ['dense', 'vectors'], ['build s', 'build s'], ['v5 save s', 'save s'], ['v5 load s', 'load s'], ['load / save', 'load / save'], ['v5 MB', 'MB'], ['rounds', 'rounds'], ['same results', 'same results']], (k, v) => (k.includes(' / ') ? ratio(v) : fmt(v))),
  },
  {
    name: 'startup',
    files: ['startup.json', 'startup-ann.json'],
    measures: '`quarry serve --data` (one RAG corpus) from spawn to its first answer',
    peer: "core's `loadIndex` of the same snapshot in the bench process (the ratio's denominator)",
    method: 'The server runs as an installed `quarry` does (the built, bundled packages). Rounds interleave; each ratio is the median of each round\'s own ratio. Two stricter baselines beside it: a fresh `node` that loads the snapshot with core and does nothing else, from its spawn to the index loaded (spawn → loaded: Node\'s own start counted on both sides), and the same `loadIndex` timed around the call in that process (fresh load); after it, untimed, that process\'s JS heap after a full collection (heap after load: Node\'s own few MB included; the vectors and the text index\'s columns are outside it). The bench process\'s own loads follow its other steps and have run slower than either. `startup-ann.json` is the same with an ANN (HNSW) corpus (`STARTUP_CORPUS=ann`).',
    render: (files) => [...pick(files.flatMap((f) => list(f, 'rows')), [['corpus', 'corpus'], ['chunks', 'chunks'], ['data MB', 'data MB'], ['core loadIndex s', 'loadIndex s'], ['core loadIndex in a fresh process s', 'fresh load s'], ['serve: first answer s', 'first answer s'], ['first answer / load, median of rounds', 'first answer / load'], ['node + core loadIndex, spawn → loaded s', 'spawn → loaded s'], ['first answer / (spawn → loaded), median of rounds', 'first answer / (spawn → loaded)'], ['first answer / fresh-process load, median of rounds', 'first answer / fresh load'], ['fresh process: JS heap after load MB', 'heap after load MB'], ['empty folder: first answer s', 'empty folder s'], ['rounds', 'rounds']], (k, v) => (k.includes(' / ') ? ratio(v) : fmt(v))), ''],
  },
  {
    name: 'semantic-retriever',
    files: ['semantic-retriever.json'],
    measures: 'the Semantic Retriever adapter\'s ingest and query latency',
    peer: 'core (`index.ingest`, embed + `index.search`) on the same passages',
    method: 'Every call includes the query\'s embedding; calls interleave in blocks of 20.',
    data: ([r]) => `${fmt(num(r, 'passages'))} passages in ${fmt(num(r, 'documents'))} documents; ingest: adapter ${fmt(num(obj(r, 'ingestSeconds'), 'adapter'))} s, core ${fmt(num(obj(r, 'ingestSeconds'), 'core'))} s.`,
    render: ([r]) => [...pick(list(r, 'rows'), [['call', 'call'], ['p50 ms', 'p50 ms'], ['p99 ms', 'p99 ms'], ['p50 / core', 'p50 / core']], (k, v) => (k === 'p50 / core' ? ratio(v) : fmt(v))), ''],
  },
  {
    name: 'vertex-rag',
    files: ['vertex-rag.json'],
    measures: 'the RAG Engine adapter\'s ingest throughput and retrieveContexts latency',
    peer: "core's batched `ingest` and search on the same chunks and vector DB",
    method: 'Ingest rounds run on fresh corpora after an uncounted warm-up round, in a rotating order that puts each way in each position equally often, the chunker\'s memo of analyzed words emptied before each (every round reads the text as new text); vs core is the median of the rounds\' ratios against core on the same vector DB (target ≥ 0.9), with the ratio of the medians beside it.',
    data: ([r]) => `${fmt(num(r, 'chunks'))} chunks in ${fmt(num(r, 'files'))} files, ${fmt(num(r, 'rounds'))} rounds.`,
    render: ([r]) => {
      const ingest = list(r, 'ingest')
      const dbs = [...new Set(ingest.map((x) => String(x['vector DB'])))]
      const ways = [...new Set(ingest.map((x) => String(x['ingest'])))]
      const at = (db: string, way: string): Json | undefined => ingest.find((x) => x['vector DB'] === db && x['ingest'] === way)
      return [
        ...table(
          ['ingest', ...dbs.flatMap((db) => [`${db} chunks/s`, 'vs core', 'ratio of medians'])],
          ways.map((way) => [way, ...dbs.flatMap((db) => [fmt(num(at(db, way), 'chunks/s')), ratio(num(at(db, way), 'vs core')), ratio(num(at(db, way), 'vs core, ratio of medians'))])]),
        ),
        '',
        ...pick(list(r, 'rows'), [['call', 'call'], ['p50 ms', 'p50 ms'], ['p99 ms', 'p99 ms']]),
        '',
      ]
    },
  },
  {
    name: 'http',
    files: ['http.json'],
    data: ([r]) => {
      // The floor, in a line: each transport against a server that does no work, with the same clients.
      const floor = list(r, 'floor')
      const counts = [...new Set(floor.map((x) => num(x, 'clients') ?? 0))]
      const at = (server: string, key: string): string => counts.map((n) => fmt(num(floor.find((f) => f['server'] === server && num(f, 'clients') === n), key))).join(' / ')
      const servers = [...new Set(floor.map((x) => String(x['server'])))]
      const from = r?.['serverFrom'] === 'dist' ? 'the built packages' : r?.['serverFrom'] === 'source' ? 'the TypeScript sources (`HTTP_FROM=source`)' : NOT_RECORDED
      return `${fmt(num(r, 'passages'))} passages, ${fmt(num(r, 'perClient'))} requests per client per round${num(r, 'minRoundClients') === undefined ? '' : `, and at least ${fmt(num(r, 'minRoundClients'))} clients' worth a round (one client sends ${fmt((num(r, 'perClient') ?? NaN) * (num(r, 'minRoundClients') ?? NaN))})`}; server code: ${from}.${floor.length === 0 ? '' : ` The floor, servers that do no work, at ${counts.join(' / ')} clients: ${servers.map((server) => `${server} p50 ${at(server, 'p50 ms')} ms, ${at(server, 'rps')} rps`).join('; ')}.`}`
    },
    measures: 'requests per second and latency of the same calls in process, over REST and over gRPC',
    peer: 'the calls in process, and a bare `node:http` server doing the same work (REST\'s overhead)',
    method: 'One server process (Quarry\'s REST and gRPC, and the bare server, on the same engines) called from the bench\'s process, as an app calls `quarry serve`; it runs the built, bundled packages, as an installed `quarry` does, unless `HTTP_FROM=source` (Data says which). A closed loop of 1, 8 and 32 clients (getRagCorpus: 1 and 16). Each transport is called two ways: raw, with Node\'s own clients (node:http keep-alive with JSON; one node:http2 connection with protobuf.js messages), which measures the server; and with the clients users run, Google\'s own, on REST (`fallback: true`) and on gRPC, one per service shared by the concurrent clients. Transports interleave by round after a warm-up. Cells are requests per second in process / REST / gRPC / Google\'s REST / Google\'s gRPC; REST / bare is REST against a bare `node:http` server doing the same work; gRPC / REST compares the same way of calling, raw / Google\'s: requests per second, at one client p50 latency (targets ≥ 0.8 and ≤ 1.3), and the CPU time per request of the server\'s process (what the transport costs Quarry). The floor (under Data) runs the raw clients against servers that do no work: a bare `node:http` one (http echo) and a minimal gRPC one on `node:http2` (http2 echo). Reads at 16 clients (second table: the small reads, then the three queries, each request its own query) run REST against bare alone, 8 rounds in the order bare, REST, REST, bare; REST / bare is the median of the rounds\' ratios (target ≥ 0.9 for every read), and the server process\'s CPU per request over each (medians of the same rounds) shows what REST costs beyond bare; `HTTP_READS=retrieveMemories,...` runs just those reads, prints them and writes no results.',
    render: ([r]) => {
      const rows = list(r, 'rows')
      const calls = [...new Set(rows.map((x) => String(x['call'])))]
      const clients = [...new Set(rows.map((x) => num(x, 'clients') ?? 0))]
      const at = (call: string, n: number): Json | undefined => rows.find((x) => x['call'] === call && num(x, 'clients') === n)
      return [
        ...table(
          ['call', ...clients.flatMap((n) => [`${n} client${n === 1 ? '' : 's'}`, 'REST / bare', 'gRPC / REST'])],
          calls.map((call) => [
            call,
            ...clients.flatMap((n) => {
              const row = at(call, n)
              const both = (key: string): string => `${ratio(num(row, `grpc / rest ${key}`))} / ${ratio(num(row, `google grpc / rest ${key}`))}`
              const grpc = `${both('rps')}${n === 1 ? `; p50 ${both('p50')}` : ''}; server CPU ${both('server µs')}`
              return [['in-process rps', 'rest rps', 'grpc rps', 'google-rest rps', 'google-grpc rps'].map((k) => fmt(num(row, k))).join(' / '), ratio(num(row, 'rest / bare rps')), row === undefined ? '' : grpc]
            }),
          ]),
        ),
        '',
        ...(() => {
          // Reads at 16 clients, a column each: REST / bare requests per second, the median ratio, and the rounds' lowest and highest.
          const reads = list(r, 'smallReads')
          if (reads.length === 0) return []
          const rounds = (x: Json): number[] => String(x['rest / bare, each round'] ?? '').split(' ').map(Number)
          return [
            ...table(
              [`read, ${fmt(num(reads[0], 'clients'))} clients`, ...reads.map((x) => String(x['call']))],
              [
                ['REST / bare (rps)', ...reads.map((x) => `${ratio(num(x, 'rest / bare rps'))} (${fmt(num(x, 'rest rps'))} / ${fmt(num(x, 'bare rps'))})`)],
                [
                  'rounds, lowest – highest; server CPU µs per request, REST / bare',
                  ...reads.map((x) => `${Math.min(...rounds(x)).toFixed(2)} – ${Math.max(...rounds(x)).toFixed(2)}${x['rest server µs'] === undefined ? '' : `; ${(num(x, 'rest server µs') ?? NaN).toFixed(0)} / ${(num(x, 'bare server µs') ?? NaN).toFixed(0)}`}`),
                ],
              ],
            ),
            '',
          ]
        })(),
      ]
    },
  },
  {
    name: 'durability',
    data: ([r]) => {
      const rec = obj(r, 'recovery')
      const kills = obj(r, 'kills')
      // A Memory Bank's checkpoints (bankCheckpoints): in the line, the page holds no more tables.
      const bank = list(r, 'bankCheckpoints').map((b) => `A Memory Bank of ${fmt(num(b, 'memories'))} memories (state.json ${fmt(num(b, 'stateMB'))} MB) checkpoints in ${fmt(num(b, 'written ms'))} ms after a memory is written, ${fmt(num(b, 'linked ms'))} ms after a write elsewhere (state.json linked)`)
      return `recovery: ${fmt(num(rec, 'replayed'))} of ${fmt(num(rec, 'logged'))} logged writes replayed, restart ${fmt((num(rec, 'restartMs') ?? NaN) / 1000)} s; kills: ${fmt(num(kills, 'kills'))} SIGKILLs, ${fmt(num(kills, 'acknowledged'))} acknowledged writes, ${fmt(num(kills, 'lost'))} lost.${bank.length > 0 ? ` ${bank.join('; ')}.` : ''}`
    },
    files: ['durability.json'],
    measures: 'what `--data` costs in write throughput, what a checkpoint pauses, and what restarts and kills keep',
    peer: 'the same server without a data folder',
    method: 'The load generator shares the process and its cores with the server (hashing embedder, so the figures are the persistence\'s); medians of interleaved rounds after a warm-up.',
    render: ([r]) => {
      const cp = list(r, 'checkpoints')
      const sizes = [...new Set(cp.map((x) => num(x, 'chunks') ?? 0))]
      const slicings = [...new Set(cp.map((x) => String(x['slicing'])))]
      const rag = list(r, 'ragCheckpoints')
      return [
        ...pick(list(r, 'load'), [['mode', 'mode'], ['writesPerS', 'writes/s'], ['writeP50', 'write p50 ms'], ['writeP99', 'write p99 ms'], ['readP99', 'query p99 ms']]),
        '',
        // A RAG corpus's checkpoints (a folder of its own, ragCheckpoints) in the same rows, by size.
        ...table(
          ['chunks', 'folder MB', ...slicings.flatMap((x) => [`${x}: checkpoint ms`, 'longest pause ms']), 'a RAG corpus instead: after a write to it, ms', 'after a memory written (corpus linked), ms'],
          [...new Set([...sizes, ...rag.map((x) => num(x, 'chunks') ?? 0)])].sort((a, b) => a - b).map((n) => {
            const g = rag.find((x) => num(x, 'chunks') === n)
            return [fmt(n), fmt(num(cp.find((x) => num(x, 'chunks') === n), 'folderMB')), ...slicings.flatMap((x) => { const c = cp.find((y) => num(y, 'chunks') === n && y['slicing'] === x); return [fmt(num(c, 'checkpointMs')), fmt(num(c, 'longestPauseMs'))] }), fmt(num(g, 'written ms')), fmt(num(g, 'linked ms'))]
          }),
        ),
        '',
      ]
    },
  },
  {
    name: 'file-load',
    files: ['file-load.json'],
    measures: "what reading hostile files costs other requests: a PDF whose content stream inflates to 100 MB, a 25 MB text upload and a `file://` import of both, all at once, on a spawned `quarry serve` (default GloVe embedder and file bounds)",
    peer: 'the same calls on the idle server just before (target: p99 under 100 ms while the files are read)',
    method: 'Another client calls `GET /v1beta/corpora` and a top-3 retrieveContexts on a small corpus one after another with a 10 ms pause; the inputs are generated (zlib, seeded words).',
    data: ([r]) => {
      const inputs = obj(r, 'inputs')
      const outcome = obj(r, 'outcome')
      const load = obj(r, 'loadAverage')
      return `PDF ${fmt(num(inputs, 'pdfBytes'))} bytes (inflating to ${fmt(num(inputs, 'pdfInflatedBytes'))}), text ${fmt(num(inputs, 'textBytes'))} bytes; the files took ${fmt(num(r, 'loadSeconds'))} s, the machine's load average ${fmt(num(load, 'before'))} before and ${fmt(num(load, 'after'))} after. PDF upload: ${short(String(outcome['pdfUpload'] ?? NOT_RECORDED))}; text upload: ${String(outcome['textUpload'] ?? NOT_RECORDED)}.`
    },
    render: ([r]) => [...pick(list(r, 'rows'), [['call', 'call'], ['phase', 'while'], ['n', 'calls'], ['p50 ms', 'p50 ms'], ['p99 ms', 'p99 ms'], ['max ms', 'slowest ms']]), ''],
  },
  {
    name: 'memory',
    files: ['memory.json'],
    measures: 'bytes per record: growth of V8 heap, external memory and RSS after two forced GCs',
    peer: 'hnswlib-node (its graph shows only in RSS), MiniSearch, and plain objects holding the metadata',
    method: 'Each case builds one structure in a child process of its own; inputs are made before the baseline. Figures are bytes per record.',
    data: ([r]) => (typeof r?.['note'] === 'string' ? `${r['note']}.` : undefined),
    render: ([r]) => {
      const rows = list(r, 'results')
      const sizes = [...new Set(rows.map((x) => num(x, 'n') ?? 0))].sort((a, b) => a - b)
      const cases = [...new Set(rows.map((x) => String(x['case'])))]
      const at = (c: string, n: number): Json | undefined => rows.find((x) => x['case'] === c && num(x, 'n') === n)
      return [
        ...table(['case', ...sizes.flatMap((n) => [`heap @${fmt(n)}`, 'external', 'RSS'])], cases.map((c) => [c, ...sizes.flatMap((n) => ['heap', 'external', 'rss'].map((k) => fmt(num(at(c, n), k))))])),
        '',
      ]
    },
  },
]

function machine(r: Json): string {
  const node = typeof r['node'] === 'string' ? `Node ${r['node']}` : `Node ${NOT_RECORDED}`
  const cpus = num(r, 'cpus')
  return `${node}, ${cpus === undefined ? `cpus ${NOT_RECORDED}` : `${cpus} cpus`}`
}

const HEADER = `# Benchmarks

<!-- Generated by \`pnpm bench:readme\` (bench/readme.ts) from bench/results/*.json: edit those, not this. -->

\`npx -y pnpm@12.4.2 bench [suite ...] [--quick]\` runs the suites (all when none is named; one file each in \`bench/suites/\`, shared helpers in \`bench/lib/\`) and writes \`bench/results/<suite>.json\` and a plot; \`--quick\` runs small sizes into \`results/quick/\`. \`npx -y pnpm@12.4.2 bench:readme\` then rewrites this page from the result files.

Method, for every suite: the machine is shared and noisy, so engines compared side by side run in one process on seeded data (each suite in a process of its own, when one command names several), interleaved in chunks in a seeded random order, and a ratio is the median of paired per-chunk or per-round ratios: it holds where absolute times do not. Ground truth comes from Quarry's exact path (itself checked against a plain brute force in the tests), cached in \`~/.cache/quarry/bench\` (or \`$QUARRY_CACHE_DIR\`). Only the quality suites read \`../shared\`, and they skip without it. Earlier runs, and why figures moved, are in git history.
`

/** The README for the results in `resultsDir`. */
export function renderBenchReadme(resultsDir: string): string {
  const out = [HEADER]
  for (const suite of SUITES) {
    const results = suite.files.filter((f) => existsSync(join(resultsDir, f))).map((f) => JSON.parse(readFileSync(join(resultsDir, f), 'utf8')) as Json)
    const first = results[0]
    const recorded = first === undefined ? 'no results recorded' : `${typeof first['date'] === 'string' ? `recorded ${first['date'].slice(0, 10)}` : `date ${NOT_RECORDED}`}; ${machine(first)}`
    // One bullet for what and how: the page stays under 250 lines as suites are added.
    out.push(`## ${suite.name}`, `- Measures ${suite.measures}; against ${suite.peer}. Method: ${suite.method} Run \`${suite.command ?? `${RUN} ${suite.name}`}\`; ${recorded}.`)
    const data = first === undefined ? undefined : suite.data?.(results)
    if (data !== undefined) out.push(`- Data: ${data}`)
    out.push('')
    if (first !== undefined) out.push(...suite.render(results))
  }
  return `${out.join('\n').replace(/\n+$/, '')}\n`
}

/** Where docs/filters.md's generated crossover figures start and end (the prose around them is the page's). */
export const CROSSOVER_START = '<!-- crossover: generated by `pnpm bench:readme` from bench/results/filtered.json -->'
export const CROSSOVER_END = '<!-- crossover: end -->'

/** The forced strategies of `bench filtered`'s crossover, by their key in the results, with their column headings. */
const CROSSOVER_COLUMNS: readonly (readonly [string, string])[] = [
  ['exact-filtered', 'exact scan of the passing rows'],
  ['hnsw-filtered', 'graph within the bitset'],
  ['hnsw-postfilter', 'post-filtered graph'],
  ['function exact-filtered', 'function: evaluated, then scanned'],
  ['function hnsw-postfilter', 'function: post-filtered graph'],
]

/**
 * docs/filters.md's crossover block: the p50 ms of each forced strategy by rows passing, from
 * filtered.json's `crossover` (its dataset named), then where recall fell below 1 and where a
 * forced strategy ran another (a fallback), so the page says only what the committed run holds.
 */
export function renderCrossover(filtered: Json): string {
  const [name, rowsOf] = Object.entries(obj(filtered, 'crossover'))[0] ?? ['', []]
  const rows = Array.isArray(rowsOf) ? rowsOf.filter(isObject) : []
  if (rows.length === 0) throw new Error('filtered.json holds no crossover rows: run `pnpm bench filtered` in full (the crossover is measured on clustered-64d-100k)')
  const at = (r: Json, key: string): Json => obj(obj(r, 'strategies'), key)
  // The dataset's own date: a run of some datasets only (FILTERED_SETS) leaves the others' figures, and dates, as they were.
  const date = obj(filtered, 'datasetDates')[name] ?? filtered['date']
  const lines = [
    `p50 ms on ${name} (${typeof date === 'string' ? `recorded ${date.slice(0, 10)}` : `date ${NOT_RECORDED}`}):`,
    '',
    ...table(['passing', ...CROSSOVER_COLUMNS.map(([, label]) => label)], rows.map((r) => [`${fmt(num(r, 'passing'))} (${pct(num(r, 'selectivity'))})`, ...CROSSOVER_COLUMNS.map(([key]) => fmt(num(at(r, key), 'p50ms')))])),
    '',
  ]
  // A recall not recorded is said so, not taken for 1.
  const lower = rows.flatMap((r) => CROSSOVER_COLUMNS.filter(([key]) => (num(at(r, key), 'recall') ?? 0) < 1).map(([key, label]) => `${label} at ${pct(num(r, 'selectivity'))} (${num(at(r, key), 'recall') === undefined ? NOT_RECORDED : fmt(num(at(r, key), 'recall'))})`))
  const fellBack = rows.flatMap((r) =>
    CROSSOVER_COLUMNS.flatMap(([key, label]) => {
      const other = Object.keys(obj(at(r, key), 'ran')).filter((ran) => ran !== key.replace(/^function /, ''))
      return other.length === 0 ? [] : [`${label} at ${pct(num(r, 'selectivity'))} (ran ${other.join(', ')})`]
    }),
  )
  lines.push(`Recall is 1 ${lower.length === 0 ? 'everywhere' : `but for ${lower.join('; ')}`}. ${fellBack.length === 0 ? 'No forced strategy fell back to another.' : `Fell back, finding too few: ${fellBack.join('; ')}.`}`)
  return lines.join('\n')
}

/** `page` with its crossover block replaced by {@link renderCrossover}'s; throws when the markers are missing. */
export function withCrossover(page: string, filtered: Json): string {
  const start = page.indexOf(CROSSOVER_START)
  const end = page.indexOf(CROSSOVER_END)
  if (start < 0 || end < start) throw new Error(`docs/filters.md lacks the crossover markers (${CROSSOVER_START} … ${CROSSOVER_END})`)
  return `${page.slice(0, start + CROSSOVER_START.length)}\n${renderCrossover(filtered)}\n${page.slice(end)}`
}

const BENCH = dirname(fileURLToPath(import.meta.url))
const FILTERS_DOC = join(BENCH, '..', 'docs', 'filters.md')

/** Rewrites bench/README.md, and docs/filters.md's crossover block, from the result files in `resultsDir`. */
export function writeResultPages(resultsDir: string): void {
  writeFileSync(join(BENCH, 'README.md'), renderBenchReadme(resultsDir))
  const filtered = join(resultsDir, 'filtered.json')
  if (existsSync(filtered)) writeFileSync(FILTERS_DOC, withCrossover(readFileSync(FILTERS_DOC, 'utf8'), JSON.parse(readFileSync(filtered, 'utf8')) as Json))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeResultPages(join(BENCH, 'results'))
