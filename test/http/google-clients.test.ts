import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { RetrieverServiceClient, createServer, seededRandomId, type QuarryServer } from '@quarry/adapters'
import { aiplatform, localAuth } from './google-gax.js'

/**
 * Google's own Node clients (@google-cloud/aiplatform 6.11, @google-ai/generativelanguage 3.7,
 * REST transport) against the local server on an ephemeral loopback port, with local fake
 * credentials: every answer is compared with the same calls made in process on an identical engine.
 */
const require = createRequire(import.meta.url)
const { v1beta } = require('@google-ai/generativelanguage') as typeof import('@google-ai/generativelanguage')

const GCS = fileURLToPath(new URL('../contract/fixtures/gcs', import.meta.url))
const embedder = createHashingEmbedder({ dimensions: 64 })
const options = { embedder, semanticRetriever: { randomId: seededRandomId(1) }, vertexRag: { randomId: seededRandomId(2), gcsRoot: GCS }, memoryBank: { randomId: seededRandomId(3) } }

/**
 * How these clients surface a REST error: google-gax 5 fetches through google-auth-library, whose
 * gaxios rejects non-2xx answers before gax decodes them, so the caller gets a GaxiosError with the
 * HTTP status as `code` and the `{"error": {...}}` JSON as its message (the same as against Google).
 */
async function failureOf(call: Promise<unknown>): Promise<{ http: number; status: string; message: string; details: unknown }> {
  const error = (await call.then(() => undefined, (e: unknown) => e)) as { code?: unknown; status?: unknown; message?: string } | undefined
  if (!error) throw new Error('the call succeeded')
  const body = JSON.parse(error.message ?? '') as { error: { code: number; status: string; message: string; details?: unknown } }
  expect(Number(error.code ?? error.status)).toBe(body.error.code)
  return { http: body.error.code, status: body.error.status, message: body.error.message, details: body.error.details }
}

let quarryServer: QuarryServer
type ClientOptions = NonNullable<ConstructorParameters<typeof aiplatform.v1beta1.VertexRagServiceClient>[0]>
let opts: ClientOptions
const requests: string[] = []

