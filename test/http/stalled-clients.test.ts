import { createServer as createHttpServer, request, type IncomingMessage, type Server } from 'node:http'
import { connect, type AddressInfo, type Socket } from 'node:net'
import { networkInterfaces } from 'node:os'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, type QuarryServer } from '@quarry/adapters'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { receiveBody } from '../../packages/adapters/src/http/replies.js'
import { Receiving } from '../../packages/adapters/src/transport/receiving.js'

/**
 * Clients that hold what the server shares without using it (docs/rest-server.md "Slow clients and
 * streams"): answers never read, bodies in one-byte chunks, bodies that hold the receive budget
 * while trickling, answers too large to send, and what Node refuses before a request reaches the
 * handler. Each runs in process against `createServer` with its bounds cut down.
 */
const embedder = createHashingEmbedder({ dimensions: 8 })
const LOCATION = 'projects/p/locations/l'
const MODEL = `${LOCATION}/publishers/google/models/gemini-2.5-flash`
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms))

interface Answer {
  readonly status: number
  readonly text: string
}

/** One request on its own connection, read in full. */
function call(port: number, path: string, method = 'GET', body?: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
    const req = request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

const errorOf = (text: string): unknown => (JSON.parse(text) as { error: unknown }).error

/** What comes back on a raw connection for `bytes`, until the server closes it. */
function raw(port: number, bytes: string | Buffer, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, host, () => socket.write(bytes))
    let text = ''
    socket.on('data', (c: Buffer) => (text += c.toString('utf8')))
    socket.on('error', () => undefined)
    socket.on('close', () => resolve(text))
  })
}

const statusLine = (text: string): string => text.split('\r\n', 1)[0] ?? ''
const bodyOf = (text: string): unknown => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))

describe("what Node refuses before a request reaches the handler: Google's error JSON, not an empty body", () => {
  let server: QuarryServer
  let port: number
  beforeAll(async () => {
    server = createServer({ embedder, console: false })
    ;({ port } = await server.listen())
  })
  afterAll(() => server.close())

  it('answers an unknown method, Content-Length beside chunked, headers too large and a missing Host with a Status, and closes the connection', async () => {
    const cases: [string, string, unknown][] = [
      ['FOO / HTTP/1.1\r\nHost: localhost\r\n\r\n', 'HTTP/1.1 400 Bad Request', { code: 400, status: 'INVALID_ARGUMENT', message: 'The request is not valid HTTP/1.1: Invalid method encountered (HPE_INVALID_METHOD).' }],
      [
        'POST /v1beta/corpora HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
        'HTTP/1.1 400 Bad Request',
        { code: 400, status: 'INVALID_ARGUMENT', message: "The request is not valid HTTP/1.1: Transfer-Encoding can't be present with Content-Length (HPE_INVALID_TRANSFER_ENCODING)." },
      ],
      [
        `GET /v1beta/corpora HTTP/1.1\r\nHost: localhost\r\nX-Large: ${'a'.repeat(20_000)}\r\n\r\n`,
        'HTTP/1.1 431 Request Header Fields Too Large',
        { code: 431, status: 'INVALID_ARGUMENT', message: "The request's headers are larger than this server reads (16384 bytes together, Node's --max-http-header-size); send fewer or shorter headers." },
      ],
    ]
    for (const [sent, line, error] of cases) {
      const text = await raw(port, sent)
      expect(statusLine(text), sent.slice(0, 40)).toBe(line)
      expect(text.toLowerCase()).toContain('\r\nconnection: close\r\n')
      expect(text.toLowerCase()).toContain('\r\ncontent-type: application/json; charset=utf-8\r\n')
      expect(bodyOf(text)).toEqual({ error })
    }
    // No Host on HTTP/1.1 (Node's own answer is an empty 400); HTTP/1.0 needs none.
    const noHost = await raw(port, 'GET /readyz HTTP/1.1\r\nConnection: close\r\n\r\n')
    expect(statusLine(noHost)).toBe('HTTP/1.1 400 Bad Request')
    expect(bodyOf(noHost)).toEqual({ error: { code: 400, status: 'INVALID_ARGUMENT', message: 'An HTTP/1.1 request names its server in a Host header (RFC 9112 section 3.2); this one has none.' } })
    expect(statusLine(await raw(port, 'GET /readyz HTTP/1.0\r\n\r\n'))).toBe('HTTP/1.1 200 OK')
    // An expectation other than 100-continue.
    const expectation = await raw(port, 'GET /readyz HTTP/1.1\r\nHost: localhost\r\nExpect: teapot\r\n\r\n')
    expect(statusLine(expectation)).toBe('HTTP/1.1 417 Expectation Failed')
    expect(bodyOf(expectation)).toEqual({ error: { code: 417, status: 'FAILED_PRECONDITION', message: 'This server meets no expectation but 100-continue; the request\'s Expect is "teapot".' } })
  })

  it("answers Node's request timeout 408 DEADLINE_EXCEEDED", async () => {
    // Node checks its timeouts every 30 s: its error is raised here on a connection waiting for headers.
    const sockets: Socket[] = []
    server.server.on('connection', (s: Socket) => sockets.push(s))
    const text = new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GET /v1beta/corpora HTTP/1.1\r\nHost: local'))
      let got = ''
      socket.on('data', (c: Buffer) => (got += c.toString('utf8')))
      socket.on('close', () => resolve(got))
    })
    while (sockets.length === 0) await sleep(10)
    await sleep(50)
    server.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), sockets[0])
    const answer = await text
    expect(statusLine(answer)).toBe('HTTP/1.1 408 Request Timeout')
    expect(bodyOf(answer)).toEqual({ error: { code: 408, status: 'DEADLINE_EXCEEDED', message: 'The request did not arrive whole in time (its headers within 20 s, all of it within 120 s); send it without pauses.' } })
  })

  it('closes a connection whose bad bytes follow a request still being answered, rather than answer that request with their 400', async () => {
    // A model that answers only when told: the pipelined generateContent is still running when
    // Node fails to parse what follows it.
    let answer: (() => void) | undefined
    const waiting = createServer({ embedder, console: false, model: () => new Promise((resolve) => (answer = () => resolve({ parts: [{ text: 'late' }] }))) })
    const { port: waitingPort } = await waiting.listen()
    try {
      const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello' }] }] })
      const text = new Promise<string>((resolve) => {
        const socket = connect(waitingPort, '127.0.0.1', () => socket.write(`POST /v1beta1/${MODEL}:generateContent HTTP/1.1\r\nHost: localhost\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}FOO / HTTP/1.1\r\n\r\n`))
        let got = ''
        socket.on('data', (c: Buffer) => (got += c.toString('utf8')))
        socket.on('error', () => undefined)
        socket.on('close', () => resolve(got))
      })
      for (let i = 0; i < 200 && answer === undefined; i++) await sleep(10)
      expect(answer).toBeDefined()
      // Closed with nothing written: no 400 read as generateContent's answer.
      expect(await text).toBe('')
      answer?.()
    } finally {
      await waiting.close()
    }
  })
})

