import type { PreparedSparse, SparseIndex } from '../sparse/sparse-index.js'
import type { TextInput } from './record.js'

/**
 * A record's text analyzed ahead of its add by {@link QuarryIndex.prepareText}: give it as the
 * record's `text` to `add`, `addMany` or `upsert` of the same index and the write does not
 * analyze the text again. The record is the one the plain text makes (the same stored text, the
 * same BM25 statistics). Another index, or an index loaded since, analyzes `text` as usual.
 */
export class PreparedText {
  /** The text as given (validated, frozen): what the record stores. */
  readonly text: TextInput
  readonly #index: SparseIndex
  readonly #document: PreparedSparse

  /** @internal Use {@link QuarryIndex.prepareText}. */
  constructor(text: TextInput, index: SparseIndex, document: PreparedSparse) {
    this.text = text
    this.#index = index
    this.#document = document
  }

  /** @internal The analyzed document, if it was made for the text index `index`. */
  static documentFor(prepared: PreparedText, index: SparseIndex): PreparedSparse | undefined {
    return prepared.#index === index ? prepared.#document : undefined
  }
}
