import { describe, expect, it } from 'vitest'
import { decodeRequest } from '../../packages/adapters/src/grpc/codec.js'
import { loadServiceProtos } from '../../packages/adapters/src/grpc/protos.js'
import { SESSION_REQUESTS } from '../../packages/adapters/src/memory-bank/session-schema.js'
import { readMessage } from '../../packages/adapters/src/rpc/proto-json.js'
import { violation } from '../support/rpc-failure.js'

/**
 * Issue 41: a google.protobuf.Value's number is finite. Proto3 JSON has no NaN or Infinity number
 * (it would write the strings "NaN" / "Infinity", and a snapshot would write null), so both
 * transports refuse one with INVALID_ARGUMENT naming the same field, and a finite number or a
 * string "NaN" passes as what it is.
 */
const CREATE = SESSION_REQUESTS.CreateSessionRequest
const root = loadServiceProtos(['google.cloud.aiplatform.v1beta1.SessionService'])
const grpcType = root.lookupType('google.cloud.aiplatform.v1beta1.CreateSessionRequest')

function grpcDecode(state: Record<string, unknown>): ReturnType<typeof decodeRequest> {
  const message = grpcType.fromObject({ parent: 'projects/p/locations/l/reasoningEngines/1', session: { userId: 'u', sessionState: state } })
  return decodeRequest(grpcType, Buffer.from(grpcType.encode(message).finish()))
}

describe('numbers in Struct values', () => {
  const cases: [string, number, Record<string, unknown>, Record<string, unknown>][] = [
    ['session.sessionState.score', Number.NaN, { score: Number.NaN }, { fields: { score: { numberValue: Number.NaN } } }],
    ['session.sessionState.score', Number.POSITIVE_INFINITY, { score: Number.POSITIVE_INFINITY }, { fields: { score: { numberValue: Number.POSITIVE_INFINITY } } }],
    [
      'session.sessionState.a.b[1]',
      Number.NEGATIVE_INFINITY,
      { a: { b: [1, Number.NEGATIVE_INFINITY] } },
      { fields: { a: { structValue: { fields: { b: { listValue: { values: [{ numberValue: 1 }, { numberValue: Number.NEGATIVE_INFINITY }] } } } } } } },
    ],
  ]

  it.each(cases)('refuses %s = %s over REST and gRPC alike, naming the field', (field, _n, json, proto) => {
    const rest = violation(() => readMessage(CREATE, { parent: 'projects/p/locations/l/reasoningEngines/1', session: { userId: 'u', sessionState: json } }))
    expect(rest).toMatchObject({ code: 3, field })
    expect(rest.message).toMatch(/a number must be finite; NaN and Infinity have no JSON form/)
    const grpc = grpcDecode(proto)
    expect(grpc).toMatchObject({ ok: false, violations: [{ field }] })
    if (!grpc.ok) expect(grpc.message).toMatch(/a number value must be finite; NaN and Infinity have no JSON form/)
  })

  it('passes finite numbers as numbers and the string "NaN" as a string', () => {
    const state = { score: 1.5, big: 1e308, text: 'NaN' }
    expect(readMessage(CREATE, { session: { sessionState: state } })).toEqual({ session: { sessionState: state } })
    const grpc = grpcDecode({ fields: { score: { numberValue: 1.5 }, big: { numberValue: 1e308 }, text: { stringValue: 'NaN' } } })
    expect(grpc).toEqual({ ok: true, json: { parent: 'projects/p/locations/l/reasoningEngines/1', session: { labels: {}, userId: 'u', sessionState: state } } })
  })
})
