import { rfc3339 } from './clock.js'
import { omitUnset } from './omit.js'
import type { RpcStatus } from './status.js'

/** A google.protobuf.Any as proto3 JSON: the type URL beside the message's own fields. */
export type AnyJson = { readonly '@type': string } & Readonly<Record<string, unknown>>

/**
 * A google.longrunning.Operation as proto3 JSON, the one operation type of both Vertex APIs
 * (RAG Engine and Memory Bank). Quarry does the work before it answers, so an operation is
 * always done, with its result as `response`; a partly failed import lists its failures in
 * `metadata.genericMetadata.partialFailures`.
 */
export interface Operation {
  readonly name: string
  readonly metadata: AnyJson
  readonly done: true
  readonly response: AnyJson
}

interface OperationSpec {
  /** `google.cloud.aiplatform.<version>` types are named by their short name. */
  readonly version: string
  /** The resource the operation is under: `<resource>/operations/<id>`. */
  readonly resource: string
  readonly id: string
  readonly atMs: number
  readonly metadataType: string
  /** A short aiplatform type name, or a full one (`google.protobuf.Empty`). */
  readonly responseType: string
  readonly response: object
  readonly extraMetadata?: Readonly<Record<string, unknown>>
  readonly partialFailures?: readonly RpcStatus[]
}

/**
 * Vertex mutations are long-running operations; Quarry does the work before answering, so every
 * operation is returned done, with its result as a typed `response` (an Any in proto3 JSON).
 */
export function finishedOperation(spec: OperationSpec): Operation {
  const pkg = `type.googleapis.com/google.cloud.aiplatform.${spec.version}`
  return {
    name: `${spec.resource}/operations/${spec.id}`,
    metadata: {
      '@type': `${pkg}.${spec.metadataType}`,
      genericMetadata: omitUnset({ partialFailures: spec.partialFailures, createTime: rfc3339(spec.atMs), updateTime: rfc3339(spec.atMs) }),
      ...spec.extraMetadata,
    },
    done: true,
    response: { '@type': spec.responseType.startsWith('google.') ? `type.googleapis.com/${spec.responseType}` : `${pkg}.${spec.responseType}`, ...spec.response },
  }
}

/**
 * A numeric id as Vertex generates them (19 digits, no leading zero), from a source of random
 * [a-z0-9]. The first digit is 1 to 8, so that the id fits an int64 (below 2^63 ≈ 9.22e18): a
 * corpus's id is also `ragCorpusId`, an int64 field that a larger one would turn negative.
 */
export function numericId(random: (length: number) => string): string {
  const raw = random(19)
  let out = String((raw.charCodeAt(0) % 8) + 1)
  for (let i = 1; i < raw.length; i++) out += String(raw.charCodeAt(i) % 10)
  return out
}

/** Finished operations kept for polling; the oldest are forgotten past this many (Google keeps them for a while, too). */
const KEPT_OPERATIONS = 10_000

/** Remembers an operation for GetOperation, forgetting the oldest beyond KEPT_OPERATIONS. */
export function remember<T extends { readonly name: string }>(store: Map<string, T>, op: T): void {
  store.set(op.name, op)
  if (store.size <= KEPT_OPERATIONS) return
  const oldest = store.keys().next()
  if (!oldest.done) store.delete(oldest.value)
}
