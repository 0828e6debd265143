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
