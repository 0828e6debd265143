import { omitUndefined } from '../rpc/omit.js'
import { Code } from '../rpc/status.js'
import { createHash } from 'node:crypto'
import { existsSync, rmdirSync, statSync } from 'node:fs'
import { dirname, extname, resolve } from 'node:path'
import { Analyzer, chunkText, createIndex, DirectoryLock, embedAll, type Embedder, type Metadata, type QuarryIndex, type RecordInput } from '@quarry/core'
import { extractText } from '../vertex-rag/extract.js'
import { pageAt } from '../vertex-rag/pdf.js'
import { readSource } from '../vertex-rag/sources.js'
import { optionLines, parseArgs, specOf, type OptionDoc } from './args.js'
import { createCliEmbedder, embedderKind, embedderOfIndex, kindOfIndex, type EmbedderKind } from './embedders.js'
import { CliError, usageError } from './fail.js'
import { quarryCommand } from './invocation.js'
import { DEFAULT_INDEX_DIR, hasIndex, indexDir, indexedFiles, isFreshDir, openIndex, shellWord, shown, type IndexedFile } from './local-index.js'
import { progress } from './progress.js'
import { printable } from './snippet.js'
import { findFiles, INDEXED_EXTENSIONS, type FoundFile } from './walk.js'

/** Chunks of `quarry index`: 200 analyzer tokens with 40 shared between neighbours (as the demo). */
export const CHUNKING = { size: 200, overlap: 40 } as const

/** Largest file read (as RAG Engine imports). */
export const MAX_FILE_BYTES = 50 * 1024 * 1024

/** The options of `quarry index`: its parser and its help. */
export const INDEX_OPTIONS: readonly OptionDoc[] = [
  { name: 'index', value: 'DIR', help: `the index folder (default ${DEFAULT_INDEX_DIR} in the working directory); file paths\nare kept relative to the folder that holds it` },
  { name: 'embedder', value: 'glove|hashing', help: 'glove (default: offline GloVe SIF, 100-d, by meaning) or hashing\n(instant, word overlap only); a new index only: a re-run uses the\none the index was built with' },
]

function usage(): string {
  const q = quarryCommand()
  return `usage: ${q} index <path>... [--index DIR] [--embedder glove|hashing]

  Indexes files and folders for \`${q} search\`. Folders are read recursively, hidden folders and
  node_modules skipped: ${INDEXED_EXTENSIONS.join(' ')}. Each file is chunked (${CHUNKING.size} tokens,
  ${CHUNKING.overlap} shared by neighbours), embedded offline (GloVe SIF) and indexed for hybrid search
  (BM25 + HNSW). Run it again after editing: only files whose bytes changed are read again, and
  files that are gone are dropped; a file or folder that cannot be read keeps what the index holds
  from it (and the run exits 1).
${optionLines(INDEX_OPTIONS)}`
}

/** What one found file needs. */
type Plan =
  | { readonly kind: 'unchanged' }
  /** `unread`: its bytes could not be read (permissions, I/O); else they were, and hold nothing to index. */
  | { readonly kind: 'failed'; readonly message: string; readonly unread: boolean }
  /** Read and extracted, with no words in it (an empty file, a scan without a text layer): nothing to index, and no failure. */
  | { readonly kind: 'empty'; readonly message: string }
  | { readonly kind: 'read'; readonly sha256: string; readonly records: readonly Omit<RecordInput, 'vector'>[] }

/** The record id of a file's n-th chunk: short and stable whatever the path's length. */
function chunkId(source: string, n: number): string {
  return `${createHash('sha256').update(source).digest('hex').slice(0, 16)}:${n}`
}

const analyzer = new Analyzer()

