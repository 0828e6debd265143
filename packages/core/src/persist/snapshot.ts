import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { HnswGraph } from '../dense/hnsw.js'
import { VectorStore } from '../dense/vector-store.js'
import { resolveIndexOptions, type ResolvedIndexOptions } from '../engine/options.js'
import { validateMetadata, validateText, type Metadata, type TextInput } from '../engine/record.js'
import { emptyState, idTieBreak, type IndexState } from '../engine/state.js'
import { QuarryError } from '../errors.js'
import { IdMap, type Label } from '../ids.js'
import { metricOps } from '../metric/metric.js'
import type { Embedder } from '../embed/embedder.js'
import { ChunkReader, ChunkWriter } from './files.js'
import { readCurrent, writeCurrent } from './generations.js'

/** Snapshot format version; bumped on any incompatible change. */
export const SNAPSHOT_VERSION = 3

/** A record with no text has no forward entry; written as this count. */
const NO_TEXT = 0xffff_ffff

interface FileSum {
  bytes: number
  sha256: string
}

interface Manifest {
  format: 'quarry-index'
  version: number
  options: ResolvedIndexOptions
  extent: number
  /** The text index's running total length, verbatim (see SparseIndex.restoreTotalLength). */
  textTotalLength: number
  files: Record<string, FileSum>
}

/**
 * Writes the index to `dir` as a new snapshot generation (`dir/snapshot-N/`), then switches
 * `dir/CURRENT` to it with an atomic rename, then deletes older generations. A crash at any
 * point leaves CURRENT naming a complete snapshot (the previous one until the switch). Every file
 * carries its size and sha256 in the manifest; nothing is built as one whole-index string.
 */
export function writeSnapshot(state: IndexState, dir: string): void {
  const root = resolve(dir)
  mkdirSync(root, { recursive: true })
  const previous = readCurrent(root)
  const generation = `snapshot-${String((previous?.number ?? 0) + 1).padStart(6, '0')}`
  const tmp = join(root, `.${generation}.tmp-${process.pid}`)
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(tmp)
  try {
    const files = writeFiles(state, tmp)
    const manifest: Manifest = {
      format: 'quarry-index',
      version: SNAPSHOT_VERSION,
      options: state.options,
      extent: state.ids.extent,
      textTotalLength: state.sparse.totalLength,
      files,
    }
    // The manifest is written last: a folder without one is never a snapshot.
    const m = new ChunkWriter(join(tmp, 'manifest.json'))
    m.text(JSON.stringify(manifest))
    m.close()
    // A generation folder that CURRENT does not name is debris of a crashed save: replace it.
    rmSync(join(root, generation), { recursive: true, force: true })
    renameSync(tmp, join(root, generation))
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true })
    throw error
  }
  writeCurrent(root, generation)
  for (const entry of readdirSync(root)) {
    if (entry !== generation && (entry.startsWith('snapshot-') || entry.startsWith('.snapshot-'))) rmSync(join(root, entry), { recursive: true, force: true })
  }
}

function writeFiles(state: IndexState, dir: string): Record<string, FileSum> {
  const extent = state.ids.extent
  const files: Record<string, FileSum> = {}
  const jsonl = (name: string, line: (label: number) => unknown): void => {
    const w = new ChunkWriter(join(dir, name))
    for (let label = 0; label < extent; label++) w.text(`${JSON.stringify(line(label))}\n`)
    files[name] = w.close()
  }
  jsonl('ids.jsonl', (label) => state.ids.idOf(label as Label) ?? null)
  // Dates are tagged so they come back as Dates (JSON would turn them into strings).
  jsonl('metadata.jsonl', (label) => {
    const m = state.metadata[label]
    return m ? Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v instanceof Date ? { $datetime: v.toISOString() } : v])) : null
  })
  jsonl('texts.jsonl', (label) => state.texts[label] ?? null)
  const terms = new ChunkWriter(join(dir, 'terms.jsonl'))
  for (const term of state.sparse.terms) terms.text(`${JSON.stringify(term)}\n`)
  files['terms.jsonl'] = terms.close()
  // Forward index: per label a u32 count (NO_TEXT when the record has no text), then the exact
  // float64 length, the term ids and the tfs.
  const forward = new ChunkWriter(join(dir, 'forward.bin'))
  for (let label = 0; label < extent; label++) {
    const entry = state.sparse.forward(label as Label)
    if (!entry) {
      forward.bytes(new Uint8Array(new Uint32Array([NO_TEXT]).buffer))
      continue
    }
    forward.bytes(new Uint8Array(new Uint32Array([entry.ids.length]).buffer))
    forward.bytes(new Uint8Array(new Float64Array([state.sparse.lengthOf(label as Label)]).buffer))
    forward.bytes(new Uint8Array(entry.ids.buffer, entry.ids.byteOffset, entry.ids.byteLength))
    forward.bytes(new Uint8Array(entry.tfs.buffer, entry.tfs.byteOffset, entry.tfs.byteLength))
  }
  files['forward.bin'] = forward.close()
  if (state.store) {
    const v = new ChunkWriter(join(dir, 'vectors.f32'))
    const rows = state.store.slice(extent)
    v.bytes(new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength))
    files['vectors.f32'] = v.close()
  }
  if (state.graph) {
    state.graph.save(join(dir, 'hnsw.bin'))
    const r = new ChunkReader(join(dir, 'hnsw.bin'))
    files['hnsw.bin'] = r.close()
  }
  return files
}

