import { describe, expect, it } from 'vitest'
import { decodeLogRecord, encodeLogRecord, type LogRecord } from '../../packages/adapters/src/transport/log-record.js'

/** How the write-ahead log keeps a write with its upload (transport/log-record.ts), and reads back those kept before. */
const record: LogRecord = { k: 'vertexRag.uploadRagFile@v1beta1', r: { parent: 'projects/p/locations/l/ragCorpora/1' }, t: [['embed', ['AAAA']]] }

describe('a logged write', () => {
  it('keeps upload bytes after its JSON, as they came', async () => {
    const bytes = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7) % 256)
    const parts = await encodeLogRecord(record, bytes)
    const payload = Buffer.concat(parts)
    // A 0 byte, the JSON's length, the JSON, one byte string and its length, then the bytes themselves (not base64).
    expect(payload[0]).toBe(0)
    const json = payload.readUInt32LE(1)
    expect(payload.readUInt32LE(5 + json)).toBe(1)
    expect(payload.readUInt32LE(9 + json)).toBe(bytes.length)
    expect(payload.length).toBe(13 + json + bytes.length)
    const back = decodeLogRecord(payload)
    expect(back.record).toEqual(record)
    expect(back.content).toBeInstanceOf(Uint8Array)
    expect(Buffer.from(back.content as Uint8Array).equals(Buffer.from(bytes))).toBe(true)
  })

  it('keeps upload text as UTF-8, a pair of surrogates whole across the slices it is encoded in', async () => {
    // The emoji straddles the first slice's end (2^20 characters).
    const text = `${'a'.repeat((1 << 20) - 1)}😀 é ${'z'.repeat(1000)}`
    const parts = await encodeLogRecord(record, text)
    const payload = Buffer.concat(parts)
    expect(payload.subarray(13 + payload.readUInt32LE(1)).equals(Buffer.from(text, 'utf8'))).toBe(true)
    const back = decodeLogRecord(payload)
    expect(back.record).toEqual(record)
    expect(back.content === text).toBe(true)
  })

  it('is JSON alone without an upload, and records kept with base64 or text inside their JSON still read', async () => {
    const parts = await encodeLogRecord(record, undefined)
    expect(parts).toHaveLength(1)
    expect(JSON.parse((parts[0] as Buffer).toString())).toEqual(record)
    expect(decodeLogRecord(Buffer.concat(parts))).toEqual({ record, content: undefined })
    const old = decodeLogRecord(Buffer.from(JSON.stringify({ ...record, c: { b: Buffer.from([1, 2, 255]).toString('base64') } })))
    expect(old.content).toEqual(new Uint8Array([1, 2, 255]))
    expect(decodeLogRecord(Buffer.from(JSON.stringify({ ...record, c: { s: 'héllo' } }))).content).toBe('héllo')
  })

  it('keeps byte strings of its trace (files read, vectors) outside its JSON, at their places; the request is left as it is', async () => {
    const read = new Uint8Array(2 * 1024 * 1024).map((_, i) => i % 13)
    const vectors = [new Uint8Array([1, 2, 3, 4]), new Uint8Array([5, 6, 7, 8])]
    // A request whose JSON looks like the log's own fields is kept as it is.
    const withBytes: LogRecord = { k: 'vertexRag.importRagFiles@v1', r: { b: [['t', 0]], x: 's', u: null }, t: [['clock', 5], ['read', { bytes: read }], ['embed', vectors], ['read', { status: { code: 5 } }]] }
    const payload = Buffer.concat(await encodeLogRecord(withBytes, undefined))
    const json = JSON.parse(payload.toString('utf8', 5, 5 + payload.readUInt32LE(1))) as { t: unknown[]; b: unknown[] }
    expect(json.t).toEqual([['clock', 5], ['read', { bytes: null }], ['embed', [null, null]], ['read', { status: { code: 5 } }]])
    expect(json.b).toEqual([['t', 1, 1, 'bytes'], ['t', 2, 1, 0], ['t', 2, 1, 1]])
    const back = decodeLogRecord(payload)
    expect(back.content).toBeUndefined()
    expect(back.record.r).toEqual(withBytes.r)
    // Megabytes compared as Buffers (a deep toEqual takes seconds), the rest as it is.
    const t = back.record.t as [string, unknown][]
    const got = (t[1]?.[1] as { bytes: Uint8Array }).bytes
    expect(got).toBeInstanceOf(Uint8Array)
    expect(Buffer.from(got).equals(Buffer.from(read))).toBe(true)
    expect([t[0], t[2], t[3]]).toEqual([withBytes.t[0], withBytes.t[2], withBytes.t[3]])
  })

  it('refuses a record cut inside its JSON or its byte strings', async () => {
    const payload = Buffer.concat(await encodeLogRecord(record, new Uint8Array([1, 2, 3])))
    expect(() => decodeLogRecord(payload.subarray(0, 12))).toThrow()
    expect(() => decodeLogRecord(payload.subarray(0, payload.length - 1))).toThrow(RangeError)
  })
})
