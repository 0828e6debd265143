import { EngineContext } from '../rpc/engine-context.js'
import { finishedOperation, remember } from '../rpc/operations.js'
import { parseName } from '../rpc/names.js'
import { failure, type RpcStatus } from '../rpc/status.js'
import type { ResolvedVertexRagOptions } from './options.js'
import type { OperationJson } from './resources.js'
import type { ApiVersion } from './schema.js'
import type { RagCorpusState, RagDataSchemaState, RagFileState, RagMetadataState, RagState } from './state.js'

export const LOCATION = 'projects/{project}/locations/{location}'
export const CORPUS = `${LOCATION}/ragCorpora/{rag_corpus}`
export const FILE = `${CORPUS}/ragFiles/{rag_file}`
export const SCHEMA = `${CORPUS}/ragDataSchemas/{rag_data_schema}`
export const METADATA = `${FILE}/ragMetadata/{rag_metadata}`

/** What every RAG Engine operation works on: state, options, lookups by name, stamps, operations. */
export class RagContext extends EngineContext<ResolvedVertexRagOptions> {
  readonly state: RagState = { corpora: new Map(), operations: new Map(), seq: 0 }
  protected readonly sequence = this.state






  location(name: string | undefined, field: string): string {
    parseName(name, LOCATION, field)
    return name as string
  }

  corpus(name: string | undefined, field: string): RagCorpusState {
    parseName(name, CORPUS, field)
    const corpus = this.state.corpora.get(name as string)
    if (!corpus) throw failure('NOT_FOUND', `RagCorpus "${name}" not found.`, field)
    return corpus
  }

  file(name: string | undefined, field: string): { corpus: RagCorpusState; file: RagFileState } {
    parseName(name, FILE, field)
    const corpusName = (name as string).split('/ragFiles/')[0] as string
    const corpus = this.state.corpora.get(corpusName)
    const file = corpus?.files.get(name as string)
    if (!corpus || !file) throw failure('NOT_FOUND', `RagFile "${name}" not found.`, field)
    return { corpus, file }
  }

  schema(name: string | undefined, field: string): { corpus: RagCorpusState; schema: RagDataSchemaState } {
    parseName(name, SCHEMA, field)
    const corpus = this.state.corpora.get((name as string).split('/ragDataSchemas/')[0] as string)
    const schema = corpus?.schemas.get(name as string)
    if (!corpus || !schema) throw failure('NOT_FOUND', `RagDataSchema "${name}" not found.`, field)
    return { corpus, schema }
  }

  ragMetadata(name: string | undefined, field: string): { corpus: RagCorpusState; file: RagFileState; metadata: RagMetadataState } {
    parseName(name, METADATA, field)
    const { corpus, file } = this.file((name as string).split('/ragMetadata/')[0], field)
    const metadata = file.metadata.get(name as string)
    if (!metadata) throw failure('NOT_FOUND', `RagMetadata "${name}" not found.`, field)
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
  ): OperationJson {
    const op = finishedOperation({ version, resource, id: this.numericId(), atMs: this.now(), metadataType, responseType: response.type, response: response.value, extraMetadata, partialFailures })
    remember(this.state.operations, op)
    return op
  }
}
