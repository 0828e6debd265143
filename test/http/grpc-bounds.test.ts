import { spawn } from 'node:child_process'
import { connect as connectH2, constants as h2, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2'
import { connect, type Socket } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine, createServer } from '@quarry/adapters'
import { describe, expect, it } from 'vitest'
import { longestHold, type Holds } from '../support/event-loop.js'
import { createGrpcServer } from '../../packages/adapters/src/grpc/server.js'
import { bindMethods } from '../../packages/adapters/src/transport/bound-methods.js'
import { InFlight } from '../../packages/adapters/src/transport/in-flight.js'
import { Receiving } from '../../packages/adapters/src/transport/receiving.js'
import { varint } from '../support/wire.js'

/**
 * What the gRPC server (packages/adapters/src/grpc/server.ts) holds for a client that sends or
 * reads slowly, or in pieces: memory that follows the bytes of a message however it is framed;
 * streams that send nothing, ended without holding the event loop; a message that trickles, ended;
 * and answers the client does not read, which keep their request slots until they are cancelled.
 */

// Collections on demand, so what the server retains is measured and not the garbage around it.
setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const CREATE_CORPUS = '/google.ai.generativelanguage.v1beta.RetrieverService/CreateCorpus'
const GET_CORPUS = '/google.ai.generativelanguage.v1beta.RetrieverService/GetCorpus'

const field = (tag: number, bytes: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), varint(bytes.length), bytes])
/** CreateCorpusRequest { corpus: { name } }, padded to `size` bytes with an unknown field (15) that decoding skips. */
function createCorpusBytes(name: string, size = 0): Buffer {
  const request = field(0x0a, field(0x0a, Buffer.from(name)))
  if (size === 0) return request
  let pad = size - request.length - 1
  pad -= varint(pad).length
  return Buffer.concat([request, field(0x7a, Buffer.alloc(pad, 0x61))])
}
const getCorpusBytes = (name: string): Buffer => field(0x0a, Buffer.from(name))
/** A message with gRPC's prefix (uncompressed). */
function framed(message: Buffer): Buffer {
  const out = Buffer.alloc(5 + message.length)
  out.writeUInt32BE(message.length, 1)
  message.copy(out, 5)
  return out
}

/** One call on `session`: its status and message, from the headers of a trailers-only answer or the trailers. */
function unary(session: ClientHttp2Session, path: string, body: Buffer): Promise<{ status: string | undefined; message: string }> {
  return new Promise((resolve) => {
    const stream = session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: path, 'content-type': 'application/grpc', te: 'trailers' })
    let got: IncomingHttpHeaders = {}
    stream.on('response', (h) => (got = { ...got, ...h }))
    stream.on('trailers', (h) => (got = { ...got, ...h }))
    stream.on('error', () => undefined)
    stream.resume()
    stream.on('close', () => resolve({ status: got['grpc-status'] as string | undefined, message: decodeURIComponent(String(got['grpc-message'] ?? '')) }))
    stream.end(body)
  })
}

/**
 * An HTTP/2 connection written frame by frame: Node's client joins a stream's small writes into
 * one DATA frame, and these tests need the frames a hostile client would send. Of the server's
 * frames it reads only PING acknowledgements; its sender waits for one after each window's worth
 * of data, so as not to outrun the server's flow control.
 */
class RawConnection {
  readonly #socket: Socket
  #pending = Buffer.alloc(0)
  #pings = new Map<string, () => void>()
  #pingId = 0

