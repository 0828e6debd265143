import { embedAll, type EmbedOptions, type Embedder } from '../embed/embedder.js'
import { QuarryError, checkOptionsObject, describe, rejectUnknownOptions } from '../errors.js'
import { validateFilter, type Filter } from '../filter/ast.js'
import { compileChecked } from '../filter/evaluate.js'
import { planDense } from '../dense/planner.js'
import type { FilterInput } from '../filter/plan-input.js'
import type { FilterFn } from '../filter/predicate.js'
import { validateId, type Label } from '../ids.js'
import { readSnapshot, writeSnapshot, writeSnapshotInSlices, type SnapshotCopy } from '../persist/snapshot.js'
import { isInside } from '../persist/files.js'
import { folderArgument, type GenerationWriter } from '../persist/generations.js'
import { DirectoryLock } from '../persist/lock.js'
import type { SliceOptions, Steps } from '../persist/steps.js'
import { prepareQuery, searchByVector } from './dense-search.js'
import { hybridSearch } from './hybrid-search.js'
import { resolveIndexOptions, type IndexOptions, type ResolvedIndexOptions } from './options.js'
import { PreparedText, recordList, validateMetadata, validateRecord, validateText, type Metadata, type RecordInput, type StoredRecord, type TextInput } from './record.js'
import type { SearchResult } from './results.js'
import { DENSE_ONLY, validateSearch, type SearchRequest } from './search-request.js'
import { sparseDocument, sparseSearch, type TextWithin } from './sparse-search.js'
import { emptyState, type IndexState } from './state.js'
import type { PreparedSparse } from '../sparse/sparse-index.js'
import type { Analyzer } from '../text/analyzer.js'
import { normalized, toVector, type VectorBuffers } from './vector-input.js'

interface ValidRecord {
  readonly id: string
  readonly vector: Float32Array | undefined
  readonly text: TextInput | undefined
  /** The text analyzed ahead for this index (a {@link PreparedText}), if it was. */
  readonly analyzed: PreparedSparse | undefined
  readonly metadata: Readonly<Metadata>
}

/** The fields of a record for `ingest`: its vector is the embedder's (a record with its own goes to `addMany`). */
const INGEST_FIELDS: ReadonlySet<string> = new Set(['id', 'text', 'metadata'])

/** @internal An index's last snapshot (where, and what) and the count of its writes it holds. */
export interface CopyRecord {
  readonly at: SnapshotCopy
  readonly revision: number
}

/** How {@link QuarryIndex.save} and {@link QuarryIndex.saveInSlices} write. */
export interface SaveOptions {
  /**
   * Whether a save of an index unchanged since it was last saved or loaded hard-links that
   * snapshot's files into the new one instead of writing them (while that snapshot is still there
   * as it was): by default only when it lies in the folder saved to (a new generation of it; a
   * save elsewhere writes a copy that shares no file), `true` wherever it lies (on the same
   * filesystem), `false` never (a full write, as a benchmark of saves wants).
   * @defaultValue undefined (links into the same folder only)
   */
  readonly linkUnchanged?: boolean
  /**
   * The folder's lock, held already by the caller (`DirectoryLock.acquire(dir)`): the save uses it
   * instead of taking `dir/LOCK` for itself. A caller that reads the folder, decides, then saves
   * holds it across all three, so no other writer saves in between (`quarry index` holds it for
   * its whole run). It stays held after the save: release it when done.
   * @defaultValue undefined (the lock is taken for the save and released after it)
   */
  readonly lock?: DirectoryLock
}

/**
 * A collection of records searchable by vector (HNSW or exact) and by text (BM25). Create one with
 * {@link createIndex}, or read a saved one with `loadIndex`. All methods are synchronous: the work
 * is CPU-bound and in-process.
 */
