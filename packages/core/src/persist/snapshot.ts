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
import { asUnreadable, openGeneration, unreadable, whileCurrentHolds, writeGeneration, type Generation, type GenerationFormat } from './generations.js'
import type { FileSum } from './manifest.js'

/** Snapshot format version; bumped on any incompatible change (4: the manifest carries its own checksum). */
export const SNAPSHOT_VERSION = 4

/** An index snapshot as a generation (generations.ts); version 3 (manifest without a seal) is still read. */
const INDEX_FORMAT: GenerationFormat = {
  format: 'quarry-index',
  version: SNAPSHOT_VERSION,
  unsealedVersions: [3],
  kind: 'Quarry index',
  remedy: 'Restore it from a backup or save the index again with index.save(dir).',
}

/** A record with no text has no forward entry; written as this count. */
const NO_TEXT = 0xffff_ffff

/** The manifest fields of an index, beside the generation's own (format, version, files). */
interface IndexFields {
  options: ResolvedIndexOptions
  extent: number
  /** The text index's running total length, verbatim (see SparseIndex.restoreTotalLength). */
  textTotalLength: number
}

/**
 * Writes the index to `dir` as a new generation (`dir/snapshot-N/`, see generations.ts): the
 * folder's lock taken, every file fsynced and listed with its size and sha256 in a sealed
 * manifest, CURRENT switched atomically, older generations removed after. Nothing is built as one
 * whole-index string.
 */
