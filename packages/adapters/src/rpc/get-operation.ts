import { message, readMessage, string } from './proto-json.js'
import { failure } from './status.js'

const GetOperationRequest = message('google.longrunning.GetOperationRequest', { name: string })

/**
 * google.longrunning.Operations.GetOperation over an engine's finished operations: they are done
 * when returned, so this only reads them back.
 */
export function getOperation<O>(operations: ReadonlyMap<string, O>, request: unknown): O {
  const { name } = readMessage(GetOperationRequest, request)
  const op = name === undefined ? undefined : operations.get(name)
  if (op === undefined) throw failure('NOT_FOUND', `Operation "${name ?? ''}" not found.`, 'name')
  return op
}
