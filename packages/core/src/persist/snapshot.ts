import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { HnswGraph } from '../dense/hnsw.js'
import { scanPool, scanWorkers } from '../dense/scan-pool.js'
import { VectorStore } from '../dense/vector-store.js'
import { resolveIndexOptions, type ResolvedIndexOptions } from '../engine/options.js'
import { emptyState, idTieBreak, type IndexState } from '../engine/state.js'
import { QuarryError } from '../errors.js'
import { metricOps } from '../metric/metric.js'
import type { Embedder } from '../embed/embedder.js'
import { asUnreadable, folderArgument, openGeneration, sealedManifest, unreadable, whileCurrentHolds, writeGeneration, writeGenerationInSlices, type Generation, type GenerationFormat, type GenerationWriter } from './generations.js'
import { readSparse, readValues, writeForward, writePostings, writeValues } from './indexes.js'
import { readIds, readMetadata, readTexts, writeIds, writeMetadata, writeTexts } from './records.js'
import { stampOf, unchangedSince, type FileStamp } from './files.js'
import { SectionReader, SectionWriter } from './sections.js'
import type { DirectoryLock } from './lock.js'
import type { SliceOptions, Steps } from './steps.js'

/**
 * Snapshot format version; bumped on any incompatible change. Only the current version is read:
 * another is refused with INVALID_SNAPSHOT naming it (earlier versions were never published).
 */
export const SNAPSHOT_VERSION = 5

/** An index snapshot as a generation (generations.ts). */
const INDEX_FORMAT: GenerationFormat = {
  format: 'quarry-index',
  version: SNAPSHOT_VERSION,
  kind: 'Quarry index',
  remedy: 'Restore it from a backup or save the index again with index.save(dir).',
}

/** The manifest fields of an index, beside the generation's own (format, version, files). */
interface IndexFields {
  options: ResolvedIndexOptions
  extent: number
  /** The text index's running total length, verbatim: a fresh sum may differ in the last bits (float addition is not associative). */
  textTotalLength: number
}

/**
 * Where a snapshot of an index lies and what it holds: its generation's folder, its manifest's
 * seal (the sha256 of a manifest listing every file's size and sha256: it names the exact bytes),
 * and each file's inode, size and modification time when it was written or read. Recorded by the
 * index when it is saved or loaded, so that saving it again unchanged links these files instead
 * of writing them (see {@link writeSnapshot}).
 */
export interface SnapshotCopy {
  readonly folder: string
  readonly seal: string
  readonly stamps: ReadonlyMap<string, FileStamp>
}

/**
 * Writes the index to `dir` as a new generation (`dir/snapshot-N/`, see generations.ts): the
 * folder's lock taken, every file fsynced and listed with its size and sha256 in a sealed
 * manifest, CURRENT switched atomically, older generations removed after. Nothing is built as one
 * whole-index string. `unchanged`: a snapshot of this same state (the index has not changed since
 * it was written or read); when it is still there, its manifest sealed by the seal recorded, each
 * file the same inode with the same size and modification time as then, and its fields those of
 * the state, its files are hard-linked into the new generation instead of written (a generation's
 * files are never written again once committed); when any of that fails, the files are written.
 * Returns where the new snapshot lies.
 */
export function writeSnapshot(state: IndexState, dir: string, options: { readonly lock?: DirectoryLock }, unchanged?: SnapshotCopy): SnapshotCopy {
  let copy: SnapshotCopy | undefined
  writeGeneration(dir, INDEX_FORMAT, (out) => snapshotOrLinks(state, out, unchanged, (c) => (copy = c)), options)
  return committedCopy(copy)
}

/** {@link writeSnapshot} in slices (steps.ts): the state must not change until it settles. */
export async function writeSnapshotInSlices(state: IndexState, dir: string, options: SliceOptions & { readonly lock?: DirectoryLock }, unchanged?: SnapshotCopy): Promise<SnapshotCopy> {
  let copy: SnapshotCopy | undefined
  await writeGenerationInSlices(dir, INDEX_FORMAT, (out) => snapshotOrLinks(state, out, unchanged, (c) => (copy = c)), options)
  return committedCopy(copy)
}

function committedCopy(copy: SnapshotCopy | undefined): SnapshotCopy {
  if (copy === undefined) throw new Error('writeSnapshot: the generation committed without telling where')
  return copy
}

