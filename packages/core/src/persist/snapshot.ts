import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { HnswGraph } from '../dense/hnsw.js'
import { VectorStore } from '../dense/vector-store.js'
import { QuarryError } from '../errors.js'
import { IdMap, type Label } from '../ids.js'
import { metricOps } from '../metric/metric.js'
import { resolveIndexOptions, type ResolvedIndexOptions } from '../engine/options.js'
import { emptyState, QuarryIndex } from '../engine/quarry-index.js'
import { validateMetadata, validateText } from '../engine/record.js'
import { sparseDocument } from '../engine/sparse-search.js'
import { idTieBreak } from '../engine/state.js'

/** Snapshot format version; bumped on any incompatible change. */
export const SNAPSHOT_VERSION = 2

interface Manifest {
  format: 'quarry-index'
  version: number
  options: ResolvedIndexOptions
  /** ids[label], null for free labels. */
  ids: (string | null)[]
  files: { vectors?: string; metadata: string; texts: string; graph?: string }
}

/**
 * Writes the index to `dir` as a versioned snapshot. The files are written to a sibling folder
 * first and swapped in by rename, so a crash leaves either the old snapshot or the new one.
 */
export function saveIndex(index: QuarryIndex, dir: string): void {
  const target = resolve(dir)
  const state = index.state
  const tmp = join(dirname(target), `.${basename(target)}.tmp-${process.pid}-${Date.now()}`)
  mkdirSync(tmp, { recursive: true })
  try {
    const extent = state.ids.extent
    if (state.store) {
      const vectors = state.store.slice(extent)
      writeFileSync(join(tmp, 'vectors.f32'), new Uint8Array(vectors.buffer, vectors.byteOffset, vectors.byteLength))
    }
    const metadata = Array.from({ length: extent }, (_, label) => state.metadata[label] ?? null)
    // Dates are tagged so they come back as Dates (JSON would turn them into strings).
    writeFileSync(join(tmp, 'metadata.json'), JSON.stringify(metadata, function (this: Record<string, unknown>, key: string, value: unknown) {
      const raw = this[key]
      return raw instanceof Date ? { $datetime: raw.toISOString() } : value
    }))
    // Texts, not postings: loading re-analyzes them with the saved analyzer options, which
    // rebuilds the BM25 statistics exactly.
    writeFileSync(join(tmp, 'texts.json'), JSON.stringify(Array.from({ length: extent }, (_, label) => state.texts[label] ?? null)))
    if (state.graph) state.graph.save(join(tmp, 'hnsw.bin'))
    const manifest: Manifest = {
      format: 'quarry-index',
      version: SNAPSHOT_VERSION,
      options: state.options,
      ids: state.ids.toJSON(),
      files: { ...(state.store ? { vectors: 'vectors.f32' } : {}), metadata: 'metadata.json', texts: 'texts.json', ...(state.graph ? { graph: 'hnsw.bin' } : {}) },
    }
    // The manifest is written last: a folder without one is never a snapshot.
    writeFileSync(join(tmp, 'manifest.json'), JSON.stringify(manifest))
    const old = `${tmp}.old`
    if (existsSync(target)) renameSync(target, old)
    renameSync(tmp, target)
    rmSync(old, { recursive: true, force: true })
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true })
    throw error
  }
}

function corrupt(dir: string, what: string, cause?: unknown): QuarryError {
  return new QuarryError('INVALID_SNAPSHOT', `${dir} is not a readable Quarry index: ${what}. Save the index again with index.save(dir).`, cause === undefined ? {} : { cause })
}

/** Reads an index written by `index.save(dir)`. */
export function loadIndex(dir: string): QuarryIndex {
  const target = resolve(dir)
  let manifest: Manifest
  try {
    manifest = JSON.parse(readFileSync(join(target, 'manifest.json'), 'utf8')) as Manifest
  } catch (cause) {
    throw corrupt(target, 'manifest.json is missing or not JSON', cause)
  }
  if (manifest.format !== 'quarry-index') throw corrupt(target, 'manifest.json is not a Quarry manifest')
  if (manifest.version !== SNAPSHOT_VERSION) {
    throw corrupt(target, `snapshot version ${String(manifest.version)} is not supported by this Quarry (reads version ${SNAPSHOT_VERSION})`)
  }
  const options = resolveIndexOptions(manifest.options)
  if (!Array.isArray(manifest.ids) || !manifest.ids.every((id) => id === null || typeof id === 'string')) throw corrupt(target, 'ids are malformed')
  const extent = manifest.ids.length
  const dims = options.dimensions
  let rows: Float32Array | undefined
  let metadataJson: unknown
  let textsJson: unknown
  try {
    if (dims !== undefined) {
      if (!manifest.files.vectors) throw new Error('no vectors file listed')
      const bytes = readFileSync(join(target, manifest.files.vectors))
      if (bytes.byteLength !== extent * dims * 4) throw corrupt(target, `vectors.f32 has ${bytes.byteLength} bytes, expected ${extent * dims * 4}`)
      // Copy into an aligned buffer: a Buffer's byteOffset need not be a multiple of 4.
      rows = new Float32Array(extent * dims)
      new Uint8Array(rows.buffer).set(bytes)
    }
    metadataJson = JSON.parse(readFileSync(join(target, manifest.files.metadata), 'utf8'))
    textsJson = JSON.parse(readFileSync(join(target, manifest.files.texts), 'utf8'))
  } catch (cause) {
    if (cause instanceof QuarryError) throw cause
    throw corrupt(target, 'a data file is missing or unreadable', cause)
  }
  if (!Array.isArray(metadataJson) || metadataJson.length !== extent) throw corrupt(target, 'metadata.json does not match the ids')
  if (!Array.isArray(textsJson) || textsJson.length !== extent) throw corrupt(target, 'texts.json does not match the ids')
  const ops = metricOps(options.metric)
  let graph: HnswGraph | undefined
  if (dims !== undefined && options.dense === 'hnsw') {
    if (!manifest.files.graph) throw corrupt(target, 'the HNSW graph file is not listed')
    try {
      graph = HnswGraph.load(join(target, manifest.files.graph), ops.hnswSpace, dims, options.hnsw)
    } catch (cause) {
      if (cause instanceof QuarryError) throw cause
      throw corrupt(target, 'hnsw.bin could not be read', cause)
    }
  }
  const state = emptyState(options, graph)
  const ids = IdMap.fromJSON(manifest.ids)
  const store = dims !== undefined && rows ? VectorStore.fromRows(dims, rows) : undefined
  const full = { ...state, ids, store, tie: idTieBreak(ids) }
  for (let label = 0; label < extent; label++) {
    if (manifest.ids[label] === null) continue
    const m: unknown = metadataJson[label]
    const metadata = validateMetadata(reviveDates(m ?? undefined))
    full.metadata[label] = metadata
    full.values.add(label, metadata)
    const text = validateText((textsJson as unknown[])[label] ?? undefined)
    full.texts[label] = text
    if (text !== undefined) full.sparse.set(label as Label, sparseDocument(full.analyzer, text, options.text))
  }
  return new QuarryIndex(full)
}

/** Turns `{ $datetime: iso }` values back into Dates. */
function reviveDates(metadata: unknown): unknown {
  if (typeof metadata !== 'object' || metadata === null) return metadata
  return Object.fromEntries(
    Object.entries(metadata).map(([k, v]) => [k, typeof v === 'object' && v !== null && typeof (v as { $datetime?: unknown }).$datetime === 'string' ? new Date((v as { $datetime: string }).$datetime) : v]),
  )
}
