/**
 * Where a term id comes from: the vocabulary of an Analyzer, whose ids are dense from 0. `epoch`
 * changes (a new object) whenever the ids start over, so a reader that kept ids translated from
 * an earlier epoch knows to drop them.
 */
export interface TermVocabulary {
  readonly epoch: object
  /** The term with id `id` in the current epoch. */
  termOf(id: number): string
}

/**
 * One document's terms as it is analyzed: distinct term ids in the order they first occur, the
 * summed weight of each, and the summed weight of all (the document's length). Reused from one
 * document to the next (`clear`), so indexing a document allocates nothing here. The sums are
 * made in token order, first `0 + weight` then `+= weight`, as a Map of counts makes them.
 */
export class TermCounts {
  readonly vocabulary: TermVocabulary
  /** Distinct term ids, first occurrence first (the first `size`). */
  ids = new Int32Array(256)
  /** The summed weight of `ids[i]` at position i. */
  weights = new Float64Array(256)
  size = 0
  length = 0
  /** By term id: its position in `ids` + 1, or 0 when the document does not have it (yet). */
  #position = new Int32Array(1024)

  constructor(vocabulary: TermVocabulary) {
    this.vocabulary = vocabulary
  }

  /** Counts one occurrence of term `id` with `weight`. */
  add(id: number, weight: number): void {
    if (id >= this.#position.length) this.#growPositions(id + 1)
    const at = (this.#position[id] as number) - 1
    if (at >= 0) this.weights[at] = (this.weights[at] as number) + weight
    else {
      if (this.size === this.ids.length) this.#growEntries()
      this.ids[this.size] = id
      this.weights[this.size] = 0 + weight
      this.size++
      this.#position[id] = this.size
    }
    this.length += weight
  }

  /** Empties the counts for the next document (only the positions it set are reset). */
  clear(): void {
    for (let i = 0; i < this.size; i++) this.#position[this.ids[i] as number] = 0
    this.size = 0
    this.length = 0
  }

  #growPositions(min: number): void {
    let size = this.#position.length
    while (size < min) size *= 2
    const position = new Int32Array(size)
    position.set(this.#position)
    this.#position = position
  }

  #growEntries(): void {
    const ids = new Int32Array(this.ids.length * 2)
    ids.set(this.ids)
    const weights = new Float64Array(this.weights.length * 2)
    weights.set(this.weights)
    this.ids = ids
    this.weights = weights
  }
}
