import { describe, expect, it } from 'vitest'
import { Code, httpStatusOf, codeName } from '@quarry/adapters'
import { bool, bytes, duration, enumOf, fieldMask, int32, int64, mapOf, message, readMessage, repeated, string, timestamp } from '../../packages/adapters/src/rpc/proto-json.js'
import { derivedId, parseName, seededRandomId } from '../../packages/adapters/src/rpc/names.js'
import { pageOf } from '../../packages/adapters/src/rpc/paging.js'
import { UNARY, method, serveTable } from '../../packages/adapters/src/rpc/methods.js'
import { EngineWrites } from '../../packages/adapters/src/rpc/engine-writes.js'
import { violation } from '../support/rpc-failure.js'

const Inner = message('test.Inner', { value: string, count: int64 })
const Req = message(
  'test.Request',
  {
    displayName: string,
    pageSize: int32,
    force: bool,
    kind: enumOf('test.Kind', { KIND_UNSPECIFIED: 0, RED: 1, BLUE: 2 }),
    ttl: duration,
    expireTime: timestamp,
    updateMask: fieldMask,
    items: repeated(Inner),
    scope: mapOf(string),
    a: string,
    b: string,
  },
  [['a', 'b']],
)


describe('proto-JSON request reader', () => {
  it('reads camelCase and snake_case, enums by name or number, int64 strings, durations, timestamps, masks', () => {
    const r = readMessage(Req, {
      display_name: 'x',
      pageSize: '7',
      force: 'true',
      kind: 2,
      ttl: '90.5s',
      expire_time: '2026-01-01T01:00:00+01:00',
      updateMask: 'display_name,items.count',
      items: [{ value: 'v', count: '9007199254740991' }],
      scope: { user_id: 'u' },
      a: null,
    })
    expect(r).toEqual({
      displayName: 'x',
      pageSize: 7,
      force: true,
      kind: 'BLUE',
      ttl: 90.5,
      expireTime: '2026-01-01T00:00:00.000Z',
      updateMask: ['displayName', 'items.count'],
      items: [{ value: 'v', count: 9007199254740991 }],
      scope: { user_id: 'u' },
    })
    expect(readMessage(Req, { ttl: { seconds: 3, nanos: 500_000_000 }, updateMask: { paths: ['a'] }, kind: 'RED' })).toEqual({ ttl: 3.5, updateMask: ['a'], kind: 'RED' })
  })

  it('refuses unknown names, wrong types, bad enums, both oneof members, int32 overflow, bad timestamps', () => {
    expect(violation(() => readMessage(Req, { nope: 1 }))).toEqual({ code: Code.INVALID_ARGUMENT, field: '', message: 'Invalid JSON payload received. Unknown name "nope": Cannot find field.' })
    expect(violation(() => readMessage(Req, { items: [{ extra: 1 }] })).message).toBe(`Invalid JSON payload received. Unknown name "extra" at 'items[0]': Cannot find field.`)
    expect(violation(() => readMessage(Req, { pageSize: 'ten' })).field).toBe('pageSize')
    expect(violation(() => readMessage(Req, { pageSize: 2 ** 31 })).field).toBe('pageSize')
    expect(violation(() => readMessage(Req, { kind: 'GREEN' })).field).toBe('kind')
    expect(violation(() => readMessage(Req, { kind: 7 })).field).toBe('kind')
    expect(violation(() => readMessage(Req, { a: 'x', b: 'y' })).field).toBe('b')
    expect(violation(() => readMessage(Req, { expireTime: '2026-01-01' })).field).toBe('expireTime')
    expect(violation(() => readMessage(Req, { ttl: '5m' })).field).toBe('ttl')
    expect(violation(() => readMessage(Req, { items: [null] })).field).toBe('items[0]')
    expect(violation(() => readMessage(Req, { displayName: 'a', display_name: 'b' })).field).toBe('displayName')
    expect(violation(() => readMessage(Req, 'not an object')).code).toBe(Code.INVALID_ARGUMENT)
  })

  it('refuses RFC 3339 text naming no real instant, as protobuf parses a Timestamp', () => {
    // protobuf's JSON parser (ParseTime in time_util / stubs/time.cc) takes month 1-12, a day its
    // month has, hour 0-23, minute and second 0-59 (no leap second, no 24:00), offset hours 0-23;
    // Date.parse alone rolls each of these forward into another instant.
    for (const bad of ['2030-02-30T00:00:00Z', '2030-02-29T00:00:00Z', '2030-04-31T00:00:00Z', '2030-13-01T00:00:00Z', '2030-00-10T00:00:00Z', '2030-01-00T00:00:00Z', '2030-01-01T24:00:00Z', '2030-01-01T12:60:00Z', '2030-12-31T23:59:60Z', '2030-01-01T12:00:00+24:00', '2030-01-01T12:00:00+01:60']) {
      expect(violation(() => readMessage(Req, { expireTime: bad }))).toEqual({ code: Code.INVALID_ARGUMENT, field: 'expireTime', message: `Invalid value at 'expireTime' (type.googleapis.com/google.protobuf.Timestamp), "${bad}": give RFC 3339 text of a real date and time like "2024-05-01T12:00:00Z", between years 1 and 9999.` })
    }
    // Leap days that exist, the last instant of a day and offsets at their bounds still read.
    expect(readMessage(Req, { expireTime: '2028-02-29T23:59:59.999Z' })).toEqual({ expireTime: '2028-02-29T23:59:59.999Z' })
    expect(readMessage(Req, { expireTime: '2000-02-29T00:00:00Z' })).toEqual({ expireTime: '2000-02-29T00:00:00.000Z' })
    expect(readMessage(Req, { expireTime: '2030-01-01T00:00:00+23:59' })).toEqual({ expireTime: '2029-12-31T00:01:00.000Z' })
    expect(violation(() => readMessage(Req, { expireTime: '2100-02-29T00:00:00Z' })).field).toBe('expireTime')
  })

  it('reads bytes as proto3 JSON writes them: base64 text, standard or URL-safe, padded or not', () => {
    const Bytes = message('test.Bytes', { data: bytes })
    for (const data of ['c2lnbmF0dXJl', 'AAA=', 'AA==', 'AA', 'c2ln_-8', 'ab+/']) expect(readMessage(Bytes, { data })).toEqual({ data })
    expect(readMessage(Bytes, { data: '' })).toEqual({})
    for (const data of ['not base64!', 'A', 'AAAAA', '====', 5]) expect(violation(() => readMessage(Bytes, { data })).field).toBe('data')
  })

  it("refuses a Duration outside google.protobuf.Duration's range (±315,576,000,000 s, nanos of the seconds' sign)", () => {
    expect(readMessage(Req, { ttl: '315576000000s' })).toEqual({ ttl: 315576000000 })
    expect(readMessage(Req, { ttl: '-315576000000s' })).toEqual({ ttl: -315576000000 })
    expect(violation(() => readMessage(Req, { ttl: '315576000001s' }))).toEqual({ code: Code.INVALID_ARGUMENT, field: 'ttl', message: `Invalid value at 'ttl' (type.googleapis.com/google.protobuf.Duration), "315576000001s": a Duration is at most 315576000000s (about 10,000 years) either way.` })
    expect(violation(() => readMessage(Req, { ttl: { seconds: '9999999999999' } })).field).toBe('ttl')
    expect(violation(() => readMessage(Req, { ttl: { seconds: 1, nanos: -1 } })).field).toBe('ttl.nanos')
    expect(violation(() => readMessage(Req, { ttl: { nanos: 1_000_000_000 } })).field).toBe('ttl.nanos')
  })
})