function* snapshotOrLinks(state: IndexState, out: GenerationWriter, unchanged: SnapshotCopy | undefined, committed: (copy: SnapshotCopy) => void): Steps<Record<string, unknown>> {
  out.onSettled((c) => {
    if (c !== undefined) committed({ folder: c.folder, seal: c.seal, stamps: stampsOf(c.folder, Object.keys(c.files)) })
  })
  if (unchanged !== undefined && linkSnapshot(state, out, unchanged)) return { ...fieldsOf(state) }
  return yield* snapshotFiles(state, out)
}

/** The stamps of a generation's files (those it lists), taken as it is committed or read. */
function stampsOf(folder: string, files: readonly string[]): Map<string, FileStamp> {
  return new Map(files.map((name) => [name, stampOf(join(folder, ...name.split('/')))]))
}

/**
 * Hard-links the files of `copy` into the generation being written, when it is still the snapshot
 * recorded (same seal, every file the inode, size and modification time recorded: not rewritten
 * or replaced since) of an index with the state's fields, in this format; true when every file is
 * linked. A file damaged in place without any of those changing (a failing disk) is carried over
 * and refused by the next load, as it would be in the snapshot itself. A link that fails (another
 * filesystem, a file gone) drops the links made, and the caller writes the files instead: a file
 * is never written through a link to another generation.
 */
function linkSnapshot(state: IndexState, out: GenerationWriter, copy: SnapshotCopy): boolean {
  const sealed = sealedManifest(copy.folder)
  if (sealed === undefined || sealed.seal !== copy.seal) return false
  const { manifest } = sealed
  if (manifest.format !== INDEX_FORMAT.format || manifest.version !== INDEX_FORMAT.version) return false
  const fields = fieldsOf(state)
  if (JSON.stringify([manifest.options, manifest.extent, manifest.textTotalLength]) !== JSON.stringify([fields.options, fields.extent, fields.textTotalLength])) return false
  const linked: string[] = []
  try {
    for (const [name, sum] of Object.entries(manifest.files)) {
      const from = join(copy.folder, ...name.split('/'))
      if (!unchangedSince(from, copy.stamps.get(name))) throw new Error(`${name} changed since it was recorded`)
      out.link(name, from, sum)
      linked.push(name)
    }
    return true
  } catch {
    for (const name of linked) out.drop(name)
    return false
  }
}

function fieldsOf(state: IndexState): IndexFields {
  return { options: state.options, extent: state.ids.extent, textTotalLength: state.sparse.totalLength }
}

/**
 * Version 5: every structure a loaded index needs, stored as it is in memory, in binary sections
 * (sections.ts) read whole and checked against their sha256 before use, so loading parses no
 * record and rebuilds nothing but the id map:
 *
 *     ids.bin, texts.bin, metadata.bin   the records (records.ts)
 *     postings.bin, forward.bin          the text index: postings with their bounds, forward
 *                                        entries and lengths (indexes.ts)
 *     values.bin                         the metadata's value indexes (indexes.ts)
 *     vectors.f32, norms.f32             the rows and their 1/‖v‖, raw float32
 *     hnsw.bin                           the graph, as hnswlib writes it (read by @quarry/hnsw, see readGraph)
 */
function* snapshotFiles(state: IndexState, out: GenerationWriter): Steps<Record<string, unknown>> {
  const extent = state.ids.extent
  function* sections(name: string, write: (w: SectionWriter) => Steps): Steps {
    const file = out.create(name)
    yield* write(new SectionWriter(file))
    yield* file.finish()
  }
  yield* sections('ids.bin', (w) => writeIds(state, w))
  yield* sections('texts.bin', (w) => writeTexts(state, w))
  yield* sections('metadata.bin', (w) => writeMetadata(state, w))
  yield* sections('postings.bin', (w) => writePostings(state.sparse, extent, w))
  yield* sections('forward.bin', (w) => writeForward(state.sparse, extent, w))
  yield* sections('values.bin', (w) => writeValues(state.values, w))
  if (state.store) {
    yield* raw(out, 'vectors.f32', state.store.slice(extent))
    yield* raw(out, 'norms.f32', state.store.sliceInvNorms(extent))
  }
  const graph = state.graph
  if (graph) {
    const file = out.path('hnsw.bin')
    yield { sync: () => graph.save(file), async: () => graph.saveAsync(file) }
  }
  return { ...fieldsOf(state) }
}