function corrupt(dir: string, what: string, cause?: unknown): QuarryError {
  return new QuarryError('INVALID_SNAPSHOT', `${dir} is not a readable Quarry index: ${what}. Restore it from a backup or save the index again with index.save(dir).`, cause === undefined ? {} : { cause })
}

/**
 * Reads the current snapshot of `dir` into a fresh index state. Every file's size and sha256 are
 * checked; a missing, truncated, corrupted or other-version snapshot is refused with
 * INVALID_SNAPSHOT and nothing is returned half-loaded. An `embedder` must be the one the index was
 * built with (checked before any data file is read).
 */
export function readSnapshot(dir: string, embedder: Embedder | undefined): IndexState {
  const root = resolve(dir)
  const { folder, manifest, options } = readManifest(root)
  if (embedder) checkEmbedder(root, options, embedder)
  const files = new SnapshotFiles(root, folder, manifest)
  const extent = manifest.extent
  const records = readRecords(files, extent)
  const dims = options.dimensions
  const rows = dims === undefined ? undefined : readVectors(files, extent * dims)
  const graph = dims !== undefined && options.dense === 'hnsw' ? readGraph(files, options, dims) : undefined
  const state = stateOf(options, records.ids, rows, graph)
  restoreRecords(files, state, records, extent)
  if (typeof manifest.textTotalLength === 'number') state.sparse.restoreTotalLength(manifest.textTotalLength)
  return state
}

/** The CURRENT generation's folder and manifest, format and version checked, options resolved. */
function readManifest(root: string): { folder: string; manifest: Manifest; options: ResolvedIndexOptions } {
  const current = readCurrent(root)
  if (!current) throw corrupt(root, 'it has no CURRENT snapshot (was it saved with index.save?)')
  const folder = join(root, current.name)
  let manifest: Manifest
  try {
    manifest = JSON.parse(readFileSync(join(folder, 'manifest.json'), 'utf8')) as Manifest
  } catch (cause) {
    throw corrupt(root, `${current.name}/manifest.json is missing or not JSON`, cause)
  }
  if (manifest.format !== 'quarry-index') throw corrupt(root, 'manifest.json is not a Quarry manifest')
  if (manifest.version !== SNAPSHOT_VERSION) {
    throw corrupt(root, `snapshot version ${String(manifest.version)} is not supported by this Quarry (reads version ${SNAPSHOT_VERSION})`)
  }
  return { folder, manifest, options: resolveIndexOptions(manifest.options) }
}

/** Refuses an embedder other than the one the index was built with (name and dimensions). */
function checkEmbedder(root: string, options: ResolvedIndexOptions, embedder: Embedder): void {
  const recorded = options.embedder
  if (!recorded || recorded.name !== embedder.name || recorded.dimensions !== embedder.dimensions) {
    throw new QuarryError(
      'EMBEDDER_MISMATCH',
      `the index in ${root} was built ${recorded ? `with embedder "${recorded.name}" (${recorded.dimensions} dimensions)` : 'without an embedder'}; this one is "${embedder.name}" (${embedder.dimensions}). Load it with the embedder that built it, or re-ingest.`,
      { path: 'embedder' },
    )
  }
}

/** The files of one snapshot, each opened only if the manifest lists it and checked against its size and sha256. */
class SnapshotFiles {
  readonly root: string
  readonly #folder: string
  readonly #manifest: Manifest

  constructor(root: string, folder: string, manifest: Manifest) {
    this.root = root
    this.#folder = folder
    this.#manifest = manifest
  }