export class QuarryIndex {
  readonly #state: IndexState
  /** Reused buffers for the vector being added or searched (all work is synchronous). */
  readonly #buffers: VectorBuffers
  readonly #embedder: Embedder | undefined
  /** Saves in slices under way: the index must not change until they settle. */
  #saving = 0
  /** A search runs (its filter function may call back into the index). */
  #searching = false
  /** Writes begun so far (each add, upsert or remove counts, even one that then fails). */
  #revision = 0
  /** The last snapshot written or read of this index, and the {@link #revision} it holds. */
  #copy: CopyRecord | undefined

  /** @internal Use {@link createIndex} or `loadIndex` (`copy`: the snapshot it was read from). */
  constructor(state: IndexState, embedder?: Embedder, copy?: SnapshotCopy) {
    this.#state = state
    this.#embedder = embedder
    if (copy) this.#copy = { at: copy, revision: 0 }
    this.#buffers = { input: new Float32Array(state.options.dimensions ?? 0), unit: new Float32Array(state.options.dimensions ?? 0) }
  }

  /** The validated options, defaults filled in. */
  get options(): ResolvedIndexOptions {
    return this.#state.options
  }

  /** The embedder used by {@link ingest} and {@link query}, when one was given. */
  get embedder(): Embedder | undefined {
    return this.#embedder
  }

  /**
   * Embeds the records' text with the index's embedder (in batches, in order) and adds them with
   * both their vector and their text, all or nothing.
   */
  async ingest(records: readonly { id: string; text: TextInput; metadata?: Metadata }[], options: EmbedOptions = {}): Promise<void> {
    const embedder = this.#requireEmbedder('ingest')
    const list = recordList(records, 'ingest')
    // Every record is checked before anything is embedded (an embedder may be paid per text), as
    // addMany checks its records before it writes: the fields, the id, the metadata and the text.
    const ids: string[] = []
    const texts: (string | Readonly<Record<string, string>>)[] = []
    const metadata: Readonly<Metadata>[] = []
    for (let i = 0; i < list.length; i++) {
      const r: unknown = list[i]
      let valid: ReturnType<typeof validateRecord>
      try {
        valid = validateRecord(r, INGEST_FIELDS)
      } catch (error) {
        throw prefixPath(error, `records[${i}]`)
      }
      const text = valid.text
      if (typeof text !== 'string' && (typeof text !== 'object' || text instanceof PreparedText)) {
        throw new QuarryError('INVALID_RECORD', `records[${i}].text must be the text to embed (a string, or fields like { title, body }); received ${describe((r as { text?: unknown }).text)} (records with vectors go to addMany).`, { path: `records[${i}].text` })
      }
      ids.push(valid.id)
      texts.push(text)
      metadata.push(valid.metadata)
    }
    this.#checkNewIds(ids)
    const vectors = await embedAll(embedder, texts.map(textForEmbedding), options)
    // The fields as checked, not a spread of the record: a spread keeps own fields only, and a
    // record's id or metadata read through a getter (as add reads them) would be lost.
    this.addMany(ids.map((id, i) => ({ id, text: texts[i] as TextInput, vector: vectors[i] as Float32Array, metadata: metadata[i] as Metadata })))
  }

