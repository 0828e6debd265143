import { codeName, type BadRequestDetail, type CodeName, type RpcStatus } from './status.js'

/**
 * What an in-process client rejects with: shaped like google-gax's GoogleError, so code that
 * catches Google's client errors (`err.code === 3`, `err.statusDetails`) handles these unchanged.
 */
export class ApiError extends Error {
  /** Numeric gRPC code (3 = INVALID_ARGUMENT, 5 = NOT_FOUND, ...). */
  readonly code: number
  /** The code's canonical name. */
  readonly status: CodeName
  /** The message, as google-gax's `details`. */
  readonly details: string
  /** Decoded status details (google.rpc.BadRequest with fieldViolations). */
  readonly statusDetails: readonly BadRequestDetail[]
  /** The Status as the REST API would carry it. */
  readonly rpcStatus: RpcStatus

  constructor(status: RpcStatus) {
    super(status.message)
    this.name = 'ApiError'
    this.code = status.code
    this.status = codeName(status.code)
    this.details = status.message
    this.statusDetails = status.details ?? []
    this.rpcStatus = status
  }
}
