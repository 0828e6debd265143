import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, seededRandomId, type QuarryServer } from '@quarry/adapters'
import { aiplatform, grpc, localAuth } from './google-gax.js'

/**
 * augmentPrompt, asyncRetrieveContexts, RagEngineConfig, metadata import and the result sink
 * through Google's own Node clients (@google-cloud/aiplatform 6.11), over REST (fallback) and
 * gRPC against one `createServer({ grpcPort })`, compared with the in-process answers.
 */

const FIXTURES = fileURLToPath(new URL('../contract/fixtures/gcs', import.meta.url))
const GCS = mkdtempSync(join(tmpdir(), 'quarry-gcs-'))
cpSync(FIXTURES, GCS, { recursive: true })
const embedder = createHashingEmbedder({ dimensions: 64 })
const L = 'projects/demo/locations/us-central1'

let server: QuarryServer
type ClientOptions = NonNullable<ConstructorParameters<typeof aiplatform.v1beta1.VertexRagServiceClient>[0]>
const transports: { name: string; options: ClientOptions }[] = []

beforeAll(async () => {
  server = createServer({ embedder, vertexRag: { randomId: seededRandomId(2), gcsRoot: GCS }, grpcPort: 0 })
  const { port, grpcPort } = await server.listen({ port: 0, host: '127.0.0.1' })
  transports.push({ name: 'REST', options: { apiEndpoint: '127.0.0.1', port, protocol: 'http', fallback: true, authClient: localAuth() } })
  transports.push({ name: 'gRPC', options: { apiEndpoint: '127.0.0.1', port: grpcPort as number, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' } })
})
afterAll(async () => {
  await server.close()
  rmSync(GCS, { recursive: true, force: true })
})

describe('RAG Engine grounding through Google\'s clients', () => {
  it('imports with metadata and a result sink, augments a prompt, retrieves asynchronously, configures the engine (REST and gRPC)', async () => {
    for (const { name: transport, options } of transports) {
      const data = new aiplatform.v1beta1.VertexRagDataServiceClient(options)
      const rag = new aiplatform.v1beta1.VertexRagServiceClient(options)
      const [createOp] = await data.createRagCorpus({ parent: L, ragCorpus: { displayName: `Grounding ${transport}` } })
      const [corpus] = await createOp.promise()
      const corpusName = corpus.name as string

      const [importOp] = await data.importRagFiles({
        parent: corpusName,
        importRagFilesConfig: {
          gcsSource: { uris: ['gs://library/dune.txt', 'gs://library/emma.md', 'gs://library/ocean.html'] },
          ragFileMetadataConfig: { inlineMetadataSchemaSource: JSON.stringify([{ key: 'year', schemaDetails: { type: 'INTEGER' } }]), gcsMetadataSource: { uris: ['gs://meta/library-metadata.json'] } },
          importResultGcsSink: { outputUriPrefix: `gs://out/${transport}` },
        },
      })
      const [imported] = await importOp.promise()
      expect(Number(imported.importedRagFilesCount), transport).toBe(3)
      const id = (importOp.name as string).split('/').pop() as string
      const lines = readFileSync(join(GCS, 'out', transport, `import_result_${id}.jsonl`), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as { uri: string; result: string })
      expect(lines.map((l) => [l.uri, l.result])).toEqual([['gs://library/dune.txt', 'IMPORTED'], ['gs://library/emma.md', 'IMPORTED'], ['gs://library/ocean.html', 'IMPORTED']])
      expect(readdirSync(join(GCS, 'out', transport))).toEqual([`import_result_${id}.jsonl`])

      const store = { ragResources: [{ ragCorpus: corpusName }], ragRetrievalConfig: { topK: 2 } }
      const contents = [{ role: 'user', parts: [{ text: 'Tell me something.' }] }, { role: 'model', parts: [{ text: 'About what?' }] }, { role: 'user', parts: [{ text: 'desert spice' }] }]
      const [augmented] = await rag.augmentPrompt({ parent: L, contents, vertexRagStore: store })
      const local = await server.engines.vertexRag.v1beta1.augmentPrompt({ parent: L, contents, vertexRagStore: store })
      if (!local.ok) throw new Error(local.status.message)
      const facts = local.response.facts ?? []
      expect(facts.map((f) => f.uri)).toEqual(['gs://library/dune.txt', 'gs://library/emma.md'])
      expect(augmented.facts?.map((f) => [f.query, f.title, f.uri, f.summary, f.chunk?.text, f.chunk?.chunkId]), transport).toEqual(facts.map((f) => [f.query, f.title, f.uri, f.summary, f.chunk?.text, f.chunk?.chunkId]))
      expect(augmented.facts?.map((f) => f.score)).toEqual(facts.map((f) => f.score))
      expect(augmented.augmentedPrompt?.map((c) => [c.role, c.parts?.map((p) => p.text)])).toEqual(local.response.augmentedPrompt?.map((c) => [c.role, c.parts?.map((p) => p.text)]))
      expect(augmented.augmentedPrompt?.[2]?.parts?.[0]?.text).toMatch(/^Context:\n\n\[1\] dune\.txt \(gs:\/\/library\/dune\.txt\)\nThe spice must flow\./)

      const query = { text: 'ocean storm', ragRetrievalConfig: { topK: 2 } }
      const [sync] = await rag.retrieveContexts({ parent: L, vertexRagStore: { ragResources: store.ragResources }, query })
      const [asyncOp] = await rag.asyncRetrieveContexts({ parent: L, query, tools: [{ retrieval: { vertexRagStore: { ragResources: store.ragResources } } }] })
      const [asyncResult] = await asyncOp.promise()
      expect(asyncResult.contexts?.contexts?.map((c) => [c.sourceUri, c.text, c.score]), transport).toEqual(sync.contexts?.contexts?.map((c) => [c.sourceUri, c.text, c.score]))
      const polled = await rag.checkAsyncRetrieveContextsProgress(asyncOp.name as string)
      expect(polled.done).toBe(true)
      // A location's operations are listed, cancelled and deleted too: over REST at the /ui/
      // bindings the clients list first for them (they answered 404), as over gRPC.
      const request = (fields: { name: string }): never => fields as never
      const locationOps: string[] = []
      for await (const o of data.listOperationsAsync(request({ name: L }))) locationOps.push(o.name as string)
      expect(locationOps, transport).toContain(asyncOp.name)
      await rag.cancelOperation(request({ name: asyncOp.name as string }))
      await rag.deleteOperation(request({ name: asyncOp.name as string }))
      const gone = await rag.checkAsyncRetrieveContextsProgress(asyncOp.name as string).then(
        () => undefined,
        (e: unknown) => e as { code?: number },
      )
      // NOT_FOUND: google-gax's REST transport reports the HTTP status (404), its gRPC one the code (5).
      expect(gone?.code, transport).toBe(transport === 'gRPC' ? 5 : 404)
      const remaining: string[] = []
      for await (const o of data.listOperationsAsync(request({ name: L }))) remaining.push(o.name as string)
      expect(remaining, transport).toEqual(locationOps.filter((n) => n !== asyncOp.name))

      const configName = `projects/${transport.toLowerCase()}/locations/us-central1/ragEngineConfig`
      const [before] = await data.getRagEngineConfig({ name: configName })
      expect(before.ragManagedDbConfig?.basic, transport).toEqual({})
      const [updateOp] = await data.updateRagEngineConfig({ ragEngineConfig: { name: configName, ragManagedDbConfig: { spanner: { scaled: {} } } } })
      const [updated] = await updateOp.promise()
      expect(updated.ragManagedDbConfig?.spanner?.scaled).toEqual({})
      const [after] = await new aiplatform.v1.VertexRagDataServiceClient(options).getRagEngineConfig({ name: configName })
      expect([after.name, after.ragManagedDbConfig?.scaled, after.ragManagedDbConfig?.basic ?? null]).toEqual([configName, {}, null])

      const failed = await rag.askContexts({ parent: L, query: { text: 'x' }, tools: [{ retrieval: { vertexRagStore: { ragResources: store.ragResources } } }] }).then(
        () => undefined,
        (e: unknown) => e as { code?: number; message?: string },
      )
      expect(failed?.message, transport).toContain('generativeModel')
    }
  })
})

describe('RAG Engine grounding state with a data folder', () => {
  it('keeps the engine config, the operations and the imported metadata across a crash (log replay) and a restart, without rewriting the sink', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-rag-data-'))
    const dataDir = join(dir, 'data')
    const start = (folder: string): QuarryServer => createServer({ embedder, dataDir: folder, vertexRag: { gcsRoot: GCS } })
    let first = start(dataDir)
    const { port } = await first.listen({ port: 0, host: '127.0.0.1' })
    const options: ClientOptions = { apiEndpoint: '127.0.0.1', port, protocol: 'http', fallback: true, authClient: localAuth() }
    const data = new aiplatform.v1beta1.VertexRagDataServiceClient(options)
    const rag = new aiplatform.v1beta1.VertexRagServiceClient(options)
    const [createOp] = await data.createRagCorpus({ parent: L, ragCorpus: { displayName: 'Durable' } })
    const corpusName = (await createOp.promise())[0].name as string
    const [importOp] = await data.importRagFiles({
      parent: corpusName,
      importRagFilesConfig: {
        gcsSource: { uris: ['gs://library/dune.txt', 'gs://library/emma.md'] },
        ragFileMetadataConfig: { inlineMetadataSchemaSource: JSON.stringify([{ key: 'year', schemaDetails: { type: 'INTEGER' } }]), gcsMetadataSource: { uris: ['gs://meta/library-metadata.json'] } },
        importResultGcsSink: { outputUriPrefix: 'gs://durable-out' },
      },
    })
    await importOp.promise()
    const configName = `${L}/ragEngineConfig`
    await (await data.updateRagEngineConfig({ ragEngineConfig: { name: configName, ragManagedDbConfig: { spanner: { scaled: {} } } } }))[0].promise()
    const [asyncOp] = await rag.asyncRetrieveContexts({ parent: L, query: { text: 'desert spice' }, tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpusName }] } } }] })
    const asyncName = asyncOp.name as string

    const observe = async (server: QuarryServer): Promise<unknown> => {
      const surface = server.engines.vertexRag.v1beta1
      const files = (await surface.listRagFiles({ parent: corpusName }))
      if (!files.ok) throw new Error(files.status.message)
      const metadata = []
      for (const f of files.response.ragFiles ?? []) metadata.push(await surface.listRagMetadata({ parent: f.name }))
      return { config: await surface.getRagEngineConfig({ name: configName }), operation: await surface.getOperation({ name: asyncName }), files: files.response, metadata }
    }
    const before = await observe(first)
    expect(JSON.stringify(before)).toContain('"intValue":"1965"')
    expect(JSON.stringify(before)).toContain('"spanner":{"scaled":{}}')

    // A crash now: the folder as it is replays the log to the same state; the sink is not written again.
    const crashed = join(dir, 'crashed')
    cpSync(dataDir, crashed, { recursive: true })
    rmSync(join(crashed, 'LOCK'), { force: true })
    expect(readdirSync(crashed).filter((f) => f.startsWith('wal-')).reduce((n, f) => n + statSync(join(crashed, f)).size, 0), 'the writes are in the log').toBeGreaterThan(0)
    expect(readdirSync(join(GCS, 'durable-out'))).toHaveLength(1)
    rmSync(join(GCS, 'durable-out'), { recursive: true })
    const replayed = start(crashed)
    await replayed.listen({ port: 0, host: '127.0.0.1' })
    expect(await observe(replayed)).toEqual(before)
    expect(existsSync(join(GCS, 'durable-out'))).toBe(false)
    await replayed.close()

    await first.close()
    first = start(dataDir)
    await first.listen({ port: 0, host: '127.0.0.1' })
    expect(await observe(first)).toEqual(before)
    await first.close()
    rmSync(dir, { recursive: true, force: true })
  })
})
