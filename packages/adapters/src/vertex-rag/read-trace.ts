import type { RpcStatus } from '../rpc/status.js'
import type { ReadResult } from './sources.js'

/** A file read as JSON for the write-ahead log (bytes as base64): how imports record what they read (rpc/replay.ts). */
export function encodeRead(read: ReadResult): unknown {
  return read.ok ? { bytes: Buffer.from(read.bytes).toString('base64') } : { status: read.status }
}

export function decodeRead(json: unknown): ReadResult {
  const value = json as { bytes?: string; status?: RpcStatus }
  return value.status !== undefined ? { ok: false, status: value.status } : { ok: true, bytes: new Uint8Array(Buffer.from(value.bytes ?? '', 'base64')) }
}
