import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, seededRandomId, steppingClock, type QuarryServer } from '@quarry/adapters'
import { aiplatform, grpc, localAuth } from './google-gax.js'

/**
 * A Memory Bank scope key reads the same over REST and gRPC. "__proto__" is refused on both
 * (INVALID_ARGUMENT naming it) by every method taking a scope: JSON and protobuf carry it as a key,
 * but a JavaScript assignment on the way turns it into a prototype, and the gRPC answers dropped it
 * while REST showed it. "constructor" and "prototype" are ordinary keys, kept alike by both.
 * gRPC calls are Google's own client's; REST calls send the JSON as written (Google's Node client
 * over REST drops a "__proto__" map key itself before sending: proto3-json-serializer assigns it),
 * against one server.
 */
type Client = InstanceType<typeof aiplatform.v1beta1.MemoryBankServiceClient>

const ENGINE = 'projects/p/locations/l/reasoningEngines/1'
let server: QuarryServer
let restUrl: string
let clients: { readonly rest: Client; readonly grpc: Client }

beforeAll(async () => {
  server = createServer({ embedder: createHashingEmbedder({ dimensions: 16 }), grpcPort: 0, memoryBank: { randomId: seededRandomId(1), clock: steppingClock('2026-01-01T00:00:00Z') } })
  const { port, grpcPort } = await server.listen({ port: 0, host: '127.0.0.1' })
  restUrl = `http://127.0.0.1:${port}/v1beta1/${ENGINE}`
  clients = {
    rest: new aiplatform.v1beta1.MemoryBankServiceClient({ apiEndpoint: '127.0.0.1', port, protocol: 'http', fallback: true, authClient: localAuth() }),
    grpc: new aiplatform.v1beta1.MemoryBankServiceClient({ apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' }),
  }
})

afterAll(async () => {
  await Promise.all([clients.rest.close(), clients.grpc.close()])
  await server.close()
})

/** A scope as JSON.parse makes it: every key an own field, "__proto__" included. */
const scopeOf = (json: string): Record<string, string> => JSON.parse(json) as Record<string, string>

/** A gRPC call's failure: its code and message. */
async function grpcFailure(call: () => Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call()
  } catch (error) {
    const e = error as { code: number; details: string }
    return { code: e.code, message: e.details }
  }
  throw new Error('the call succeeded')
}

/** A REST call with this JSON body as written: its Status code (from the error JSON) and message. */
async function restFailure(path: string, body: string): Promise<{ code: number; message: string }> {
  const answer = await fetch(`${restUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  const json = (await answer.json()) as { error?: { code: number; status: string; message: string } }
  if (!json.error) throw new Error('the call succeeded')
  expect(answer.status).toBe(json.error.code)
  return { code: json.error.status === 'INVALID_ARGUMENT' ? grpc.status.INVALID_ARGUMENT : -1, message: json.error.message }
}

describe('a Memory Bank scope key "__proto__"', () => {
  it('is refused INVALID_ARGUMENT on REST and gRPC alike, by createMemory, retrieveMemories and generateMemories', async () => {
    const text = '{"__proto__": "x", "user_id": "u1"}'
    const scope = scopeOf(text)
    const calls: [string, string, (c: Client) => Promise<unknown>][] = [
      ['/memories', `{"fact": "I like tea.", "scope": ${text}}`, (c) => c.createMemory({ parent: ENGINE, memory: { fact: 'I like tea.', scope } })],
      [':retrieve', `{"scope": ${text}, "similaritySearchParams": {"searchQuery": "tea"}}`, (c) => c.retrieveMemories({ parent: ENGINE, scope, similaritySearchParams: { searchQuery: 'tea' } })],
      [':generate', `{"scope": ${text}, "directMemoriesSource": {"directMemories": [{"fact": "I like tea."}]}}`, (c) => c.generateMemories({ parent: ENGINE, scope, directMemoriesSource: { directMemories: [{ fact: 'I like tea.' }] } })],
    ]
    for (const [path, body, call] of calls) {
      const rest = await restFailure(path.startsWith(':') ? `/memories${path}` : path, body)
      expect(await grpcFailure(() => call(clients.grpc)), path).toEqual(rest)
      expect(rest.code, path).toBe(grpc.status.INVALID_ARGUMENT)
      expect(rest.message, path).toMatch(/a scope key cannot be "__proto__"/)
    }
    const [listed] = await clients.grpc.listMemories({ parent: ENGINE })
    expect(listed).toEqual([])
  })

  it('while "constructor" and "prototype" are keys both transports keep', async () => {
    const made: Record<string, unknown> = {}
    for (const [transport, client] of Object.entries(clients)) {
      const [op] = await client.createMemory({ parent: ENGINE, memory: { fact: `I like ${transport}.`, scope: scopeOf('{"constructor": "c", "prototype": "p", "user_id": "u1"}') } })
      const [memory] = await op.promise()
      made[transport] = memory.name
    }
    for (const name of Object.values(made)) {
      const [viaRest] = await clients.rest.getMemory({ name: name as string })
      const [viaGrpc] = await clients.grpc.getMemory({ name: name as string })
      for (const memory of [viaRest, viaGrpc]) expect(Object.entries(memory.scope ?? {}).sort()).toEqual([['constructor', 'c'], ['prototype', 'p'], ['user_id', 'u1']])
    }
    const [found] = await clients.grpc.retrieveMemories({ parent: ENGINE, scope: scopeOf('{"prototype": "p", "user_id": "u1", "constructor": "c"}'), simpleRetrievalParams: {} })
    expect((found.retrievedMemories ?? []).map((m) => m.memory?.fact).sort()).toEqual(['I like grpc.', 'I like rest.'])
  })
})