describe('status codes', () => {
  it('maps gRPC codes to Google REST HTTP statuses', () => {
    expect([Code.INVALID_ARGUMENT, Code.FAILED_PRECONDITION, Code.OUT_OF_RANGE, Code.NOT_FOUND, Code.ALREADY_EXISTS, Code.RESOURCE_EXHAUSTED, Code.INTERNAL, Code.UNIMPLEMENTED].map(httpStatusOf)).toEqual([400, 400, 400, 404, 409, 429, 500, 501])
    expect(codeName(5)).toBe('NOT_FOUND')
    expect(codeName(99)).toBe('UNKNOWN')
  })
})

describe('resource names', () => {
  it('derives ids from display names within 40 characters', () => {
    const random = seededRandomId(1)
    expect(derivedId('My Corpus!', random)).toMatch(/^my-corpus-[a-z0-9]{12}$/)
    expect(derivedId('Ünïcode — and a very long display name indeed, longer than forty', random)).toMatch(/^unicode-and-a-very-long-dis-[a-z0-9]{12}$/)
    expect(derivedId('!!!', random)).toMatch(/^[a-z0-9]{12}$/)
    expect(derivedId('a'.repeat(100), random).length).toBe(40)
  })
  it('parses names against a pattern', () => {
    expect(parseName('corpora/a/documents/b-1', 'corpora/{corpus}/documents/{document}', 'name')).toEqual({
      name: 'corpora/a/documents/b-1',
      parent: 'corpora/a',
      id: 'b-1',
      ids: { corpus: 'a', document: 'b-1' },
      names: { corpus: 'corpora/a', document: 'corpora/a/documents/b-1' },
    })
    expect(parseName('corpora/a', 'corpora/{corpus}', 'name').parent).toBe('')
    // A variable with its own id rule, named in the message.
    const rule = { test: /^[a-z][a-z0-9-]{0,62}$/, says: 'up to 63 of a-z, 0-9 and -, starting with a letter' }
    expect(parseName('engines/1/memories/m-1', 'engines/{engine}/memories/{memory}', 'name', { memory: rule }).ids.memory).toBe('m-1')
    expect(violation(() => parseName('engines/1/memories/1m', 'engines/{engine}/memories/{memory}', 'name', { memory: rule })).message).toContain('memory ids: up to 63')
    for (const bad of ['corpora/a', 'corpora/a/documents/B', 'corpora/a/documents/b-', 'x/a/documents/b', 'corpora/a/documents/b/extra']) {
      expect(violation(() => parseName(bad, 'corpora/{corpus}/documents/{document}', 'name')).field).toBe('name')
    }
  })
})

