import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, MemoryBankServiceClient, SemanticRetriever, VertexRagEngine, createServer, seededRandomId, v1, v1beta1, type QuarryServer } from '@quarry/adapters'
import { restRoutes } from '../../packages/adapters/src/http/routes.js'
import { bindMethods } from '../../packages/adapters/src/transport/bound-methods.js'
import { aiplatform, grpc, localAuth } from './google-gax.js'

/**
 * Memory revisions and Memory Bank under v1 against `createServer`. The pinned client
 * (@google-cloud/aiplatform 6.11) has neither the revision RPCs nor a v1 MemoryBankServiceClient,
 * so its v1beta1 MemoryBankServiceClient writes the memories — over REST (fallback) and over gRPC —
 * and the documented REST paths read and roll back their history:
 * GET /v1beta1/{parent=.../memories/*}/revisions, GET /v1beta1/{name=.../revisions/*},
 * POST /v1beta1/{name=.../memories/*}:rollback
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1beta1/projects.locations.reasoningEngines.memories.revisions/list,
 * .../memories/rollback), and the same under /v1/
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/projects.locations.reasoningEngines.memories).
 */

type MbClient = InstanceType<typeof aiplatform.v1beta1.MemoryBankServiceClient>
type ClientOptions = NonNullable<ConstructorParameters<typeof aiplatform.v1beta1.MemoryBankServiceClient>[0]>

let server: QuarryServer
let url: string
let rest: MbClient
let overGrpc: MbClient

