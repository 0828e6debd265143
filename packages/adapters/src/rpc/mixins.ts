import { getOperation } from './get-operation.js'
import { omitUndefined, omitUnset } from './omit.js'
import { UNARY, method, pagedShape, unimplemented, type HttpBinding } from './methods.js'
import type { Operation } from './operations.js'
import { pageOf } from './paging.js'
import { duration, int32, message, readMessage, string } from './proto-json.js'
import { failure, invalidArgument } from './status.js'

/**
 * The mixin services Google's Vertex clients carry beside their own RPCs (google.longrunning.Operations,
 * google.cloud.location.Locations, google.iam.v1.IAMPolicy), as table entries over an engine's
 * finished operations. Operations are served: each is done when returned, so waiting returns it,
 * cancelling changes nothing and deleting forgets it. Locations and IAM policies do not exist in
 * Quarry (no regions, no accounts): those answer UNIMPLEMENTED.
 *
 * The entries bind no HTTP route of their own: one set of routes per version serves the
 * operations of every engine (`MIXIN_HTTP`, http/routes.ts).
 */

const ListOperationsRequest = message('google.longrunning.ListOperationsRequest', { name: string, filter: string, pageSize: int32, pageToken: string })
const CancelOperationRequest = message('google.longrunning.CancelOperationRequest', { name: string })
const DeleteOperationRequest = message('google.longrunning.DeleteOperationRequest', { name: string })
const WaitOperationRequest = message('google.longrunning.WaitOperationRequest', { name: string, timeout: duration })

/** The request schemas of the served Operations methods besides GetOperation (rpc/get-operation.ts). */
export const OPERATIONS_REQUESTS = { ListOperationsRequest, CancelOperationRequest, DeleteOperationRequest, WaitOperationRequest } as const

type Empty = Record<string, never>
const read = false
const write = true

/** The collection an operation belongs to: `<resource>` of `<resource>/operations/<id>`. */
function collectionOf(name: string): string {
  const at = name.lastIndexOf('/operations/')
  return at < 0 ? '' : name.slice(0, at)
}

/**
 * List cursors need a sequence number per operation; operations are stored in creation order
 * (a Map), so numbering them in that order the first time a list sees them keeps the order.
 */
const listSeq = new WeakMap<Operation, number>()
let nextSeq = 0

function listOperations(operations: ReadonlyMap<string, Operation>, request: unknown): { operations?: Operation[]; nextPageToken?: string } {
  const { name = '', filter, pageSize, pageToken } = readMessage(ListOperationsRequest, request)
  if (name === '') throw invalidArgument('name', 'name is required: the resource whose operations to list (e.g. projects/p/locations/l/ragCorpora/c).')
  if (filter !== undefined) throw failure('UNIMPLEMENTED', 'ListOperations filters are not served: every operation is done; list without a filter.', 'filter')
  const all: Operation[] = []
  for (const op of operations.values()) {
    if (!listSeq.has(op)) listSeq.set(op, nextSeq++)
    if (collectionOf(op.name) === name) all.push(op)
  }
  const page = pageOf(all, (op) => listSeq.get(op) as number, `listOperations ${name}`, omitUndefined({ pageSize, pageToken }), { defaultSize: 100, maxSize: 1000 })
  return omitUnset({ operations: page.items, nextPageToken: page.nextPageToken })
}

function found(operations: ReadonlyMap<string, Operation>, schema: typeof CancelOperationRequest | typeof DeleteOperationRequest, request: unknown): Operation {
  const { name } = readMessage(schema, request)
  return getOperation(operations, name === undefined ? {} : { name })
}

/** google.longrunning.Operations over the operations `opsOf` finds in a context. */
export function operationsMixin<C>(opsOf: (ctx: C) => Map<string, Operation>) {
  return {
    getOperation: method({ rpc: 'GetOperation', service: 'google.longrunning.Operations', run: async (c: C, r) => getOperation(opsOf(c), r), write: read, shape: UNARY, http: [] }),
    listOperations: method({ rpc: 'ListOperations', service: 'google.longrunning.Operations', run: async (c: C, r) => listOperations(opsOf(c), r), write: read, shape: pagedShape('operations'), http: [] }),
    /** Every operation is done when returned: cancelling one has no effect (Google's rule for a finished operation). */
    cancelOperation: method({
      rpc: 'CancelOperation',
      service: 'google.longrunning.Operations',
      run: async (c: C, r): Promise<Empty> => {
        found(opsOf(c), CancelOperationRequest, r)
        return {}
      },
      write: read,
      shape: UNARY,
      http: [],
    }),
    deleteOperation: method({
      rpc: 'DeleteOperation',
      service: 'google.longrunning.Operations',
      run: async (c: C, r): Promise<Empty> => {
        const ops = opsOf(c)
        ops.delete(found(ops, DeleteOperationRequest, r).name)
        return {}
      },
      write,
      shape: UNARY,
      http: [],
    }),
    /** Done already: the operation itself, at once. */
    waitOperation: method({ rpc: 'WaitOperation', service: 'google.longrunning.Operations', run: async (c: C, r) => {
        const { name } = readMessage(WaitOperationRequest, r)
        return getOperation(opsOf(c), name === undefined ? {} : { name })
      }, write: read, shape: UNARY, http: [] }),
  } as const
}

