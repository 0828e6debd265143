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

/**
 * A request message holds at most as many field values as a REST body may hold objects, lists and
 * commas (transport/json.ts), counted on the wire before protobuf.js makes an object of each: every
 * occurrence of a field, every element of a packed list, in nested messages and map entries too.
 * The bound is the third argument here (200,000 by default), so that these messages stay small.
 */
describe('the values a request message holds', () => {
  const root = loadServiceProtos(['google.cloud.aiplatform.v1.VertexRagDataService', 'google.cloud.aiplatform.v1.VertexRagService', 'google.cloud.aiplatform.v1.SessionService'])
  const importType = root.lookupType('google.cloud.aiplatform.v1.ImportRagFilesRequest')
  const parent = 'projects/p/locations/l/ragCorpora/1'
  const imports = (uris: number): Buffer => Buffer.from(importType.encode(importType.fromObject({ parent, importRagFilesConfig: { gcsSource: { uris: Array.from({ length: uris }, (_, i) => `gs://b/${i}`) } } })).finish())

  it('are counted at every depth: one over the bound is refused, saying where', () => {
    // parent, the config, its gcsSource and the uris: 3 + n values.
    const at = imports(997)
    expect(decodeRequest(importType, at, 1000)).toMatchObject({ ok: true, json: { parent } })
    const over = decodeRequest(importType, imports(998), 1000)
    expect(over).toEqual({ ok: false, message: expect.stringMatching(/^The request message holds more than 1000 field values \(at byte \d+\): send fewer items per request\.$/) })
  })

  it('count each element of a packed list, and each map entry with what its value holds', () => {
    const support = root.lookupType('google.cloud.aiplatform.v1.GroundingSupport')
    const packed = (n: number): Buffer => Buffer.from(support.encode(support.fromObject({ groundingChunkIndices: Array.from({ length: n }, (_, i) => i * 1000), confidenceScores: Array.from({ length: n }, () => 0.5) })).finish())
    // Two packed lists of n elements, each list a field: 2n + 2 values, in bytes far fewer than the varints' count would allow for.
    expect(decodeRequest(support, packed(499), 1000).ok).toBe(true)
    expect(decodeRequest(support, packed(500), 1000)).toMatchObject({ ok: false, message: expect.stringContaining('more than 1000 field values') })
    const session = root.lookupType('google.cloud.aiplatform.v1.CreateSessionRequest')
    // sessionState is a Struct: a map of Values, each entry a key, a Value and the Value's kind (its string).
    const state = (n: number): Buffer => Buffer.from(session.encode(session.fromObject({ parent: 'projects/p/locations/l/reasoningEngines/1', session: { userId: 'u', sessionState: { fields: Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, { stringValue: 'v' }])) } } })).finish())
    // parent, session, userId, sessionState, then per entry: the entry, its key, its Value, the Value's string.
    expect(decodeRequest(session, state(249), 1000).ok).toBe(true)
    expect(decodeRequest(session, state(250), 1000)).toMatchObject({ ok: false, message: expect.stringContaining('more than 1000 field values') })
  })

  it('refuses a message nested deeper than 100 messages, protobuf\'s own recursion limit', () => {
    const session = root.lookupType('google.cloud.aiplatform.v1.CreateSessionRequest')
    // A Struct nested n levels: each level a Value holding a Struct of one entry, three messages
    // deeper (entry, Value, Struct); the request, its session and the outer Struct are three more.
    const nested = (n: number): Record<string, unknown> => (n === 0 ? { stringValue: 'v' } : { structValue: { fields: { k: nested(n - 1) } } })
    const bytes = (n: number): Buffer => Buffer.from(session.encode(session.fromObject({ parent: 'projects/p/locations/l/reasoningEngines/1', session: { userId: 'u', sessionState: { fields: { k: nested(n) } } } })).finish())
    // 3 + 3·32 + 2 (the last entry and its Value) = 101 messages deep; 31 levels make 98.
    expect(decodeRequest(session, bytes(31)).ok).toBe(true)
    expect(decodeRequest(session, bytes(32))).toEqual({ ok: false, message: expect.stringMatching(/^The request message nests messages deeper than 100 levels \(at byte \d+\), protobuf's recursion limit \(each level of a Struct is three: the Struct, its entry and its Value\)\.$/) })
  })

  it('at the default bound, 8 MB of empty strings is refused before it is decoded', () => {
    // Four million empty uris: 2 bytes each.
    const uris = Buffer.alloc(4_000_000 * 2)
    for (let i = 0; i < uris.length; i += 2) uris[i] = 0x0a
    const field = (tag: number, body: Buffer): Buffer => {
      const length: number[] = []
      for (let n = body.length; ; n >>>= 7) {
        if (n < 0x80) {
          length.push(n)
          break
        }
        length.push((n & 0x7f) | 0x80)
      }
      return Buffer.concat([Buffer.from([tag, ...length]), body])
    }
    const message = field(0x12, field(0x12, uris))
    expect(decodeRequest(importType, message)).toMatchObject({ ok: false, message: expect.stringContaining('more than 200000 field values') })
  })
})

/**
 * Timestamp and Duration fields in the ranges timestamp.proto and duration.proto give them: nanos of
 * 2e9 had read as .2 s, and a Duration whose seconds and nanos disagree in sign was taken. REST
 * refuses the same values in their JSON forms ("…40.2000000000Z", "100.2000000000s").
 */
describe('Timestamp and Duration fields of a request', () => {
  const root = loadServiceProtos(['google.cloud.aiplatform.v1beta1.MemoryBankService'])
  const type = root.lookupType('google.cloud.aiplatform.v1beta1.CreateMemoryRequest')
  const parent = 'projects/p/locations/l/reasoningEngines/1'
  const encode = (memory: Record<string, unknown>): Buffer => Buffer.from(type.encode(type.fromObject({ parent, memory: { fact: 'f', scope: { u: '1' }, ...memory } })).finish())

  it('are read in range as proto3 JSON writes them', () => {
    expect(decodeRequest(type, encode({ expireTime: { seconds: 4_000_000_000, nanos: 999_999_999 } }))).toMatchObject({ ok: true, json: { memory: { expireTime: '2096-10-02T07:06:40.999999999Z' } } })
    expect(decodeRequest(type, encode({ ttl: { seconds: 100, nanos: 500_000_000 } }))).toMatchObject({ ok: true, json: { memory: { ttl: '100.500s' } } })
    expect(decodeRequest(type, encode({ ttl: { seconds: -1, nanos: -5 } }))).toMatchObject({ ok: true, json: { memory: { ttl: '-1.000000005s' } } })
  })

  it('out of range are refused, saying which bound', () => {
    const refused = (memory: Record<string, unknown>) => decodeRequest(type, encode(memory))
    const prefix = 'The request is not a valid google.cloud.aiplatform.v1beta1.CreateMemoryRequest message: '
    expect(refused({ expireTime: { seconds: 4_000_000_000, nanos: 2_000_000_000 } })).toEqual({ ok: false, message: `${prefix}a google.protobuf.Timestamp holds nanos 2000000000; they are 0 to 999,999,999.` })
    expect(refused({ expireTime: { seconds: 4_000_000_000, nanos: -1 } })).toEqual({ ok: false, message: `${prefix}a google.protobuf.Timestamp holds nanos -1; they are 0 to 999,999,999.` })
    expect(refused({ expireTime: { seconds: 253_402_300_800 } })).toEqual({ ok: false, message: `${prefix}a google.protobuf.Timestamp holds seconds 253402300800, outside 0001-01-01 to 9999-12-31.` })
    expect(refused({ ttl: { seconds: 100, nanos: 2_000_000_000 } })).toEqual({ ok: false, message: `${prefix}a google.protobuf.Duration holds nanos 2000000000; they are -999,999,999 to 999,999,999.` })
    expect(refused({ ttl: { seconds: 100, nanos: -5 } })).toEqual({ ok: false, message: `${prefix}a google.protobuf.Duration holds seconds 100 and nanos -5; the two have the same sign.` })
    expect(refused({ ttl: { seconds: 315_576_000_001 } })).toEqual({ ok: false, message: `${prefix}a google.protobuf.Duration holds seconds 315576000001, beyond 10,000 years.` })
  })
})