  /**
   * Searches by text with the index's embedder: the text is embedded and the search is hybrid
   * (BM25 + dense, fused by `alpha`, default 0.5; alpha 0 skips the embedding). A blank text
   * (empty, or white space only) is not embedded and finds nothing, as `search({ text: '' })`.
   */
  async query(request: Omit<SearchRequest, 'vector' | 'id'> & { text: string }): Promise<SearchResult> {
    if (typeof request !== 'object' || request === null || typeof request.text !== 'string') {
      throw new QuarryError('INVALID_QUERY', `query needs text: the words to search for, embedded with the index's embedder (search({ vector }) takes a vector); received ${describe(request?.text)}.`, { path: 'text' })
    }
    // query makes the vector from the text: one given beside it would be dropped, an example (id) refused as a second vector.
    for (const key of ['vector', 'id'] as const) {
      if ((request as Record<string, unknown>)[key] !== undefined) {
        throw new QuarryError('INVALID_QUERY', `query embeds its text and takes no ${key}: search({ ${key}, text }) searches with ${key === 'vector' ? 'a vector of your own' : 'a stored record as the example'} and the text.`, { path: key })
      }
    }
    // alpha 0 ranks by text alone: no embedding, unless an option of the vector side needs it.
    if (request.alpha === 0 && !DENSE_ONLY.some((key) => request[key] !== undefined)) return this.search(request)
    if (request.text.trim() === '') {
      // No words: an embedder would still make a vector of it (a direction of its own) and every
      // record would rank against that. Checked as any query is, then searched by its text alone.
      validateSearch({ ...request, vector: [] }, this.#state.options.hnsw.efSearch)
      const textOnly: Record<string, unknown> = { ...request }
      for (const key of DENSE_ONLY) delete textOnly[key]
      return this.search(textOnly as SearchRequest)
    }
    const embedder = this.#requireEmbedder('query')
    const [vector] = await embedder.embed([request.text])
    return this.search({ ...request, vector: vector as Float32Array })
  }

  #requireEmbedder(what: string): Embedder {
    const embedder = this.#embedder
    const recorded = this.#state.options.embedder
    if (!embedder) {
      throw new QuarryError(
        'EMBEDDER_MISMATCH',
        `${what} needs an embedder: create the index with { embedder } or load it with loadIndex(dir, { embedder })${recorded ? ` (it records "${recorded.name}", but was given no embed(texts) function for it: an Embedder has name, dimensions and embed)` : ''}.`,
        { path: 'embedder' },
      )
    }
    return embedder
  }

  /** Number of records. */
  get size(): number {
    return this.#state.ids.size
  }

  /** Corpus statistics of the text index: documents with a term (Lucene's docCount: an empty or stop-word-only text is none), average length, distinct terms. */
  get textStats(): { documents: number; averageLength: number; terms: number } {
    const s = this.#state.sparse
    return { documents: s.documents, averageLength: s.averageLength, terms: s.vocabularySize }
  }

  /**
   * Analyzes a record's text for this index's BM25 now, ahead of its add, changing nothing: give
   * the result as the record's `text` to {@link add}, {@link addMany} or {@link upsert} and the
   * write skips most of the analysis (about two thirds of an add's time on English text). For
   * overlapping the analysis with work elsewhere: an embedder on another thread or across the
   * network. The record is the one the plain text makes at the time of the add (the same stored
   * text, BM25 statistics, term numbers and snapshot bytes); a prepared text never added leaves no
   * trace, and may be made during a {@link saveInSlices}. Throws INVALID_RECORD for text that is
   * not a string or a plain object of string fields.
   *
   * `options.tokensFrom`: an {@link Analyzer} that has tokenized this text already (`chunkText`,
   * `tokens`), with the options of this index's analyzer: the words it has read are not read
   * again (the same terms; an Analyzer with other options is not used).
   *
   * `options.within`: the text (a string) is part of a text tokenized already (`Analyzer.tokenized`,
   * then `chunkTokenized`): `tokens.source` from `start` on, such as a chunk. Its terms are counted
   * from those tokens, reading only the words the cut may have split at its two ends; the same
   * terms. A text that is not that part, tokens of an Analyzer with other options, and text fields
   * (an object) are read in full. Throws INVALID_OPTION when `start` is not an integer from 0.
   */
  prepareText(text: TextInput, options: { readonly tokensFrom?: Analyzer; readonly within?: TextWithin } = {}): PreparedText {
    const valid = validateText(text)
    if (valid === undefined) throw new QuarryError('INVALID_RECORD', 'text must be a string or an object of string fields like { title, body }; received undefined.', { path: 'text' })
    const start: unknown = options.within?.start
    if (options.within !== undefined && (typeof start !== 'number' || !Number.isInteger(start) || start < 0)) {
      throw new QuarryError('INVALID_OPTION', `within.start must be the integer offset (0 or more) in within.tokens.source where the text starts; received ${describe(start)}.`, { path: 'within.start' })
    }
    const state = this.#state
    return new PreparedText(valid, state.sparse, state.sparse.prepare(sparseDocument(state.analyzer, valid, state.options.text, options.tokensFrom, options.within)))
  }