const NO_LOCATIONS = 'there are no regions in process: every project and location name is served by the same engine, so there is no location to describe.'
const NO_IAM = 'there are no accounts or access policies: it serves whoever can reach it (the REST server checks Host and Origin only).'

/** google.cloud.location.Locations and google.iam.v1.IAMPolicy: UNIMPLEMENTED, saying why. */
export function locationAndIamMixin() {
  return {
    getLocation: method({ rpc: 'GetLocation', service: 'google.cloud.location.Locations', run: unimplemented('Locations.GetLocation', NO_LOCATIONS), write: read, shape: UNARY, http: [] }),
    listLocations: method({ rpc: 'ListLocations', service: 'google.cloud.location.Locations', run: unimplemented<{ locations?: Record<string, unknown>[] }>('Locations.ListLocations', NO_LOCATIONS), write: read, shape: pagedShape('locations'), http: [] }),
    getIamPolicy: method({ rpc: 'GetIamPolicy', service: 'google.iam.v1.IAMPolicy', run: unimplemented('IAMPolicy.GetIamPolicy', NO_IAM), write: read, shape: UNARY, http: [] }),
    setIamPolicy: method({ rpc: 'SetIamPolicy', service: 'google.iam.v1.IAMPolicy', run: unimplemented('IAMPolicy.SetIamPolicy', NO_IAM), write: read, shape: UNARY, http: [] }),
    testIamPermissions: method({ rpc: 'TestIamPermissions', service: 'google.iam.v1.IAMPolicy', run: unimplemented('IAMPolicy.TestIamPermissions', NO_IAM), write: read, shape: UNARY, http: [] }),
  } as const
}

/**
 * An operation's binding (`suffix`: its custom verb, if any) for any resource, and the `/ui/` one
 * that aiplatform's clients use first for an operation of a location (asyncRetrieveContexts,
 * updateRagEngineConfig): their http rules list it before the others.
 */
function operationBindings(verb: HttpBinding['verb'], suffix = ''): readonly HttpBinding[] {
  return [
    { verb, path: `{name=**/operations/*}${suffix}` },
    { verb, path: `{name=projects/*/locations/*/operations/*}${suffix}`, prefix: 'ui' },
  ]
}

/**
 * The REST bindings of the mixins below a version prefix, as Google's Vertex clients send them
 * (their `httpRules`, written here for any resource). Bound once per version by http/routes.ts,
 * over every engine's operations.
 */
export const MIXIN_HTTP: Readonly<Record<keyof ReturnType<typeof operationsMixin> | keyof ReturnType<typeof locationAndIamMixin>, readonly HttpBinding[]>> = {
  getOperation: operationBindings('GET'),
  // A location's list is at /ui/ first too.
  listOperations: [
    { verb: 'GET', path: '{name=**}/operations' },
    { verb: 'GET', path: '{name=projects/*/locations/*}/operations', prefix: 'ui' },
  ],
  cancelOperation: operationBindings('POST', ':cancel'),
  deleteOperation: operationBindings('DELETE'),
  waitOperation: operationBindings('POST', ':wait'),
  getLocation: [{ verb: 'GET', path: '{name=projects/*/locations/*}' }],
  listLocations: [{ verb: 'GET', path: '{name=projects/*}/locations' }],
  getIamPolicy: [{ verb: 'POST', path: '{resource=**}:getIamPolicy', body: '*' }],
  setIamPolicy: [{ verb: 'POST', path: '{resource=**}:setIamPolicy', body: '*' }],
  testIamPermissions: [{ verb: 'POST', path: '{resource=**}:testIamPermissions', body: '*' }],
}