  private constructor(socket: Socket) {
    this.#socket = socket
    socket.on('data', (chunk: Buffer) => this.#read(chunk))
    socket.on('error', () => undefined)
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        const raw = new RawConnection(socket)
        socket.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')
        raw.#frame(4, 0, 0, Buffer.alloc(0))
        // The server's SETTINGS, acknowledged unread: nothing in them changes what this client sends.
        raw.#frame(4, 1, 0, Buffer.alloc(0))
        resolve(raw)
      })
      socket.once('error', reject)
    })
  }

  /** Opens stream `id`: a gRPC call's headers (literal, unindexed: no HPACK state). */
  open(id: number, path: string): void {
    const literal = (name: string, value: string): Buffer => Buffer.concat([Buffer.from([0x00, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)])
    const block = Buffer.concat([literal(':method', 'POST'), literal(':scheme', 'http'), literal(':path', path), literal(':authority', '127.0.0.1'), literal('content-type', 'application/grpc'), literal('te', 'trailers')])
    this.#frame(1, 0x4, id, block)
  }

  /** Sends `bytes` on stream `id` as DATA frames of `frameBytes` each (the last one ending the stream when `end`). */
  send(id: number, bytes: Buffer, frameBytes: number, end = false): void {
    const frames: Buffer[] = []
    for (let at = 0; at < bytes.length; at += frameBytes) {
      const payload = bytes.subarray(at, at + frameBytes)
      frames.push(this.#header(payload.length, 0, end && at + frameBytes >= bytes.length ? 1 : 0, id), payload)
    }
    this.#socket.write(Buffer.concat(frames))
  }

  /** Resolves once the server has answered a PING sent now: it has read every frame before it. */
  ping(): Promise<void> {
    const data = Buffer.alloc(8)
    data.writeUInt32BE(++this.#pingId, 4)
    return new Promise((resolve) => {
      this.#pings.set(data.toString('hex'), resolve)
      this.#frame(6, 0, 0, data)
    })
  }

  close(): void {
    this.#socket.destroy()
  }

  #header(length: number, type: number, flags: number, id: number): Buffer {
    const header = Buffer.alloc(9)
    header.writeUIntBE(length, 0, 3)
    header[3] = type
    header[4] = flags
    header.writeUInt32BE(id, 5)
    return header
  }

  #frame(type: number, flags: number, id: number, payload: Buffer): void {
    this.#socket.write(Buffer.concat([this.#header(payload.length, type, flags, id), payload]))
  }

  #read(chunk: Buffer): void {
    this.#pending = Buffer.concat([this.#pending, chunk])
    while (this.#pending.length >= 9) {
      const length = this.#pending.readUIntBE(0, 3)
      if (this.#pending.length < 9 + length) return
      const [type, flags] = [this.#pending[3], this.#pending[4] as number]
      const payload = this.#pending.subarray(9, 9 + length)
      if (type === 6 && (flags & 1) === 1) this.#pings.get(payload.toString('hex'))?.()
      this.#pending = this.#pending.subarray(9 + length)
    }
  }
}

/** The bytes (JS heap and array buffers) in use once garbage is collected (twice: array buffers are freed on another thread). */
function inUse(): number {
  gc()
  gc()
  const { heapUsed, arrayBuffers } = process.memoryUsage()
  return heapUsed + arrayBuffers
}

/** A server in this process with gRPC, for `use` (given its gRPC and REST ports), closed after. */
async function withServer<T>(options: Parameters<typeof createServer>[0], use: (grpcPort: number, port: number) => Promise<T>): Promise<T> {
  const server = createServer({ embedder: createHashingEmbedder({ dimensions: 8 }), console: false, grpcPort: 0, ...options })
  const { grpcPort, port } = await server.listen()
  try {
    return await use(grpcPort as number, port)
  } finally {
    await server.close()
  }
}

describe('a gRPC message sent in pieces', () => {
  it('costs memory in proportion to its bytes in one-byte DATA frames as in full ones, and is read the same', async () => {
    const SIZE = 400_000
    await withServer({ maxBodyBytes: 1 << 20, bodyTimeoutMs: 60_000 }, async (grpcPort) => {
      const connection = await RawConnection.open(grpcPort)
      const session = connectH2(`http://127.0.0.1:${grpcPort}`)
      try {
        // Two calls, each sent but for its last byte (so the server holds it): one in frames of 16 KiB
        // (HTTP/2's default largest), one a byte a frame. Measured side by side: what each added.
        const held: number[] = []
        const messages = [framed(createCorpusBytes('corpora/full-frames', SIZE)), framed(createCorpusBytes('corpora/one-byte-frames', SIZE))]
        for (const [i, frameBytes] of [16_384, 1].entries()) {
          const message = messages[i] as Buffer
          const id = 1 + 2 * i
          const before = inUse()
          connection.open(id, CREATE_CORPUS)
          // A stream's window is 65,535 bytes until the server reads them: sent a window at a time.
          for (let at = 0; at < message.length - 1; at += 32_768) {
            connection.send(id, message.subarray(at, Math.min(at + 32_768, message.length - 1)), frameBytes)
            await connection.ping()
          }
          held.push(inUse() - before)
        }
        console.log(`held for ${SIZE} bytes of message: ${held.map((b) => `${(b / 1e6).toFixed(2)} MB`).join(' in full frames, ')} in one-byte frames`)
        const [full, tiny] = held as [number, number]
        // Kept as a Buffer per frame, the one-byte frames cost some hundred times their bytes.
        expect(tiny).toBeLessThan(4 * Math.max(full, SIZE))
        // Both messages end and are answered: each corpus exists.
        for (const [i, message] of messages.entries()) connection.send(1 + 2 * i, message.subarray(message.length - 1), 1, true)
        await connection.ping()
        for (const name of ['corpora/full-frames', 'corpora/one-byte-frames']) expect(await unary(session, GET_CORPUS, framed(getCorpusBytes(name)))).toEqual({ status: '0', message: '' })
      } finally {
        connection.close()
        session.destroy()
      }
    })
  }, 60_000)
})

/**
 * A client in another process opens `streams` calls on each of `connections` connections that send
 * their headers and nothing more. `opened` resolves once the server has read every one (a PING
 * answered after them); `ended`, once all are closed, with how many got each grpc-status.
 */
function idleCalls(port: number, connections: number, streams: number): { opened: Promise<void>; ended: Promise<Record<string, number>> } {
  const script = `
    const http2 = require('node:http2')
    const [port, connections, streams] = process.argv.slice(1).map(Number)
    const statuses = {}
    const sessions = []
    let open = connections * streams
    const opened = Array.from({ length: connections }, () => new Promise((resolve) => {
      const session = http2.connect('http://127.0.0.1:' + port)
      session.on('error', () => undefined)
      sessions.push(session)
      session.once('remoteSettings', () => {
        for (let i = 0; i < streams; i++) {
          const stream = session.request({ ':method': 'POST', ':path': ${JSON.stringify(GET_CORPUS)}, 'content-type': 'application/grpc', te: 'trailers' }, { endStream: false })
          let status = 'none'
          stream.on('error', () => undefined)
          stream.on('response', (h) => (status = String(h['grpc-status'])))
          stream.on('close', () => {
            statuses[status] = (statuses[status] ?? 0) + 1
            if (--open > 0) return
            console.log(JSON.stringify(statuses))
            for (const s of sessions) s.destroy()
          })
        }
        session.ping(() => resolve())
      })
    }))
    Promise.all(opened).then(() => console.log('opened'))
  `
  const child = spawn(process.execPath, ['-e', script, String(port), String(connections), String(streams)], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines: ((line: string) => void)[] = []
  let out = ''
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString()
    for (let end = out.indexOf('\n'); end >= 0; end = out.indexOf('\n')) {
      lines.shift()?.(out.slice(0, end))
      out = out.slice(end + 1)
    }
  })
  const line = (): Promise<string> => new Promise((resolve) => lines.push(resolve))
  const opened = line().then(() => undefined)
  const ended = opened.then(line).then((text) => JSON.parse(text) as Record<string, number>)
  return { opened, ended }
}