// Collections on demand, so what a held body keeps alive is measured and not the garbage around it.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void
function inUse(): number {
  gc()
  gc()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.arrayBuffers
}

describe('a body sent in one-byte chunks', () => {
  it('holds about its bytes in memory while it arrives, as a body sent in large pieces does, not hundreds of bytes a byte', async () => {
    const receiving = new Receiving(60_000, 1 << 30)
    const server: Server = createHttpServer((req, res) => receiveBody(req, 64 << 20, receiving, () => res.end()))
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    const { port } = server.address() as AddressInfo
    const size = 512 * 1024
    /** Memory in use while `size` bytes of a body sent in `chunks` are held (the body never ends). */
    const held = async (chunks: 'one-byte' | 'large'): Promise<number> => {
      const before = inUse()
      const socket = connect(port, '127.0.0.1')
      socket.on('error', () => undefined)
      if (chunks === 'one-byte') {
        socket.write('POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n')
        socket.write(Buffer.from('1\r\n \r\n'.repeat(size)))
      } else {
        socket.write(`POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${size + 1}\r\n\r\n`)
        socket.write(Buffer.alloc(size, 0x20))
      }
      while (receiving.pending < size) await sleep(20)
      const during = inUse() - before
      socket.destroy()
      while (receiving.pending > 0) await sleep(20)
      return during
    }
    try {
      const large = await held('large')
      const tiny = await held('one-byte')
      // Kept chunk by chunk, the one-byte body held over 150 times the large one (a Buffer per byte).
      expect(large).toBeLessThan(8 * size)
      expect(tiny).toBeLessThan(4 * Math.max(large, size))
    } finally {
      server.closeAllConnections()
      await new Promise((done) => server.close(done))
    }
  })
})

/**
 * A POST to `port` declaring `declared` bytes and sending `sent` of them at once, then one byte
 * every `everyMs` (never idle long enough to end); resolves to what came back once it is closed.
 */
function trickle(port: number, declared: number, sent: number, everyMs: number, host = '127.0.0.1'): { answer: Promise<string>; stop: () => void } {
  const socket = connect(port, host)
  let text = ''
  socket.on('data', (c: Buffer) => (text += c.toString('utf8')))
  socket.on('error', () => undefined)
  socket.write(`POST /v1beta/corpora HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${' '.repeat(sent)}`)
  const tick = setInterval(() => socket.write(' '), everyMs)
  const answer = new Promise<string>((done) =>
    socket.on('close', () => {
      clearInterval(tick)
      done(text)
    }),
  )
  return { answer, stop: () => socket.destroy() }
}

