import type { LinkableFile, QuarryIndex } from '@quarry/core'
import { rfc3339 } from '../rpc/clock.js'
import { omitUnset } from '../rpc/omit.js'
import type { ChunkJson, ChunkStateName, CorpusJson, CustomMetadataJson, DocumentJson } from './resources.js'

/**
 * What the Semantic Retriever holds. Maps keep insertion order, and entries are only inserted
 * on creation, so iterating a map lists resources by creation (`seq`) order.
 */
export interface RetrieverState {
  readonly corpora: Map<string, CorpusState>
  /** Next creation sequence number (orders lists and page cursors). */
  seq: number
}

interface Timestamps {
  readonly seq: number
  readonly createMs: number
  updateMs: number
}

export interface CorpusState extends Timestamps {
  readonly name: string
  displayName: string | undefined
  /** One core index per corpus: a record per embedded chunk, id = chunk name. */
  readonly index: QuarryIndex
  readonly documents: Map<string, DocumentState>
  /**
   * Keeps the file the documents and chunks are saved to (`corpus-<n>.json`), linked into the next
   * checkpoint while unchanged: every change to a document or chunk of the corpus calls its
   * `changed()` first.
   */
  readonly documentsFile: LinkableFile
  chunkCount: number
}

export interface DocumentState extends Timestamps {
  readonly name: string
  displayName: string | undefined
  customMetadata: readonly CustomMetadataJson[]
  readonly chunks: Map<string, ChunkState>
}

export interface ChunkState extends Timestamps {
  readonly name: string
  text: string
  customMetadata: readonly CustomMetadataJson[]
  /** STATE_ACTIVE when embedded and searchable; STATE_FAILED when the text has no embedding (e.g. no words). */
  state: ChunkStateName
}

export function corpusJson(c: CorpusState): CorpusJson {
  return omitUnset({ name: c.name, displayName: c.displayName, createTime: rfc3339(c.createMs), updateTime: rfc3339(c.updateMs) })
}

export function documentJson(d: DocumentState): DocumentJson {
  return omitUnset({ name: d.name, displayName: d.displayName, customMetadata: d.customMetadata, updateTime: rfc3339(d.updateMs), createTime: rfc3339(d.createMs) })
}

export function chunkJson(c: ChunkState): ChunkJson {
  return omitUnset({ name: c.name, data: { stringValue: c.text }, customMetadata: c.customMetadata, createTime: rfc3339(c.createMs), updateTime: rfc3339(c.updateMs), state: c.state })
}
