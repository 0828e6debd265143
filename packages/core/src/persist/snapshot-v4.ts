import { VectorStore } from '../dense/vector-store.js'
import type { HnswGraph } from '../dense/hnsw.js'
import type { ResolvedIndexOptions } from '../engine/options.js'
import { validateMetadata, validateText, type Metadata, type TextInput } from '../engine/record.js'
import { emptyState, idTieBreak, type IndexState } from '../engine/state.js'
import { QuarryError } from '../errors.js'
import { IdMap, type Label } from '../ids.js'
import { unreadable, type Generation } from './generations.js'

/**
 * The reader of version 4 (and 3) snapshots: ids, metadata (dates tagged), texts and the
 * vocabulary as JSON lines, the text index's forward entries in `forward.bin`, `vectors.f32`
 * and `hnsw.bin`; postings, BM25 statistics, value indexes and inverse norms rebuilt record by
 * record. Version 5 (snapshot.ts) stores those instead; this reader stays so that snapshots
 * saved before it still load (saving again writes version 5).
 */

/** A record with no text has no forward entry; written as this count. */
const NO_TEXT = 0xffff_ffff

/** Reads a version 4 (or 3) snapshot's files into a fresh state; the graph was read first by the caller. */
export function readStateV4(files: Generation, options: ResolvedIndexOptions, extent: number, textTotalLength: number | undefined, graph: HnswGraph | undefined): IndexState {
  const dims = options.dimensions
  const records = readRecords(files, extent)
  const rows = dims === undefined ? undefined : readVectors(files, extent * dims)
  const state = stateOf(options, records.ids, rows, graph)
  restoreRecords(files, state, records, extent)
  if (textTotalLength !== undefined) state.sparse.restoreTotalLength(textTotalLength)
  return state
}

/** A JSON-lines file, each line checked; `lines`, when given, is the count it must have. The file's checksum is checked whatever happens. */
function jsonl<T>(files: Generation, name: string, lines: number | undefined, check: (value: unknown, label: number) => T): T[] {
  const reader = files.open(name)
  const out: T[] = []
  const bad = (): QuarryError => unreadable(files.root, files.format, `${files.name}/${name} line ${out.length + 1} is not valid`)
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
  if (lines !== undefined && out.length !== lines) throw unreadable(files.root, files.format, `${files.name}/${name} has ${out.length} lines, expected ${lines}`)
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
    if (v !== null && typeof v !== 'string') throw unreadable(files.root, files.format, `${files.name}/ids.jsonl holds a non-string id`)
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
  const truncated = (): QuarryError => unreadable(files.root, files.format, `${files.name}/forward.bin is truncated`)
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
    state.texts.set(label, texts[label])
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
