import { ApiError } from './api-error.js'
import type { Outcome } from './outcome.js'

/** A finished google.longrunning.Operation as JSON. */
export interface OperationLike {
  readonly name: string
  readonly metadata?: Readonly<Record<string, unknown>>
  readonly done: boolean
  readonly response?: Readonly<Record<string, unknown>>
  readonly error?: { readonly code: number; readonly message: string }
}

/** An Any without its type URL: what google-gax decodes an operation's response and metadata to. */
function unpack(any: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined {
  if (any === undefined) return undefined
  const { '@type': _type, ...rest } = any
  return rest
}

/**
 * What a Google Node client's long-running method resolves to (google-gax's Operation): `name`,
 * `done`, `metadata`, `result`, and `promise()` resolving to `[result, metadata, operation]` or
 * rejecting with the operation's error.
 */
export class LongRunningOperation<T> {
  readonly name: string
  readonly done: boolean
  readonly metadata: Record<string, unknown> | undefined
  readonly result: T | undefined
  readonly error: ApiError | undefined
  readonly latestResponse: OperationLike

  constructor(op: OperationLike) {
    this.name = op.name
    this.done = op.done
    this.metadata = unpack(op.metadata)
    this.result = unpack(op.response) as T | undefined
    this.error = op.error ? new ApiError(op.error) : undefined
    this.latestResponse = op
  }

  async promise(): Promise<[T, Record<string, unknown> | undefined, OperationLike]> {
    if (this.error) throw this.error
    return [this.result as T, this.metadata, this.latestResponse]
  }
}

/** A long-running call as the Google client gives it: `[operation, rawOperation]`. */
export async function longRunning<T>(outcome: Promise<Outcome<OperationLike>>): Promise<[LongRunningOperation<T>, OperationLike]> {
  const result = await outcome
  if (!result.ok) throw new ApiError(result.status)
  return [new LongRunningOperation<T>(result.response), result.response]
}
