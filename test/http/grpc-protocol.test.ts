import { connect, constants, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, type QuarryServer } from '@quarry/adapters'
import { grpc } from './google-gax.js'
import { varint } from '../support/wire.js'

/**
 * The gRPC server speaks the protocol on node:http2 itself (packages/adapters/src/grpc/server.ts),
 * so what a general gRPC server did for it is checked here, against the specification
 * (https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md) and Google's own grpc-js client:
 * compressed requests ("Compressed-Flag … grpc-encoding"), a limit that holds after
 * decompression, an unsupported encoding (UNIMPLEMENTED), requests that are not gRPC (HTTP 415 for
 * another content type), and one message per unary call.
 */
const GET_CORPUS = '/google.ai.generativelanguage.v1beta.RetrieverService/GetCorpus'
const CREATE_CORPUS = '/google.ai.generativelanguage.v1beta.RetrieverService/CreateCorpus'
const LIMIT = 4096

/** CreateCorpusRequest { corpus: { name, displayName } } by hand: field 1 → fields 1 and 2. */
function createCorpusBytes(name: string, displayName = ''): Buffer {
  const field = (tag: number, bytes: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), varint(bytes.length), bytes])
  const corpus = Buffer.concat([field(0x0a, Buffer.from(name)), displayName ? field(0x12, Buffer.from(displayName)) : Buffer.alloc(0)])
  return field(0x0a, corpus)
}
/** GetCorpusRequest { name }. */
const getCorpusBytes = (name: string): Buffer => Buffer.concat([Buffer.from([0x0a]), varint(name.length), Buffer.from(name)])

/** A message with gRPC's prefix: compressed or not, then its length. */
function framed(message: Buffer, compressed = false): Buffer {
  const out = Buffer.alloc(5 + message.length)
  out[0] = compressed ? 1 : 0
  out.writeUInt32BE(message.length, 1)
  message.copy(out, 5)
  return out
}

let server: QuarryServer
let port: number
let session: ClientHttp2Session

/** One raw HTTP/2 request: the response headers merged with the trailers, and the body. */
function raw(headers: Record<string, string>, body: Buffer): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': GET_CORPUS, 'content-type': 'application/grpc', te: 'trailers', ...headers })
    const chunks: Buffer[] = []
    let got: IncomingHttpHeaders = {}
    stream.on('response', (h) => (got = { ...got, ...h }))
    stream.on('trailers', (t) => (got = { ...got, ...t }))
    stream.on('data', (c: Buffer) => chunks.push(c))
    stream.on('close', () => resolve({ headers: got, body: Buffer.concat(chunks) }))
    stream.on('error', reject)
    stream.end(body)
  })
}

/** A unary call with grpc-js (Google's client), its channel options given. */
function call(path: string, message: Buffer, channel: Record<string, number> = {}): Promise<{ code: number; details: string; bytes?: Buffer }> {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), channel)
  return new Promise((resolve) =>
    client.makeUnaryRequest(path, (b: Buffer) => b, (b: Buffer) => b, message, (error, bytes) => {
      client.close()
      resolve(error ? { code: error.code, details: error.details } : { code: 0, details: '', ...(bytes ? { bytes } : {}) })
    }),
  )
}

beforeAll(async () => {
  // Embedding takes a while, as a model's does: a call that embeds outlives a timer that fires at once.
  const hashing = createHashingEmbedder({ dimensions: 16 })
  const slow = { name: 'slow', dimensions: 16, embed: async (texts: readonly string[]) => (await new Promise((r) => setTimeout(r, 30)), hashing.embed(texts)) }
  server = createServer({ embedder: slow, grpcPort: 0, maxBodyBytes: LIMIT })
  port = (await server.listen()).grpcPort as number
  session = connect(`http://127.0.0.1:${port}`)
})
afterAll(async () => {
  session.close()
  await server.close()
})