describe('gRPC streams that send nothing', () => {
  it('are at most 100 open at once on a connection (SETTINGS_MAX_CONCURRENT_STREAMS)', async () => {
    await withServer({}, async (grpcPort) => {
      const session = connectH2(`http://127.0.0.1:${grpcPort}`)
      try {
        const settings = await new Promise<{ maxConcurrentStreams?: number }>((resolve) => session.once('remoteSettings', resolve))
        expect(settings.maxConcurrentStreams).toBe(100)
      } finally {
        session.destroy()
      }
    })
  })

  // The server runs in this process (its event loop measured in CPU time); the client in another.
  it('are each ended DEADLINE_EXCEEDED after the idle time, thousands at once without holding the event loop over 50 ms at a time', async () => {
    const CONNECTIONS = 100
    await withServer({ bodyTimeoutMs: 2_000 }, async (grpcPort) => {
      // A collection or a busy machine can stretch any one stretch: the bound holds if one of three runs shows it.
      let best: Holds = { hold: Infinity, collecting: 0, idle: 0 }
      for (let attempt = 0; attempt < 3 && best.hold - best.idle > 50; attempt++) {
        const calls = idleCalls(grpcPort, CONNECTIONS, 100)
        await calls.opened
        let statuses: Record<string, number> = {}
        // From all open to all ended: the idle time, then the sweep ending 10,000 calls.
        const measured = await longestHold(async () => {
          statuses = await calls.ended
        })
        console.log(`run ${attempt + 1}: longest hold of the server's event loop ${measured.hold.toFixed(1)} ms of CPU (idle loop ${measured.idle.toFixed(1)} ms; collections ${measured.collecting.toFixed(1)} ms)`)
        // DEADLINE_EXCEEDED, every one.
        expect(statuses).toEqual({ '4': CONNECTIONS * 100 })
        if (measured.hold - measured.idle < best.hold - best.idle) best = measured
      }
      expect(best.hold - best.idle).toBeLessThanOrEqual(50)
    })
  }, 120_000)
})