/** Reads one file; unchanged bytes (same sha256 as indexed) are not extracted again. */
async function planFile(file: FoundFile, previous: IndexedFile | undefined): Promise<Plan> {
  const read = await readSource({ uri: file.source, path: file.real }, MAX_FILE_BYTES)
  // NOT_FOUND: it could not be opened (permissions, gone meanwhile); other refusals read it (a size over the limit).
  if (!read.ok) return { kind: 'failed', message: read.status.message, unread: read.status.code === Code.NOT_FOUND }
  const sha256 = createHash('sha256').update(read.bytes).digest('hex')
  if (previous?.sha256 === sha256) return { kind: 'unchanged' }
  const extracted = await extractText(file.real, read.bytes, file.source)
  if (!extracted.ok) return extracted.empty === true ? { kind: 'empty', message: extracted.message } : { kind: 'failed', message: extracted.message, unread: false }
  const pieces = chunkText(analyzer, extracted.text, CHUNKING)
  if (pieces.length === 0) return { kind: 'empty', message: `${file.source}: the file has no words to index` }
  const ext = extname(file.source).slice(1).toLowerCase()
  const pages = extracted.pageStarts
  const records = pieces.map((p, chunk) => {
    const metadata: Metadata = omitUndefined({ source: file.source, ext, sha256, chunk, start: p.start, end: p.end, page: pages ? pageAt(pages, p.start) : undefined })
    return { id: chunkId(file.source, chunk), text: p.text, metadata }
  })
  return { kind: 'read', sha256, records }
}

/** Whether the file at `path` is gone (or is no file now); one that cannot be looked at (a folder without permission) is not known to be. */
function isGone(path: string): boolean {
  try {
    return !statSync(path).isFile()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    return code === 'ENOENT' || code === 'ENOTDIR'
  }
}

/**
 * Takes the folder's lock for the whole run (another run, or a server on the folder, is refused
 * at once with LOCKED), after checking that `dir` is an index or may become one. `done` releases
 * it and removes the folder again when this run made it and saved nothing there.
 */
function lockIndexDir(dir: string): { lock: DirectoryLock; done: () => void } {
  if (!hasIndex(dir) && !isFreshDir(dir)) throw new CliError(`${shown(dir)} exists and is not a Quarry index; pass --index with a new or empty folder`)
  const made = !existsSync(dir)
  const lock = DirectoryLock.acquire(dir)
  return {
    lock,
    done: () => {
      lock.release()
      if (!made) return
      try {
        rmdirSync(dir) // only when empty: a run that saved leaves its index
      } catch {
        // not empty (saved), or gone
      }
    },
  }
}

/**
 * The index in `dir` and its files, or none yet. A damaged or foreign index fails here: before
 * any file is read.
 */
function openExisting(dir: string, requested: EmbedderKind | undefined): { index: QuarryIndex | undefined; known: Map<string, IndexedFile> } {
  if (!hasIndex(dir)) return { index: undefined, known: new Map() }
  const index = openIndex(dir, '')
  const known = indexedFiles(index, dir)
  if (requested !== undefined && requested !== kindOfIndex(index)) {
    throw new CliError(`the index in ${shown(dir)} was built with the embedder "${index.options.embedder?.name ?? 'none'}"; delete the folder to build it again with --embedder ${requested}`)
  }
  return { index, known }
}

/** Plans every found file, with a progress bar (files, chunks so far, rate, ETA). */
async function planFiles(found: readonly FoundFile[], known: ReadonlyMap<string, IndexedFile>): Promise<Map<string, Plan>> {
  const bar = progress('Reading files', found.length, 'files')
  const plans = new Map<string, Plan>()
  let chunks = 0
  for (const [i, file] of found.entries()) {
    const plan = await planFile(file, known.get(file.source))
    plans.set(file.source, plan)
    if (plan.kind === 'read') chunks += plan.records.length
    bar.tick(i + 1, `${chunks} chunks`)
  }
  bar.done(`${chunks} chunks to embed`)
  return plans
}