export function writeSnapshot(state: IndexState, dir: string): void {
  writeGeneration(dir, INDEX_FORMAT, (out) => {
    for (const [name, sum] of Object.entries(writeFiles(state, out.folder))) out.add(name, sum)
    const fields: IndexFields = { options: state.options, extent: state.ids.extent, textTotalLength: state.sparse.totalLength }
    return { ...fields }
  })
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

/**
 * Reads the current snapshot of `dir` into a fresh index state. The manifest's seal and every
 * file's size and sha256 are checked; a missing, truncated, altered or other-version snapshot
 * (or anything in it that is not a file) is refused with INVALID_SNAPSHOT naming the file, and
 * nothing is returned half-loaded. An `embedder` must be the one the index was built with
 * (checked before any data file is read).
 */
export function readSnapshot(dir: string, embedder: Embedder | undefined): IndexState {
  const root = resolve(dir)
  return whileCurrentHolds(root, () => {
    const files = openGeneration(root, INDEX_FORMAT)
    if (!files) throw unreadable(root, INDEX_FORMAT, 'it has no CURRENT snapshot (was it saved with index.save?)')
    files.pin()
    try {
      return readState(files, embedder)
    } catch (error) {
      throw asUnreadable(error, files)
    } finally {
      files.close()
    }
  })
}

function readState(files: Generation, embedder: Embedder | undefined): IndexState {
  const { options, extent, textTotalLength } = indexFields(files)
  if (embedder) checkEmbedder(files.root, options, embedder)
  const dims = options.dimensions
  // The graph first: hnswlib reads it by name, which a writer may remove once it has switched CURRENT.
  const graph = dims !== undefined && options.dense === 'hnsw' ? readGraph(files, options, dims) : undefined
  const records = readRecords(files, extent)
  const rows = dims === undefined ? undefined : readVectors(files, extent * dims)
  const state = stateOf(options, records.ids, rows, graph)
  restoreRecords(files, state, records, extent)
  if (textTotalLength !== undefined) state.sparse.restoreTotalLength(textTotalLength)
  return state
}

/** The index's fields of the manifest, checked (a version 3 manifest has no seal of its own). */
function indexFields(files: Generation): { options: ResolvedIndexOptions; extent: number; textTotalLength: number | undefined } {
  const m = files.manifest
  const fail = (what: string): QuarryError => unreadable(files.root, INDEX_FORMAT, `${files.name}/manifest.json ${what}`)
  if (typeof m.extent !== 'number' || !Number.isSafeInteger(m.extent) || m.extent < 0) throw fail('has an invalid extent')
  if (m.textTotalLength !== undefined && (typeof m.textTotalLength !== 'number' || !Number.isFinite(m.textTotalLength) || m.textTotalLength < 0)) throw fail('has an invalid text length')
  let options: ResolvedIndexOptions
  try {
    options = resolveIndexOptions(m.options as ResolvedIndexOptions)
  } catch {
    throw fail('holds invalid index options')
  }
  return { options, extent: m.extent, textTotalLength: m.textTotalLength as number | undefined }
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

/** A JSON-lines file, each line checked; `lines`, when given, is the count it must have. The file's checksum is checked whatever happens. */
function jsonl<T>(files: Generation, name: string, lines: number | undefined, check: (value: unknown, label: number) => T): T[] {
  const reader = files.open(name)
  const out: T[] = []
  const bad = (): QuarryError => unreadable(files.root, INDEX_FORMAT, `${files.name}/${name} line ${out.length + 1} is not valid`)
  let failure: unknown
  try {
    for (const line of reader.lines()) {
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch {
        // Not passed on as a cause: a parser's message quotes the data.
        throw bad()
      }
      out.push(check(value, out.length))
    }
  } catch (error) {
    failure = error instanceof QuarryError && error.code === 'INVALID_SNAPSHOT' ? error : bad()
  }
  // A checksum failure says more than a parse failure it caused.
  files.verify(name, reader)
  if (failure !== undefined) throw failure
  if (lines !== undefined && out.length !== lines) throw unreadable(files.root, INDEX_FORMAT, `${files.name}/${name} has ${out.length} lines, expected ${lines}`)
  return out
}

/** The per-label JSON-lines files, and the vocabulary the forward index refers to by term id. */
interface StoredRecords {
  readonly ids: (string | null)[]
  readonly metadata: (Readonly<Metadata> | undefined)[]
  readonly texts: (TextInput | undefined)[]
  readonly terms: string[]
}

function readRecords(files: Generation, extent: number): StoredRecords {
  const ids = jsonl(files, 'ids.jsonl', extent, (v) => {
    if (v !== null && typeof v !== 'string') throw unreadable(files.root, INDEX_FORMAT, `${files.name}/ids.jsonl holds a non-string id`)
    return v
  })
  const metadata = jsonl(files, 'metadata.jsonl', extent, (v, label) => (ids[label] === null ? undefined : validateMetadata(reviveDates(v ?? undefined))))
  const texts = jsonl(files, 'texts.jsonl', extent, (v): TextInput | undefined => validateText(v ?? undefined))
  const terms = jsonl(files, 'terms.jsonl', undefined, (v) => String(v))
  return { ids, metadata, texts, terms }
}

/** The vector rows, `length` floats. */
function readVectors(files: Generation, length: number): Float32Array {
  const reader = files.open('vectors.f32')
  const rows = new Float32Array(length)
  reader.read(new Uint8Array(rows.buffer))
  files.verify('vectors.f32', reader)
  return rows
}

/** The stored HNSW graph (checked first: hnswlib reads the file itself). */
function readGraph(files: Generation, options: ResolvedIndexOptions, dims: number): HnswGraph {
  files.verify('hnsw.bin', files.open('hnsw.bin'))
  try {
    return HnswGraph.load(files.path('hnsw.bin'), metricOps(options.metric).hnswSpace, dims, options.hnsw)
  } catch (cause) {
    if (cause instanceof QuarryError) throw cause
    throw unreadable(files.root, INDEX_FORMAT, `${files.name}/hnsw.bin could not be read`, cause)
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
function restoreRecords(files: Generation, state: IndexState, records: StoredRecords, extent: number): void {
  const { metadata, texts, terms } = records
  const forward = files.open('forward.bin')
  const truncated = (): QuarryError => unreadable(files.root, INDEX_FORMAT, `${files.name}/forward.bin is truncated`)
  // open() checked the size: no entry may claim more bytes than are left (a bad count allocates nothing).
  let left = files.manifest.files['forward.bin']?.bytes ?? 0
  const word = new Uint32Array(1)
  for (let label = 0; label < extent; label++) {
    if (forward.read(new Uint8Array(word.buffer)) !== 4) throw truncated()
    left -= 4
    const count = word[0] as number
    if (count !== NO_TEXT && 8 + count * 8 > left) throw truncated()
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
      throw truncated()
    }
    left -= 8 + count * 8
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
