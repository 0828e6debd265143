import type { MemoryBank } from '../memory-bank/service.js'
import { ManagedTopic } from '../memory-bank/schema.js'
import type { Outcome } from '../rpc/outcome.js'
import { ChunkState } from '../semantic-retriever/schema.js'
import type { SemanticRetriever } from '../semantic-retriever/service.js'
import { CorpusState, DataType, FileState, RagFileType } from '../vertex-rag/schema.js'
import type { VertexRagEngine, VertexRagSurface } from '../vertex-rag/service.js'
import { compileTemplate, type CompiledTemplate } from './template.js'
import type { EnumRules } from './enums.js'

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE'

/** One REST binding of a method: its HTTP method and path template (as in the google.api.http annotations), and where the body goes. */
export interface Route {
  readonly method: HttpMethod
  readonly template: string
  /** `*`: the body is the request; a field name: the body is that field; absent: no body. */
  readonly body?: string
  /** The RPC it serves (`google.ai.generativelanguage.v1beta.RetrieverService.CreateCorpus`). */
  readonly rpc: string
  readonly call: (request: Record<string, unknown>, upload: Uint8Array | undefined) => Promise<Outcome<unknown>>
  readonly enums: EnumRules
  /** A multipart upload (`metadata` JSON part + `file` part). */
  readonly multipart?: boolean
  readonly compiled: CompiledTemplate
  /** Whether a success changes state (reads and queries do not). */
  readonly mutates: boolean
}

type Spec = Omit<Route, 'compiled' | 'mutates'>

const READS = /\.(Get|List|Query|Retrieve)[A-Z]\w*|GetOperation/

const SR_ENUMS: EnumRules = [{ path: ['state'], values: ChunkState.values }]
const RAG_ENUMS: EnumRules = [
  { path: ['corpusStatus', 'state'], values: CorpusState.values },
  { path: ['fileStatus', 'state'], values: FileState.values },
  { path: ['ragFileType'], values: RagFileType.values },
  { path: ['schemaDetails', 'type'], values: DataType.values },
]
const MB_ENUMS: EnumRules = [
  { path: ['managedMemoryTopic'], values: ManagedTopic.values },
  { path: ['action'], values: { ACTION_UNSPECIFIED: 0, CREATED: 1, UPDATED: 2, DELETED: 3 } },
]

function retrieverRoutes(sr: SemanticRetriever): Spec[] {
  const S = 'google.ai.generativelanguage.v1beta.RetrieverService'
  const r = (method: HttpMethod, template: string, rpc: string, call: (q: unknown) => Promise<Outcome<unknown>>, body?: string): Spec => ({
    method,
    template: `/v1beta/${template}`,
    rpc: `${S}.${rpc}`,
    call: (q) => call(q),
    enums: SR_ENUMS,
    ...(body ? { body } : {}),
  })
  const D = 'corpora/*/documents/*'
  return [
    r('POST', 'corpora', 'CreateCorpus', (q) => sr.createCorpus(q), 'corpus'),
    r('GET', '{name=corpora/*}', 'GetCorpus', (q) => sr.getCorpus(q)),
    r('PATCH', '{corpus.name=corpora/*}', 'UpdateCorpus', (q) => sr.updateCorpus(q), 'corpus'),
    r('DELETE', '{name=corpora/*}', 'DeleteCorpus', (q) => sr.deleteCorpus(q)),
    r('GET', 'corpora', 'ListCorpora', (q) => sr.listCorpora(q)),
    r('POST', '{name=corpora/*}:query', 'QueryCorpus', (q) => sr.queryCorpus(q), '*'),
    r('POST', '{parent=corpora/*}/documents', 'CreateDocument', (q) => sr.createDocument(q), 'document'),
    r('GET', `{name=${D}}`, 'GetDocument', (q) => sr.getDocument(q)),
    r('PATCH', `{document.name=${D}}`, 'UpdateDocument', (q) => sr.updateDocument(q), 'document'),
    r('DELETE', `{name=${D}}`, 'DeleteDocument', (q) => sr.deleteDocument(q)),
    r('GET', '{parent=corpora/*}/documents', 'ListDocuments', (q) => sr.listDocuments(q)),
    r('POST', `{name=${D}}:query`, 'QueryDocument', (q) => sr.queryDocument(q), '*'),
    r('POST', `{parent=${D}}/chunks`, 'CreateChunk', (q) => sr.createChunk(q), 'chunk'),
    r('POST', `{parent=${D}}/chunks:batchCreate`, 'BatchCreateChunks', (q) => sr.batchCreateChunks(q), '*'),
    r('GET', `{name=${D}/chunks/*}`, 'GetChunk', (q) => sr.getChunk(q)),
    r('PATCH', `{chunk.name=${D}/chunks/*}`, 'UpdateChunk', (q) => sr.updateChunk(q), 'chunk'),
    r('POST', `{parent=${D}}/chunks:batchUpdate`, 'BatchUpdateChunks', (q) => sr.batchUpdateChunks(q), '*'),
    r('DELETE', `{name=${D}/chunks/*}`, 'DeleteChunk', (q) => sr.deleteChunk(q)),
    r('POST', `{parent=${D}}/chunks:batchDelete`, 'BatchDeleteChunks', (q) => sr.batchDeleteChunks(q), '*'),
    r('GET', `{parent=${D}}/chunks`, 'ListChunks', (q) => sr.listChunks(q)),
  ]
}