describe('one client holding the bodies being received', () => {
  it('ends a body still arriving after four idle times once another needs its room: the newcomer is answered, not refused for as long as the hog trickles', async () => {
    // 4,000 bytes received at once; a body idle 1 s ends; one arriving 4 s gives its room.
    const server = createServer({ embedder, maxBodyBytes: 1_000, bodyTimeoutMs: 1_000, console: false })
    const { port } = await server.listen()
    // Four bodies hold 3,600 bytes and would trickle on for 100 × 300 ms, never idle for 1 s.
    const hogs = Array.from({ length: 4 }, () => trickle(port, 1_000, 900, 300))
    try {
      await sleep(300)
      const started = performance.now()
      const body = '{"name":"corpora/after"}'.padEnd(1_000)
      const first = await call(port, '/v1beta/corpora', 'POST', body)
      expect(first.status).toBe(429)
      expect(errorOf(first.text)).toEqual({ code: 429, status: 'RESOURCE_EXHAUSTED', message: 'The server is receiving 4000 bytes of request bodies already; retry shortly, or send fewer large bodies at once.' })
      let answer = first
      while (answer.status === 429 && performance.now() - started < 15_000) {
        await sleep(250)
        answer = await call(port, '/v1beta/corpora', 'POST', body)
      }
      expect(answer.status).toBe(200)
      expect((JSON.parse(answer.text) as { name: string }).name).toBe('corpora/after')
      // The oldest hog gave its room: a 408 saying why, on a connection the server closed.
      const ended = await Promise.race(hogs.map((h) => h.answer))
      expect(statusLine(ended)).toBe('HTTP/1.1 408 Request Timeout')
      expect(bodyOf(ended)).toEqual({
        error: { code: 408, status: 'DEADLINE_EXCEEDED', message: expect.stringMatching(/^The request body was still arriving after 4 s \(9\d\d bytes received\) while others waited for room among the bodies the server receives at once; send it faster, or in smaller requests\.$/) as string },
      })
    } finally {
      for (const h of hogs) h.stop()
      await server.close()
    }
  })

  // Every process on this machine shares loopback, so the per-client share shows only from a network address.
  const address = Object.values(networkInterfaces()).flat().find((i) => i !== undefined && i.family === 'IPv4' && !i.internal)?.address
  it.skipIf(address === undefined)(`holds one remote client (here ${address ?? 'none on this machine'}) to half of the bodies being received`, async () => {
    const host = address as string
    const server = createServer({ embedder, maxBodyBytes: 1_000, bodyTimeoutMs: 2_000, console: false })
    const { port } = await server.listen({ host })
    const held = [trickle(port, 1_000, 900, 500, host), trickle(port, 1_000, 900, 500, host)]
    try {
      await sleep(200)
      // 1,800 of its 2,000 held: a third body of 900 is past its share, though the server has room.
      const third = trickle(port, 1_000, 900, 500, host)
      const text = await third.answer
      expect(statusLine(text)).toBe('HTTP/1.1 429 Too Many Requests')
      expect(bodyOf(text)).toEqual({ error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: `This client (${host}) is sending 2000 bytes of request bodies already, its share of the 4000 the server receives at once; retry shortly, or send fewer large bodies at once.` } })
    } finally {
      for (const h of held) h.stop()
      await server.close()
    }
  })
})

