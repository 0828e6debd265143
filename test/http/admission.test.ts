import { connect as connectH2, constants as h2, type IncomingHttpHeaders } from 'node:http2'
import { request, type IncomingMessage } from 'node:http'
import { connect, type Socket } from 'node:net'
import { networkInterfaces } from 'node:os'
import { createHashingEmbedder } from '@quarry/core'
import { createServer } from '@quarry/adapters'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServe, type ServeProcess } from '../support/quarry-process.js'

/**
 * Issue 41's admission targets against the real `quarry serve`: event streams and slow bodies hold
 * no API slot, a body that stalls ends with 408, and pages of other sites are refused by their
 * Fetch Metadata. The API's slots are cut to 2 so that any slot held by an attacker shows.
 */
const FLOOD = 1_000
/** The latency target: a plain API call answers within this while the flood is open. */
const TARGET_MS = 1_000
const STREAM_CAP = 32
const BODY_TIMEOUT_MS = 5_000
const ALLOWED_ORIGIN = 'http://localhost:5173'

let served: ServeProcess

interface Answer {
  readonly status: number
  readonly ms: number
  readonly headers: IncomingMessage['headers']
  readonly text: string
}

/** One request on its own connection, answered in full (bounded: a hang fails the test). */
function call(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: served.port, path, method, headers, agent: false, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 10 s`)))
    req.on('error', reject)
    req.end()
  })
}

function errorOf(answer: Answer): unknown {
  return (JSON.parse(answer.text) as { error: unknown }).error
}

/** Opens the console's event stream: its status, and for a 200 the open response (to close later, or read on). */
function openStream(port = served.port): Promise<{ status: number; text: string; close: () => void; res: IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/console/api/events', agent: false }, (res) => {
      if (res.statusCode === 200) {
        // The first event arrives at once: the stream is open and counted.
        res.once('data', (c: Buffer) => resolve({ status: 200, text: c.toString('utf8'), close: () => req.destroy(), res }))
        return
      }
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), close: () => req.destroy(), res }))
    })
    req.on('error', reject)
    req.end()
  })
}

/** `count` at a time, in order (the listen backlog takes a few hundred connections at once). */
async function inBatches<T>(total: number, open: () => Promise<T>): Promise<T[]> {
  const all: T[] = []
  for (let i = 0; i < total; i += 100) all.push(...(await Promise.all(Array.from({ length: Math.min(100, total - i) }, open))))
  return all
}

/** A connection that sends a POST's headers (Content-Length 100) and one byte of body, then nothing. */
function trickler(): Promise<{ socket: Socket; answer: Promise<{ text: string; ms: number }> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(served.port, '127.0.0.1', () => {
      let text = ''
      let sentAt = 0
      const answer = new Promise<{ text: string; ms: number }>((done) => socket.on('close', () => done({ text, ms: performance.now() - sentAt })))
      socket.on('data', (c: Buffer) => (text += c.toString('utf8')))
      socket.write(`POST /v1beta/corpora HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`, () => {
        sentAt = performance.now()
        resolve({ socket, answer })
      })
    })
    socket.once('error', reject)
  })
}

beforeAll(async () => {
  served = await startServe(['--embedder', 'hashing', '--max-in-flight', '2', '--cors-origin', ALLOWED_ORIGIN, '--grpc-port', '0'])
})

afterAll(async () => {
  await served?.kill()
})

describe('quarry serve --max-in-flight 2, flooded', () => {
  it(`keeps the API answering within ${TARGET_MS} ms with ${FLOOD} event streams asked for; streams past ${STREAM_CAP} get 429, and hold no API slot`, async () => {
    const streams = await inBatches(FLOOD, openStream)
    try {
      const open = streams.filter((s) => s.status === 200)
      const refused = streams.filter((s) => s.status !== 200)
      expect(open.length).toBe(STREAM_CAP)
      expect(open[0]?.text).toBe('event: generation\ndata: {"generation":0}\n\n')
      expect(new Set(refused.map((s) => s.status))).toEqual(new Set([429]))
      expect(refused.length).toBe(FLOOD - STREAM_CAP)
      expect(JSON.parse(refused[0]?.text ?? '{}')).toEqual({
        error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: `The server is holding ${STREAM_CAP} event streams already (maxEventStreams); retry shortly, or send fewer at once.` },
      })
      // Both API slots are free: two calls at once are both answered, each within the target.
      const [a, b] = await Promise.all([call('/v1beta/corpora'), call('/console/api/overview')])
      for (const answer of [a, b]) {
        expect(answer?.status).toBe(200)
        expect(answer?.ms).toBeLessThan(TARGET_MS)
      }
      expect(JSON.parse(a?.text ?? '')).toEqual({})
    } finally {
      for (const s of streams) s.close()
    }
    // Closed streams give their slots back.
    let again = await openStream()
    for (let tries = 0; again.status !== 200 && tries < 50; tries++) {
      await new Promise((done) => setTimeout(done, 100))
      again = await openStream()
    }
    again.close()
    expect(again.status).toBe(200)
  })

  it(`keeps the API answering within ${TARGET_MS} ms with ${FLOOD} connections stalled mid-body, and ends each with 408 after ${BODY_TIMEOUT_MS / 1000} s without progress`, async () => {
    const stalled = await inBatches(FLOOD, trickler)
    try {
      const [a, b] = await Promise.all([call('/v1beta/corpora'), call('/readyz')])
      expect(a?.status).toBe(200)
      expect(b?.status).toBe(200)
      expect(a?.ms).toBeLessThan(TARGET_MS)
      expect(b?.ms).toBeLessThan(TARGET_MS)
      const answers = await Promise.all(stalled.map((s) => s.answer))
      const body = JSON.stringify({ error: { code: 408, message: 'The request body made no progress for 5 s (1 bytes received); send it without pauses.', status: 'DEADLINE_EXCEEDED' } })
      for (const { text, ms } of answers) {
        expect(text.split('\r\n', 1)[0]).toBe('HTTP/1.1 408 Request Timeout')
        expect(text).toContain('\r\nconnection: close\r\n')
        expect(text.endsWith(`\r\n\r\n${body}`)).toBe(true)
        expect(ms).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50)
      }
    } finally {
      for (const s of stalled) s.socket.destroy()
    }
    // Nothing was created by the stalled posts.
    expect(JSON.parse((await call('/v1beta/corpora')).text)).toEqual({})
  })

  it(`serves ${FLOOD} open event streams (--max-event-streams ${FLOOD}) beside the API: a write answers within ${TARGET_MS} ms and reaches every stream`, async () => {
    const wide = await startServe(['--embedder', 'hashing', '--max-in-flight', '2', '--max-event-streams', String(FLOOD)])
    const streams = await inBatches(FLOOD, () => openStream(wide.port))
    try {
      expect(streams.map((s) => s.status)).toEqual(Array(FLOOD).fill(200))
      const next = streams.map((s) => new Promise<string>((done) => s.res.once('data', (c: Buffer) => done(c.toString('utf8')))))
      const started = performance.now()
      const created = await fetch(`${wide.base}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"corpora/seen"}' })
      const ms = performance.now() - started
      expect(created.status).toBe(200)
      expect(ms).toBeLessThan(TARGET_MS)
      expect(new Set(await Promise.all(next))).toEqual(new Set(['event: generation\ndata: {"generation":1}\n\n']))
    } finally {
      for (const s of streams) s.close()
      await wide.kill()
    }
  })

  it('holds no API slot for a gRPC call whose message has not arrived', async () => {
    const session = connectH2(`http://127.0.0.1:${served.grpcPort}`)
    const streams = Array.from({ length: 4 }, () => {
      const stream = session.request({
        [h2.HTTP2_HEADER_METHOD]: 'POST',
        [h2.HTTP2_HEADER_PATH]: '/google.ai.generativelanguage.v1beta.RetrieverService/ListCorpora',
        'content-type': 'application/grpc',
        te: 'trailers',
      })
      // A frame that declares 100 bytes of message and sends 2.
      stream.write(Buffer.from([0, 0, 0, 0, 100, 8, 1]))
      stream.on('error', () => undefined)
      return stream
    })
    try {
      await new Promise((done) => setTimeout(done, 200))
      const [a, b] = await Promise.all([call('/v1beta/corpora'), call('/v1beta/corpora')])
      expect([a?.status, b?.status]).toEqual([200, 200])
      expect(a?.ms).toBeLessThan(TARGET_MS)
    } finally {
      for (const s of streams) s.close()
      session.destroy()
    }
  })
})

