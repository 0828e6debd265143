import { EngineContext } from '../rpc/engine-context.js'
import { finishedOperation, remember } from '../rpc/operations.js'
import { parseName, type ResourceName } from '../rpc/names.js'
import { failure, type RpcStatus } from '../rpc/status.js'
import type { ResolvedVertexRagOptions } from './options.js'
import type { Operation } from '../rpc/operations.js'
import type { ApiVersion } from './schema.js'
import type { RagCorpusState, RagDataSchemaState, RagFileState, RagMetadataState, RagState } from './state.js'

export const LOCATION = 'projects/{project}/locations/{location}'
export const CORPUS = `${LOCATION}/ragCorpora/{rag_corpus}`
const FILE = `${CORPUS}/ragFiles/{rag_file}`
const SCHEMA = `${CORPUS}/ragDataSchemas/{rag_data_schema}`
const METADATA = `${FILE}/ragMetadata/{rag_metadata}`

/** What every RAG Engine operation works on: state, options, lookups by name, stamps, operations. */
export class RagContext extends EngineContext<ResolvedVertexRagOptions> {
  readonly state: RagState = { corpora: new Map(), operations: new Map(), engineConfigs: new Map(), seq: 0 }
  protected readonly sequence = this.state

  /** A location name, `projects/{project}/locations/{location}`. */
  location(name: string | undefined, field: string): string {
    return parseName(name, LOCATION, field).name
  }

  corpus(name: string | undefined, field: string): RagCorpusState {
    const parsed = parseName(name, CORPUS, field)
    const corpus = this.state.corpora.get(parsed.name)
    if (!corpus) throw failure('NOT_FOUND', `RagCorpus "${parsed.name}" not found.`, field)
    return corpus
  }

  file(name: string | undefined, field: string): { corpus: RagCorpusState; file: RagFileState } {
    return this.#file(parseName(name, FILE, field), field)
  }

  #file(parsed: ResourceName<'rag_corpus' | 'rag_file'>, field: string): { corpus: RagCorpusState; file: RagFileState } {
    const corpus = this.state.corpora.get(parsed.names.rag_corpus)
    const file = corpus?.files.get(parsed.names.rag_file)
    if (!corpus || !file) throw failure('NOT_FOUND', `RagFile "${parsed.names.rag_file}" not found.`, field)
    return { corpus, file }
  }

  schema(name: string | undefined, field: string): { corpus: RagCorpusState; schema: RagDataSchemaState } {
    const parsed = parseName(name, SCHEMA, field)
    const corpus = this.state.corpora.get(parsed.names.rag_corpus)
    const schema = corpus?.schemas.get(parsed.name)
    if (!corpus || !schema) throw failure('NOT_FOUND', `RagDataSchema "${parsed.name}" not found.`, field)
    return { corpus, schema }
  }

  ragMetadata(name: string | undefined, field: string): { corpus: RagCorpusState; file: RagFileState; metadata: RagMetadataState } {
    const parsed = parseName(name, METADATA, field)
    const { corpus, file } = this.#file(parsed, field)
    const metadata = file.metadata.get(parsed.name)
    if (!metadata) throw failure('NOT_FOUND', `RagMetadata "${parsed.name}" not found.`, field)
    return { corpus, file, metadata }
  }

  /** A finished long-running operation on `resource`, remembered for polling. */
  operation(
    version: ApiVersion,
    resource: string,
    metadataType: string,
    response: { type: string; value: object },
    extraMetadata: Readonly<Record<string, unknown>> = {},
    partialFailures: readonly RpcStatus[] = [],
    id: string = this.numericId(),
  ): Operation {
    const op = finishedOperation({ version, resource, id, atMs: this.now(), metadataType, responseType: response.type, response: response.value, extraMetadata, partialFailures })
    remember(this.state.operations, op)
    return op
  }
}
