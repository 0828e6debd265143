import { HNSW_DEFAULTS, type HnswOptions, type ResolvedHnswOptions } from '../dense/hnsw.js'
import { QuarryError, describe, rejectUnknownOptions } from '../errors.js'
import { METRICS, type Metric } from '../metric/metric.js'
import { PLANNER_DEFAULTS, type PlannerOptions, type ResolvedPlannerOptions } from '../dense/planner.js'
import { SCAN_DEFAULTS, type ResolvedScanOptions, type ScanOptions } from '../dense/scan-pool.js'
import { BM25_DEFAULTS, type Bm25Params } from '../sparse/bm25.js'
import { resolveAnalyzerOptions, type AnalyzerOptions, type ResolvedAnalyzerOptions } from '../text/analyzer-options.js'

/** Full-text (BM25) options. */
export interface TextOptions {
  /** How text becomes terms (tokenizer, lowercase, accents, stop words, stemming). */
  analyzer?: AnalyzerOptions
  /** BM25 parameters. @defaultValue { k1: 1.2, b: 0.75 } (Lucene's) */
  bm25?: { k1?: number; b?: number }
  /** Boosts of named text fields (records may give `text` as { title, body, ... }). @defaultValue every field boost 1 */
  fields?: Record<string, { boost?: number }>
}

export interface ResolvedTextOptions {
  readonly analyzer: ResolvedAnalyzerOptions
  readonly bm25: Bm25Params
  readonly fields: Readonly<Record<string, { readonly boost: number }>>
}

/** Options of {@link createIndex}. Give `dimensions` for vectors; omit it for a text-only index. */
export interface IndexOptions {
  /** Length of every vector, 1 to 65536; omit for a text-only index. */
  dimensions?: number
  /** Distance metric. @defaultValue 'cosine' */
  metric?: Metric
  /** 'hnsw': approximate graph search with an exact path for small or narrow searches; 'exact': brute force only (no native module needed). @defaultValue 'hnsw' */
  dense?: 'hnsw' | 'exact'
  /** HNSW graph parameters. */
  hnsw?: HnswOptions
  /** Planner thresholds. */
  planner?: PlannerOptions
  /** Threads of exact scans. */
  scan?: ScanOptions
  /** Full-text options. */
  text?: TextOptions
  /**
   * The model that turns text into vectors for `ingest` and `query` (dimensions default to its
   * own). The index records its name and dimensions and refuses a different one later.
   */
  embedder?: { readonly name: string; readonly dimensions: number }
}

export interface ResolvedIndexOptions {
  /** Undefined for a text-only index. */
  readonly dimensions: number | undefined
  readonly metric: Metric
  readonly dense: 'hnsw' | 'exact'
  readonly hnsw: ResolvedHnswOptions
  readonly planner: ResolvedPlannerOptions
  readonly scan: ResolvedScanOptions
  readonly text: ResolvedTextOptions
  /** Name and dimensions of the embedder that built the index, when one did. */
  readonly embedder?: { readonly name: string; readonly dimensions: number }
}

function fail(path: string, expected: string, received: unknown): never {
  throw new QuarryError('INVALID_OPTION', `${path} must be ${expected}; received ${describe(received)}.`, { path })
}

/** Validates an integer option and returns it or its default. */
function intOption(value: unknown, path: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(path, `an integer from ${min} to ${max}`, value)
  }
  return value
}

function fractionOption(value: unknown, path: string, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) fail(path, 'a number from 0 to 1', value)
  return value
}

function objectOption(value: unknown, path: string): Record<string, unknown> {
  if (value === undefined) return {}
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(path, 'an object', value)
  return value as Record<string, unknown>
}