beforeAll(async () => {
  quarryServer = createServer(options)
  quarryServer.server.on('request', (req) => requests.push(`${req.method} ${req.headers.host} ${req.url}`))
  const { port } = await quarryServer.listen({ port: 0, host: '127.0.0.1' })
  opts = { apiEndpoint: '127.0.0.1', port, protocol: 'http', fallback: true, authClient: localAuth() }
})
afterAll(async () => {
  await quarryServer.close()
  // No request left the machine: every one reached this loopback server.
  expect(requests.length).toBeGreaterThan(0)
  for (const r of requests) expect(r).toMatch(/^\w+ 127\.0\.0\.1:\d+ \//)
})

describe('Semantic Retriever with v1beta.RetrieverServiceClient', () => {
  it('runs a corpus lifecycle and answers like the in-process engine', async () => {
    const client = new v1beta.RetrieverServiceClient({ ...opts, apiKey: 'local' })
    const [corpus] = await client.createCorpus({ corpus: { name: 'corpora/books', displayName: 'Books' } })
    expect(corpus.name).toBe('corpora/books')
    const [doc] = await client.createDocument({ parent: 'corpora/books', document: { name: 'corpora/books/documents/dune', displayName: 'Dune', customMetadata: [{ key: 'year', numericValue: 1965 }] } })
    expect(doc.customMetadata?.[0]?.numericValue).toBe(1965)
    const texts = ['The spice must flow across the desert.', 'Paul rides a sandworm.', 'Fear is the mind-killer.']
    const [batch] = await client.batchCreateChunks({ parent: doc.name, requests: texts.map((t, i) => ({ parent: doc.name, chunk: { name: `${doc.name}/chunks/c${i}`, data: { stringValue: t }, customMetadata: [{ key: 'page', numericValue: i }] } })) })
    expect(batch.chunks?.map((c) => c.name)).toEqual(['c0', 'c1', 'c2'].map((c) => `${doc.name}/chunks/${c}`))
    expect(batch.chunks?.every((c) => c.state === 'STATE_ACTIVE' || c.state === 2)).toBe(true)

    const query = { name: 'corpora/books', query: 'desert sandworm', metadataFilters: [{ key: 'chunk.custom_metadata.page', conditions: [{ operation: 'LESS' as const, numericValue: 2 }] }] }
    const [answer] = await client.queryCorpus(query)
    // The same calls in process, on an identical engine: same ids, order and scores.
    const inProcess = new RetrieverServiceClient({ embedder, randomId: seededRandomId(1) })
    await inProcess.createCorpus({ corpus: { name: 'corpora/books' } })
    await inProcess.createDocument({ parent: 'corpora/books', document: { name: 'corpora/books/documents/dune', customMetadata: [{ key: 'year', numericValue: 1965 }] } })
    await inProcess.batchCreateChunks({ parent: doc.name, requests: texts.map((t, i) => ({ chunk: { name: `${doc.name}/chunks/c${i}`, data: { stringValue: t }, customMetadata: [{ key: 'page', numericValue: i }] } })) })
    const [expected] = await inProcess.queryCorpus(query)
    expect(answer.relevantChunks?.map((r) => [r.chunk?.name, r.chunkRelevanceScore])).toEqual(expected.relevantChunks?.map((r) => [r.chunk.name, r.chunkRelevanceScore]))
    expect(answer.relevantChunks?.length).toBe(2)
    expect(answer.relevantChunks?.[0]?.document?.name).toBe(doc.name)

    const [updated] = await client.updateChunk({ chunk: { name: `${doc.name}/chunks/c2`, data: { stringValue: 'Fear is the little death.' } }, updateMask: { paths: ['data'] } })
    expect(updated.data?.stringValue).toBe('Fear is the little death.')
    const [chunks] = await client.listChunks({ parent: doc.name, pageSize: 2 })
    expect(chunks.map((c) => c.name)).toEqual(['c0', 'c1', 'c2'].map((c) => `${doc.name}/chunks/${c}`))

    const failure = await failureOf(client.queryCorpus({ ...query, resultsCount: 101 }))
    expect(failure).toMatchObject({ http: 400, status: 'INVALID_ARGUMENT' })
    expect(failure.message).toMatch(/resultsCount must be between 1 and 100/)
    expect(failure.details).toEqual([{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'resultsCount', description: 'resultsCount must be between 1 and 100 (0 or unset: the default 10); received 101.' }] }])
    expect(await failureOf(client.getCorpus({ name: 'corpora/none' }))).toMatchObject({ http: 404, status: 'NOT_FOUND' })
    expect(await failureOf(client.deleteCorpus({ name: 'corpora/books' }))).toMatchObject({ http: 400, status: 'FAILED_PRECONDITION' })
    await client.deleteCorpus({ name: 'corpora/books', force: true })
    const [left] = await client.listCorpora({})
    expect(left).toEqual([])
  })
})

describe('Vertex AI RAG Engine with aiplatform v1beta1 and v1 clients', () => {
  for (const version of ['v1beta1', 'v1'] as const) {
    it(`${version}: create, import, retrieve, delete`, async () => {
      const data = new aiplatform[version].VertexRagDataServiceClient(opts)
      const rag = new aiplatform[version].VertexRagServiceClient(opts)
      const parent = 'projects/demo/locations/us-central1'
      const [createOp] = await data.createRagCorpus({ parent, ragCorpus: { displayName: `Library ${version}` } })
      const [corpus] = await createOp.promise()
      expect(corpus.displayName).toBe(`Library ${version}`)
      const [importOp] = await data.importRagFiles({ parent: corpus.name, importRagFilesConfig: { gcsSource: { uris: ['gs://library'] }, ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 24, chunkOverlap: 6 } } } } })
      const [imported] = await importOp.promise()
      expect(Number(imported.importedRagFilesCount)).toBe(6)
      expect(Number(imported.failedRagFilesCount)).toBe(3)
      const [files] = await data.listRagFiles({ parent: corpus.name })
      expect(files.map((f) => f.displayName)).toEqual(['dune-pages.pdf', 'dune.txt', 'emma.md', 'facts.json', 'worms.txt', 'ocean.html'])

      const request = { parent, vertexRagStore: { ragResources: [{ ragCorpus: corpus.name }] }, query: { text: 'sandworms in the desert', ragRetrievalConfig: { topK: 3 } } }
      const [response] = await rag.retrieveContexts(request)
      const surface = quarryServer.engines.vertexRag[version]
      const local = await surface.retrieveContexts(request)
      if (!local.ok) throw new Error(local.status.message)
      expect(response.contexts?.contexts?.map((c) => [c.sourceUri, c.text, c.score])).toEqual(local.response.contexts.contexts?.map((c) => [c.sourceUri, c.text, c.score]))
      expect(response.contexts?.contexts?.map((c) => c.sourceUri)).toContain('gs://library/dune.txt')
      const pdf = response.contexts?.contexts?.find((c) => c.sourceUri === 'gs://library/dune-pages.pdf')
      expect(pdf?.chunk?.pageSpan).toEqual({ firstPage: 1, lastPage: 2 })
      const scores = response.contexts?.contexts?.map((c) => c.score as number) ?? []
      expect([...scores].sort((a, b) => a - b)).toEqual(scores)

      expect(await failureOf(rag.retrieveContexts({ ...request, query: { text: '' } }))).toMatchObject({ http: 400, status: 'INVALID_ARGUMENT' })
      expect(await failureOf(data.getRagCorpus({ name: `${parent}/ragCorpora/404` }))).toMatchObject({ http: 404, status: 'NOT_FOUND' })
      const [deleteOp] = await data.deleteRagCorpus({ name: corpus.name, force: true })
      await deleteOp.promise()
      expect(await failureOf(data.getRagCorpus({ name: corpus.name }))).toMatchObject({ http: 404, status: 'NOT_FOUND' })
    })
  }
})