/** `quarry index <path>... [--index DIR] [--embedder glove|hashing]`: resolves to the exit code. */
export async function runIndex(args: readonly string[]): Promise<number> {
  const help = usage()
  const parsed = parseArgs(args, specOf(INDEX_OPTIONS, true), help)
  if (parsed.has('help')) {
    console.log(help)
    return 0
  }
  if (parsed.positionals.length === 0) throw usageError(`give the files or folders to index, e.g. ${quarryCommand()} index docs`, help)
  const dir = indexDir(parsed.value('index'))
  const base = dirname(dir)
  const requested = parsed.value('embedder') === undefined ? undefined : embedderKind(parsed.value('embedder'), help)
  const { lock, done } = lockIndexDir(dir)
  try {
    const existing = openExisting(dir, requested)
    const known = existing.known
    let index = existing.index

    const { files: found, unreadable } = findFiles(parsed.positionals, { base, exclude: [dir] })
    for (const folder of unreadable) console.error(`quarry index: skipped the folder ${printable(folder.source)}: it cannot be read (${folder.code}); what the index holds from it is kept`)
    const plans = await planFiles(found, known)
    const fresh = [...plans].flatMap(([source, plan]) => (plan.kind === 'read' ? [{ source, records: plan.records }] : []))
    const failed = [...plans].flatMap(([source, plan]) => (plan.kind === 'failed' ? [{ source, message: plan.message, unread: plan.unread }] : []))
    // Read, with no words: said, not a failure (an empty notes file must not fail every run of a script).
    const empty = [...plans].flatMap(([source, plan]) => (plan.kind === 'empty' ? [{ source, message: plan.message }] : []))
    const unchanged = [...plans.values()].filter((p) => p.kind === 'unchanged').length
    for (const f of failed) console.error(`quarry index: skipped ${printable(f.message)}${known.has(f.source) ? (f.unread ? ' (its earlier chunks are kept)' : ' (its earlier chunks are dropped)') : ''}`)
    for (const f of empty) console.error(`quarry index: skipped ${printable(f.message)}${known.has(f.source) ? ' (its earlier chunks are dropped)' : ''}`)
    if (!index && fresh.length === 0) {
      const why = found.length === 0 ? `found no files to index in ${parsed.positionals.join(', ')} (quarry index reads ${INDEXED_EXTENSIONS.join(' ')})` : failed.length === 0 ? 'no file has words to index; nothing was indexed' : 'no file could be read; nothing was indexed'
      throw new CliError(why)
    }
    // Dropped: files no longer there (wherever they are: other folders' files stay while they exist),
    // and files read now that hold nothing to index. A file that cannot be read keeps its chunks.
    const gone = [...known.keys()].filter((source) => !plans.has(source) && isGone(resolve(base, source)))
    const removed = [...gone, ...failed.filter((f) => !f.unread && known.has(f.source)).map((f) => f.source), ...empty.filter((f) => known.has(f.source)).map((f) => f.source)]
    const newCount = fresh.filter((f) => !known.has(f.source)).length

    if (fresh.length > 0 || removed.length > 0) {
      const records = fresh.flatMap((f) => f.records)
      let vectors: Float32Array[] = []
      if (records.length > 0) {
        const embedder = index ? embedderOfIndex(index, shown(dir)) : createCliEmbedder(requested ?? 'glove')
        if (!embedder) throw new CliError(`the index in ${shown(dir)} has no embedder; delete the folder and index again`)
        index ??= createIndex({ embedder, metric: 'cosine' })
        vectors = await embedRecords(embedder, records.map((r) => r.text as string))
      }
      if (!index) throw new CliError('nothing to index')
      // Applied only once every vector is in: a failure above leaves the saved index as it was.
      index.removeMany([...removed, ...fresh.map((f) => f.source)].flatMap((source) => known.get(source)?.ids ?? []))
      index.addMany(records.map((r, i) => ({ ...r, vector: vectors[i] as Float32Array })))
      index.save(dir, { lock })
    }
    const files = known.size + newCount - removed.length
    console.log(
      `${shown(dir)}: ${newCount} new, ${fresh.length - newCount} changed, ${unchanged} unchanged, ${removed.length} removed, ${failed.length} failed${empty.length > 0 ? `, ${empty.length} without words` : ''}; ${plural(files, 'file')}, ${plural(index?.size ?? 0, 'chunk')} (embedder ${index?.options.embedder?.name ?? 'none'})`,
    )
    const flag = parsed.value('index')
    console.log(`Search it: ${quarryCommand()} search "your question"${flag === undefined ? '' : ` --index ${shellWord(flag)}`}`)
    // What could be read is saved; a file or folder that could not be is a failure of the run (exit 1), said above.
    return failed.length > 0 || unreadable.length > 0 ? 1 : 0
  } finally {
    done()
  }
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}

async function embedRecords(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
  const bar = progress(`Embedding chunks (${embedder.name.replace(/\(.*$/, '')})`, texts.length, 'chunks')
  const vectors = await embedAll(embedder, texts, { batchSize: 128, onProgress: (done) => bar.tick(done) })
  bar.done()
  return vectors
}
