import type { Outcome } from '@quarry/adapters'
import { RpcFailure } from '../../packages/adapters/src/rpc/status.js'

/** The Status an adapter function throws for a bad request: code, first field violation, message. Fails if it throws nothing else. */
export function violation(run: () => unknown): { code: number; field: string; message: string } {
  try {
    run()
  } catch (e) {
    if (!(e instanceof RpcFailure)) throw e
    const s = e.status
    return { code: s.code, field: s.details?.[0]?.fieldViolations[0]?.field ?? '', message: s.message }
  }
  throw new Error('expected an RpcFailure')
}

/** The Status of a failed call (code, message, first field violation). Fails if the call succeeded. */
export function failed(outcome: Outcome<unknown>): { code: number; message: string; field: string | undefined } {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.response).slice(0, 200)}`)
  return { code: outcome.status.code, message: outcome.status.message, field: outcome.status.details?.[0]?.fieldViolations[0]?.field }
}

/** The response of a finished long-running call's operation. Fails if the call failed. */
export function done<T = Record<string, unknown>>(outcome: Outcome<unknown>): T {
  if (!outcome.ok) throw new Error(`expected a response, got ${JSON.stringify(outcome.status)}`)
  return (outcome.response as { response: T }).response
}