beforeAll(async () => {
  server = createServer({ embedder: createHashingEmbedder({ dimensions: 32 }), memoryBank: { randomId: seededRandomId(11) }, grpcPort: 0 })
  const bound = await server.listen({ port: 0, host: '127.0.0.1' })
  url = bound.url
  rest = new aiplatform.v1beta1.MemoryBankServiceClient({ apiEndpoint: '127.0.0.1', port: bound.port, protocol: 'http', fallback: true, authClient: localAuth() })
  overGrpc = new aiplatform.v1beta1.MemoryBankServiceClient({ apiEndpoint: '127.0.0.1', port: bound.grpcPort as number, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' })
})

afterAll(async () => {
  await rest.close()
  await overGrpc.close()
  await server.close()
})

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

interface RevisionJson {
  name: string
  fact: string
  labels?: Record<string, string>
  createTime: string
  expireTime: string
  extractedMemories?: { fact: string }[]
}
async function revisions(version: 'v1' | 'v1beta1', memory: string, query = ''): Promise<RevisionJson[]> {
  const { status, json } = await call('GET', `/${version}/${memory}/revisions${query}`)
  expect(status, JSON.stringify(json)).toBe(200)
  return (json['memoryRevisions'] as RevisionJson[] | undefined) ?? []
}

describe.each([
  ['REST (fallback)', () => rest],
  ['gRPC', () => overGrpc],
] as const)('revisions of memories written by v1beta1.MemoryBankServiceClient over %s', (transport, clientOf) => {
  it('list the history newest first, filter by labels, and rollback restores the fact (v1beta1 and v1 paths)', async () => {
    const client = clientOf()
    const parent = `projects/demo/locations/us-central1/reasoningEngines/${transport === 'gRPC' ? 2 : 1}`
    const [createOp] = await client.createMemory({ parent, memory: { fact: 'I like green tea.', scope: { user_id: 'u1' } } })
    const [created] = await createOp.promise()
    const name = created.name as string
    const [updateOp] = await client.updateMemory({ memory: { name, fact: 'I like jasmine tea.' }, updateMask: { paths: ['fact'] } })
    expect((await updateOp.promise())[0].fact).toBe('I like jasmine tea.')
    // generateMemories consolidates a rewording into the memory (UPDATED), recording the extracted fact.
    const [generateOp] = await client.generateMemories({ parent, scope: { user_id: 'u1' }, directMemoriesSource: { directMemories: [{ fact: 'I LIKE JASMINE TEA!' }] } })
    const [generated] = await generateOp.promise()
    // UPDATED, decoded by the client as the enum's number.
    expect(generated.generatedMemories?.map((g) => [g.action, g.memory?.name])).toEqual([[2, name]])

    // The history, newest first, through both versions' paths: the same memory, the same revisions.
    const history = await revisions('v1beta1', name)
    expect(history.map((r) => [r.name, r.fact])).toEqual([
      [`${name}/revisions/3`, 'I LIKE JASMINE TEA!'],
      [`${name}/revisions/2`, 'I like jasmine tea.'],
      [`${name}/revisions/1`, 'I like green tea.'],
    ])
    expect(history[0]?.extractedMemories).toEqual([{ fact: 'I LIKE JASMINE TEA!' }])
    // Kept 365 days by default (memoryRevisionDefaultTtl: "If not set, a default TTL of 365 days will be used",
    // https://pub.dev/documentation/googleapis/latest/aiplatform_v1/GoogleCloudAiplatformV1ReasoningEngineContextSpecMemoryBankConfigTtlConfig/memoryRevisionDefaultTtl.html).
    for (const r of history) expect(Date.parse(r.expireTime) - Date.parse(r.createTime)).toBe(365 * 24 * 3600 * 1000)
    expect(await revisions('v1', name)).toEqual(history)
    const { status, json } = await call('GET', `/v1/${name}/revisions/1`)
    expect(status).toBe(200)
    expect(json).toEqual(history[2])

    // Labels (given on the REST generate request: the pinned client's protos lack revisionLabels) and the filter.
    const labelled = await call('POST', `/v1/${parent}/memories:generate`, { scope: { user_id: 'u1' }, directMemoriesSource: { directMemories: [{ fact: 'i like jasmine tea' }] }, revisionLabels: { source: 'chat' } })
    expect(labelled.status).toBe(200)
    expect(((labelled.json['response'] as { generatedMemories: { previousRevision?: string }[] }).generatedMemories[0])?.previousRevision).toBe(`${name}/revisions/3`)
    expect((await revisions('v1beta1', name, `?filter=${encodeURIComponent('labels.source = "chat"')}`)).map((r) => [r.name, r.labels])).toEqual([[`${name}/revisions/4`, { source: 'chat' }]])
    const paged = await call('GET', `/v1beta1/${name}/revisions?pageSize=3`)
    expect((paged.json['memoryRevisions'] as RevisionJson[]).map((r) => r.name.split('/').pop())).toEqual(['4', '3', '2'])
    const rest2 = await call('GET', `/v1beta1/${name}/revisions?pageSize=3&pageToken=${encodeURIComponent(paged.json['nextPageToken'] as string)}`)
    expect((rest2.json['memoryRevisions'] as RevisionJson[]).map((r) => r.name.split('/').pop())).toEqual(['1'])

    // Rollback through v1 to revision 1: the Google client reads the fact back exactly.
    const rolled = await call('POST', `/v1/${name}:rollback`, { targetRevisionId: '1' })
    expect(rolled.status).toBe(200)
    expect(rolled.json).toMatchObject({ done: true, metadata: { '@type': 'type.googleapis.com/google.cloud.aiplatform.v1.RollbackMemoryOperationMetadata' }, response: { '@type': 'type.googleapis.com/google.protobuf.Empty' } })
    const [afterRollback] = await client.getMemory({ name })
    expect(afterRollback.fact).toBe('I like green tea.')
    expect((await revisions('v1', name, '?pageSize=1')).map((r) => [r.name, r.fact])).toEqual([[`${name}/revisions/5`, 'I like green tea.']])
    // The v1 rollback operation is polled like any other (the operations mixin of either version).
    const polled = await call('GET', `/v1/${rolled.json['name'] as string}`)
    expect(polled.json).toEqual(rolled.json)

    // Errors in Google's shape: an unknown revision, an unknown memory.
    expect(await call('POST', `/v1beta1/${name}:rollback`, { targetRevisionId: '99' })).toMatchObject({ status: 404, json: { error: { status: 'NOT_FOUND' } } })
    expect(await call('GET', `/v1beta1/${name}/revisions?filter=${encodeURIComponent('labels.source != "chat"')}`)).toMatchObject({ status: 400, json: { error: { status: 'INVALID_ARGUMENT' } } })

    // Deleting the memory deletes its revisions.
    const [deleteOp] = await client.deleteMemory({ name })
    await deleteOp.promise()
    expect(await call('GET', `/v1/${name}/revisions`)).toMatchObject({ status: 404, json: { error: { status: 'NOT_FOUND' } } })
  })
})

describe('the REST routes of Memory Bank', () => {
  const embedder = createHashingEmbedder({ dimensions: 8 })
  const routes = restRoutes(bindMethods({ semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank: new MemoryBank({ embedder }) }))
  const of = (version: string): string[] =>
    routes
      .filter((r) => r.rpc.startsWith(`google.cloud.aiplatform.${version}.MemoryBankService.`))
      .map((r) => `${r.method} ${r.template.replace(`/${version}/`, '/')} ${r.rpc.split('.').pop() ?? ''}`)
      .sort()

  it('bind the revisions and rollback at their documented paths, and v1 exactly as v1beta1', () => {
    const beta = of('v1beta1')
    for (const engine of ['projects/*/locations/*/reasoningEngines/*', 'reasoningEngines/*']) {
      expect(beta).toContain(`GET /{parent=${engine}/memories/*}/revisions ListMemoryRevisions`)
      expect(beta).toContain(`GET /{name=${engine}/memories/*/revisions/*} GetMemoryRevision`)
      expect(beta).toContain(`POST /{name=${engine}/memories/*}:rollback RollbackMemory`)
      // The two newer methods Quarry does not serve are bound too, to answer 501 rather than 404.
      expect(beta).toContain(`POST /{parent=${engine}}/memories:ingestEvents IngestEvents`)
      expect(beta).toContain(`POST /{parent=${engine}}/memories:retrieveProfiles RetrieveProfiles`)
    }
    expect(beta).toHaveLength(2 * 13)
    expect(of('v1')).toEqual(beta)
  })
})

describe('Memory Bank under v1 over REST', () => {
  it('serves the same memories as v1beta1: created through v1beta1, read, listed and retrieved through v1', async () => {
    const parent = 'projects/demo/locations/us-central1/reasoningEngines/3'
    const [op] = await rest.createMemory({ parent, memory: { fact: 'I live in Lyon.', scope: { user_id: 'u9' } } })
    const [memory] = await op.promise()
    const got = await call('GET', `/v1/${memory.name as string}`)
    expect(got).toMatchObject({ status: 200, json: { name: memory.name, fact: 'I live in Lyon.', scope: { user_id: 'u9' } } })
    const listed = await call('GET', `/v1/${parent}/memories`)
    expect((listed.json['memories'] as { name: string }[]).map((m) => m.name)).toEqual([memory.name])
    const retrieved = await call('POST', `/v1/${parent}/memories:retrieve`, { scope: { user_id: 'u9' }, similaritySearchParams: { searchQuery: 'where do I live' } })
    expect((retrieved.json['retrievedMemories'] as { memory: { name: string } }[]).map((r) => r.memory.name)).toEqual([memory.name])
    // A write through v1 is seen by the v1beta1 client; its operation is typed v1.
    const patched = await call('PATCH', `/v1/${memory.name as string}?updateMask=fact`, { fact: 'I live in Porto.' })
    expect(patched.json).toMatchObject({ metadata: { '@type': 'type.googleapis.com/google.cloud.aiplatform.v1.UpdateMemoryOperationMetadata' }, response: { '@type': 'type.googleapis.com/google.cloud.aiplatform.v1.Memory', fact: 'I live in Porto.' } })
    const [again] = await overGrpc.getMemory({ name: memory.name })
    expect(again.fact).toBe('I live in Porto.')
    // The short engine form is bound under v1 too.
    expect((await call('GET', `/v1/reasoningEngines/3/memories`)).status).toBe(200)
  })

  it('the in-process client pages revisions like google-gax (listMemoryRevisionsAsync)', async () => {
    const client = new MemoryBankServiceClient({ embedder: createHashingEmbedder({ dimensions: 16 }), randomId: seededRandomId(4) })
    const parent = 'projects/p/locations/l/reasoningEngines/1'
    const [op] = await client.createMemory({ parent, memoryId: 'm', memory: { fact: 'one', scope: { u: 'a' } } })
    await op.promise()
    for (const fact of ['two', 'three']) await (await client.updateMemory({ memory: { name: `${parent}/memories/m`, fact }, updateMask: 'fact' }))[0].promise()
    const facts: string[] = []
    for await (const r of client.listMemoryRevisionsAsync({ parent: `${parent}/memories/m`, pageSize: 1 })) facts.push(r.fact)
    expect(facts).toEqual(['three', 'two', 'one'])
    const [[rollback]] = [await client.rollbackMemory({ name: `${parent}/memories/m`, targetRevisionId: 2 })]
    await rollback.promise()
    expect((await client.getMemory({ name: `${parent}/memories/m` }))[0].fact).toBe('two')
  })
})

describe('the in-process v1 and v1beta1 MemoryBankServiceClients', () => {
  it('share one Memory Bank: a memory written through v1beta1 is read, revised and rolled back through v1', async () => {
    const memoryBank = new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 16 }), randomId: seededRandomId(6) })
    const beta = new v1beta1.MemoryBankServiceClient({ memoryBank })
    const ga = new v1.MemoryBankServiceClient({ memoryBank })
    const parent = 'projects/p/locations/l/reasoningEngines/5'
    const [op] = await beta.createMemory({ parent, memoryId: 'm', memory: { fact: 'I sing.', scope: { u: 'a' } } })
    await op.promise()
    const [read] = await ga.getMemory({ name: `${parent}/memories/m` })
    expect(read.fact).toBe('I sing.')
    const [update] = await ga.updateMemory({ memory: { name: `${parent}/memories/m`, fact: 'I sing bass.' }, updateMask: 'fact' })
    expect(update.latestResponse.metadata).toMatchObject({ '@type': 'type.googleapis.com/google.cloud.aiplatform.v1.UpdateMemoryOperationMetadata' })
    await update.promise()
    const [revisionsSeen] = await beta.listMemoryRevisions({ parent: `${parent}/memories/m` })
    expect(revisionsSeen.map((r) => r.fact)).toEqual(['I sing bass.', 'I sing.'])
    await (await ga.rollbackMemory({ name: `${parent}/memories/m`, targetRevisionId: '1' }))[0].promise()
    expect((await beta.getMemory({ name: `${parent}/memories/m` }))[0].fact).toBe('I sing.')
  })
})