describe('quarry serve --max-in-flight 2: clients that go away', () => {
  it('frees the slot of a large body whose client left right after its last byte (the body is joined asynchronously)', async () => {
    // 5 MB bodies are copied into shared memory after their end: the client's close comes meanwhile.
    const body = Buffer.from(JSON.stringify({ displayName: 'x'.repeat(5 << 20) }))
    for (let i = 0; i < 6; i++) {
      await new Promise<void>((done) => {
        const socket = connect(served.port, '127.0.0.1', () => {
          socket.write(`POST /v1beta/corpora HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`)
          socket.end(body, () => {
            socket.destroy()
            done()
          })
        })
        socket.on('error', () => done())
      })
    }
    await new Promise((done) => setTimeout(done, 500))
    // Both slots are free: two calls at once get 200, not 429.
    const [a, b] = await Promise.all([call('/v1beta/corpora'), call('/v1beta/corpora')])
    expect([a?.status, b?.status]).toEqual([200, 200])
  })

  it('survives gRPC calls closed by the client with RST_STREAM NO_ERROR before their message was whole, or mid-message by a destroyed session', async () => {
    for (let round = 0; round < 3; round++) {
      const session = connectH2(`http://127.0.0.1:${served.grpcPort}`)
      session.on('error', () => undefined)
      for (const sent of [[], [0, 0, 0, 0, 100, 8, 1]]) {
        const stream = session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: '/google.ai.generativelanguage.v1beta.RetrieverService/ListCorpora', 'content-type': 'application/grpc', te: 'trailers' })
        stream.on('error', () => undefined)
        if (sent.length > 0) stream.write(Buffer.from(sent))
        await new Promise((done) => setTimeout(done, 50))
        stream.close(h2.NGHTTP2_NO_ERROR)
      }
      // A large message in flight, its session destroyed.
      const big = session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: '/google.ai.generativelanguage.v1beta.RetrieverService/CreateCorpus', 'content-type': 'application/grpc', te: 'trailers' })
      big.on('error', () => undefined)
      const message = Buffer.alloc(5 + 3_000_000)
      message.writeUInt32BE(3_000_000, 1)
      big.write(message)
      await new Promise((done) => setTimeout(done, 20))
      session.destroy()
      await new Promise((done) => setTimeout(done, 100))
    }
    expect((await call('/readyz')).status).toBe(200)
  })

  it('refuses a gRPC message that runs past the length it declared at once, and ends one that stalls after the idle time', async () => {
    const session = connectH2(`http://127.0.0.1:${served.grpcPort}`)
    session.on('error', () => undefined)
    const open = (): { stream: ReturnType<typeof session.request>; answer: Promise<IncomingHttpHeaders> } => {
      const stream = session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: '/google.ai.generativelanguage.v1beta.RetrieverService/ListCorpora', 'content-type': 'application/grpc', te: 'trailers' })
      stream.on('error', () => undefined)
      return { stream, answer: new Promise((done) => stream.once('response', done)) }
    }
    try {
      // Declares 10 bytes, then keeps sending: refused as the bytes pass the declared length, not held.
      const over = open()
      const head = Buffer.alloc(5 + 64 * 1024)
      head.writeUInt32BE(10, 1)
      over.stream.write(head)
      expect(await over.answer).toMatchObject({ 'grpc-status': '12', 'grpc-message': expect.stringContaining('takes one request message; the call sent more.') as string })
      // Declares 100 bytes, sends 2, then nothing: DEADLINE_EXCEEDED once it has made no progress for the idle time (5 s).
      const stalled = open()
      const started = performance.now()
      stalled.stream.write(Buffer.from([0, 0, 0, 0, 100, 8, 1]))
      expect(await stalled.answer).toMatchObject({ 'grpc-status': '4', 'grpc-message': expect.stringContaining('The request message made no progress for 5 s') as string })
      expect(performance.now() - started).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 50)
    } finally {
      session.destroy()
    }
  })
})