/** A float32 array as a raw file, about a megabyte between safe points. */
function* raw(out: GenerationWriter, name: string, data: Float32Array): Steps {
  const file = out.create(name)
  const step = 1 << 20
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  for (let at = 0; at < bytes.byteLength; at += step) {
    file.bytes(bytes.subarray(at, at + step))
    yield
  }
  yield* file.finish()
}

/**
 * Reads the current snapshot of `dir` into a fresh index state. The manifest's seal and every
 * file's size and sha256 are checked; a missing, truncated, altered or other-version snapshot
 * (or anything in it that is not a file) is refused with INVALID_SNAPSHOT naming the file, and
 * nothing is returned half-loaded. An `embedder` must be the one the index was built with
 * (checked before any data file is read).
 */
export function readSnapshot(dir: string, embedder: Embedder | undefined): { readonly state: IndexState; readonly copy: SnapshotCopy } {
  const root = folderArgument(dir)
  return whileCurrentHolds(root, () => {
    const files = openGeneration(root, INDEX_FORMAT)
    if (!files) throw unreadable(root, INDEX_FORMAT, !existsSync(root) ? 'the folder does not exist (check the path)' : statSync(root).isDirectory() ? 'it has no CURRENT snapshot (was it saved with index.save?)' : 'it is a file, not a folder (give the folder index.save wrote)')
    files.pin()
    try {
      // Stamped before the read: a file changed while it is read was changed after its stamp, and is not linked later.
      const stamps = stampsOf(files.folder, Object.keys(files.manifest.files))
      return { state: readState(files, embedder), copy: { folder: files.folder, seal: files.seal, stamps } }
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
  const hnsw = dims !== undefined && options.dense === 'hnsw'
  const fail = (name: string) => (): QuarryError => unreadable(files.root, INDEX_FORMAT, `${files.name}/${name} is not valid`)
  const slabs = sectionSlabs(files)
  const sections = (name: string): SectionReader => {
    const into = slabs.get(name)
    const bytes = into ? files.readWhole(name, into) : files.readWhole(name)
    files.reading = name
    return new SectionReader(bytes, fail(name))
  }
  // Rows are read straight into the store's memory, which the pool's workers read in place (a
  // store outside a WebAssembly memory reads them into shared memory when a whole scan would split
  // across the pool; else its first such scan copies them there).
  const workers = dims === undefined ? 0 : scanWorkers(options.scan, extent * dims)
  const shared = workers > 0
  // An exact index's searches are such scans: its threads boot while the rest is read (a graph's
  // searches need none, so they start with its first big filtered scan, as before).
  const pooled = shared && options.dense === 'exact'
  if (pooled) scanPool().prepare(workers)
  const store = dims === undefined ? undefined : VectorStore.sized(dims, extent, shared)
  const rows = store && new Map([['vectors.f32', bytesOf(store.slice(extent))], ['norms.f32', bytesOf(store.sliceInvNorms(extent))]])
  // Hashed on a worker in the order they are read: each is still checked before it is parsed.
  // The graph comes first: it reads its own file while the worker hashes it, so this thread starts
  // at once instead of waiting for the worker to sum a first file, and the worker sums the
  // sections while the graph is read (read last, this thread would wait for the graph's sum).
  // Rows in shared memory (a store in a WebAssembly memory, or one the pool will scan) are read
  // there by that worker while this thread parses the records and the text index, so they come
  // after them.
  files.sumAhead([...(hnsw ? ['hnsw.bin'] : []), 'ids.bin', 'texts.bin', 'metadata.bin', 'postings.bin', 'forward.bin', 'values.bin', ...(rows?.keys() ?? [])], rows)
  const graph = hnsw ? readGraph(files, options, dims) : undefined
  const ids = readIds(sections('ids.bin'), extent)
  if (!ids) throw fail('ids.bin')()
  const texts = readTexts(sections('texts.bin'), extent, fail('texts.bin'))
  const metadata = readMetadata(sections('metadata.bin'), extent, fail('metadata.bin'))
  const sparse = readSparse(options.text.bm25, sections('postings.bin'), sections('forward.bin'), extent, textTotalLength, { postings: fail('postings.bin'), forward: fail('forward.bin') })
  const values = readValues(sections('values.bin'), extent, fail('values.bin'))
  for (const [name, bytes] of rows ?? []) files.readWhole(name, bytes)
  files.reading = undefined
  // The rows are in place: the booted threads make their instances over them now, not in the first search.
  const simd = pooled ? store?.simd() : undefined
  if (simd) scanPool().share(simd, workers)
  return { ...emptyState(options, graph), ids, store, metadata, texts, sparse, values, tie: idTieBreak(ids) }
}

/**
 * Memory for the section files, allocated before any is read: one buffer for those the index
 * keeps views of, one for those decoded and dropped. V8 starts a full collection each time
 * outside memory grows by a step; allocated per file as it is read, a 1M-record load's sections
 * set those off while the heap is full of the records just decoded, each marking all of them.
 */
function sectionSlabs(files: Generation): Map<string, Uint8Array<ArrayBuffer>> {
  const views = new Map<string, Uint8Array<ArrayBuffer>>()
  const padded = (bytes: number): number => bytes + ((8 - (bytes % 8)) % 8)
  for (const group of [['texts.bin', 'postings.bin', 'forward.bin', 'values.bin'], ['ids.bin', 'metadata.bin']]) {
    // Only files whose size on disk is the listed one (the rest are refused by readWhole's own checks).
    const sized = group.flatMap((name) => {
      const bytes = files.manifest.files[name]?.bytes
      return bytes !== undefined && sizeOnDisk(files.path(name)) === bytes ? [{ name, bytes }] : []
    })
    const buffer = new ArrayBuffer(sized.reduce((sum, { bytes }) => sum + padded(bytes), 0))
    let at = 0
    for (const { name, bytes } of sized) {
      views.set(name, new Uint8Array(buffer, at, bytes))
      at += padded(bytes)
    }
  }
  return views
}

function sizeOnDisk(path: string): number | undefined {
  try {
    return statSync(path).size
  } catch {
    return undefined
  }
}

function bytesOf(floats: Float32Array): Uint8Array {
  return new Uint8Array(floats.buffer, floats.byteOffset, floats.byteLength)
}

/**
 * A manifest's index options, with what an option added since means for an index saved before
 * it: the analyzer's `otherScripts` and `cjkBigrams` are false there (wink's tokens alone, CJK runs
 * whole, as it analyzed then), so its stored terms and a query's agree.
 */
export function optionsAsSaved(saved: unknown): ResolvedIndexOptions {
  const options = saved as ResolvedIndexOptions
  const analyzer = (options as { text?: { analyzer?: object } } | null)?.text?.analyzer
  if (typeof analyzer !== 'object' || analyzer === null) return options
  const added = { ...('otherScripts' in analyzer ? {} : { otherScripts: false }), ...('cjkBigrams' in analyzer ? {} : { cjkBigrams: false }) }
  if (Object.keys(added).length === 0) return options
  return { ...options, text: { ...options.text, analyzer: { ...options.text.analyzer, ...added } } }
}

/** The index's fields of the manifest, checked. */
function indexFields(files: Generation): IndexFields {
  const m = files.manifest
  const fail = (what: string): QuarryError => unreadable(files.root, INDEX_FORMAT, `${files.name}/manifest.json ${what}`)
  if (typeof m.extent !== 'number' || !Number.isSafeInteger(m.extent) || m.extent < 0) throw fail('has an invalid extent')
  if (m.textTotalLength === undefined) throw fail('has no text length')
  if (typeof m.textTotalLength !== 'number' || !Number.isFinite(m.textTotalLength) || m.textTotalLength < 0) throw fail('has an invalid text length')
  let options: ResolvedIndexOptions
  try {
    options = resolveIndexOptions(optionsAsSaved(m.options))
  } catch {
    throw fail('holds invalid index options')
  }
  return { options, extent: m.extent, textTotalLength: m.textTotalLength }
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

/**
 * The stored HNSW graph, returned only once hnsw.bin matches its sha256. The graph reads the file
 * itself while the worker hashes it (when the worker sums it): its reader checks every field and
 * link, so what it parses before the sum is in cannot lead a search outside the graph.
 */
function readGraph(files: Generation, options: ResolvedIndexOptions, dims: number): HnswGraph {
  return files.readChecking('hnsw.bin', (source) => {
    try {
      return HnswGraph.load(source, metricOps(options.metric).hnswSpace, dims, options.hnsw)
    } catch (cause) {
      if (cause instanceof QuarryError) throw cause
      const why = cause instanceof Error ? `: ${cause.message}` : ''
      throw unreadable(files.root, INDEX_FORMAT, `${files.name}/hnsw.bin could not be read${why}`, cause)
    }
  })
}
