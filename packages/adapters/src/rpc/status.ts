/**
 * google.rpc.Status: the error value every adapter returns instead of throwing. Codes are gRPC's
 * numeric codes; `httpStatusOf` gives the HTTP status Google's REST front end answers with.
 */
import { omitUnset } from './omit.js'

/** gRPC status codes (google.rpc.Code) by name. */
export const Code = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const

export type CodeName = keyof typeof Code

/** One problem with one request field (google.rpc.BadRequest.FieldViolation). */
export interface FieldViolation {
  /**
   * Path into the request in its JSON (lowerCamelCase) names, e.g. `metadataFilters[0].key`;
   * absent when the problem is the request as a whole (an unknown top-level name): proto3 JSON
   * omits an empty string.
   */
  readonly field?: string
  readonly description: string
}

/** A detail of a Status, in proto3 JSON `Any` form. */
export interface BadRequestDetail {
  readonly '@type': 'type.googleapis.com/google.rpc.BadRequest'
  readonly fieldViolations: readonly FieldViolation[]
}

/** google.rpc.Status in proto3 JSON. */
export interface RpcStatus {
  readonly code: number
  readonly message: string
  readonly details?: readonly BadRequestDetail[]
}

const HTTP: Readonly<Record<CodeName, number>> = {
  OK: 200,
  CANCELLED: 499,
  UNKNOWN: 500,
  INVALID_ARGUMENT: 400,
  DEADLINE_EXCEEDED: 504,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  PERMISSION_DENIED: 403,
  RESOURCE_EXHAUSTED: 429,
  FAILED_PRECONDITION: 400,
  ABORTED: 409,
  OUT_OF_RANGE: 400,
  UNIMPLEMENTED: 501,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DATA_LOSS: 500,
  UNAUTHENTICATED: 401,
}

const NAMES = Object.fromEntries(Object.entries(Code).map(([name, code]) => [code, name])) as Record<number, CodeName>

/** The canonical name of a numeric code (`3` → `INVALID_ARGUMENT`); UNKNOWN for codes outside the table. */
export function codeName(code: number): CodeName {
  return NAMES[code] ?? 'UNKNOWN'
}

/** The HTTP status Google's REST endpoints use for a gRPC code. */
export function httpStatusOf(code: number): number {
  return HTTP[codeName(code)]
}

/** Builds a Status; field violations become one BadRequest detail. */
export function rpcStatus(code: CodeName, message: string, violations: readonly FieldViolation[] = []): RpcStatus {
  const status: RpcStatus = { code: Code[code], message }
  if (violations.length === 0) return status
  return { ...status, details: [{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: violations.map((v) => omitUnset(v)) }] }
}

/**
 * Thrown inside an adapter operation and caught at its boundary, where it becomes the returned
 * Status: operations read top to bottom without threading a result through every check.
 */
export class RpcFailure extends Error {
  readonly status: RpcStatus
  constructor(status: RpcStatus) {
    super(status.message)
    this.name = 'RpcFailure'
    this.status = status
  }
}

/** INVALID_ARGUMENT for one field; the message names the field. */
export function invalidArgument(field: string, description: string): RpcFailure {
  return new RpcFailure(rpcStatus('INVALID_ARGUMENT', field === '' ? description : `${field}: ${description}`, [{ field, description }]))
}

/** INVALID_ARGUMENT for a malformed payload, in Google's own wording (the message already names the field). */
export function invalidPayload(field: string, message: string): RpcFailure {
  return new RpcFailure(rpcStatus('INVALID_ARGUMENT', message, [{ field, description: message }]))
}

/**
 * A failure with a code other than INVALID_ARGUMENT (NOT_FOUND, ALREADY_EXISTS, ...), naming the
 * field it concerns in a BadRequest detail — except NOT_FOUND, which carries its message alone as
 * Google's does (`{"code": 404, "message": "Publisher Model ... not found.", "status":
 * "NOT_FOUND"}`, quoted in google/adk-python#833): the resource is missing, the request is not bad.
 */
export function failure(code: CodeName, message: string, field?: string): RpcFailure {
  return new RpcFailure(rpcStatus(code, message, field === undefined || code === 'NOT_FOUND' ? [] : [{ field, description: message }]))
}
