import type { RpcStatus } from '../rpc/status.js'
import type { ReadResult } from './sources.js'

/** A file read as the write-ahead log keeps it (its bytes as a byte string): how imports record what they read (rpc/replay.ts). */
export function encodeRead(read: ReadResult): unknown {
  return read.ok ? { bytes: read.bytes } : { status: read.status }
}

/** A read {@link encodeRead} kept, or one with its bytes as base64 (logs written before). */
export function decodeRead(json: unknown): ReadResult {
  const value = json as { bytes?: Uint8Array | string; status?: RpcStatus }
  if (value.status !== undefined) return { ok: false, status: value.status }
  const bytes = value.bytes
  return { ok: true, bytes: bytes instanceof Uint8Array ? bytes : new Uint8Array(Buffer.from(bytes ?? '', 'base64')) }
}
