/** A forward entry's count for a label with no entry (not indexed), in memory and in snapshots. */
export const NO_TEXT = 0xffff_ffff

/** One document's forward entry: term ids ascending and their tfs, side by side. */
export interface ForwardEntry {
  readonly ids: Uint32Array
  readonly tfs: Float32Array
}

/**
 * The forward index: every label's entry in two shared columns, label l's term ids and tfs at
 * [starts[l], starts[l] + counts[l]). A typed array pair per document would cost more in object
 * headers than its terms hold; here a document costs its terms and twelve bytes. An entry that is
 * replaced or removed leaves its slots behind until the columns fill up; then the live entries are
 * rewritten in label order.
 */
export class ForwardEntries {
  #starts: Float64Array
  /** Term count by label; NO_TEXT where none. */
  #counts: Uint32Array
  #ids: Uint32Array
  #tfs: Float32Array
  /** Slots in use at the start of the columns, and those of them that no entry owns any more. */
  #used: number
  #dead = 0

  /**
   * Entries as a snapshot stores them (see `fromColumns`), or none. The ids and tfs are adopted,
   * not copied, until the first entry is added.
   */
  private constructor(counts: Uint32Array, starts: Float64Array, ids: Uint32Array, tfs: Float32Array) {
    this.#counts = counts
    this.#starts = starts
    this.#ids = ids
    this.#tfs = tfs
    this.#used = ids.length
  }

  static empty(): ForwardEntries {
    return new ForwardEntries(new Uint32Array(1024).fill(NO_TEXT), new Float64Array(1024), new Uint32Array(1024), new Float32Array(1024))
  }

  /**
   * The entries of `counts` (NO_TEXT: none) laid out one after the other in label order in `ids`
   * and `tfs`; undefined when the counts do not sum to their length.
   */
  static fromColumns(counts: Uint32Array, ids: Uint32Array, tfs: Float32Array): ForwardEntries | undefined {
    let size = 1024
    while (size < counts.length) size *= 2
    const own = new Uint32Array(size).fill(NO_TEXT)
    own.set(counts)
    const starts = new Float64Array(size)
    let at = 0
    for (let label = 0; label < counts.length; label++) {
      const n = counts[label] as number
      starts[label] = at
      if (n !== NO_TEXT) at += n
    }
    if (at !== ids.length || at !== tfs.length) return undefined
    return new ForwardEntries(own, starts, ids, tfs)
  }

  /** Labels whose entry holds a term among the first `extent`: a text with none (empty, or only stop words) is no document of the field (Lucene's docCount). */
  withTerms(extent: number): number {
    let n = 0
    const counts = this.#counts
    for (let label = 0; label < Math.min(extent, counts.length); label++) if (counts[label] !== NO_TEXT && counts[label] !== 0) n++
    return n
  }

  has(label: number): boolean {
    return label < this.#counts.length && this.#counts[label] !== NO_TEXT
  }

  /** A label's entry as views of the columns (valid until the next change), or undefined. */
  get(label: number): ForwardEntry | undefined {
    if (!this.has(label)) return undefined
    const from = this.#starts[label] as number
    const to = from + (this.#counts[label] as number)
    return { ids: this.#ids.subarray(from, to), tfs: this.#tfs.subarray(from, to) }
  }

  /** Calls `each` with every term id of a label's entry (none when it has none). */
  forEachId(label: number, each: (id: number) => void): void {
    if (!this.has(label)) return
    const from = this.#starts[label] as number
    const to = from + (this.#counts[label] as number)
    for (let i = from; i < to; i++) each(this.#ids[i] as number)
  }

  /** The tf of term id `id` in a label's entry (binary search), 0 when absent. */
  tf(label: number, id: number): number {
    if (!this.has(label)) return 0
    const ids = this.#ids
    let lo = this.#starts[label] as number
    let hi = lo + (this.#counts[label] as number) - 1
    while (lo <= hi) {
      const mid = lo + ((hi - lo) >> 1)
      const x = ids[mid] as number
      if (x === id) return this.#tfs[mid] as number
      if (x < id) lo = mid + 1
      else hi = mid - 1
    }
    return 0
  }

  /** Sets a label's entry to the first `n` ids and tfs given (copied); the label must have none. */
  set(label: number, ids: Uint32Array, tfs: Float32Array, n: number): void {
    if (label >= this.#counts.length) this.#growLabels(label + 1)
    if (this.#used + n > this.#ids.length) this.#growSlots(n)
    const at = this.#used
    this.#ids.set(ids.subarray(0, n), at)
    this.#tfs.set(tfs.subarray(0, n), at)
    this.#starts[label] = at
    this.#counts[label] = n
    this.#used = at + n
  }

  /** Removes a label's entry (its slots are reclaimed later). */
  delete(label: number): void {
    if (!this.has(label)) return
    this.#dead += this.#counts[label] as number
    this.#counts[label] = NO_TEXT
  }

  /**
   * The first `extent` labels' entries as a snapshot stores them: the counts, then the ids and tfs
   * in label order, as runs of the columns (one run when the entries lie in label order).
   */
  columns(extent: number): { counts: Uint32Array; ids: Uint32Array[]; tfs: Float32Array[] } {
    const counts = new Uint32Array(extent).fill(NO_TEXT)
    counts.set(this.#counts.subarray(0, Math.min(extent, this.#counts.length)))
    const ids: Uint32Array[] = []
    const tfs: Float32Array[] = []
    let runFrom = 0
    let runTo = 0
    const endRun = (): void => {
      if (runFrom < runTo) {
        ids.push(this.#ids.subarray(runFrom, runTo))
        tfs.push(this.#tfs.subarray(runFrom, runTo))
      }
    }
    for (let label = 0; label < extent; label++) {
      const n = counts[label] as number
      if (n === NO_TEXT || n === 0) continue
      const from = this.#starts[label] as number
      if (from !== runTo) {
        endRun()
        runFrom = from
      }
      runTo = from + n
    }
    endRun()
    return { counts, ids, tfs }
  }

  #growLabels(min: number): void {
    let size = this.#counts.length
    while (size < min) size *= 2
    const counts = new Uint32Array(size).fill(NO_TEXT)
    counts.set(this.#counts)
    const starts = new Float64Array(size)
    starts.set(this.#starts)
    this.#counts = counts
    this.#starts = starts
  }

  /** Room for `n` more slots: columns half again as large as the live entries and `n`, the live entries moved there (in label order when any slot was dead). */
  #growSlots(n: number): void {
    const live = this.#used - this.#dead
    const size = Math.max(1024, Math.ceil((live + n) * 1.5))
    const ids = new Uint32Array(size)
    const tfs = new Float32Array(size)
    if (this.#dead === 0) {
      ids.set(this.#ids.subarray(0, this.#used))
      tfs.set(this.#tfs.subarray(0, this.#used))
    } else {
      let at = 0
      const counts = this.#counts
      for (let label = 0; label < counts.length; label++) {
        const count = counts[label] as number
        if (count === NO_TEXT) continue
        const from = this.#starts[label] as number
        ids.set(this.#ids.subarray(from, from + count), at)
        tfs.set(this.#tfs.subarray(from, from + count), at)
        this.#starts[label] = at
        at += count
      }
      this.#used = at
      this.#dead = 0
    }
    this.#ids = ids
    this.#tfs = tfs
  }
}
