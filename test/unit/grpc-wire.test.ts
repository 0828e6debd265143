import { describe, expect, it } from 'vitest'
import { decodeRequest } from '../../packages/adapters/src/grpc/codec.js'
import { loadServiceProtos } from '../../packages/adapters/src/grpc/protos.js'
import { percentEncoded, timeoutMs } from '../../packages/adapters/src/grpc/server.js'

/**
 * The two header forms the gRPC server reads and writes itself, as the protocol specifies them
 * (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md): `grpc-timeout` is at most 8
 * digits and a unit (H, M, S, m, u, n); `grpc-message` is the message's UTF-8, percent-encoded
 * outside printable ASCII and for `%`.
 */
describe('grpc-timeout', () => {
  it('reads every unit in milliseconds', () => {
    expect(['2H', '3M', '4S', '100m', '2500u', '7000000n'].map(timeoutMs)).toEqual([7_200_000, 180_000, 4000, 100, 2.5, 7])
    expect(timeoutMs('99999999S')).toBe(99_999_999_000)
  })
  it('ignores a malformed one (no deadline, as without the header)', () => {
    for (const bad of [undefined, '', '100', 'm', '123456789m', '1.5S', '-1S', '10s', ' 1S', '1S ']) expect(timeoutMs(bad), String(bad)).toBeUndefined()
  })
})

describe('grpc-message', () => {
  it('percent-encodes what is not printable ASCII, and % itself; a client decodes it back', () => {
    expect(percentEncoded('plain ASCII: (a, b) [c] ~')).toBe('plain ASCII: (a, b) [c] ~')
    expect(percentEncoded('50% off')).toBe('50%25 off')
    expect(percentEncoded('line\nbreak\ttab')).toBe('line%0Abreak%09tab')
    expect(percentEncoded('café ✓')).toBe('caf%C3%A9 %E2%9C%93')
    for (const text of ['café ✓ 50% \n', 'emoji 🦀 and "quotes"', '%%%', '']) expect(decodeURIComponent(percentEncoded(text))).toBe(text)
  })
})

describe('string fields of a request', () => {
  const type = loadServiceProtos(['google.cloud.aiplatform.v1beta1.SessionService']).lookupType('google.cloud.aiplatform.v1beta1.CreateSessionRequest')
  const parent = 'projects/p/locations/l/reasoningEngines/1'
  const encode = (userId: string): Buffer => Buffer.from(type.encode(type.fromObject({ parent, session: { userId } })).finish())

  it('are read as UTF-8 text, a byte-order mark kept as a character', () => {
    expect(decodeRequest(type, encode('café ✓ 🦀'))).toEqual({ ok: true, json: { parent, session: { userId: 'café ✓ 🦀', labels: {} } } })
    expect(decodeRequest(type, encode('\uFEFFx'))).toEqual({ ok: true, json: { parent, session: { userId: '\uFEFFx', labels: {} } } })
  })

  it('holding bytes that are not UTF-8 are refused (as REST refuses such a body), not read with U+FFFD', () => {
    const bytes = encode('caf\u00e9')
    const at = bytes.indexOf(Buffer.from('\u00e9', 'utf8'))
    // é (C3 A9) becomes FF FE: the same length, so the message's framing still holds.
    bytes[at] = 0xff
    bytes[at + 1] = 0xfe
    const decoded = decodeRequest(type, bytes)
    expect(decoded).toMatchObject({ ok: false, message: 'The request is not a valid google.cloud.aiplatform.v1beta1.CreateSessionRequest message: a string field holds bytes that are not UTF-8 (proto3 strings are UTF-8 text).' })
    // A lone surrogate's three bytes (ED A0 80) are not UTF-8 either.
    const surrogate = encode('caf\u00e9x')
    surrogate.set([0xed, 0xa0, 0x80], surrogate.indexOf(Buffer.from('\u00e9x', 'utf8')))
    expect(decodeRequest(type, surrogate).ok).toBe(false)
  })
})