describe('page cursors', () => {
  it('pages a list in order, caps the size, and binds the token to its list', () => {
    const items = Array.from({ length: 7 }, (_, i) => ({ seq: i * 2 }))
    const limits = { defaultSize: 3, maxSize: 4 }
    const p1 = pageOf(items, (x) => x.seq, 'L', {}, limits)
    expect(p1.items.map((x) => x.seq)).toEqual([0, 2, 4])
    const p2 = pageOf(items, (x) => x.seq, 'L', { pageSize: 100, pageToken: p1.nextPageToken as string }, limits)
    expect(p2.items.map((x) => x.seq)).toEqual([6, 8, 10, 12])
    expect(p2.nextPageToken).toBeUndefined()
    expect(violation(() => pageOf(items, (x) => x.seq, 'M', { pageToken: p1.nextPageToken as string }, limits)).field).toBe('pageToken')
  })
})

describe('a write started ahead (methods.ts `ahead`)', () => {
  it('starts only for a write that waits for another, with its own request, before its turn', async () => {
    const events: string[] = []
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => (release = resolve))
    const table = {
      put: method({
        rpc: 'Put',
        write: true,
        shape: UNARY,
        http: [],
        ahead: (_ctx: null, request: unknown) => {
          events.push(`ahead ${(request as { n: number }).n}`)
          if ((request as { n: number }).n === 3) throw new Error('unreadable ahead')
        },
        run: async (_ctx: null, request: unknown) => {
          const { n } = request as { n: number }
          events.push(`run ${n}`)
          if (n === 1) await gate
          return { n }
        },
      }),
    }
    const service = serveTable(table, null, { writes: new EngineWrites(), onInternalError: () => undefined })
    const calls = [1, 2, 3].map((n) => service.put({ n }))
    // The first write has its turn at once: nothing to start ahead. The others wait, and start ahead when called.
    expect(events).toEqual(['ahead 2', 'ahead 3'])
    await new Promise((resolve) => setImmediate(resolve))
    expect(events).toEqual(['ahead 2', 'ahead 3', 'run 1'])
    release()
    const outcomes = await Promise.all(calls)
    // An ahead that throws changes nothing: its write runs (and answers) in its turn.
    expect(outcomes).toEqual([1, 2, 3].map((n) => ({ ok: true, response: { n } })))
    expect(events).toEqual(['ahead 2', 'ahead 3', 'run 1', 'run 2', 'run 3'])
    // Alone again: no ahead.
    await service.put({ n: 4 })
    expect(events.slice(5)).toEqual(['run 4'])
  })
})