describe('Fetch Metadata', () => {
  const crossSite = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'iframe' }
  const navigation = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }

  it('refuses requests of pages of other sites (and of other ports: same-site) on the API, the console API and its events', async () => {
    const cases: [string, Record<string, string>][] = [
      ['/v1beta/corpora', crossSite],
      ['/v1beta/corpora', navigation],
      ['/console/api/overview', crossSite],
      ['/console/api/events', crossSite],
      ['/console/api/events', navigation],
      ['/console/api/events', { ...crossSite, 'sec-fetch-site': 'same-site' }],
      ['/console/app.js', { ...crossSite, 'sec-fetch-dest': 'script' }],
      // A frame showing the console page is not a top-level navigation.
      ['/', { ...navigation, 'sec-fetch-dest': 'iframe' }],
      ['/', { ...navigation, 'sec-fetch-site': 'same-site', 'sec-fetch-dest': 'iframe' }],
      ['/readyz', crossSite],
    ]
    for (const [path, headers] of cases) {
      const answer = await call(path, { ...headers, host: 'h1.localhost' })
      expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(403)
      expect(errorOf(answer)).toEqual({
        code: 403,
        status: 'PERMISSION_DENIED',
        message: `A request from a page of another site (Sec-Fetch-Site: ${headers['sec-fetch-site']}) is refused: open the console's page itself, or start Quarry with --cors-origin ORIGIN (the corsOrigins option) to let that site's pages call it.`,
      })
    }
  })

  it("admits a top-level navigation to the console's page, same-origin and typed-in requests, allowed origins, and clients without Fetch Metadata", async () => {
    for (const path of ['/', '/console/index.html']) {
      const page = await call(path, navigation)
      expect(page.status, path).toBe(200)
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    }
    const admitted: [string, Record<string, string>][] = [
      ['/v1beta/corpora', {}],
      ['/v1beta/corpora', { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' }],
      ['/v1beta/corpora', { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }],
      ['/v1beta/corpora', { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty', origin: ALLOWED_ORIGIN }],
      ['/console/api/overview', { 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' }],
    ]
    for (const [path, headers] of admitted) {
      const answer = await call(path, headers)
      expect(answer.status, `${path} ${JSON.stringify(headers)}`).toBe(200)
      expect(answer.headers['access-control-allow-origin']).toBe(headers['origin'])
    }
  })
})

/**
 * A POST to `host:port` sending its headers (Content-Length `length`, Host `hostHeader`) and `sent`
 * bytes of body; resolves to what came back once the server closes it.
 */
function partialPost(host: string, port: number, length: number, sent: number, hostHeader = host): { answer: Promise<string>; socket: Socket } {
  const socket = connect(port, host)
  let text = ''
  socket.on('data', (c: Buffer) => (text += c.toString('utf8')))
  socket.on('error', () => undefined)
  socket.write(`POST /v1beta/corpora HTTP/1.1\r\nHost: ${hostHeader}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n${' '.repeat(sent)}`)
  return { socket, answer: new Promise((done) => socket.on('close', () => done(text))) }
}

const statusLine = (text: string): string => text.split('\r\n', 1)[0] ?? ''

describe('in process: the bounds behind the flags', () => {
  it('holds the bodies being received within 4 × maxBodyBytes: the chunk past it gets 429, other requests go on', async () => {
    const server = createServer({ embedder: createHashingEmbedder({ dimensions: 8 }), maxBodyBytes: 1_000, bodyTimeoutMs: 2_000, console: false })
    const { port } = await server.listen()
    try {
      const posts = Array.from({ length: 5 }, () => partialPost('127.0.0.1', port, 1_000, 900))
      // Whichever arrives fifth crosses 4,000 bytes and is answered at once; the rest wait.
      const first = await Promise.race(posts.map((p, i) => p.answer.then((text) => ({ text, i }))))
      expect(statusLine(first.text)).toBe('HTTP/1.1 429 Too Many Requests')
      expect(first.text.endsWith(JSON.stringify({ error: { code: 429, message: 'The server is receiving 4000 bytes of request bodies already; retry shortly, or send fewer large bodies at once.', status: 'RESOURCE_EXHAUSTED' } }))).toBe(true)
      // 3,600 bytes held: a small body still fits.
      const created = await fetch(`http://127.0.0.1:${port}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"corpora/kept"}' })
      expect(created.status).toBe(200)
      expect(((await created.json()) as { name: string }).name).toBe('corpora/kept')
      // The held ones stall: 408 each, and their budget is free again.
      const held = posts.filter((_, i) => i !== first.i)
      expect((await Promise.all(held.map((h) => h.answer))).map(statusLine)).toEqual(Array(4).fill('HTTP/1.1 408 Request Timeout'))
      // A whole 1,000-byte body would not have fitted beside the 3,600 held; now it does.
      const after = await fetch(`http://127.0.0.1:${port}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"corpora/after"}'.padEnd(1_000) })
      expect(after.status).toBe(200)
      expect(((await after.json()) as { name: string }).name).toBe('corpora/after')
    } finally {
      await server.close()
    }
  })

  it('counts gRPC messages being received in the same budget as REST bodies: the one past it gets RESOURCE_EXHAUSTED', async () => {
    const server = createServer({ embedder: createHashingEmbedder({ dimensions: 8 }), maxBodyBytes: 1_000, bodyTimeoutMs: 2_000, console: false, grpcPort: 0 })
    const { grpcPort, port } = await server.listen()
    const session = connectH2(`http://127.0.0.1:${grpcPort as number}`)
    session.on('error', () => undefined)
    try {
      // Five calls each declare 995 bytes and send 900: the fifth crosses 4,000 bytes and is refused at once.
      const calls = Array.from({ length: 5 }, () => {
        const stream = session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: '/google.ai.generativelanguage.v1beta.RetrieverService/ListCorpora', 'content-type': 'application/grpc', te: 'trailers' })
        stream.on('error', () => undefined)
        const part = Buffer.alloc(900)
        part.writeUInt32BE(995, 1)
        stream.write(part)
        return new Promise<IncomingHttpHeaders>((done) => stream.once('response', done))
      })
      const first = await Promise.race(calls)
      expect(first).toMatchObject({ 'grpc-status': '8', 'grpc-message': expect.stringContaining('The server is receiving 4000 bytes of requests already') as string })
      // The four held end after 2 s without progress, and free the budget: a REST body of 1,000 bytes fits again.
      expect((await Promise.all(calls)).map((h) => h['grpc-status']).sort()).toEqual(['4', '4', '4', '4', '8'])
      const after = await fetch(`http://127.0.0.1:${port}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"corpora/after"}'.padEnd(1_000) })
      expect(after.status).toBe(200)
      // A whole message followed by more bytes is refused, and its bytes leave the budget: ten such calls
      // (9,050 bytes) leave room for a 1,000-byte body. A whole message never half-closed is swept at the idle time.
      for (let i = 0; i < 10; i++) {
        const stream = session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: '/google.ai.generativelanguage.v1beta.RetrieverService/ListCorpora', 'content-type': 'application/grpc', te: 'trailers' })
        stream.on('error', () => undefined)
        const answered = new Promise<IncomingHttpHeaders>((done) => stream.once('response', done))
        stream.write(Buffer.alloc(5))
        stream.end(Buffer.alloc(900))
        expect((await answered)['grpc-status']).toBe('12')
      }
      const held = session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: '/google.ai.generativelanguage.v1beta.RetrieverService/ListCorpora', 'content-type': 'application/grpc', te: 'trailers' })
      held.on('error', () => undefined)
      const heldAnswer = new Promise<IncomingHttpHeaders>((done) => held.once('response', done))
      held.write(Buffer.alloc(5))
      expect((await heldAnswer)['grpc-status']).toBe('4')
      const last = await fetch(`http://127.0.0.1:${port}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"corpora/last"}'.padEnd(1_000) })
      expect(last.status).toBe(200)
    } finally {
      session.destroy()
      await server.close()
    }
  })

  it('answers a request refused by its Host 403 whatever became of its body, and frees its share of the bodies being received', async () => {
    const server = createServer({ embedder: createHashingEmbedder({ dimensions: 8 }), maxBodyBytes: 1_000, bodyTimeoutMs: 1_000, console: false })
    const { port } = await server.listen()
    const refused = (text: string): unknown => (JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error: { code: number; status: string } }).error
    try {
      // A page on another name that resolves here (DNS rebinding) sends bodies and stalls: each is
      // held (3,600 of the 4,000 bytes the server receives at once), then refused once its body
      // has stalled, on a connection the server closes (the rest of the body is left unread).
      const stalled = Array.from({ length: 4 }, () => partialPost('127.0.0.1', port, 1_000, 900, 'rebound.example'))
      for (const text of await Promise.all(stalled.map((p) => p.answer))) {
        expect(statusLine(text)).toBe('HTTP/1.1 403 Forbidden')
        expect(text.toLowerCase()).toContain('\r\nconnection: close\r\n')
        expect(refused(text)).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' })
      }
      // A body declared over the limit from that name is refused the same (403, not 413).
      const over = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/v1beta/corpora', method: 'POST', agent: false, headers: { host: 'rebound.example', 'content-type': 'application/json', 'content-length': 5_000 } }, (res) => {
          const chunks: Buffer[] = []
          res.on('data', (c: Buffer) => chunks.push(c))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
        })
        req.on('error', reject)
        req.end(' '.repeat(5_000))
      })
      expect(over.status).toBe(403)
      expect((JSON.parse(over.text) as { error: unknown }).error).toMatchObject({ code: 403, status: 'PERMISSION_DENIED' })
      // The refused bodies' bytes are no longer counted: a whole 1,000-byte body fits beside nothing.
      const after = await fetch(`http://127.0.0.1:${port}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"corpora/after"}'.padEnd(1_000) })
      expect(after.status).toBe(200)
      expect(((await after.json()) as { name: string }).name).toBe('corpora/after')
    } finally {
      await server.close()
    }
  })

  // Every process on this machine shares loopback, so the per-client share shows only from a network address.
  const address = Object.values(networkInterfaces()).flat().find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address
  it.skipIf(address === undefined)(`gives one remote client (a non-loopback address, here ${address ?? 'none on this machine'}) at most 8 of 32 event streams and 8 of 32 request slots`, async () => {
    const host = address as string
    const server = createServer({ embedder: createHashingEmbedder({ dimensions: 8 }), maxInFlight: 32, maxEventStreams: 32 })
    const { port } = await server.listen({ host })
    const opened: (() => void)[] = []
    try {
      const statuses = await Promise.all(
        Array.from({ length: 12 }, () =>
          new Promise<number>((resolve, reject) => {
            const req = request({ host, port, path: '/console/api/events', agent: false }, (res) => {
              opened.push(() => req.destroy())
              resolve(res.statusCode ?? 0)
              if (res.statusCode !== 200) res.resume()
            })
            req.on('error', reject)
            req.end()
          }),
        ),
      )
      expect(statuses.filter((s) => s === 200).length).toBe(8)
      expect(statuses.filter((s) => s === 429).length).toBe(4)
      const refused = await fetch(`http://${host}:${port}/console/api/events`)
      expect(await refused.json()).toEqual({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: `This client (${host}) holds 8 event streams already, its share of the server's 32 (maxEventStreams); retry shortly, or send fewer at once.` } })
      // The client's API slots are its own: the streams took none.
      expect((await fetch(`http://${host}:${port}/v1beta/corpora`)).status).toBe(200)
    } finally {
      for (const close of opened) close()
      await server.close()
    }
  })
})