describe('the gRPC server on node:http2', () => {
  it('reads a gzip-compressed request from grpc-js, and answers it uncompressed', async () => {
    // grpc-js compresses every message with gzip under this channel option (2 = gzip).
    const made = await call(CREATE_CORPUS, createCorpusBytes('corpora/zipped', 'z'.repeat(300)), { 'grpc.default_compression_algorithm': 2 })
    expect(made.code).toBe(0)
    const got = await raw({ 'grpc-encoding': 'gzip' }, framed(gzipSync(getCorpusBytes('corpora/zipped')), true))
    expect(got.headers['grpc-status']).toBe('0')
    expect(got.body[0]).toBe(0)
    const message = got.body.subarray(5)
    expect(got.body.readUInt32BE(1)).toBe(message.length)
    // The Corpus message: name (field 1), then displayName (field 2) of 300 z's.
    expect(message.includes(Buffer.from('corpora/zipped'))).toBe(true)
    expect(message.includes(Buffer.from('z'.repeat(300)))).toBe(true)
  })

  it('holds the size limit after decompression: a small gzip of a big message is RESOURCE_EXHAUSTED', async () => {
    const big = createCorpusBytes('corpora/bomb', 'b'.repeat(LIMIT * 4))
    const zipped = gzipSync(big)
    expect(zipped.length).toBeLessThan(LIMIT)
    const got = await raw({ ':path': CREATE_CORPUS, 'grpc-encoding': 'gzip' }, framed(zipped, true))
    expect(got.headers['grpc-status']).toBe(String(grpc.status.RESOURCE_EXHAUSTED))
    expect(decodeURIComponent(String(got.headers['grpc-message']))).toMatch(/inflates past the limit of 4096 bytes/)
    expect((await call(GET_CORPUS, getCorpusBytes('corpora/bomb'))).code).toBe(grpc.status.NOT_FOUND)
  })

  it('refuses an encoding it cannot read UNIMPLEMENTED, naming the ones it can', async () => {
    const got = await raw({ 'grpc-encoding': 'snappy' }, framed(getCorpusBytes('corpora/zipped'), true))
    expect(got.headers['grpc-status']).toBe(String(grpc.status.UNIMPLEMENTED))
    expect(decodeURIComponent(String(got.headers['grpc-message']))).toBe('The message encoding "snappy" is not supported; send identity, deflate or gzip.')
  })

  it('refuses a codec other than protobuf UNIMPLEMENTED (its bytes were read as protobuf), and takes application/grpc+proto', async () => {
    const json = await raw({ 'content-type': 'application/grpc+json' }, framed(Buffer.from('{"name":"corpora/x"}')))
    expect(json.headers['grpc-status']).toBe(String(grpc.status.UNIMPLEMENTED))
    expect(decodeURIComponent(String(json.headers['grpc-message']))).toBe('This server reads protobuf messages only (content-type application/grpc or application/grpc+proto); the call sent application/grpc+json.')
    const proto = await raw({ 'content-type': 'application/grpc+proto' }, framed(getCorpusBytes('corpora/none')))
    expect(proto.headers['grpc-status']).toBe(String(grpc.status.NOT_FOUND))
  })

  it('answers UNIMPLEMENTED for a method it does not serve, naming the REST path of one it serves over REST only', async () => {
    const unknown = await raw({ ':path': '/google.example.Nothing/Call' }, framed(Buffer.alloc(0)))
    expect([unknown.headers['grpc-status'], decodeURIComponent(String(unknown.headers['grpc-message']))]).toEqual([String(grpc.status.UNIMPLEMENTED), "The method /google.example.Nothing/Call is not served here: Quarry serves the RPCs of Google's retrieval services."])
    // Newer than the shipped protos (grpc.test.ts lists them): REST has it.
    const purge = await raw({ ':path': '/google.cloud.aiplatform.v1beta1.MemoryBankService/PurgeMemories' }, framed(Buffer.alloc(0)))
    expect([purge.headers['grpc-status'], decodeURIComponent(String(purge.headers['grpc-message']))]).toEqual([
      String(grpc.status.UNIMPLEMENTED),
      "google.cloud.aiplatform.v1beta1.MemoryBankService.PurgeMemories is served over REST only at POST /v1beta1/{parent=projects/*/locations/*/reasoningEngines/*}/memories:purge: it is newer than the protos Quarry's gRPC server ships.",
    ])
  })

  it('answers what is not a gRPC call with HTTP: 415 for another content type, 405 for another method', async () => {
    expect((await raw({ 'content-type': 'application/json' }, Buffer.from('{}'))).headers[':status']).toBe(415)
    expect((await raw({ ':method': 'PUT' }, Buffer.alloc(0))).headers[':status']).toBe(405)
  })

  it('takes one message per unary call, and a whole one', async () => {
    const one = framed(getCorpusBytes('corpora/zipped'))
    const two = await raw({}, Buffer.concat([one, one]))
    expect(two.headers['grpc-status']).toBe(String(grpc.status.UNIMPLEMENTED))
    expect(decodeURIComponent(String(two.headers['grpc-message']))).toBe('google.ai.generativelanguage.v1beta.RetrieverService.GetCorpus takes one request message; the call sent more.')
    const cut = await raw({}, one.subarray(0, one.length - 3))
    expect(cut.headers['grpc-status']).toBe(String(grpc.status.INTERNAL))
    expect(decodeURIComponent(String(cut.headers['grpc-message']))).toBe('The call ended before its request message was whole.')
  })

  it('answers a malformed grpc-timeout INTERNAL, as grpc-js and grpc-go do, rather than running without the deadline meant', async () => {
    for (const bad of ['abc', '123456789S', '10s', '1.5S']) {
      const got = await raw({ 'grpc-timeout': bad }, framed(getCorpusBytes('corpora/none')))
      expect([bad, got.headers['grpc-status'], decodeURIComponent(String(got.headers['grpc-message']))]).toEqual([bad, String(grpc.status.INTERNAL), `Invalid grpc-timeout value "${bad}": at most 8 digits and a unit (H, M, S, m, u or n).`])
    }
  })

  it('answers a grpc-timeout of 0 DEADLINE_EXCEEDED without running the call: its deadline has passed', async () => {
    expect((await call(CREATE_CORPUS, createCorpusBytes('corpora/deadline'))).code).toBe(0)
    for (const zero of ['0n', '0S', '00000000H']) {
      // A read that answers at once, and a write: neither runs.
      const read = await raw({ 'grpc-timeout': zero }, framed(getCorpusBytes('corpora/deadline')))
      const name = `corpora/late-${zero.toLowerCase()}`
      const write = await raw({ ':path': CREATE_CORPUS, 'grpc-timeout': zero }, framed(createCorpusBytes(name)))
      for (const answer of [read, write]) expect([zero, answer.headers['grpc-status'], decodeURIComponent(String(answer.headers['grpc-message']))]).toEqual([zero, String(grpc.status.DEADLINE_EXCEEDED), 'Deadline exceeded.'])
      expect((await call(GET_CORPUS, getCorpusBytes(name))).code).toBe(grpc.status.NOT_FOUND)
    }
    // A timeout above 0 is a deadline still: a call that answers within it is answered.
    expect((await raw({ 'grpc-timeout': '99999999n' }, framed(getCorpusBytes('corpora/deadline')))).headers['grpc-status']).toBe('0')
  })

  it('keeps a deadline longer than a timer can wait (grpc-timeout allows years): the call is answered', async () => {
    await server.engines.semanticRetriever.createCorpus({ corpus: { name: 'corpora/patient' } })
    await server.engines.semanticRetriever.createDocument({ parent: 'corpora/patient', document: { name: 'corpora/patient/documents/d' } })
    // CreateChunkRequest { parent: 1, chunk: 2 { name: 1, data: 2 { string_value: 1 } } }: it embeds, which the embedder makes slow.
    const field = (tag: number, bytes: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), varint(bytes.length), bytes])
    const chunk = Buffer.concat([field(0x0a, Buffer.from('corpora/patient/documents/d/chunks/c')), field(0x12, field(0x0a, Buffer.from('waited for')))])
    const request = Buffer.concat([field(0x0a, Buffer.from('corpora/patient/documents/d')), field(0x12, chunk)])
    const made = await raw({ ':path': '/google.ai.generativelanguage.v1beta.RetrieverService/CreateChunk', 'grpc-timeout': '99999999S' }, framed(request))
    expect([made.headers['grpc-status'], decodeURIComponent(String(made.headers['grpc-message'] ?? ''))]).toEqual(['0', ''])
    const stored = await server.engines.semanticRetriever.getChunk({ name: 'corpora/patient/documents/d/chunks/c' })
    expect(stored.ok ? stored.response.data : undefined).toEqual({ stringValue: 'waited for' })
  })

  it("writes an error's message percent-encoded, as grpc-js reads it back", async () => {
    const name = 'corpora/café ✓'
    const answer = await call(CREATE_CORPUS, createCorpusBytes(name))
    expect(answer.code).toBe(grpc.status.INVALID_ARGUMENT)
    expect(answer.details).toContain(name)
    const rest = await server.engines.semanticRetriever.createCorpus({ corpus: { name } })
    expect(rest.ok ? '' : rest.status.message).toBe(answer.details)
  })
})
