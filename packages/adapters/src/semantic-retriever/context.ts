import { Analyzer } from '@quarry/core'
import { EngineContext } from '../rpc/engine-context.js'
import { characterCount, loweredLimit } from '../rpc/limits.js'
import { failure, invalidArgument } from '../rpc/status.js'
import { parseName } from '../rpc/names.js'
import type { ResolvedRetrieverOptions } from './options.js'
import type { ChunkState, CorpusState, DocumentState, RetrieverState } from './state.js'

export const CORPUS_NAME = 'corpora/{corpus}'
export const DOCUMENT_NAME = 'corpora/{corpus}/documents/{document}'
export const CHUNK_NAME = 'corpora/{corpus}/documents/{document}/chunks/{chunk}'

/** What every Semantic Retriever operation works on. */
export class RetrieverContext extends EngineContext<ResolvedRetrieverOptions> {
  readonly state: RetrieverState = { corpora: new Map(), seq: 0 }
  protected readonly sequence = this.state
  /** Counts a chunk's tokens: word tokens of the wink tokenizer, nothing dropped or stemmed. */
  readonly #tokens = new Analyzer({ stopWords: false, stem: false, minLength: 1 })

  countTokens(text: string): number {
    return this.#tokens.tokenOffsets(text).length / 2
  }

  checkDisplayName(value: string | undefined, field: string): string | undefined {
    if (value === undefined || value === '') return undefined
    // The schema holds Google's 512; this is the engine's own, possibly lower, limit.
    const n = characterCount(value)
    if (n > this.options.limits.displayName) throw loweredLimit(n, this.options.limits.displayName, field, 'limits.displayName', 'characters')
    return value
  }

  corpus(name: string | undefined, field: string): CorpusState {
    const parsed = parseName(name, CORPUS_NAME, field)
    const corpus = this.state.corpora.get(parsed.name)
    if (!corpus) throw failure('NOT_FOUND', `Corpus "${parsed.name}" not found.`, field)
    return corpus
  }

  document(name: string | undefined, field: string): { corpus: CorpusState; document: DocumentState } {
    const parsed = parseName(name, DOCUMENT_NAME, field)
    const corpus = this.state.corpora.get(parsed.names.corpus)
    const document = corpus?.documents.get(parsed.name)
    if (!corpus || !document) throw failure('NOT_FOUND', `Document "${parsed.name}" not found.`, field)
    return { corpus, document }
  }

  chunk(name: string | undefined, field: string): { corpus: CorpusState; document: DocumentState; chunk: ChunkState } {
    const parsed = parseName(name, CHUNK_NAME, field)
    const corpus = this.state.corpora.get(parsed.names.corpus)
    const document = corpus?.documents.get(parsed.names.document)
    const chunk = document?.chunks.get(parsed.name)
    if (!corpus || !document || !chunk) throw failure('NOT_FOUND', `Chunk "${parsed.name}" not found.`, field)
    return { corpus, document, chunk }
  }
}

/** Checks an update mask: present, non-empty, and only the paths the resource allows. */
export function checkUpdateMask(paths: readonly string[] | undefined, allowed: readonly string[], resource: string): Set<string> {
  if (paths === undefined || paths.length === 0) {
    throw invalidArgument('updateMask', `updateMask is required: list the ${resource} fields to change (${allowed.join(', ')}).`)
  }
  for (const [i, p] of paths.entries()) {
    if (!allowed.includes(p)) throw invalidArgument(`updateMask.paths[${i}]`, `"${p}" cannot be updated on a ${resource}; updatable fields: ${allowed.join(', ')}.`)
  }
  return new Set(paths)
}