function ragRoutes(surface: VertexRagSurface): Spec[] {
  const v = surface.version
  const L = 'projects/*/locations/*'
  const C = `${L}/ragCorpora/*`
  const F = `${C}/ragFiles/*`
  const data = `google.cloud.aiplatform.${v}.VertexRagDataService`
  const r = (method: HttpMethod, template: string, rpc: string, call: (q: unknown) => Promise<Outcome<unknown>>, body?: string): Spec => ({
    method,
    template: `/${v}/${template}`,
    rpc: rpc.includes('.') ? rpc : `${data}.${rpc}`,
    call: (q) => call(q),
    enums: RAG_ENUMS,
    ...(body ? { body } : {}),
  })
  const routes: Spec[] = [
    r('POST', `{parent=${L}}:retrieveContexts`, `google.cloud.aiplatform.${v}.VertexRagService.RetrieveContexts`, (q) => surface.retrieveContexts(q), '*'),
    r('POST', `{parent=${L}}/ragCorpora`, 'CreateRagCorpus', (q) => surface.createRagCorpus(q), 'ragCorpus'),
    r('PATCH', `{ragCorpus.name=${C}}`, 'UpdateRagCorpus', (q) => surface.updateRagCorpus(q), 'ragCorpus'),
    r('GET', `{name=${C}}`, 'GetRagCorpus', (q) => surface.getRagCorpus(q)),
    r('GET', `{parent=${L}}/ragCorpora`, 'ListRagCorpora', (q) => surface.listRagCorpora(q)),
    r('DELETE', `{name=${C}}`, 'DeleteRagCorpus', (q) => surface.deleteRagCorpus(q)),
    r('POST', `{parent=${C}}/ragFiles:import`, 'ImportRagFiles', (q) => surface.importRagFiles(q), '*'),
    r('GET', `{name=${F}}`, 'GetRagFile', (q) => surface.getRagFile(q)),
    r('GET', `{parent=${C}}/ragFiles`, 'ListRagFiles', (q) => surface.listRagFiles(q)),
    r('DELETE', `{name=${F}}`, 'DeleteRagFile', (q) => surface.deleteRagFile(q)),
    {
      method: 'POST',
      template: `/${v}/{parent=${C}}/ragFiles:upload`,
      rpc: `${data}.UploadRagFile`,
      body: '*',
      call: (q, upload) => surface.uploadRagFile(q, upload),
      enums: RAG_ENUMS,
    },
    {
      method: 'POST',
      template: `/upload/${v}/{parent=${C}}/ragFiles:upload`,
      rpc: `${data}.UploadRagFile (multipart media upload)`,
      body: '*',
      multipart: true,
      call: (q, upload) => surface.uploadRagFile(q, upload),
      enums: RAG_ENUMS,
    },
  ]
  if (v === 'v1beta1') {
    const S = `${C}/ragDataSchemas/*`
    const M = `${F}/ragMetadata/*`
    routes.push(
      r('POST', `{parent=${C}}/ragDataSchemas`, 'CreateRagDataSchema', (q) => surface.createRagDataSchema(q), 'ragDataSchema'),
      r('POST', `{parent=${C}}/ragDataSchemas:batchCreate`, 'BatchCreateRagDataSchemas', (q) => surface.batchCreateRagDataSchemas(q), '*'),
      r('GET', `{name=${S}}`, 'GetRagDataSchema', (q) => surface.getRagDataSchema(q)),
      r('GET', `{parent=${C}}/ragDataSchemas`, 'ListRagDataSchemas', (q) => surface.listRagDataSchemas(q)),
      r('DELETE', `{name=${S}}`, 'DeleteRagDataSchema', (q) => surface.deleteRagDataSchema(q)),
      r('POST', `{parent=${C}}/ragDataSchemas:batchDelete`, 'BatchDeleteRagDataSchemas', (q) => surface.batchDeleteRagDataSchemas(q), '*'),
      r('POST', `{parent=${F}}/ragMetadata`, 'CreateRagMetadata', (q) => surface.createRagMetadata(q), 'ragMetadata'),
      r('POST', `{parent=${F}}/ragMetadata:batchCreate`, 'BatchCreateRagMetadata', (q) => surface.batchCreateRagMetadata(q), '*'),
      r('PATCH', `{ragMetadata.name=${M}}`, 'UpdateRagMetadata', (q) => surface.updateRagMetadata(q), 'ragMetadata'),
      r('GET', `{name=${M}}`, 'GetRagMetadata', (q) => surface.getRagMetadata(q)),
      r('GET', `{parent=${F}}/ragMetadata`, 'ListRagMetadata', (q) => surface.listRagMetadata(q)),
      r('DELETE', `{name=${M}}`, 'DeleteRagMetadata', (q) => surface.deleteRagMetadata(q)),
      r('POST', `{parent=${F}}/ragMetadata:batchDelete`, 'BatchDeleteRagMetadata', (q) => surface.batchDeleteRagMetadata(q), '*'),
    )
  }
  return routes
}