describe('Memory Bank with aiplatform v1beta1.MemoryBankServiceClient', () => {
  it('creates, retrieves by scope and similarity, updates, lists and deletes memories', async () => {
    const client = new aiplatform.v1beta1.MemoryBankServiceClient(opts)
    const parent = 'projects/demo/locations/us-central1/reasoningEngines/42'
    const created = []
    for (const [fact, user] of [['I like green tea.', 'u1'], ['I live in Lyon.', 'u1'], ['I like coffee.', 'u2']] as const) {
      const [op] = await client.createMemory({ parent, memory: { fact, scope: { user_id: user } } })
      const [memory] = await op.promise()
      created.push(memory)
    }
    expect(created.map((m) => m.fact)).toEqual(['I like green tea.', 'I live in Lyon.', 'I like coffee.'])
    const [found] = await client.retrieveMemories({ parent, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'which tea do I like', topK: 5 } })
    const retrieved = found.retrievedMemories ?? []
    expect(retrieved.map((r) => r.memory?.name)).toEqual([created[0]?.name, created[1]?.name])
    expect(retrieved.every((r) => r.memory?.scope?.user_id === 'u1')).toBe(true)
    const local = await quarryServer.engines.memoryBank.retrieveMemories({ parent, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'which tea do I like', topK: 5 } })
    if (!local.ok) throw new Error(local.status.message)
    expect(retrieved.map((r) => r.distance)).toEqual(local.response.retrievedMemories?.map((r) => r.distance))

    const [updateOp] = await client.updateMemory({ memory: { name: created[1]?.name, fact: 'I moved to Porto.' }, updateMask: { paths: ['fact'] } })
    expect((await updateOp.promise())[0].fact).toBe('I moved to Porto.')
    // Without a mask the client still sends `scope: {}`: the set fields are updated, the scope kept.
    const [noMaskOp] = await client.updateMemory({ memory: { name: created[0]?.name, description: 'a preference' } })
    expect((await noMaskOp.promise())[0]).toMatchObject({ description: 'a preference', scope: { user_id: 'u1' } })
    const [page] = await client.retrieveMemories({ parent, scope: { user_id: 'u1' }, simpleRetrievalParams: { pageSize: 1 } })
    expect(page.retrievedMemories?.map((r) => r.memory?.name)).toEqual([created[0]?.name])
    expect(page.nextPageToken).toBeTruthy()
    const [listed] = await client.listMemories({ parent })
    expect(listed.map((m) => m.name)).toEqual([...created].reverse().map((m) => m.name))
    expect(await failureOf(client.retrieveMemories({ parent, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'x', topK: -1 } }))).toMatchObject({ http: 400, status: 'INVALID_ARGUMENT' })
    const [deleteOp] = await client.deleteMemory({ name: created[2]?.name })
    await deleteOp.promise()
    expect(await failureOf(client.getMemory({ name: created[2]?.name }))).toMatchObject({ http: 404, status: 'NOT_FOUND' })
  })
})
