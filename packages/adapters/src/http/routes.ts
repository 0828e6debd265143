import { MEMORY_TABLE } from '../memory-bank/methods.js'
import { ManagedTopic } from '../memory-bank/schema.js'
import type { MemoryBank } from '../memory-bank/service.js'
import type { HttpVerb, MethodTable, ServiceMethods, UploadContent } from '../rpc/methods.js'
import { MIXIN_HTTP } from '../rpc/mixins.js'
import type { Outcome } from '../rpc/outcome.js'
import { Code } from '../rpc/status.js'
import { RETRIEVER_SERVICE, RETRIEVER_TABLE } from '../semantic-retriever/methods.js'
import { ChunkState } from '../semantic-retriever/schema.js'
import type { SemanticRetriever } from '../semantic-retriever/service.js'
import { RAG_DATA_TABLE, RAG_MIXIN_TABLE, RAG_SERVICE_TABLE } from '../vertex-rag/methods.js'
import { CorpusState, DataType, FileState, RagFileType } from '../vertex-rag/schema.js'
import type { VertexRagEngine, VertexRagSurface } from '../vertex-rag/service.js'
import type { EnumRules } from './enums.js'
import { compileTemplate, type CompiledTemplate } from './template.js'

export type HttpMethod = HttpVerb

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
  /** Whether a success changes state: the method table's `write` (reads and queries do not). */
  readonly mutates: boolean
}

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

interface Surface {
  /** `v1beta`: the path prefix and, for tables with `versions`, which methods it serves. */
  readonly version: string
  /** The fully qualified service of the table's methods (a method may name its own service in the same package). */
  readonly service: string
  readonly enums: EnumRules
}

/** The routes of one table on one surface: one per google.api.http binding of each method the version serves. */
function tableRoutes<T extends MethodTable<never>>(table: T, service: ServiceMethods<T>, surface: Surface): Route[] {
  const call = service as Readonly<Record<string, (request: unknown, content?: UploadContent) => Promise<Outcome<unknown>>>>
  const pkg = surface.service.slice(0, surface.service.lastIndexOf('.'))
  return Object.entries(table).flatMap(([name, spec]) => {
    if (spec.versions !== undefined && !spec.versions.includes(surface.version)) return []
    const serve = call[name] as (request: unknown, content?: UploadContent) => Promise<Outcome<unknown>>
    return spec.http.map((binding): Route => {
      const template = `${binding.media ? '/upload' : ''}/${surface.version}/${binding.path}`
      return {
        method: binding.verb,
        template,
        rpc: `${spec.service === undefined ? surface.service : spec.service.includes('.') ? spec.service : `${pkg}.${spec.service}`}.${spec.rpc}`,
        call: (request, upload) => serve(request, upload),
        enums: surface.enums,
        ...(binding.body === undefined ? {} : { body: binding.body }),
        ...(binding.media ? { multipart: true } : {}),
        compiled: compileTemplate(template),
        mutates: spec.write,
      }
    })
  })
}

function ragRoutes(surface: VertexRagSurface): Route[] {
  const pkg = `google.cloud.aiplatform.${surface.version}`
  return [
    ...tableRoutes(RAG_SERVICE_TABLE, surface, { version: surface.version, service: `${pkg}.VertexRagService`, enums: RAG_ENUMS }),
    ...tableRoutes(RAG_DATA_TABLE, surface, { version: surface.version, service: `${pkg}.VertexRagDataService`, enums: RAG_ENUMS }),
  ]
}

type MixinName = keyof typeof MIXIN_HTTP
type Call = (request: Record<string, unknown>) => Promise<Outcome<unknown>>

/**
 * The mixins of the Vertex APIs (operations, locations, IAM: rpc/mixins.ts), bound once per
 * version for both engines. Operations are done when returned; a call on one is answered by the
 * engine that made it (RAG Engine first, then Memory Bank), a list by the engine owning the
 * collection (Memory Bank for reasoningEngines/*).
 */
function mixinRoutes(rag: VertexRagSurface, mb: MemoryBank): Route[] {
  const either = (name: 'getOperation' | 'cancelOperation' | 'deleteOperation' | 'waitOperation'): Call => async (q) => {
    const fromRag = await rag[name](q)
    return fromRag.ok || fromRag.status.code !== Code.NOT_FOUND ? fromRag : mb[name](q)
  }
  // Locations and IAM are the same (UNIMPLEMENTED) on both engines: the RAG surface answers them.
  const calls: Readonly<Partial<Record<MixinName, Call>>> = {
    getOperation: either('getOperation'),
    cancelOperation: either('cancelOperation'),
    deleteOperation: either('deleteOperation'),
    waitOperation: either('waitOperation'),
    listOperations: (q) => (/(^|\/)reasoningEngines\//.test(String(q['name'] ?? '')) ? mb.listOperations(q) : rag.listOperations(q)),
  }
  return (Object.keys(MIXIN_HTTP) as MixinName[]).flatMap((name) =>
    MIXIN_HTTP[name].map((binding): Route => {
      const template = `/${rag.version}/${binding.path}`
      return {
        method: binding.verb,
        template,
        rpc: `${RAG_MIXIN_TABLE[name].service}.${RAG_MIXIN_TABLE[name].rpc}`,
        call: calls[name] ?? ((q) => rag[name](q)),
        enums: [...RAG_ENUMS, ...MB_ENUMS],
        ...(binding.body === undefined ? {} : { body: binding.body }),
        compiled: compileTemplate(template),
        mutates: RAG_MIXIN_TABLE[name].write,
      }
    }),
  )
}

export interface Engines {
  readonly semanticRetriever: SemanticRetriever
  readonly vertexRag: VertexRagEngine
  readonly memoryBank: MemoryBank
}

/**
 * Every REST route of the three APIs, derived from their method tables (the RPCs Quarry does not
 * serve included: they answer 501), then the Vertex mixins once per version.
 */
export function buildRoutes(engines: Engines, rag: { readonly v1: VertexRagSurface; readonly v1beta1: VertexRagSurface } = engines.vertexRag): Route[] {
  return [
    ...tableRoutes(RETRIEVER_TABLE, engines.semanticRetriever, { version: 'v1beta', service: RETRIEVER_SERVICE, enums: SR_ENUMS }),
    ...ragRoutes(rag.v1),
    ...ragRoutes(rag.v1beta1),
    ...tableRoutes(MEMORY_TABLE, engines.memoryBank, { version: 'v1beta1', service: 'google.cloud.aiplatform.v1beta1.MemoryBankService', enums: MB_ENUMS }),
    ...mixinRoutes(engines.vertexRag.v1, engines.memoryBank),
    ...mixinRoutes(engines.vertexRag.v1beta1, engines.memoryBank),
  ]
}