/** Validates `createIndex` options up front and fills in defaults. */
export function resolveIndexOptions(options: unknown): ResolvedIndexOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    fail('options', 'an object like { dimensions: 384, metric: "cosine" }', options)
  }
  const o = options as Record<string, unknown>
  rejectUnknownOptions(o, ['dimensions', 'metric', 'dense', 'hnsw', 'planner', 'scan', 'text', 'embedder'], '')
  const embedder = o.embedder === undefined ? undefined : embedderIdentity(o.embedder)
  const dimensions = o.dimensions === undefined ? embedder?.dimensions : intOption(o.dimensions, 'dimensions', 1, 65536, 0)
  if (embedder && dimensions !== embedder.dimensions) {
    throw new QuarryError('INVALID_OPTION', `dimensions (${String(dimensions)}) differ from the embedder's (${embedder.dimensions}); leave dimensions out to take the embedder's.`, { path: 'dimensions' })
  }
  const metric = o.metric ?? 'cosine'
  if (typeof metric !== 'string' || !(METRICS as readonly string[]).includes(metric)) fail('metric', `one of ${METRICS.join(', ')}`, metric)
  const dense = o.dense ?? 'hnsw'
  if (dense !== 'hnsw' && dense !== 'exact') fail('dense', '"hnsw" or "exact"', dense)
  const h = objectOption(o.hnsw, 'hnsw')
  rejectUnknownOptions(h, ['m', 'efConstruction', 'efSearch', 'seed'], 'hnsw')
  const p = objectOption(o.planner, 'planner')
  rejectUnknownOptions(p, ['exactBelow', 'exactFilterMax', 'postFilterAbove'], 'planner')
  // Frozen through: `index.options` is the index's own (a change there would change how it
  // scores, stores and saves, unchecked), so it can be read and copied but not changed.
  return deepFreeze({
    dimensions,
    metric: metric as Metric,
    dense,
    hnsw: {
      m: intOption(h.m, 'hnsw.m', 2, 128, HNSW_DEFAULTS.m),
      efConstruction: intOption(h.efConstruction, 'hnsw.efConstruction', 1, 4096, HNSW_DEFAULTS.efConstruction),
      efSearch: intOption(h.efSearch, 'hnsw.efSearch', 1, 65536, HNSW_DEFAULTS.efSearch),
      seed: intOption(h.seed, 'hnsw.seed', 0, 0x7fff_ffff, HNSW_DEFAULTS.seed),
    },
    text: resolveTextOptions(o.text),
    ...(embedder ? { embedder } : {}),
    planner: {
      exactBelow: intOption(p.exactBelow, 'planner.exactBelow', 0, Number.MAX_SAFE_INTEGER, PLANNER_DEFAULTS.exactBelow),
      exactFilterMax: intOption(p.exactFilterMax, 'planner.exactFilterMax', 0, Number.MAX_SAFE_INTEGER, PLANNER_DEFAULTS.exactFilterMax),
      postFilterAbove: fractionOption(p.postFilterAbove, 'planner.postFilterAbove', PLANNER_DEFAULTS.postFilterAbove),
    },
    scan: resolveScanOptions(o.scan),
  })
}

/** `value` with every object in it frozen (resolved options: plain data, arrays and objects). */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

function workerCount(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 64) fail('scan.workers', '"auto" or an integer from 0 (no worker threads) to 64', value)
  return value
}

/** Validates `scan`: workers 'auto' or 0 to 64, parallelAbove a non-negative integer. */
function resolveScanOptions(value: unknown): ResolvedScanOptions {
  const s = objectOption(value, 'scan')
  rejectUnknownOptions(s, ['workers', 'parallelAbove'], 'scan')
  return {
    workers: s.workers === undefined || s.workers === 'auto' ? SCAN_DEFAULTS.workers : workerCount(s.workers),
    parallelAbove: intOption(s.parallelAbove, 'scan.parallelAbove', 0, Number.MAX_SAFE_INTEGER, SCAN_DEFAULTS.parallelAbove),
  }
}

function finite(value: unknown, path: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) fail(path, `a number from ${min} to ${max}`, value)
  return value
}

/** Validates the full-text options (BM25 k1 in [0, 10], b in [0, 1], boosts > 0). */
function resolveTextOptions(value: unknown): ResolvedTextOptions {
  const t = objectOption(value, 'text')
  rejectUnknownOptions(t, ['analyzer', 'bm25', 'fields'], 'text')
  const bm25 = objectOption(t.bm25, 'text.bm25')
  rejectUnknownOptions(bm25, ['k1', 'b'], 'text.bm25')
  const fieldsIn = objectOption(t.fields, 'text.fields')
  const fields: Record<string, { boost: number }> = {}
  for (const [name, spec] of Object.entries(fieldsIn)) {
    const f = objectOption(spec, `text.fields.${name}`)
    rejectUnknownOptions(f, ['boost'], `text.fields.${name}`)
    const boost = finite(f.boost, `text.fields.${name}.boost`, 0, 1000, 1)
    if (boost === 0) fail(`text.fields.${name}.boost`, 'a number above 0 (leave the field out of the record instead)', 0)
    fields[name] = { boost }
  }
  return {
    analyzer: resolveAnalyzerOptions(t.analyzer),
    bm25: { k1: finite(bm25.k1, 'text.bm25.k1', 0, 10, BM25_DEFAULTS.k1), b: finite(bm25.b, 'text.bm25.b', 0, 1, BM25_DEFAULTS.b) },
    fields,
  }
}

/** The identity of an embedder: its name and dimensions (what a snapshot records). */
function embedderIdentity(value: unknown): { name: string; dimensions: number } {
  const e = objectOption(value, 'embedder')
  if (typeof e.name !== 'string' || e.name === '') fail('embedder.name', 'a non-empty string naming the model', e.name)
  // Required, unlike the index's own dimensions: an embedder without them would make vectors of no length.
  if (e.dimensions === undefined) fail('embedder.dimensions', 'the length of the vectors the embedder makes, an integer from 1 to 65536', undefined)
  const dimensions = intOption(e.dimensions, 'embedder.dimensions', 1, 65536, 0)
  // Left out, the index records the name and dimensions alone (ingest and query then ask for an
  // embedder); given as anything but a function, it would be dropped without a word.
  if (e.embed !== undefined && typeof e.embed !== 'function') fail('embedder.embed', 'a function embed(texts) returning a Promise of Float32Arrays', e.embed)
  return { name: e.name, dimensions }
}