function memoryRoutes(mb: MemoryBank): Spec[] {
  const S = 'google.cloud.aiplatform.v1beta1.MemoryBankService'
  const r = (method: HttpMethod, template: string, rpc: string, call: (q: unknown) => Promise<Outcome<unknown>>, body?: string): Spec => ({
    method,
    template: `/v1beta1/${template}`,
    rpc: `${S}.${rpc}`,
    call: (q) => call(q),
    enums: MB_ENUMS,
    ...(body ? { body } : {}),
  })
  // Each method is bound under projects/*/locations/* and, as Google's additional binding, under reasoningEngines/* alone.
  return ['projects/*/locations/*/reasoningEngines/*', 'reasoningEngines/*'].flatMap((E) => [
    r('POST', `{parent=${E}}/memories`, 'CreateMemory', (q) => mb.createMemory(q), 'memory'),
    r('GET', `{name=${E}/memories/*}`, 'GetMemory', (q) => mb.getMemory(q)),
    r('PATCH', `{memory.name=${E}/memories/*}`, 'UpdateMemory', (q) => mb.updateMemory(q), 'memory'),
    r('GET', `{parent=${E}}/memories`, 'ListMemories', (q) => mb.listMemories(q)),
    r('DELETE', `{name=${E}/memories/*}`, 'DeleteMemory', (q) => mb.deleteMemory(q)),
    r('POST', `{parent=${E}}/memories:generate`, 'GenerateMemories', (q) => mb.generateMemories(q), '*'),
    r('POST', `{parent=${E}}/memories:retrieve`, 'RetrieveMemories', (q) => mb.retrieveMemories(q), '*'),
    r('POST', `{parent=${E}}/memories:purge`, 'PurgeMemories', (q) => mb.purgeMemories(q), '*'),
  ])
}

/** Operations are done when returned; polling reads them back from whichever engine made them. */
function operationRoutes(rag: VertexRagEngine, mb: MemoryBank): Spec[] {
  const get = async (q: Record<string, unknown>): Promise<Outcome<unknown>> => {
    const fromRag = await rag.v1beta1.getOperation(q)
    return fromRag.ok ? fromRag : mb.getOperation(q)
  }
  return ['v1', 'v1beta1'].map((v) => ({
    method: 'GET' as const,
    template: `/${v}/{name=**/operations/*}`,
    rpc: 'google.longrunning.Operations.GetOperation',
    call: get,
    enums: [...RAG_ENUMS, ...MB_ENUMS],
  }))
}

export interface Engines {
  readonly semanticRetriever: SemanticRetriever
  readonly vertexRag: VertexRagEngine
  readonly memoryBank: MemoryBank
}

/** Every REST route of the three APIs, compiled. */
export function buildRoutes(engines: Engines): Route[] {
  const specs = [
    ...retrieverRoutes(engines.semanticRetriever),
    ...ragRoutes(engines.vertexRag.v1),
    ...ragRoutes(engines.vertexRag.v1beta1),
    ...memoryRoutes(engines.memoryBank),
    ...operationRoutes(engines.vertexRag, engines.memoryBank),
  ]
  return specs.map((s) => ({ ...s, compiled: compileTemplate(s.template), mutates: !READS.test(s.rpc) }))
}
