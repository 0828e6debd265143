import type { Operation } from '../rpc/operations.js'
import { readMessage } from '../rpc/proto-json.js'
import type { RagContext } from './context.js'
import { retrieveFromStore, storeOfTools } from './rag-store.js'
import { AsyncRetrieveContextsRequest, requestSchema, type ApiVersion } from './schema.js'

/**
 * AsyncRetrieveContexts: retrieveContexts run now, on the request its query and its one
 * retrieval.vertexRagStore tool stand for, answered as a finished long-running operation under the
 * location (`projects/{p}/locations/{l}/operations/{id}`, read back with getOperation) whose
 * response (AsyncRetrieveContextsResponse) is exactly what retrieveContexts answered. It stores the
 * operation, so it is a write: the server's log replays it with the same embedding, reranking, id and time.
 */
export async function asyncRetrieveContexts(ctx: RagContext, version: ApiVersion, request: unknown): Promise<Operation> {
  const req = readMessage(requestSchema(AsyncRetrieveContextsRequest, version), request)
  const location = ctx.location(req.parent, 'parent')
  const { store, at } = storeOfTools(req.tools)
  const { contexts } = await retrieveFromStore(ctx, version, req.parent, store, req.query ?? {}, { store: at, query: 'query' })
  return ctx.operation(version, location, 'AsyncRetrieveContextsOperationMetadata', { type: 'AsyncRetrieveContextsResponse', value: { contexts } })
}