describe('an answer too large to send', () => {
  let server: QuarryServer
  let port: number
  const part = 'a'.repeat(1 << 20)
  beforeAll(async () => {
    server = createServer({ embedder, console: false, model: () => Promise.resolve({ parts: [{ text: part.repeat(70) }] }) })
    ;({ port } = await server.listen())
  })
  afterAll(() => server.close())

  it('answers a page over 64 MiB of JSON OUT_OF_RANGE, telling the client to ask for a smaller page; a smaller page is served', async () => {
    const engine = `${LOCATION}/reasoningEngines/3`
    const created = await call(port, `/v1beta1/${engine}/sessions`, 'POST', JSON.stringify({ userId: 'u' }))
    expect(created.status).toBe(200)
    const session = ((JSON.parse(created.text) as { name: string }).name.split('/operations/')[0]) as string
    // Three events of 24 MiB of text each: 72 MiB of JSON in one page.
    for (let i = 0; i < 3; i++) {
      const event = { author: 'user', invocationId: `i${i}`, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), content: { role: 'user', parts: Array.from({ length: 24 }, () => ({ text: part })) } }
      expect((await call(port, `/v1beta1/${session}:appendEvent`, 'POST', JSON.stringify(event))).status).toBe(200)
    }
    const all = await call(port, `/v1beta1/${session}/events?pageSize=100`)
    expect(all.status).toBe(400)
    expect(errorOf(all.text)).toEqual({
      code: 400,
      status: 'OUT_OF_RANGE',
      message: 'The response would be more than 64 MiB of JSON, the most this server sends in one answer; ask for less at once: a smaller page (pageSize), or fewer results (topK, resultsCount).',
    })
    const page = await call(port, `/v1beta1/${session}/events?pageSize=2`)
    expect(page.status).toBe(200)
    const events = (JSON.parse(page.text) as { sessionEvents: { content: { parts: { text: string }[] } }[]; nextPageToken: string }).sessionEvents
    expect(events.map((e) => e.content.parts.map((p) => p.text.length))).toEqual([Array(24).fill(1 << 20), Array(24).fill(1 << 20)])
  })

  it('answers a stream (server-sent events) over the bound the same, and the server goes on', async () => {
    const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })
    for (const alt of ['?alt=sse', '']) {
      const answer = await call(port, `/v1beta1/${MODEL}:streamGenerateContent${alt}`, 'POST', body)
      expect(answer.status, alt).toBe(400)
      expect(errorOf(answer.text)).toMatchObject({ code: 400, status: 'OUT_OF_RANGE' })
    }
    expect((await call(port, '/readyz')).status).toBe(200)
  })
})

describe('a client that does not read its answer', () => {
  // One request slot; an answer that makes no progress for 1 s closes its connection.
  const SEND_TIMEOUT_MS = 1_000
  let server: QuarryServer
  let port: number
  /** The model answers 24 MiB after `slowMs`, more than the connection's buffers take unread. */
  let slowMs = 0
  beforeAll(async () => {
    const text = 'b'.repeat(24 << 20)
    server = createServer({
      embedder,
      console: false,
      maxInFlight: 1,
      sendTimeoutMs: SEND_TIMEOUT_MS,
      model: async () => {
        await sleep(slowMs)
        return { parts: [{ text }] }
      },
    })
    ;({ port } = await server.listen())
  })
  afterAll(() => server.close())

  const generate = `/v1beta1/${MODEL}:generateContent`
  const body = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })

  it('closes its connection once the answer makes no progress, which frees its request slot: a later request gets 200, not 429', async () => {
    // Asks for the large answer and reads nothing.
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST ${generate} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
      socket.pause()
    })
    socket.on('error', () => undefined)
    const closed = new Promise<number>((done) => socket.on('close', () => done(socket.bytesRead)))
    try {
      // The slot is held while the answer sits unread.
      await sleep(300)
      const refused = await call(port, '/readyz')
      expect(refused.status).toBe(429)
      expect(errorOf(refused.text)).toEqual({ code: 429, status: 'RESOURCE_EXHAUSTED', message: 'The server is holding 1 requests already (maxInFlight); retry shortly, or send fewer at once.' })
      // Until the server gives up on it: then the slot is free again.
      const started = performance.now()
      let answer = refused
      while (answer.status === 429 && performance.now() - started < 20 * SEND_TIMEOUT_MS) {
        await sleep(100)
        answer = await call(port, '/readyz')
      }
      expect(answer.status).toBe(200)
      // The server closed the connection part way through the answer (the client never did).
      socket.resume()
      const bytes = await closed
      expect(bytes).toBeGreaterThan(0)
      expect(bytes).toBeLessThan(24 << 20)
    } finally {
      socket.destroy()
    }
  })

  it('does not count the time the answer takes to compute, and lets a slow reader that keeps reading finish', async () => {
    slowMs = 2.5 * SEND_TIMEOUT_MS
    try {
      const answer = await call(port, generate, 'POST', body)
      expect(answer.status).toBe(200)
      expect((JSON.parse(answer.text) as { candidates: { content: { parts: { text: string }[] } }[] }).candidates[0]?.content.parts[0]?.text.length).toBe(24 << 20)
    } finally {
      slowMs = 0
    }
    // A reader that pauses for half the timeout after every 4 MiB takes longer than the timeout in all.
    const started = performance.now()
    const slow = await new Promise<{ status: number; bytes: number }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: generate, method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res: IncomingMessage) => {
        let bytes = 0
        let sincePause = 0
        res.on('data', (c: Buffer) => {
          bytes += c.length
          sincePause += c.length
          if (sincePause < 4 << 20) return
          sincePause = 0
          res.pause()
          setTimeout(() => res.resume(), SEND_TIMEOUT_MS / 2)
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }))
        res.on('error', reject)
      })
      req.on('error', reject)
      req.end(body)
    })
    expect(slow.status).toBe(200)
    expect(slow.bytes).toBeGreaterThan(24 << 20)
    expect(performance.now() - started).toBeGreaterThan(SEND_TIMEOUT_MS)
  })
})