  path(name: string): string {
    return join(this.#folder, name)
  }

  open(name: string): ChunkReader {
    if (!this.#manifest.files[name] || !existsSync(this.path(name))) throw corrupt(this.root, `${name} is missing`)
    return new ChunkReader(this.path(name))
  }

  /** Closes the reader and compares what it read with the manifest. */
  verify(name: string, reader: ChunkReader): void {
    const got = reader.close()
    const want = this.#manifest.files[name] as FileSum
    if (got.bytes !== want.bytes) throw corrupt(this.root, `${name} has ${got.bytes} bytes, the manifest says ${want.bytes} (truncated?)`)
    if (got.sha256 !== want.sha256) throw corrupt(this.root, `${name} does not match its checksum (corrupted)`)
  }

  /** A JSON-lines file, each line checked; `lines`, when given, is the count it must have. */
  jsonl<T>(name: string, lines: number | undefined, check: (value: unknown, label: number) => T): T[] {
    const reader = this.open(name)
    const out: T[] = []
    try {
      for (const line of reader.lines()) out.push(check(JSON.parse(line), out.length))
    } catch (cause) {
      if (cause instanceof QuarryError) throw cause
      throw corrupt(this.root, `${name} line ${out.length + 1} is not valid`, cause)
    } finally {
      this.verify(name, reader)
    }
    if (lines !== undefined && out.length !== lines) throw corrupt(this.root, `${name} has ${out.length} lines, expected ${lines}`)
    return out
  }
}

/** The per-label JSON-lines files, and the vocabulary the forward index refers to by term id. */
interface StoredRecords {
  readonly ids: (string | null)[]
  readonly metadata: (Readonly<Metadata> | undefined)[]
  readonly texts: (TextInput | undefined)[]
  readonly terms: string[]
}

function readRecords(files: SnapshotFiles, extent: number): StoredRecords {
  const ids = files.jsonl('ids.jsonl', extent, (v) => {
    if (v !== null && typeof v !== 'string') throw corrupt(files.root, 'ids.jsonl holds a non-string id')
    return v
  })
  const metadata = files.jsonl('metadata.jsonl', extent, (v, label) => (ids[label] === null ? undefined : validateMetadata(reviveDates(v ?? undefined))))
  const texts = files.jsonl('texts.jsonl', extent, (v): TextInput | undefined => validateText(v ?? undefined))
  const terms = files.jsonl('terms.jsonl', undefined, (v) => String(v))
  return { ids, metadata, texts, terms }
}

/** The vector rows, `length` floats. */
function readVectors(files: SnapshotFiles, length: number): Float32Array {
  const reader = files.open('vectors.f32')
  const rows = new Float32Array(length)
  reader.read(new Uint8Array(rows.buffer))
  files.verify('vectors.f32', reader)
  return rows
}

/** The stored HNSW graph (checked first: hnswlib reads the file itself). */
function readGraph(files: SnapshotFiles, options: ResolvedIndexOptions, dims: number): HnswGraph {
  files.verify('hnsw.bin', files.open('hnsw.bin'))
  try {
    return HnswGraph.load(files.path('hnsw.bin'), metricOps(options.metric).hnswSpace, dims, options.hnsw)
  } catch (cause) {
    if (cause instanceof QuarryError) throw cause
    throw corrupt(files.root, 'hnsw.bin could not be read', cause)
  }
}

/** A fresh state with the stored ids, vector rows and graph; records are restored into it next. */
function stateOf(options: ResolvedIndexOptions, ids: readonly (string | null)[], rows: Float32Array | undefined, graph: HnswGraph | undefined): IndexState {
  const dims = options.dimensions
  const state = emptyState(options, graph)
  const idMap = IdMap.fromJSON(ids)
  return { ...state, ids: idMap, store: dims !== undefined && rows ? VectorStore.fromRows(dims, rows) : undefined, tie: idTieBreak(idMap) }
}

/**
 * Restores each label's metadata (and its value indexes), text and text-index entry, reading
 * forward.bin label by label (so text is never analyzed again).
 */
function restoreRecords(files: SnapshotFiles, state: IndexState, records: StoredRecords, extent: number): void {
  const { metadata, texts, terms } = records
  const forward = files.open('forward.bin')
  const word = new Uint32Array(1)
  for (let label = 0; label < extent; label++) {
    if (forward.read(new Uint8Array(word.buffer)) !== 4) throw corrupt(files.root, 'forward.bin is truncated')
    const count = word[0] as number
    const m = metadata[label]
    if (m !== undefined) {
      state.metadata[label] = m
      state.values.add(label, m)
    }
    state.texts[label] = texts[label]
    if (count === NO_TEXT) continue
    const length = new Float64Array(1)
    const termIds = new Uint32Array(count)
    const tfs = new Float32Array(count)
    if (forward.read(new Uint8Array(length.buffer)) !== 8 || forward.read(new Uint8Array(termIds.buffer)) !== count * 4 || forward.read(new Uint8Array(tfs.buffer)) !== count * 4) {
      throw corrupt(files.root, 'forward.bin is truncated')
    }
    state.sparse.restore(label as Label, terms, termIds, tfs, length[0] as number)
  }
  files.verify('forward.bin', forward)
}

/** Turns `{ $datetime: iso }` values back into Dates. */
function reviveDates(metadata: unknown): unknown {
  if (typeof metadata !== 'object' || metadata === null) return metadata
  return Object.fromEntries(
    Object.entries(metadata).map(([k, v]) => [k, typeof v === 'object' && v !== null && typeof (v as { $datetime?: unknown }).$datetime === 'string' ? new Date((v as { $datetime: string }).$datetime) : v]),
  )
}
