import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { HnswGraph } from '../dense/hnsw.js'
import { VectorStore } from '../dense/vector-store.js'
import { resolveIndexOptions, type ResolvedIndexOptions } from '../engine/options.js'
import { emptyState, QuarryIndex } from '../engine/quarry-index.js'
import { validateMetadata, validateText, type TextInput } from '../engine/record.js'
import { idTieBreak } from '../engine/state.js'
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
export function saveIndex(index: QuarryIndex, dir: string): void {
  const root = resolve(dir)
  mkdirSync(root, { recursive: true })
  const previous = readCurrent(root)
  const generation = `snapshot-${String((previous?.number ?? 0) + 1).padStart(6, '0')}`
  const tmp = join(root, `.${generation}.tmp-${process.pid}`)
  rmSync(tmp, { recursive: true, force: true })
  mkdirSync(tmp)
  try {
    const files = writeFiles(index, tmp)
    const manifest: Manifest = {
      format: 'quarry-index',
      version: SNAPSHOT_VERSION,
      options: index.state.options,
      extent: index.state.ids.extent,
      textTotalLength: index.state.sparse.totalLength,
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

function writeFiles(index: QuarryIndex, dir: string): Record<string, FileSum> {
  const state = index.state
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
 * Reads the current snapshot of `dir`. Every file's size and sha256 are checked; a missing,
 * truncated, corrupted or other-version snapshot is refused with INVALID_SNAPSHOT and nothing
 * is returned half-loaded.
 */
export function loadIndex(dir: string, loadOptions: { embedder?: Embedder } = {}): QuarryIndex {
  const root = resolve(dir)
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
  const options = resolveIndexOptions(manifest.options)
  const embedder = loadOptions.embedder
  if (embedder) {
    const recorded = options.embedder
    if (!recorded || recorded.name !== embedder.name || recorded.dimensions !== embedder.dimensions) {
      throw new QuarryError(
        'EMBEDDER_MISMATCH',
        `the index in ${root} was built ${recorded ? `with embedder "${recorded.name}" (${recorded.dimensions} dimensions)` : 'without an embedder'}; this one is "${embedder.name}" (${embedder.dimensions}). Load it with the embedder that built it, or re-ingest.`,
        { path: 'embedder' },
      )
    }
  }
  const extent = manifest.extent
  const dims = options.dimensions
  const open = (name: string): ChunkReader => {
    if (!manifest.files[name] || !existsSync(join(folder, name))) throw corrupt(root, `${name} is missing`)
    return new ChunkReader(join(folder, name))
  }
  const verify = (name: string, reader: ChunkReader): void => {
    const got = reader.close()
    const want = manifest.files[name] as FileSum
    if (got.bytes !== want.bytes) throw corrupt(root, `${name} has ${got.bytes} bytes, the manifest says ${want.bytes} (truncated?)`)
    if (got.sha256 !== want.sha256) throw corrupt(root, `${name} does not match its checksum (corrupted)`)
  }
  const readJsonl = <T>(name: string, check: (value: unknown, label: number) => T): T[] => {
    const reader = open(name)
    const out: T[] = []
    try {
      for (const line of reader.lines()) out.push(check(JSON.parse(line), out.length))
    } catch (cause) {
      if (cause instanceof QuarryError) throw cause
      throw corrupt(root, `${name} line ${out.length + 1} is not valid`, cause)
    } finally {
      verify(name, reader)
    }
    if (out.length !== extent && name !== 'terms.jsonl') throw corrupt(root, `${name} has ${out.length} lines, expected ${extent}`)
    return out
  }

  const ids = readJsonl('ids.jsonl', (v) => {
    if (v !== null && typeof v !== 'string') throw corrupt(root, 'ids.jsonl holds a non-string id')
    return v
  })
  const metadata = readJsonl('metadata.jsonl', (v, label) => (ids[label] === null ? undefined : validateMetadata(reviveDates(v ?? undefined))))
  const texts = readJsonl('texts.jsonl', (v): TextInput | undefined => validateText(v ?? undefined))
  const terms = readJsonl('terms.jsonl', (v) => String(v))

  let rows: Float32Array | undefined
  if (dims !== undefined) {
    const reader = open('vectors.f32')
    rows = new Float32Array(extent * dims)
    reader.read(new Uint8Array(rows.buffer))
    verify('vectors.f32', reader)
  }
  let graph: HnswGraph | undefined
  if (dims !== undefined && options.dense === 'hnsw') {
    verify('hnsw.bin', open('hnsw.bin'))
    try {
      graph = HnswGraph.load(join(folder, 'hnsw.bin'), metricOps(options.metric).hnswSpace, dims, options.hnsw)
    } catch (cause) {
      if (cause instanceof QuarryError) throw cause
      throw corrupt(root, 'hnsw.bin could not be read', cause)
    }
  }

  const state = emptyState(options, graph)
  const idMap = IdMap.fromJSON(ids)
  const full = { ...state, ids: idMap, store: dims !== undefined && rows ? VectorStore.fromRows(dims, rows) : undefined, tie: idTieBreak(idMap) }
  const forward = open('forward.bin')
  const word = new Uint32Array(1)
  for (let label = 0; label < extent; label++) {
    if (forward.read(new Uint8Array(word.buffer)) !== 4) throw corrupt(root, 'forward.bin is truncated')
    const count = word[0] as number
    const m = metadata[label]
    if (m !== undefined) {
      full.metadata[label] = m
      full.values.add(label, m)
    }
    full.texts[label] = texts[label]
    if (count === NO_TEXT) continue
    const length = new Float64Array(1)
    const termIds = new Uint32Array(count)
    const tfs = new Float32Array(count)
    if (forward.read(new Uint8Array(length.buffer)) !== 8 || forward.read(new Uint8Array(termIds.buffer)) !== count * 4 || forward.read(new Uint8Array(tfs.buffer)) !== count * 4) {
      throw corrupt(root, 'forward.bin is truncated')
    }
    full.sparse.restore(label as Label, terms, termIds, tfs, length[0] as number)
  }
  verify('forward.bin', forward)
  if (typeof manifest.textTotalLength === 'number') full.sparse.restoreTotalLength(manifest.textTotalLength)
  return new QuarryIndex(full, embedder)
}

/** Turns `{ $datetime: iso }` values back into Dates. */
function reviveDates(metadata: unknown): unknown {
  if (typeof metadata !== 'object' || metadata === null) return metadata
  return Object.fromEntries(
    Object.entries(metadata).map(([k, v]) => [k, typeof v === 'object' && v !== null && typeof (v as { $datetime?: unknown }).$datetime === 'string' ? new Date((v as { $datetime: string }).$datetime) : v]),
  )
}
