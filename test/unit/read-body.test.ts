import { createServer, request, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { receiveBody } from '../../packages/adapters/src/http/replies.js'

/**
 * The REST edge's body reader against the bytes sent: a body over 1 MiB is joined a slice at a time
 * into shared memory (which the file threads read without a copy), a smaller one at once; with a
 * declared length or without, every way gives the bytes sent.
 */
let port: number
const received: Buffer[] = []
const server = createServer((req: IncomingMessage, res) => {
  receiveBody(req, 64 * 1024 * 1024, undefined, (outcome) => {
    if ('body' in outcome) {
      received.push(outcome.body)
      res.end(String(outcome.body.length))
    } else {
      res.statusCode = 500
      res.end(String(outcome.failure))
    }
  })
})

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

/** Sends `body` in pieces of `piece` bytes, a turn apart (so the server gets many chunks), with or without Content-Length. */
async function send(body: Buffer, piece: number, declared: boolean): Promise<Buffer> {
  const before = received.length
  await new Promise<void>((resolve, reject) => {
    const req = request({ port, method: 'POST', path: '/', headers: declared ? { 'content-length': body.length } : { 'transfer-encoding': 'chunked' } }, (res) => {
      res.resume()
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`))))
    })
    req.on('error', reject)
    const write = (at: number): void => {
      if (at >= body.length) return void req.end()
      req.write(body.subarray(at, at + piece))
      setImmediate(() => write(at + piece))
    }
    write(0)
  })
  expect(received.length).toBe(before + 1)
  return received[before] as Buffer
}

function pattern(size: number): Buffer {
  const bytes = Buffer.alloc(size)
  for (let i = 0; i < size; i++) bytes[i] = (i * 97 + 13) % 256
  return bytes
}

describe('receiveBody', () => {
  it('gives the bytes sent, with a declared length or without, small or large', async () => {
    for (const size of [0, 1, 1024 * 1024, 1024 * 1024 + 1, 3 * 1024 * 1024 + 5]) {
      const body = pattern(size)
      for (const declared of [true, false]) {
        const got = await send(body, 200_000, declared)
        expect(got.length).toBe(size)
        expect(Buffer.compare(got, body)).toBe(0)
        // A body over 1 MiB was joined into shared memory.
        expect(got.buffer instanceof SharedArrayBuffer).toBe(size > 1024 * 1024)
      }
    }
  })
})
