import { MEMORY_TABLE } from '../memory-bank/methods.js'
import { SESSION_TABLE, SESSION_TABLE_V1 } from '../memory-bank/session-methods.js'
import { REASONING_ENGINE_TABLE, REASONING_ENGINE_TABLE_V1 } from '../memory-bank/engine-methods.js'
import { ManagedTopic } from '../memory-bank/schema.js'
import type { MemoryBank } from '../memory-bank/service.js'
import type { CallOptions, HttpBinding, MethodTable, ServiceMethods, UploadContent } from '../rpc/methods.js'
import { aheadOf } from '../rpc/methods.js'
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
import { PREDICTION_TABLE } from '../generative/methods.js'
import { FinishReason } from '../generative/schema.js'
import { predictionSurfaces, type PredictionSurface } from '../generative/service.js'

/**
 * Every RPC the servers answer, bound to its engine: the one list both transports derive from.
 * REST (http/routes.ts) serves each method's HTTP bindings below its version prefix; gRPC
 * (grpc/server.ts) serves `/<service>/<rpc>`. A method is declared once, in its API's table.
 */

/** One RPC of one API version, bound to the engine that answers it. */
export interface BoundMethod {
  /** The fully qualified service, `google.cloud.aiplatform.v1beta1.VertexRagService`. */
  readonly service: string
  /** The RPC's name in its service, `RetrieveContexts`. */
  readonly rpc: string
  /** The API version of the REST path prefix (`v1beta1`). */
  readonly version: string
  /** Its google.api.http bindings below the version prefix (none: gRPC only). */
  readonly http: readonly HttpBinding[]
  /** Request message JSON (and upload content) → response JSON or a Status; never throws. */
  readonly call: (request: Record<string, unknown>, content: UploadContent | undefined, options?: CallOptions) => Promise<Outcome<unknown>>
  /** Whether a success changes state: the method table's `write` (reads and queries do not). */
  readonly mutates: boolean
  /** What the write can start while it waits for a lock before the engine's (rpc/methods.ts `ahead`). */
  readonly ahead?: (request: Record<string, unknown>, content: UploadContent | undefined) => void
  readonly enums: EnumRules
}

const SR_ENUMS: EnumRules = [{ path: ['state'], values: ChunkState.values }]
const RAG_ENUMS: EnumRules = [
  { path: ['corpusStatus', 'state'], values: CorpusState.values },
  { path: ['fileStatus', 'state'], values: FileState.values },
  { path: ['ragFileType'], values: RagFileType.values },
  { path: ['schemaDetails', 'type'], values: DataType.values },
]
const PREDICTION_ENUMS: EnumRules = [{ path: ['candidates', 'finishReason'], values: FinishReason.values }]
const MB_ENUMS: EnumRules = [
  { path: ['managedMemoryTopic'], values: ManagedTopic.values },
  { path: ['action'], values: { ACTION_UNSPECIFIED: 0, CREATED: 1, UPDATED: 2, DELETED: 3 } },
]

/** The services Google's Vertex clients mix in beside their own (rpc/mixins.ts). */
const MIXIN_SERVICES: ReadonlySet<string> = new Set(Object.values(RAG_MIXIN_TABLE).map((spec) => spec.service ?? ''))

type Serve = (request: unknown, content?: UploadContent, options?: CallOptions) => Promise<Outcome<unknown>>

/** The methods of one table on one API version (those limited to other versions are left out). */
function tableMethods<T extends MethodTable<never>>(table: T, service: ServiceMethods<T>, version: string, fqService: string, enums: EnumRules): BoundMethod[] {
  const call = service as unknown as Readonly<Record<string, Serve>>
  const pkg = fqService.slice(0, fqService.lastIndexOf('.'))
  return Object.entries(table).flatMap(([name, spec]): BoundMethod[] => {
    if (spec.versions !== undefined && !spec.versions.includes(version)) return []
    // An engine's own operations / locations / IAM entries: bound once per version across engines (mixinMethods).
    if (spec.service !== undefined && MIXIN_SERVICES.has(spec.service)) return []
    const serve = call[name] as Serve
    const ahead = aheadOf(serve)
    return [
      {
        ...(ahead ? { ahead } : {}),
        service: spec.service === undefined ? fqService : spec.service.includes('.') ? spec.service : `${pkg}.${spec.service}`,
        rpc: spec.rpc,
        version,
        http: spec.http,
        call: (request, content, options) => serve(request, content, options),
        mutates: spec.write,
        enums,
      },
    ]
  })
}

function ragMethods(surface: VertexRagSurface): BoundMethod[] {
  const pkg = `google.cloud.aiplatform.${surface.version}`
  return [
    ...tableMethods(RAG_SERVICE_TABLE, surface, surface.version, `${pkg}.VertexRagService`, RAG_ENUMS),
    ...tableMethods(RAG_DATA_TABLE, surface, surface.version, `${pkg}.VertexRagDataService`, RAG_ENUMS),
  ]
}

