import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { messageFromJson, messageToJson } from '../../packages/adapters/src/grpc/json-message.js'
import { encodeJson } from '../../packages/adapters/src/grpc/json-wire.js'
import { loadServiceProtos, type ProtoType } from '../../packages/adapters/src/grpc/protos.js'
import { runs } from '../support/runs.js'

/**
 * grpc/json-message.ts against its oracle, Google's `proto3-json-serializer`: the same message
 * bytes from every golden request and response JSON, and the same JSON back from every request's
 * bytes; then random Struct, enum, int64, bytes and Timestamp values in one request type.
 */
const SERVICES = [
  'google.ai.generativelanguage.v1beta.RetrieverService',
  'google.cloud.aiplatform.v1.VertexRagService',
  'google.cloud.aiplatform.v1beta1.VertexRagService',
  'google.cloud.aiplatform.v1.VertexRagDataService',
  'google.cloud.aiplatform.v1beta1.VertexRagDataService',
  'google.cloud.aiplatform.v1beta1.MemoryBankService',
  'google.cloud.aiplatform.v1beta1.SessionService',
  'google.cloud.aiplatform.v1beta1.ReasoningEngineService',
  'google.cloud.aiplatform.v1.PredictionService',
  'google.cloud.aiplatform.v1beta1.PredictionService',
  'google.longrunning.Operations',
]
const root = loadServiceProtos(SERVICES)
// The adapters' own dependency (not the workspace root's), resolved from that package.
interface Serializer {
  fromProto3JSON(type: ProtoType, json: unknown): ReturnType<ProtoType['fromObject']> | null
  toProto3JSON(message: object): unknown
}
const { fromProto3JSON, toProto3JSON } = createRequire(join(import.meta.dirname, '..', '..', 'packages', 'adapters', 'package.json'))('proto3-json-serializer') as Serializer

const oracleBytes = (type: ProtoType, json: unknown): Buffer => Buffer.from(type.encode(fromProto3JSON(type, json) ?? type.create()).finish())
const ourBytes = (type: ProtoType, json: unknown): Buffer => Buffer.from(type.encode(messageFromJson(type, json) ?? type.create()).finish())

/** Every golden step's request and response JSON with the types of each RPC of that name. */
function goldenCases(): { name: string; type: ProtoType; json: unknown; request: boolean }[] {
  const methods = SERVICES.flatMap((s) => {
    const service = root.lookupService(s)
    for (const m of service.methodsArray) m.resolve()
    return service.methodsArray
  })
  const dir = join(import.meta.dirname, '..', 'contract', 'golden')
  const cases: { name: string; type: ProtoType; json: unknown; request: boolean }[] = []
  for (const file of readdirSync(dir)) {
    const golden = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { scenarios: { steps: { call?: string; request?: unknown; response?: unknown }[] }[] }
    for (const step of golden.scenarios.flatMap((s) => s.steps)) {
      const rpc = step.call === undefined ? '' : step.call.charAt(0).toUpperCase() + step.call.slice(1)
      for (const m of methods.filter((x) => x.name === rpc)) {
        const at = `${file} ${m.parent?.name ?? ''}.${rpc}`
        if (step.request !== undefined && m.resolvedRequestType) cases.push({ name: `${at} request`, type: m.resolvedRequestType, json: step.request, request: true })
        if (step.response !== undefined && m.resolvedResponseType) cases.push({ name: `${at} response`, type: m.resolvedResponseType, json: step.response, request: false })
      }
    }
  }
  return cases
}

