import { QuarryError } from '@quarry/core'
import { RpcFailure, rpcStatus, type RpcStatus } from './status.js'

/** What every adapter operation returns: the response JSON, or a google.rpc.Status. Never a throw. */
export type Outcome<T> = { readonly ok: true; readonly response: T } | { readonly ok: false; readonly status: RpcStatus }

/**
 * Runs an operation and turns what it throws into a Status: RpcFailure as is, a QuarryError (the
 * core refusing the input) as INVALID_ARGUMENT at its path, a missing native module as
 * FAILED_PRECONDITION saying how to get it, anything else as INTERNAL with a
 * generic message (no stack or internals leak into responses; `onInternal` sees the error).
 */
export async function toOutcome<T>(run: () => Promise<T>, onInternal?: (error: unknown) => void): Promise<Outcome<T>> {
  try {
    return { ok: true, response: await run() }
  } catch (error) {
    return { ok: false, status: statusOf(error, onInternal) }
  }
}

function statusOf(error: unknown, onInternal?: (error: unknown) => void): RpcStatus {
  if (error instanceof RpcFailure) return error.status
  if (error instanceof QuarryError && error.code !== 'NATIVE_UNAVAILABLE' && error.code !== 'INVALID_SNAPSHOT') {
    const field = error.path ?? ''
    return rpcStatus('INVALID_ARGUMENT', error.message, [{ field, description: error.message }])
  }
  if (error instanceof QuarryError && error.code === 'NATIVE_UNAVAILABLE') {
    // The engine, not the request, lacks something: say what, without the cause (it names local paths).
    onInternal?.(error)
    return rpcStatus('FAILED_PRECONDITION', "This Quarry install cannot load its HNSW graph (@quarry/hnsw is missing, or QUARRY_HNSW names a build that cannot load; the server's error log says which and how to fix it). Until then create the engine with the option dense: 'exact'.")
  }
  onInternal?.(error)
  return rpcStatus('INTERNAL', 'Internal error encountered.')
}