type MixinName = keyof typeof MIXIN_HTTP
type Call = (request: Record<string, unknown>, content: UploadContent | undefined, options?: CallOptions) => Promise<Outcome<unknown>>

/**
 * The mixins of the Vertex APIs (operations, locations, IAM: rpc/mixins.ts), bound once per
 * version for both engines. Operations are done when returned; a call on one is answered by the
 * engine that made it (RAG Engine first, then Memory Bank), a list by the engine owning the
 * collection (Memory Bank for reasoningEngines/*).
 */
function mixinMethods(rag: VertexRagSurface, mb: MemoryBank): BoundMethod[] {
  const either = (name: 'getOperation' | 'cancelOperation' | 'deleteOperation' | 'waitOperation'): Call => async (q, _content, options) => {
    const fromRag: Outcome<unknown> = await rag[name](q, undefined, options)
    return fromRag.ok || fromRag.status.code !== Code.NOT_FOUND ? fromRag : mb[name](q, undefined, options)
  }
  // Locations and IAM are the same (UNIMPLEMENTED) on both engines: the RAG surface answers them.
  const calls: Readonly<Partial<Record<MixinName, Call>>> = {
    getOperation: either('getOperation'),
    cancelOperation: either('cancelOperation'),
    deleteOperation: either('deleteOperation'),
    waitOperation: either('waitOperation'),
    listOperations: (q, _content, options) => (/(^|\/)reasoningEngines\//.test(String(q['name'] ?? '')) ? mb.listOperations(q, undefined, options) : rag.listOperations(q, undefined, options)),
  }
  return (Object.keys(MIXIN_HTTP) as MixinName[]).map((name): BoundMethod => {
    const spec = RAG_MIXIN_TABLE[name]
    const serve = rag[name] as Serve
    return {
      service: spec.service ?? 'google.longrunning.Operations',
      rpc: spec.rpc,
      version: rag.version,
      http: MIXIN_HTTP[name],
      call: calls[name] ?? ((q, content, options) => serve(q, content, options)),
      mutates: spec.write,
      enums: [...RAG_ENUMS, ...MB_ENUMS],
    }
  })
}

export interface Engines {
  readonly semanticRetriever: SemanticRetriever
  readonly vertexRag: VertexRagEngine
  readonly memoryBank: MemoryBank
}

/**
 * Every RPC of the three APIs bound to its engine, derived from their method tables (the RPCs
 * Quarry does not serve included: they answer UNIMPLEMENTED), then the Vertex mixins once per
 * version. `rag` is the RAG Engine surface requests from the network reach (its import roots);
 * `prediction` answers generateContent over it (generative/: the local model unless given another).
 */
export function bindMethods(
  engines: Engines,
  rag: { readonly v1: VertexRagSurface; readonly v1beta1: VertexRagSurface } = engines.vertexRag,
  prediction: { readonly v1: PredictionSurface; readonly v1beta1: PredictionSurface } = predictionSurfaces(rag),
): BoundMethod[] {
  return [
    ...tableMethods(RETRIEVER_TABLE, engines.semanticRetriever, 'v1beta', RETRIEVER_SERVICE, SR_ENUMS),
    ...ragMethods(rag.v1),
    ...ragMethods(rag.v1beta1),
    ...tableMethods(MEMORY_TABLE, engines.memoryBank, 'v1beta1', 'google.cloud.aiplatform.v1beta1.MemoryBankService', MB_ENUMS),
    // The same memories under v1 (REST only: the shipped v1 protos have no MemoryBankService).
    ...tableMethods(MEMORY_TABLE, engines.memoryBank.v1, 'v1', 'google.cloud.aiplatform.v1.MemoryBankService', MB_ENUMS),
    // Agent Engine Sessions under the same reasoning engines (memory-bank/session-methods.ts).
    ...tableMethods(SESSION_TABLE, engines.memoryBank.sessions, 'v1beta1', 'google.cloud.aiplatform.v1beta1.SessionService', []),
    ...tableMethods(SESSION_TABLE_V1, engines.memoryBank.sessions.v1, 'v1', 'google.cloud.aiplatform.v1.SessionService', []),
    // Agent Engine resources: the same engines (memory-bank/engine-methods.ts).
    ...tableMethods(REASONING_ENGINE_TABLE, engines.memoryBank.reasoningEngines, 'v1beta1', 'google.cloud.aiplatform.v1beta1.ReasoningEngineService', []),
    ...tableMethods(REASONING_ENGINE_TABLE_V1, engines.memoryBank.reasoningEngines.v1, 'v1', 'google.cloud.aiplatform.v1.ReasoningEngineService', []),
    ...tableMethods(PREDICTION_TABLE, prediction.v1, 'v1', 'google.cloud.aiplatform.v1.PredictionService', PREDICTION_ENUMS),
    ...tableMethods(PREDICTION_TABLE, prediction.v1beta1, 'v1beta1', 'google.cloud.aiplatform.v1beta1.PredictionService', PREDICTION_ENUMS),
    ...mixinMethods(rag.v1, engines.memoryBank),
    ...mixinMethods(rag.v1beta1, engines.memoryBank),
  ]
}