describe('proto3 JSON ↔ message, against proto3-json-serializer', () => {
  const cases = goldenCases()

  it('covers the golden files', () => {
    expect(cases.filter((c) => c.request).length).toBeGreaterThan(50)
    expect(cases.filter((c) => !c.request).length).toBeGreaterThan(50)
  })

  it('writes the same bytes from every golden JSON, and reads the same JSON back from every request', () => {
    let compared = 0
    for (const c of cases) {
      let expected: Buffer
      try {
        expected = oracleBytes(c.type, c.json)
      } catch {
        // JSON of another version's type that the library refuses: ours must refuse it too or write the same.
        continue
      }
      expect(ourBytes(c.type, c.json).equals(expected), c.name).toBe(true)
      expect(messageToJson(c.type, c.type.decode(expected)), c.name).toEqual(toProto3JSON(c.type.decode(expected)))
      compared++
    }
    expect(compared).toBeGreaterThan(100)
  })

  it('writes the general path bytes straight from JSON (grpc/json-wire.ts), and refuses what it refuses', () => {
    let compared = 0
    const general = (type: ProtoType, json: unknown): Buffer | 'refused' => {
      try {
        return ourBytes(type, json)
      } catch {
        return 'refused'
      }
    }
    const direct = (type: ProtoType, json: unknown): Buffer | 'refused' => {
      try {
        return encodeJson(type, json)
      } catch {
        return 'refused'
      }
    }
    for (const c of cases) {
      const expected = general(c.type, c.json)
      const got = direct(c.type, c.json)
      expect(got === 'refused' ? got : got.toString('hex'), c.name).toEqual(expected === 'refused' ? expected : expected.toString('hex'))
      if (expected !== 'refused' && !c.request) compared++
    }
    expect(compared).toBeGreaterThan(50)
    // Values of the wrong kind, unknown enum names, nulls, nesting: the same bytes or the same refusal.
    const response = root.lookupType('google.cloud.aiplatform.v1beta1.RetrieveContextsResponse')
    const odd: unknown[] = [
      null,
      [],
      'text',
      { contexts: null },
      { contexts: { contexts: null } },
      { contexts: { contexts: [null] } },
      { contexts: { contexts: [{ score: '0.5', distance: 'NaN', text: 5 }] } },
      { contexts: { contexts: [{ score: 0, distance: -0, text: '', sourceUri: 'a' }] } },
      { contexts: { contexts: [{ chunk: { pageSpan: { firstPage: '3', lastPage: 2.7 } } }] } },
      { contexts: { contexts: [{ chunk: { pageSpan: 'x' } }] } },
    ]
    for (const json of odd) {
      const expected = general(response, json)
      const got = direct(response, json)
      expect(got === 'refused' ? got : got.toString('hex'), JSON.stringify(json)).toEqual(expected === 'refused' ? expected : expected.toString('hex'))
    }
    const memory = root.lookupType('google.cloud.aiplatform.v1beta1.Memory')
    for (const json of [{ name: 'm', createTime: '2026-01-02T03:04:05.123Z', updateTime: '1970-01-01T00:00:00Z', scope: { a: 'b', c: '' } }, { scope: { n: 5, m: null } }, { scope: null }, { scope: ['x'] }, { createTime: 'yesterday' }, { createTime: 5 }, { expireTime: '2026-02-30T00:00:00.5+01:00' }]) {
      const expected = general(memory, json)
      const got = direct(memory, json)
      expect(got === 'refused' ? got : got.toString('hex'), JSON.stringify(json)).toEqual(expected === 'refused' ? expected : expected.toString('hex'))
    }
  })

  it('agrees on random Struct, enum, int64, bytes and Timestamp values', () => {
    const type = root.lookupType('google.cloud.aiplatform.v1beta1.CreateSessionRequest')
    const append = root.lookupType('google.cloud.aiplatform.v1beta1.AppendEventRequest')
    const value: fc.Arbitrary<unknown> = fc.letrec<{ v: unknown }>((tie) => ({
      v: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant(null), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string(), fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), tie('v'), { maxKeys: 3, noNullPrototype: true })),
    })).v
    // Google's Timestamp range (0001 to 9999): negative seconds too, which go to the writer as numbers.
    // The TTL in Duration's (±10,000 years: grpc-wire.test.ts has beyond it).
    const time = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }).map((d) => d.toISOString())
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 6 }), value, { maxKeys: 4, noNullPrototype: true }), fc.string(), time, fc.uint8Array({ maxLength: 8 }), fc.bigInt({ min: 0n, max: 315_576_000_000n }), (state, user, at, bytes, ttl) => {
        const session = { parent: 'projects/p/locations/l/reasoningEngines/1', session: { userId: user, sessionState: state, expireTime: at, ttl: `${ttl}s` } }
        expect(ourBytes(type, session).equals(oracleBytes(type, session))).toBe(true)
        expect(encodeJson(type, session).equals(oracleBytes(type, session))).toBe(true)
        const decoded = type.decode(oracleBytes(type, session))
        expect(messageToJson(type, decoded)).toEqual(toProto3JSON(decoded))
        const event = { name: 'projects/p/locations/l/reasoningEngines/1/sessions/s', event: { author: user, timestamp: at, content: { role: 'user', parts: [{ inlineData: { mimeType: 'a/b', data: Buffer.from(bytes).toString('base64') } }] }, actions: { stateDelta: state } } }
        expect(ourBytes(append, event).equals(oracleBytes(append, event))).toBe(true)
        expect(encodeJson(append, event).equals(oracleBytes(append, event))).toBe(true)
        const read = append.decode(oracleBytes(append, event))
        expect(messageToJson(append, read)).toEqual(toProto3JSON(read))
      }),
      { numRuns: runs(100) },
    )
  })

  it('reads a "__proto__" key of a Struct or a map as a field, as REST reads it (where the library sets the prototype)', () => {
    const type = root.lookupType('google.cloud.aiplatform.v1beta1.GenerateContentRequest')
    // The request as protobufjs holds it after decoding: the key an own field of the map.
    const withKey = (value: unknown): Record<string, unknown> => Object.defineProperty({}, '__proto__', { value, enumerable: true, writable: true, configurable: true }) as Record<string, unknown>
    const Struct = root.lookupType('google.protobuf.Struct')
    const Value = root.lookupType('google.protobuf.Value')
    const Schema = root.lookupType('google.cloud.aiplatform.v1beta1.Schema')
    const message = type.fromObject({ model: 'm', contents: [{ role: 'user', parts: [{ text: 'hi' }] }], tools: [{ functionDeclarations: [{ name: 'f', parameters: { type: 'OBJECT' } }] }] }) as unknown as {
      contents: { parts: unknown[] }[]
      tools: { functionDeclarations: { parameters: { properties: unknown } }[] }[]
    }
    const args = Struct.create({}) as unknown as { fields: unknown }
    args.fields = withKey(Value.create({ structValue: Struct.fromObject({ fields: { a: { numberValue: 1 } } }) }))
    message.contents[0]?.parts.push({ functionCall: { name: 'f', args } })
    const declaration = message.tools[0]?.functionDeclarations[0]
    if (declaration) declaration.parameters.properties = withKey(Schema.create({ type: 1, description: 'x' }))
    const json = messageToJson(type, type.decode(type.encode(message as never).finish())) as {
      contents: { parts: { functionCall?: { args: object } }[] }[]
      tools: { functionDeclarations: { parameters: { properties: object } }[] }[]
    }
    const readArgs = json.contents[0]?.parts[1]?.functionCall?.args as object
    const readProperties = json.tools[0]?.functionDeclarations[0]?.parameters.properties as object
    for (const [read, inner] of [[readArgs, { a: 1 }], [readProperties, { type: 'STRING', description: 'x' }]] as const) {
      expect(Object.getPrototypeOf(read)).toBe(Object.prototype)
      expect(Object.keys(read)).toEqual(['__proto__'])
      expect(Object.getOwnPropertyDescriptor(read, '__proto__')?.value).toMatchObject(inner)
    }
  })

  it('writes a "__proto__" key of a map as an entry, as it reads one (where the library assigns it and loses it)', () => {
    const memory = root.lookupType('google.cloud.aiplatform.v1beta1.Memory')
    const scope = JSON.parse('{"__proto__": "x", "user_id": "u1"}') as Record<string, string>
    const json = { name: 'm', fact: 'f', scope }
    // The oracle: protobuf.js's own fromObject keeps the key (util.makeProp) and encodes its entry.
    const bytes = encodeJson(memory, json)
    expect(bytes.equals(Buffer.from(memory.encode(memory.fromObject(json)).finish()))).toBe(true)
    const read = messageToJson(memory, memory.decode(bytes)) as { scope: Record<string, string> }
    expect(Object.entries(read.scope)).toEqual([['__proto__', 'x'], ['user_id', 'u1']])
    expect(Object.getPrototypeOf(read.scope)).toBe(Object.prototype)
  })

  it('reads every RFC 3339 time as the library does, fractions of 0 to 9 digits and offsets included', () => {
    const type = root.lookupType('google.protobuf.Timestamp')
    const fraction = fc.stringMatching(/^(\.[0-9]{1,9})?$/)
    const zone = fc.constantFrom('Z', 'Z', '+01:00', '-05:30')
    fc.assert(
      fc.property(fc.date({ min: new Date('0100-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }), fraction, zone, (date, f, z) => {
        const text = `${date.toISOString().slice(0, 19)}${f}${z}`
        const expected = fromProto3JSON(type, text)?.toJSON()
        expect(messageFromJson(type, text)?.toJSON(), text).toEqual(expected)
      }),
      { numRuns: runs(300) },
    )
  })
})