  /** Adds a new record; throws DUPLICATE_ID if the id exists (use {@link upsert} to replace). */
  add(record: RecordInput): void {
    this.#writable()
    const valid = this.#validate(record, this.#buffers.input)
    if (this.#state.ids.has(valid.id)) {
      throw new QuarryError('DUPLICATE_ID', `a record with id "${valid.id}" already exists; use upsert() to replace it or remove() it first.`, { path: 'id' })
    }
    this.#write(this.#state.ids.assign(valid.id), valid)
  }

  /**
   * Adds many records, all or none: every record is validated (including duplicate ids within
   * the batch) before the first one is written.
   */
  addMany(records: readonly RecordInput[]): void {
    this.#writable()
    const list = recordList(records, 'addMany')
    // An index loop, not map: a hole in the array is a record too (refused), not one skipped.
    const checked: ValidRecord[] = []
    for (let i = 0; i < list.length; i++) {
      try {
        checked.push(this.#validate(list[i]))
      } catch (error) {
        throw prefixPath(error, `records[${i}]`)
      }
    }
    this.#checkNewIds(checked.map((c) => c.id))
    for (const valid of checked) this.#write(this.#state.ids.assign(valid.id), valid)
  }

  /**
   * Adds the record, or replaces the vector, text and metadata of an existing one with this id. A
   * vector the record holds already, bit for bit, is kept as it is: its point is not re-linked in
   * the graph (hnswlib's update of a point costs more than an add).
   */
  upsert(record: RecordInput): void {
    this.#writable()
    const valid = this.#validate(record, this.#buffers.input)
    const label = this.#state.ids.labelOf(valid.id)
    this.#write(label ?? this.#state.ids.assign(valid.id), valid, label !== undefined)
  }

  /**
   * Replaces an existing record's metadata alone: its vector, graph links, text and postings stay
   * as they are, so searches rank exactly as before and filters see the new metadata. Checked as
   * an add checks metadata; UNKNOWN_ID when no record has the id. An upsert with the same vector
   * would give the same answers, but re-links the point in the graph (hnswlib's update) and
   * analyzes the text again: for a change of metadata alone (a document's labels shared by its
   * thousands of chunks) that is most of a write's time.
   */
  replaceMetadata(id: string, metadata: Metadata): void {
    this.#writable()
    const label = this.#state.ids.labelOf(validateId(id))
    if (label === undefined) throw new QuarryError('UNKNOWN_ID', `no record has id "${id}"; replaceMetadata changes an existing record (add it first).`, { path: 'id' })
    const checked = validateMetadata(metadata)
    const previous = this.#state.metadata[label]
    if (previous) this.#state.values.remove(label, previous)
    this.#state.metadata[label] = checked
    this.#state.values.add(label, checked)
  }

  /** Removes a record; returns false when there was none with this id. */
  remove(id: string): boolean {
    this.#writable()
    const label = this.#state.ids.release(validateId(id))
    if (label === undefined) return false
    this.#state.graph?.delete(label)
    this.#state.sparse.delete(label)
    this.#state.values.remove(label, this.#state.metadata[label] ?? {})
    this.#state.metadata[label] = undefined
    this.#state.texts.set(label, undefined)
    return true
  }

  /**
   * Removes the records with these ids (an id with none is skipped, as {@link remove} returns false
   * for it) and returns how many there were. The same as `remove` for each id in turn, but the
   * text index drops the batch in one pass over the posting lists it touches: removing a file's
   * thousands of chunks one by one rescans a common term's list for every chunk. Every id is
   * checked before anything is removed.
   */
  removeMany(ids: readonly string[]): number {
    this.#writable()
    if (!Array.isArray(ids)) throw new QuarryError('INVALID_ID', `removeMany takes an array of ids; received ${describe(ids)}.`, { path: 'ids' })
    // An index loop: a hole in the array is an id too (refused), not one skipped.
    for (let i = 0; i < ids.length; i++) validateId(ids[i], `ids[${i}]`)
    const state = this.#state
    const labels: Label[] = []
    for (const id of ids) {
      // Released in the order given, so the labels the next adds reuse are those removes one by one would free.
      const label = state.ids.release(id)
      if (label === undefined) continue
      labels.push(label)
      state.graph?.delete(label)
      state.values.remove(label, state.metadata[label] ?? {})
      state.metadata[label] = undefined
      state.texts.set(label, undefined)
    }
    state.sparse.deleteMany(labels)
    return labels.length
  }

  /** A record's text, as `get(id)?.text` gives it, without copying its vector or metadata. */
  text(id: string): TextInput | undefined {
    const label = this.#state.ids.labelOf(validateId(id))
    return label === undefined ? undefined : this.#state.texts.get(label)
  }

  /** A record's metadata, as `get(id)?.metadata` gives it, without copying its vector. */
  metadata(id: string): Readonly<Metadata> | undefined {
    const label = this.#state.ids.labelOf(validateId(id))
    return label === undefined ? undefined : (this.#state.metadata[label] ?? {})
  }

  /** The stored record (vector as a Float32Array copy), or undefined. */
  get(id: string): StoredRecord | undefined {
    const state = this.#state
    const label = state.ids.labelOf(validateId(id))
    if (label === undefined) return undefined
    const text = state.texts.get(label)
    return {
      id,
      ...(state.store ? { vector: state.store.get(label) } : {}),
      ...(text === undefined ? {} : { text }),
      metadata: state.metadata[label] ?? {},
    }
  }

  has(id: string): boolean {
    return this.#state.ids.has(validateId(id))
  }

  /**
   * Ids in label order. With a declarative `filter`, only those of the records it matches, read
   * from the value indexes as a search's filter is: the cost follows the filter and the records
   * it matches, not every record's metadata. A malformed filter is INVALID_QUERY at its path
   * (`filter.filters[1].value`); a filter function is refused (test each record's `metadata(id)`).
   */
  ids(filter?: Filter): IterableIterator<string> {
    const state = this.#state
    if (filter === undefined) return allIds(state)
    if (typeof filter === 'function') {
      throw new QuarryError('INVALID_QUERY', 'ids takes a declarative filter such as { op: \'eq\', field: \'genre\', value: \'drama\' }, which the value indexes answer; for a function, test each id\'s metadata(id) yourself.', { path: 'filter' })
    }
    const labels = state.values.match(validateFilter(filter)).toArray()
    // Read now: the index may change before the caller is done with them.
    return Array.from(labels, (label) => state.ids.idOf(label as Label) as string).values()
  }

  /**
   * Searches by `vector` (or a stored record's vector, `id`) or by `text` (BM25). Hits come best
   * first, ties broken by id ascending; `stats` says how the planner ran the search and why.
   */
  search(request: SearchRequest): SearchResult {
    // A filter function that searches or writes this index would share the search's buffers and
    // graph state under it: refused (the search answers FILTER_FAILED with this as its cause).
    if (this.#searching) throw new QuarryError('INVALID_QUERY', 'search was called from inside a filter function of a search of the same index; a filter must only read the metadata it is given (search first, then filter on the result).')
    this.#searching = true
    try {
      return this.#search(request)
    } finally {
      this.#searching = false
    }
  }

  #search(request: SearchRequest): SearchResult {
    const state = this.#state
    const r = validateSearch(request, state.options.hnsw.efSearch)
    const filter = filterInput(state, r.filter, r.text === undefined && !r.exact ? r : undefined)
    // Text alone, a vector (or an example) alone, or both: hybrid.
    if (r.vector === undefined && r.id === undefined) return sparseSearch(state, { text: r.text as string, k: r.topK, filter, explain: r.explain })
    if (r.text === undefined) return searchByVector(prepareQuery(state, r, this.#buffers), r, filter, r.topK)
    return hybridSearch(state, { request: r, text: r.text, filter, buffers: this.#buffers })
  }

  /**
   * Writes the index to `dir` (created if needed, replaced atomically if it exists).
   * Read it back with `loadIndex(dir)`. An index unchanged since it was last saved into or
   * loaded from `dir`, whose snapshot is still there as it was written, is saved by hard-linking
   * that snapshot's files (checksums and all) instead of writing them again: milliseconds at any
   * size (where links fail, the files are written; see {@link SaveOptions.linkUnchanged}).
   */
  save(dir: string, options: SaveOptions = {}): void {
    // `save(dir, { linkUnchaged })` would otherwise do a full write unasked.
    checkOptionsObject(options, SAVE_OPTIONS, 'linkUnchanged')
    const revision = this.#revision
    this.#copy = { at: writeSnapshot(this.#state, dir, lockOption(options), this.#linkable(options, dir)), revision }
  }

  /**
   * Writes the same snapshot as {@link save}, a slice at a time: the event loop runs between
   * slices of about `sliceMs` (searches keep being answered) and fsyncs and the HNSW graph are
   * written off the main thread. Until it settles the index cannot change: `add`, `addMany`,
   * `upsert`, `replaceMetadata`, `remove`, `removeMany` and `ingest` throw QuarryError BUSY.
   */
  async saveInSlices(dir: string, options: SliceOptions & SaveOptions = {}): Promise<void> {
    checkOptionsObject(options, [...SAVE_OPTIONS, 'sliceMs'], 'linkUnchanged')
    const sliceMs: unknown = options.sliceMs
    if (sliceMs !== undefined && (typeof sliceMs !== 'number' || !Number.isFinite(sliceMs) || sliceMs < 0)) {
      throw new QuarryError('INVALID_OPTION', `sliceMs must be a number of milliseconds from 0 (the longest stretch of work between two turns of the event loop; 0 yields at every safe point); received ${describe(sliceMs)}.`, { path: 'sliceMs' })
    }
    this.#saving++
    try {
      const revision = this.#revision
      this.#copy = { at: await writeSnapshotInSlices(this.#state, dir, { ...options, ...lockOption(options) }, this.#linkable(options, dir)), revision }
    } finally {
      this.#saving--
    }
  }

  /** True while a {@link saveInSlices} is under way (the index cannot change). */
  get saving(): boolean {
    return this.#saving > 0
  }

  /** @internal The index's data. */
  get state(): IndexState {
    return this.#state
  }

  /**
   * The last snapshot, when it holds the index as it is now and a save into `dir` may link it: by
   * default when it lies in `dir` (a new generation of the same folder), anywhere with
   * `linkUnchanged: true`, never with false.
   */
  #linkable(options: SaveOptions, dir: string): SnapshotCopy | undefined {
    const copy = this.#copy
    if (options.linkUnchanged === false || copy === undefined || copy.revision !== this.#revision) return undefined
    return options.linkUnchanged === true || isInside(copy.at.folder, folderArgument(dir)) ? copy.at : undefined
  }

  /**
   * @internal A save into `from`, a generation being written (saveIndexInto), has ended: committed
   * as `to`, where the snapshot written there lies now; or failed (`to` undefined), and then the
   * snapshot before it, `before`, is the last one again.
   */
  settleCopy(from: string, to: string | undefined, before: CopyRecord | undefined): void {
    const copy = this.#copy
    if (copy === undefined || !isInside(copy.at.folder, from)) return
    if (to === undefined) this.#copy = before
    else this.#copy = { at: { ...copy.at, folder: `${to}${copy.at.folder.slice(from.length)}` }, revision: copy.revision }
  }

  /** @internal The last snapshot and the writes it holds: where it lies, and the record {@link settleCopy} puts back when a save into a generation fails. */
  get copyRecord(): CopyRecord | undefined {
    return this.#copy
  }

  /** DUPLICATE_ID for the first id of a batch that the index holds or the batch names earlier. */
  #checkNewIds(ids: readonly string[]): void {
    const seen = new Set<string>()
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as string
      if (this.#state.ids.has(id) || seen.has(id)) {
        throw new QuarryError('DUPLICATE_ID', `records[${i}] has id "${id}", which ${seen.has(id) ? 'appears earlier in the batch' : 'already exists'}; ids must be unique (use upsert() to replace).`, { path: `records[${i}].id` })
      }
      seen.add(id)
    }
  }

  #writable(): void {
    if (this.#saving > 0) throw new QuarryError('BUSY', 'a saveInSlices of this index is under way; await it before adding, replacing or removing records.')
    if (this.#searching) throw new QuarryError('BUSY', 'a search of this index is under way: a filter function must not add, replace or remove records of the index it filters.')
    // Every write counts, before it changes anything: a save after it writes the files again.
    this.#revision++
  }

  #validate(record: unknown, into?: Float32Array): ValidRecord {
    const { id, vector, text: given, metadata } = validateRecord(record)
    const text = given instanceof PreparedText ? given.text : given
    const analyzed = given instanceof PreparedText ? PreparedText.documentFor(given, this.#state.sparse) : undefined
    const { dimensions, metric } = this.#state.options
    if (dimensions === undefined) {
      if (vector !== undefined) throw new QuarryError('INVALID_RECORD', 'this index is text-only (created without dimensions): records carry text, not vectors.', { path: 'vector' })
      if (text === undefined) throw new QuarryError('INVALID_RECORD', 'this index is text-only: every record needs `text` (a string or { field: string }).', { path: 'text' })
      return { id, vector: undefined, text, analyzed, metadata }
    }
    if (vector === undefined) {
      throw new QuarryError('INVALID_VECTOR', `vector is required: this index holds ${dimensions}-dimensional vectors.`, { path: 'vector' })
    }
    return { id, vector: toVector(vector, dimensions, metric, 'vector', into), text, analyzed, metadata }
  }

  /** Writes a valid record at `label`; `live`: the label holds a record now (an upsert of its id). */
  #write(label: Label, record: ValidRecord, live = false): void {
    const state = this.#state
    if (record.vector && state.store && !(live && sameBits(state.store.view(label), record.vector))) {
      state.store.set(label, record.vector)
      state.graph?.set(label, state.options.metric === 'cosine' ? normalized(record.vector, this.#buffers.unit) : record.vector)
    }
    const previous = state.metadata[label]
    if (previous) state.values.remove(label, previous)
    state.metadata[label] = record.metadata
    state.values.add(label, record.metadata)
    state.texts.set(label, record.text)
    if (record.text === undefined) state.sparse.delete(label)
    else if (record.analyzed) state.sparse.setPrepared(label, record.analyzed)
    else state.sparse.set(label, sparseDocument(state.analyzer, record.text, state.options.text))
  }
}

/** Every id, in label order. */
function* allIds(state: IndexState): IterableIterator<string> {
  for (const label of state.ids.labels()) yield state.ids.idOf(label) as string
}

/**
 * The request's filter as the planner sees it: a function is tested record by record; a
 * declarative filter is answered from the value indexes (the passing labels and their count). On a
 * graph search (`graphSearch`: its topK and ef), a declarative filter whose estimated count the planner would
 * post-filter is tested on the graph's candidates instead, as a function is: the bitset of every
 * passing record would cost more than the search itself (tens of thousands of labels for a range
 * passing 10%).
 */
function filterInput(state: IndexState, filter: Filter | FilterFn | undefined, graphSearch: { readonly topK: number; readonly ef: number } | undefined): FilterInput | undefined {
  if (filter === undefined) return undefined
  if (typeof filter === 'function') return { kind: 'function', fn: filter }
  const live = state.ids.size
  if (graphSearch !== undefined && state.graph !== undefined && live > 0) {
    // An upper bound of the count: the planner scans exactly only what it knows to be few.
    const estimate = state.values.estimate(filter)
    const selectivity = Math.min(1, estimate / live)
    const plan = planDense({ live, k: graphSearch.topK, ef: graphSearch.ef, hasGraph: true, forceExact: false, selectivity, passing: estimate, options: state.options.planner })
    if (plan.strategy === 'hnsw-postfilter') return { kind: 'function', fn: compileChecked(filter), selectivity }
  }
  const allowed = state.values.match(filter)
  return { kind: 'indexed', allowed, count: allowed.count() }
}

/** Whether two rows hold the same float32 values, bit for bit (0 and -0 differ: the stored row is what `get` gives back). */
function sameBits(a: Float32Array, b: Float32Array): boolean {
  if (a.length !== b.length) return false
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length)
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length)
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false
  return true
}

const SAVE_OPTIONS: readonly string[] = ['linkUnchanged', 'lock']

/** `options.lock`, checked to be a DirectoryLock (whether it is held for the folder is checked by the write). */
function lockOption(options: SaveOptions): { lock?: DirectoryLock } {
  const lock: unknown = options.lock
  if (lock === undefined) return {}
  if (!(lock instanceof DirectoryLock)) throw new QuarryError('INVALID_OPTION', `lock must be a DirectoryLock of the folder saved to (DirectoryLock.acquire(dir)), or left out to lock the folder for the save; received ${describe(lock)}.`, { path: 'lock' })
  return { lock }
}

function prefixPath(error: unknown, prefix: string): unknown {
  if (!(error instanceof QuarryError)) return error
  const path = error.path ? `${prefix}.${error.path}` : prefix
  return new QuarryError(error.code, `${prefix}: ${error.message}`, { path, cause: error.cause })
}

/**
 * Creates an empty index. Options are validated up front (INVALID_OPTION says how to fix them).
 * Give `dimensions` for vector search; records may also carry `text` for BM25 search. Without
 * `dimensions` the index is text-only.
 */
export function createIndex(options: IndexOptions & { embedder?: Embedder } = {}): QuarryIndex {
  // Resolved first: options that are not an object (null) are refused as such, not read.
  const resolved = resolveIndexOptions(options)
  const embedder = options.embedder && typeof (options.embedder as Partial<Embedder>).embed === 'function' ? options.embedder : undefined
  return new QuarryIndex(emptyState(resolved), embedder)
}

/**
 * Reads the current snapshot of `dir`. Every file's size and sha256 are checked; a missing,
 * truncated, corrupted or other-version snapshot is refused with INVALID_SNAPSHOT and nothing
 * is returned half-loaded.
 */
export function loadIndex(dir: string, loadOptions: { embedder?: Embedder } = {}): QuarryIndex {
  if (typeof loadOptions !== 'object' || loadOptions === null || Array.isArray(loadOptions)) {
    throw new QuarryError('INVALID_OPTION', `loadIndex's options are an object like { embedder }; received ${describe(loadOptions)}.`, { path: 'options' })
  }
  // Only the embedder: everything else is the snapshot's own (a misspelt option is refused, not ignored).
  rejectUnknownOptions(loadOptions, ['embedder'], '')
  const { state, copy } = readSnapshot(dir, loadOptions.embedder)
  return new QuarryIndex(state, loadOptions.embedder, copy)
}

/**
 * Saves `index` into the subfolder `name` of a generation being written (a server's data folder,
 * an engine's save): in slices when the generation is, its files listed with the sums of its own
 * manifest. An index unchanged since its last save or load into a generation of the same folder
 * links that snapshot's files (see {@link QuarryIndex.save}; into another folder it writes them, a
 * copy that shares nothing); once the generation is committed the index knows its snapshot is
 * there, so the next one links it again while it stays unchanged (if the generation fails, the
 * snapshot before it is still the last).
 */
export function* saveIndexInto(out: GenerationWriter, name: string, index: QuarryIndex): Steps {
  const dir = out.path(name)
  const before = index.copyRecord
  const options: SaveOptions = { linkUnchanged: before !== undefined && isInside(before.at.folder, out.root) }
  const from = out.folder
  out.onSettled((committed) => index.settleCopy(from, committed?.folder, before))
  yield { sync: () => index.save(dir, options), async: (slices) => index.saveInSlices(dir, { ...slices, ...options }) }
  out.adopt(name)
}

/** The text an embedder sees: the string, or the fields joined by newlines. */
function textForEmbedding(text: TextInput): string {
  return typeof text === 'string' ? text : Object.values(text).join('\n')
}