describe('a gRPC message that keeps trickling', () => {
  it('is ended DEADLINE_EXCEEDED once it has been arriving for four idle times, and its part of the bodies being received is free again', async () => {
    // 4,000 bytes of bodies are received at once (4 × maxBodyBytes); the idle time is 2 s, so 8 s to arrive.
    await withServer({ maxBodyBytes: 1_000, bodyTimeoutMs: 2_000 }, async (grpcPort, port) => {
      const postBody = async (name: string): Promise<number> => (await fetch(`http://127.0.0.1:${port}/v1beta/corpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name }).padEnd(1_000) })).status
      const session = connectH2(`http://127.0.0.1:${grpcPort}`)
      session.on('error', () => undefined)
      const streams = Array.from({ length: 4 }, () => session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: CREATE_CORPUS, 'content-type': 'application/grpc', te: 'trailers' }))
      // Each declares 995 bytes and sends 900, then a byte every 250 ms: never idle, and whole only after 25 s.
      const trickle = setInterval(() => {
        for (const stream of streams) if (!stream.closed) stream.write(Buffer.alloc(1))
      }, 250)
      try {
        const answers = streams.map((stream) => {
          stream.on('error', () => undefined)
          const part = Buffer.alloc(900)
          part.writeUInt32BE(995, 1)
          stream.write(part)
          return new Promise<IncomingHttpHeaders>((done) => stream.once('response', done))
        })
        await new Promise((done) => setTimeout(done, 500))
        // 3,600 of the 4,000 bytes are held: a REST body of 1,000 does not fit beside them.
        expect(await postBody('corpora/refused')).toBe(429)
        const ended = await Promise.race([Promise.all(answers), new Promise<undefined>((done) => setTimeout(() => done(undefined), 20_000))])
        expect(ended?.map((h) => [h['grpc-status'], decodeURIComponent(String(h['grpc-message'])).replace(/\(\d+ bytes/, '(N bytes')])).toEqual(Array(4).fill(['4', 'The request message was still arriving after 8 s (N bytes received); send it faster, or a smaller one.']))
        // Their bytes no longer count: the body fits now.
        expect(await postBody('corpora/after')).toBe(200)
      } finally {
        clearInterval(trickle)
        session.destroy()
      }
    })
  }, 60_000)
})

describe('a gRPC answer the client does not read', () => {
  it('keeps its request slot until it is sent, and is cancelled once unread for sendIdleMs; one read slowly is sent whole', async () => {
    const embedder = createHashingEmbedder({ dimensions: 8 })
    const engines = { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }
    const parent = 'projects/p/locations/l/reasoningEngines/1'
    for (let i = 0; i < 40; i++) expect((await engines.memoryBank.createMemory({ parent, memory: { fact: `fact ${i}: ${'lorem ipsum '.repeat(800)}`, scope: { u: '1' } } })).ok).toBe(true)
    // Two request slots; an answer unread for 2 s is cancelled.
    const server = createGrpcServer(bindMethods(engines), { maxMessageBytes: 1 << 20, access: { allowedHosts: [], corsOrigins: [] }, boundHost: () => undefined, onInternalError: () => undefined, inFlight: new InFlight(2), receiving: new Receiving(5000, 4 << 20), sendIdleMs: 2_000 })
    const port = await server.listen(0, '127.0.0.1')
    // ListMemories { parent, pageSize: 100 }: all 40 memories, some 390 KB, six pieces of the answer.
    const list = framed(Buffer.concat([field(0x0a, Buffer.from(parent)), Buffer.from([0x18, 100])]))
    const request = (session: ClientHttp2Session, headers: Record<string, string> = {}) => {
      const stream = session.request({ [h2.HTTP2_HEADER_METHOD]: 'POST', [h2.HTTP2_HEADER_PATH]: '/google.cloud.aiplatform.v1beta1.MemoryBankService/ListMemories', 'content-type': 'application/grpc', te: 'trailers', ...headers })
      stream.on('error', () => undefined)
      stream.end(list)
      return stream
    }
    // A client whose streams' flow-control window is 0: the server may send it no DATA at all.
    const stalled = connectH2(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 0 } })
    const session = connectH2(`http://127.0.0.1:${port}`)
    for (const s of [stalled, session]) s.on('error', () => undefined)
    try {
      const unread = [request(stalled), request(stalled)]
      // Their answers begin (headers: the calls have run) and stop there.
      for (const headers of await Promise.all(unread.map((s) => new Promise<IncomingHttpHeaders>((done) => s.once('response', done))))) expect([headers[':status'], headers['grpc-status']]).toEqual([200, undefined])
      // Both slots are theirs while their answers wait: another call is refused.
      expect(await unary(session, GET_CORPUS, framed(getCorpusBytes('corpora/none')))).toEqual({ status: '8', message: 'The server is holding 2 requests already (maxInFlight); retry shortly, or send fewer at once.' })
      // Unread for 2 s, each is reset with CANCEL (the client reads CANCELLED), and the slots are free.
      const closed = await Promise.race([Promise.all(unread.map((s) => new Promise<number>((done) => s.once('close', () => done(s.rstCode ?? -1))))), new Promise<undefined>((done) => setTimeout(() => done(undefined), 20_000))])
      expect(closed).toEqual([h2.NGHTTP2_CANCEL, h2.NGHTTP2_CANCEL])
      expect(await unary(session, GET_CORPUS, framed(getCorpusBytes('corpora/none')))).toEqual({ status: '5', message: 'Corpus "corpora/none" not found.' })
      // A call whose deadline passes while its answer waits is cancelled then, as the protocol asks: one
      // with 0.5 s, made 1 s after one without, ends first (the other, unread for 2 s, after).
      const order: string[] = []
      const closing = (stream: ReturnType<typeof request>, name: string): Promise<void> => {
        let status = 'no answer'
        stream.once('response', (h) => (status = `status ${String(h['grpc-status'])}`))
        return new Promise((done) => stream.once('close', () => done(void order.push(`${name}: ${status}, RST_STREAM ${stream.rstCode ?? -1}`))))
      }
      const without = closing(request(stalled), 'no deadline')
      await new Promise((done) => setTimeout(done, 1_000))
      await Promise.all([without, closing(request(stalled, { 'grpc-timeout': '500m' }), 'deadline')])
      expect(order).toEqual([`deadline: status undefined, RST_STREAM ${h2.NGHTTP2_CANCEL}`, `no deadline: status undefined, RST_STREAM ${h2.NGHTTP2_CANCEL}`])
      // Read 16 KiB at a time, every 200 ms: the answer takes longer than 2 s, but never goes 2 s unread.
      const slow = connectH2(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 16 * 1024 } })
      slow.on('error', () => undefined)
      try {
        const started = performance.now()
        const stream = request(slow)
        stream.pause()
        let bytes = 0
        const reading = setInterval(() => {
          for (let chunk = stream.read() as Buffer | null; chunk !== null; chunk = stream.read() as Buffer | null) bytes += chunk.length
          stream.pause()
        }, 200)
        const trailers = await new Promise<IncomingHttpHeaders>((done) => stream.once('trailers', done)).finally(() => clearInterval(reading))
        expect([trailers['grpc-status'], stream.rstCode]).toEqual(['0', h2.NGHTTP2_NO_ERROR])
        expect(bytes).toBeGreaterThan(5 * 64 * 1024)
        // The case is the one meant: the whole answer took longer to read than an answer may go unread.
        expect(performance.now() - started).toBeGreaterThan(2_000)
      } finally {
        slow.destroy()
      }
    } finally {
      stalled.destroy()
      session.destroy()
      await server.close()
    }
  }, 60_000)
})