describe('revisions with --data (dataDir)', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  it('are replayed from the write-ahead log exactly and kept across a clean restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'quarry-revisions-data-'))
    const copy = mkdtempSync(join(tmpdir(), 'quarry-revisions-copy-'))
    dirs.push(dataDir, copy)
    const options = { embedder: createHashingEmbedder({ dimensions: 32 }), dataDir }
    const first = createServer(options)
    const { url: base } = await first.listen({ port: 0, host: '127.0.0.1' })
    const at = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
      const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
      return (await res.json()) as Record<string, unknown>
    }
    const parent = 'projects/p/locations/l/reasoningEngines/1'
    const name = `${parent}/memories/tea`
    await at('POST', `/v1beta1/${parent}/memories?memoryId=tea`, { fact: 'I like tea.', scope: { user_id: 'u' }, revisionLabels: { step: 'create' }, revisionTtl: '3600s' })
    await at('PATCH', `/v1/${name}?updateMask=fact`, { fact: 'I like green tea.', revisionLabels: { step: 'update' } })
    await at('POST', `/v1beta1/${parent}/memories:generate`, { scope: { user_id: 'u' }, directMemoriesSource: { directMemories: [{ fact: 'I LIKE GREEN TEA' }, { fact: 'I live in Lyon.' }] }, revisionLabels: { step: 'generate' } })
    await at('POST', `/v1/${name}:rollback`, { targetRevisionId: '1' })
    await at('PATCH', `/v1beta1/${name}`, { description: 'quiet', disableMemoryRevisions: true })
    const observe = async (url: string): Promise<unknown> => {
      const list = async (path: string): Promise<unknown> => (await fetch(`${url}${path}`)).json()
      return [await list(`/v1beta1/${name}/revisions`), await list(`/v1/${name}/revisions?filter=${encodeURIComponent('labels.step = "generate"')}`), await list(`/v1/${name}`)]
    }
    const live = await observe(base)
    const listed = (live as [{ memoryRevisions: { fact: string }[] }])[0].memoryRevisions
    expect(listed.map((r) => r.fact)).toEqual(['I like tea.', 'I LIKE GREEN TEA', 'I like green tea.', 'I like tea.'])

    // The folder as it is while the server runs: its log replayed by a replica gives the same revisions.
    cpSync(dataDir, copy, { recursive: true })
    rmSync(join(copy, 'LOCK'))
    const replica = createServer({ ...options, dataDir: copy })
    const { url: replicaUrl } = await replica.listen({ port: 0, host: '127.0.0.1' })
    expect(replica.replayed).toBe(5)
    expect(await observe(replicaUrl)).toEqual(live)
    await replica.close()

    // A clean restart loads the checkpoint close wrote.
    await first.close()
    const second = createServer(options)
    const { url: secondUrl } = await second.listen({ port: 0, host: '127.0.0.1' })
    expect(second.restored).toBe(true)
    expect(await observe(secondUrl)).toEqual(live)
    await second.close()
  })
})
