import { MAX_TOP_K } from '@quarry/core'
import { omitUndefined } from '../rpc/omit.js'
import type { Infer } from '../rpc/proto-json.js'
import { RpcFailure, failure, invalidArgument, type RpcStatus } from '../rpc/status.js'
import type { RagContext } from './context.js'
import type { RetrieveContextsResponseJson } from './resources.js'
import { retrieveContexts } from './retrieve.js'
import type { ApiVersion, RagQuery, Tool, ToolRagStore } from './schema.js'

/**
 * The RPCs that retrieve from a retrieval tool's VertexRagStore (tool.proto: AugmentPrompt's
 * `vertexRagStore`, the `tools` of AskContexts and AsyncRetrieveContexts) run exactly
 * retrieveContexts (retrieve.ts), on the request it stands for; its failures name the fields of the
 * request that was actually sent.
 */
type StoreInput = Infer<typeof ToolRagStore>
type QueryInput = Infer<typeof RagQuery>
type ToolInput = Infer<typeof Tool>

/** A RpcFailure whose field paths (and messages) name `to` where retrieveContexts named `from`. */
function rebased(error: RpcFailure, moves: readonly (readonly [string, string])[]): RpcFailure {
  const move = (text: string): string => {
    for (const [from, to] of moves) if (text.startsWith(from)) return to + text.slice(from.length)
    return text
  }
  // One pass over the message: a path it names is moved once (a moved path may contain another's name).
  const pattern = new RegExp(`(^|[^\\w.\\]])(${moves.map(([from]) => from.replace(/[.[\]]/g, '\\$&')).join('|')})(?=[.:\\s])`, 'g')
  const moveAll = (text: string): string => text.replace(pattern, (_m, before: string, path: string) => before + move(path))
  const status: RpcStatus = {
    ...error.status,
    message: moveAll(error.status.message),
    ...(error.status.details === undefined
      ? {}
      : { details: error.status.details.map((d) => ({ ...d, fieldViolations: d.fieldViolations.map((v) => (v.field === undefined ? v : { ...v, field: move(v.field), description: moveAll(v.description) })) })) }),
  }
  return new RpcFailure(status)
}

/** A tool's store and query as the retrieveContexts request they stand for, and how to name its failures in the request actually sent. */
export interface StoreRetrieval {
  readonly request: { readonly parent: string | undefined; readonly vertexRagStore: Record<string, unknown>; readonly query: Record<string, unknown> }
  /** A failure of retrieveContexts on `request`, its fields moved to where they are in the request sent. */
  readonly rebase: (error: RpcFailure) => RpcFailure
}

/**
 * The retrieveContexts request for `query` from a tool's store: the store's resources and
 * deprecated threshold, its `ragRetrievalConfig` unless `query` has one, its `similarityTopK` as
 * the default topK. `at` is where the store is in the request (`vertexRagStore`,
 * `tools[0].retrieval.vertexRagStore`), `queryAt` where the query text came from (`query`, `contents`).
 */
export function storeRetrieval(parent: string | undefined, store: StoreInput, query: QueryInput, places: { readonly store: string; readonly query: string }): StoreRetrieval {
  const topK = store.similarityTopK
  if (topK !== undefined && (topK < 1 || topK > MAX_TOP_K)) {
    throw invalidArgument(`${places.store}.similarityTopK`, `similarityTopK must be between 1 and ${MAX_TOP_K}; received ${topK}.`)
  }
  const config = query.ragRetrievalConfig ?? store.ragRetrievalConfig
  const ragRetrievalConfig = topK !== undefined && config?.topK === undefined && query.similarityTopK === undefined ? { ...config, topK } : config
  const request = {
    parent,
    vertexRagStore: omitUndefined({ ragCorpora: store.ragCorpora, ragResources: store.ragResources, vectorDistanceThreshold: store.vectorDistanceThreshold }),
    query: omitUndefined({ ...query, ragRetrievalConfig }),
  }
  const configFrom = query.ragRetrievalConfig !== undefined ? `${places.query}.ragRetrievalConfig` : `${places.store}.ragRetrievalConfig`
  const moves = [
    ['query.ragRetrievalConfig', configFrom],
    ['query', places.query],
    ['vertexRagStore', places.store],
  ] as const
  return { request, rebase: (error) => rebased(error, moves) }
}

/** Retrieves for `query` from a tool's store (storeRetrieval's request), failures naming the fields of the request sent. */
export async function retrieveFromStore(
  ctx: RagContext,
  version: ApiVersion,
  parent: string | undefined,
  store: StoreInput,
  query: QueryInput,
  places: { readonly store: string; readonly query: string },
): Promise<RetrieveContextsResponseJson> {
  const { request, rebase } = storeRetrieval(parent, store, query, places)
  try {
    return await retrieveContexts(ctx, version, request)
  } catch (error) {
    if (!(error instanceof RpcFailure)) throw error
    throw rebase(error)
  }
}

/** The one retrieval.vertexRagStore among `tools` (AskContexts, AsyncRetrieveContexts), with where it is. */
export function storeOfTools(tools: readonly ToolInput[] | undefined): { store: StoreInput; at: string } {
  const list = tools ?? []
  const found: { store: StoreInput; at: string }[] = []
  list.forEach((tool, i) => {
    const others = Object.keys(tool).filter((k) => k !== 'retrieval')
    if (others.length > 0) throw failure('FAILED_PRECONDITION', `Quarry serves retrieval.vertexRagStore tools only; ${others[0]} needs Google's service.`, `tools[${i}].${others[0]}`)
    if (tool.retrieval?.vertexAiSearch !== undefined) throw failure('FAILED_PRECONDITION', "Quarry serves retrieval.vertexRagStore tools only; vertexAiSearch needs Google's service.", `tools[${i}].retrieval.vertexAiSearch`)
    if (tool.retrieval?.vertexRagStore !== undefined) found.push({ store: tool.retrieval.vertexRagStore, at: `tools[${i}].retrieval.vertexRagStore` })
  })
  if (found.length !== 1) throw invalidArgument('tools', `give exactly one tool with retrieval.vertexRagStore (the corpus to retrieve from); received ${found.length}.`)
  return found[0] as { store: StoreInput; at: string }
}
