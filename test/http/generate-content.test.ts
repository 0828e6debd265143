import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, seededRandomId, writeCredentialsFile, type Outcome, type QuarryServer } from '@quarry/adapters'
import { LOCAL_MODEL_LABEL, type GenerativeModel } from '../../packages/adapters/src/generative/model.js'
import type { ContextJson } from '../../packages/adapters/src/vertex-rag/resources.js'
import { startServe } from '../support/quarry-process.js'
import { runQuarry } from '../support/run-cli.js'
import { aiplatform, grpc } from './google-gax.js'

/**
 * Issue 42, grounded generation through real clients against `createServer`: @google/genai 2.32 in
 * Vertex mode with only `httpOptions.baseUrl` (test/support/genai-generate.mjs), ADK 2.0's
 * `LlmAgent` with a `VertexRagRetrievalTool` whose Gemini calls go to Quarry
 * (test/support/adk-rag-agent.mjs), and aiplatform 6.11's PredictionServiceClient over gRPC. The
 * oracle is retrieveContexts in process with the tool's store and the user's text: the grounding
 * chunks are exactly its contexts, in order.
 */
const GCS = fileURLToPath(new URL('../contract/fixtures/gcs', import.meta.url))
const GENAI_SCRIPT = fileURLToPath(new URL('../support/genai-generate.mjs', import.meta.url))
const ADK_SCRIPT = fileURLToPath(new URL('../support/adk-rag-agent.mjs', import.meta.url))
const execFileAsync = promisify(execFile)
const LOCATION = 'projects/demo/locations/us-central1'
const MODEL = 'gemini-2.5-flash'

let quarry: QuarryServer
let url = ''
let grpcPort = 0
let dir = ''
let corpus = ''
/** The request URLs the first server received. */
const paths: string[] = []
/** What the child processes need besides PATH: the server's credentials and project. */
let env: NodeJS.ProcessEnv = {}

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.status))
  return outcome.response
}

beforeAll(async () => {
  quarry = createServer({ embedder: createHashingEmbedder({ dimensions: 64 }), vertexRag: { randomId: seededRandomId(4), gcsRoot: GCS }, grpcPort: 0 })
  quarry.server.on('request', (req: { url?: string }) => void paths.push(req.url ?? ''))
  const bound = await quarry.listen({ port: 0, host: '127.0.0.1' })
  url = bound.url
  grpcPort = bound.grpcPort as number
  dir = mkdtempSync(join(tmpdir(), 'quarry-generate-'))
  writeCredentialsFile(join(dir, 'adc.json'), quarry.credentials())
  env = { PATH: process.env.PATH, GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'adc.json'), GOOGLE_CLOUD_PROJECT: 'demo' }
  const rag = quarry.engines.vertexRag.v1beta1
  corpus = (ok(await rag.createRagCorpus({ parent: LOCATION, ragCorpus: { displayName: 'library' } })).response as unknown as { name: string }).name
  ok(await rag.importRagFiles({ parent: corpus, importRagFilesConfig: { gcsSource: { uris: ['gs://library/dune.txt', 'gs://library/emma.md'] }, ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 40, chunkOverlap: 0 } } } } }))
})

afterAll(async () => {
  await quarry.close()
  rmSync(dir, { recursive: true, force: true })
})

async function retrieved(version: 'v1' | 'v1beta1', text: string, topK: number): Promise<ContextJson[]> {
  const surface = quarry.engines.vertexRag[version]
  return [...(ok(await surface.retrieveContexts({ parent: LOCATION, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text, ragRetrievalConfig: { topK } } })).contexts.contexts ?? [])]
}

const chunksOf = (contexts: readonly ContextJson[]): unknown[] => contexts.map((c) => ({ retrievedContext: { uri: c.sourceUri, title: c.sourceDisplayName, text: c.text, ragChunk: c.chunk } }))

interface Grounding {
  retrievalQueries?: string[]
  groundingChunks?: unknown[]
  groundingSupports?: { segment?: { startIndex?: number; endIndex?: number; text?: string }; groundingChunkIndices?: number[] }[]
}

describe('@google/genai in Vertex mode, httpOptions.baseUrl only', () => {
  it('gets an answer grounded in the contexts retrieveContexts finds', async () => {
    const question = 'Who rides the sandworms?'
    const spec = { model: MODEL, contents: [{ role: 'user', parts: [{ text: question }] }], config: { tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }], similarityTopK: 2 } } }] } }
    const { stdout } = await execFileAsync(process.execPath, [GENAI_SCRIPT, url, JSON.stringify(spec)], { env, timeout: 60_000 })
    const answer = JSON.parse(stdout) as { text: string; modelVersion: string; usageMetadata?: unknown; candidates: { finishReason: string; groundingMetadata: Grounding }[] }
    const expected = await retrieved('v1beta1', question, 2)
    expect(answer.text.startsWith(`${LOCAL_MODEL_LABEL} from 2 retrieved contexts.`)).toBe(true)
    expect([answer.modelVersion, answer.candidates[0]?.finishReason, answer.usageMetadata]).toEqual(['quarry-local-model', 'STOP', undefined])
    const grounding = answer.candidates[0]?.groundingMetadata
    expect(grounding?.retrievalQueries).toEqual([question])
    expect(grounding?.groundingChunks).toEqual(chunksOf(expected))
    expect(grounding?.groundingSupports?.map((s) => s.groundingChunkIndices)).toEqual([[0], [1]])
    // Each support's bytes are the first words of its context.
    for (const s of grounding?.groundingSupports ?? []) {
      expect(Buffer.from(answer.text).subarray(s.segment?.startIndex, s.segment?.endIndex).toString()).toBe(s.segment?.text)
    }
  })

  it('streams the same answer through generateContentStream (streamGenerateContent?alt=sse), in one chunk', async () => {
    const spec = { model: MODEL, contents: [{ role: 'user', parts: [{ text: 'Who rides the sandworms?' }] }], config: { tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }], similarityTopK: 2 } } }] } }
    const run = async (stream: boolean): Promise<{ chunks: number; text: string; candidates: unknown[] }> =>
      JSON.parse((await execFileAsync(process.execPath, [GENAI_SCRIPT, url, JSON.stringify({ ...spec, stream })], { env, timeout: 60_000 })).stdout) as { chunks: number; text: string; candidates: unknown[] }
    const from = paths.length
    const streamed = await run(true)
    expect(paths.slice(from).filter((p) => p.includes(':streamGenerateContent?alt=sse')).length).toBe(1)
    const whole = await run(false)
    expect(streamed.chunks).toBe(1)
    expect([streamed.text, streamed.candidates]).toEqual([whole.text, whole.candidates])
    // Without alt=sse Google's REST answers a streaming RPC as a JSON array.
    const request = { contents: spec.contents, tools: spec.config.tools }
    const array = await fetch(`${url}/v1beta1/${LOCATION}/publishers/google/models/${MODEL}:streamGenerateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) })
    expect(((await array.json()) as { candidates: { content: { parts: { text: string }[] } }[] }[]).map((m) => m.candidates[0]?.content.parts[0]?.text)).toEqual([whole.text])
  })
})

describe("ADK's LlmAgent with a VertexRagRetrievalTool", () => {
  it("answers the user's turn from Quarry: retrieval by the tool's settings, grounding in the event", async () => {
    const question = 'What do the Fremen wear in the desert?'
    const spec = { corpus, topK: 3, question }
    const { stdout } = await execFileAsync(process.execPath, [ADK_SCRIPT, JSON.stringify(spec)], {
      env: { ...env, GOOGLE_GENAI_USE_VERTEXAI: 'true', GOOGLE_CLOUD_LOCATION: 'us-central1', GOOGLE_VERTEX_BASE_URL: url },
      timeout: 60_000,
    })
    const events = JSON.parse(stdout.trim().split('\n').pop() ?? '') as { author: string; text: string; groundingMetadata?: Grounding }[]
    const expected = await retrieved('v1beta1', question, 3)
    expect(events.map((e) => e.author)).toEqual(['librarian'])
    expect(events[0]?.text.startsWith(`${LOCAL_MODEL_LABEL} from 3 retrieved contexts.`)).toBe(true)
    expect(events[0]?.groundingMetadata?.retrievalQueries).toEqual([question])
    expect(events[0]?.groundingMetadata?.groundingChunks).toEqual(chunksOf(expected))
  })

  it("answers the same in ADK's streaming mode (streamGenerateContent?alt=sse)", async () => {
    const question = 'What do the Fremen wear in the desert?'
    const run = async (sse: boolean): Promise<{ author: string; partial?: boolean; text: string; groundingMetadata?: Grounding }[]> => {
      const { stdout } = await execFileAsync(process.execPath, [ADK_SCRIPT, JSON.stringify({ corpus, topK: 3, question, sse })], {
        env: { ...env, GOOGLE_GENAI_USE_VERTEXAI: 'true', GOOGLE_CLOUD_LOCATION: 'us-central1', GOOGLE_VERTEX_BASE_URL: url },
        timeout: 60_000,
      })
      return JSON.parse(stdout.trim().split('\n').pop() ?? '') as { author: string; partial?: boolean; text: string; groundingMetadata?: Grounding }[]
    }
    const from = paths.length
    const streamed = await run(true)
    expect(paths.slice(from).filter((p) => p.includes(':streamGenerateContent?alt=sse')).length).toBe(1)
    const whole = await run(false)
    const final = streamed.filter((e) => e.partial !== true)
    expect(final.map((e) => [e.author, e.text])).toEqual(whole.map((e) => [e.author, e.text]))
    expect(final.at(-1)?.groundingMetadata?.groundingChunks).toEqual(whole.at(-1)?.groundingMetadata?.groundingChunks)
  })
})

describe('PredictionService over gRPC (aiplatform 6.11)', () => {
  it('answers as REST does, v1 and v1beta1', async () => {
    for (const version of ['v1', 'v1beta1'] as const) {
      const options = { apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' }
      // v1's client has the same calling shape; typed as v1beta1's so the union stays callable.
      const client = (version === 'v1' ? new aiplatform.v1.PredictionServiceClient(options) : new aiplatform.v1beta1.PredictionServiceClient(options)) as unknown as InstanceType<typeof aiplatform.v1beta1.PredictionServiceClient>
      const request = {
        model: `${LOCATION}/publishers/google/models/${MODEL}`,
        contents: [{ role: 'user', parts: [{ text: 'Emma and matchmaking' }] }],
        tools: [{ retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }], similarityTopK: 2 } } }],
      }
      const [viaGrpc] = await client.generateContent(request)
      const rest = await fetch(`${url}/${version}/${request.model}:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer local' }, body: JSON.stringify(request) })
      expect(rest.status).toBe(200)
      const viaRest = (await rest.json()) as { candidates: { content: { parts: { text: string }[] }; groundingMetadata: Grounding }[] }
      const candidate = viaGrpc.candidates?.[0]
      expect(candidate?.content?.parts?.[0]?.text).toBe(viaRest.candidates[0]?.content.parts[0]?.text)
      expect(candidate?.groundingMetadata?.groundingChunks?.map((c) => c.retrievedContext?.text)).toEqual((await retrieved(version, 'Emma and matchmaking', 2)).map((c) => c.text))
      expect(candidate?.groundingMetadata?.groundingSupports?.map((s) => [s.segment?.startIndex ?? 0, s.segment?.endIndex, s.segment?.text])).toEqual(
        viaRest.candidates[0]?.groundingMetadata.groundingSupports?.map((s) => [s.segment?.startIndex ?? 0, s.segment?.endIndex, s.segment?.text]),
      )
      // The server stream sends the whole answer as its one message, as REST sends one event.
      const streamed: (typeof viaGrpc)[] = []
      for await (const message of client.streamGenerateContent(request)) streamed.push(message as typeof viaGrpc)
      expect(streamed.map((m) => m.candidates?.[0]?.content?.parts?.[0]?.text)).toEqual([candidate?.content?.parts?.[0]?.text])
      expect(streamed[0]?.candidates?.[0]?.groundingMetadata?.groundingChunks).toEqual(candidate?.groundingMetadata?.groundingChunks)
      await client.close()
    }
    // Google's REST clients ask for enums as numbers: finishReason STOP is 1.
    const asInts = await fetch(`${url}/v1/${LOCATION}/publishers/google/models/${MODEL}:generateContent?$alt=json;enum-encoding=int`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }) })
    expect(((await asInts.json()) as { candidates: { finishReason: unknown }[] }).candidates[0]?.finishReason).toBe(1)
  })

  it('answers UNIMPLEMENTED for the predictions Quarry does not serve, over gRPC and REST (501 at their documented paths, not 404)', async () => {
    const client = new aiplatform.v1beta1.PredictionServiceClient({ apiEndpoint: '127.0.0.1', port: grpcPort, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' })
    await expect(client.predict({ endpoint: `${LOCATION}/endpoints/1` })).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED })
    const model = `${LOCATION}/publishers/google/models/${MODEL}`
    await expect(client.countTokens({ endpoint: model })).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED, details: expect.stringContaining('CountTokens') as string })
    // generateContent on an endpoint (its http rule's first binding): a deployed model, Google's to serve.
    const onEndpoint = `GenerateContent on an endpoint (${LOCATION}/endpoints/7) is not implemented by Quarry: it serves publisher models`
    const contents = [{ role: 'user', parts: [{ text: 'hi' }] }]
    await expect(client.generateContent({ model: `${LOCATION}/endpoints/7`, contents })).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED, details: expect.stringContaining(onEndpoint) as string })
    await client.close()
    for (const verb of ['generateContent', 'streamGenerateContent']) {
      const rest = await fetch(`${url}/v1/${LOCATION}/endpoints/7:${verb}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents }) })
      expect([verb, rest.status]).toEqual([verb, 501])
      expect(await rest.json()).toEqual({ error: { code: 501, status: 'UNIMPLEMENTED', message: expect.stringContaining(onEndpoint) as string } })
    }
    // Google's http rules (prediction_service.proto): @google/genai's countTokens and embedContent, and predict, over REST.
    const why = "Quarry serves generateContent on publisher models (a local or plugged-in model over RAG Engine retrieval); other predictions need Google's service."
    for (const [version, path, rpc] of [
      ['v1beta1', `${model}:countTokens`, 'CountTokens'],
      ['v1', `${model}:embedContent`, 'EmbedContent'],
      ['v1', `${model}:predict`, 'Predict'],
      ['v1beta1', `${LOCATION}/endpoints/1:explain`, 'Explain'],
    ] as const) {
      const rest = await fetch(`${url}/${version}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      expect([path, rest.status]).toEqual([path, 501])
      expect(await rest.json()).toEqual({ error: { code: 501, status: 'UNIMPLEMENTED', message: expect.stringMatching(new RegExp(`^${rpc} is not implemented by Quarry: `)) as string } })
      expect(JSON.stringify(await (await fetch(`${url}/${version}/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json())).toContain(why.slice(0, 60))
    }
  })
})

/** A scripted model: first a call of the agent's `shelf` tool, then, given its answer, a text citing the best context. */
const shelfModel: GenerativeModel = async ({ contents, retrieval }) => {
  const answered = contents.at(-1)?.parts?.find((p) => p['functionResponse'] !== undefined)
  const best = retrieval?.contexts[0]
  if (!answered) return { parts: [{ functionCall: { name: 'shelf', args: { title: best?.sourceDisplayName ?? '' } } }], modelVersion: 'scripted' }
  const shelf = (answered['functionResponse'] as { response: { shelf: string } }).response.shelf
  const text = `${best?.sourceDisplayName} is on shelf ${shelf}.`
  return { parts: [{ text }], modelVersion: 'scripted', supports: [{ startIndex: 0, endIndex: Buffer.byteLength(best?.sourceDisplayName ?? ''), groundingChunkIndices: [0], confidenceScores: [1] }] }
}

describe('a plugged-in model (createServer({ model })) drives an ADK agent through a whole turn', () => {
  let scripted: QuarryServer
  let scriptedUrl = ''
  beforeAll(async () => {
    scripted = createServer({ embedder: createHashingEmbedder({ dimensions: 64 }), vertexRag: { randomId: seededRandomId(4), gcsRoot: GCS }, model: shelfModel })
    scriptedUrl = (await scripted.listen({ port: 0, host: '127.0.0.1' })).url
    const rag = scripted.engines.vertexRag.v1beta1
    const name = (ok(await rag.createRagCorpus({ parent: LOCATION, ragCorpus: { displayName: 'library' } })).response as unknown as { name: string }).name
    ok(await rag.importRagFiles({ parent: name, importRagFilesConfig: { gcsSource: { uris: ['gs://library/dune.txt', 'gs://library/emma.md'] } } }))
  })
  afterAll(() => scripted.close())

  it("calls the agent's tool, then answers from its result and the retrieved context", async () => {
    const corpusName = [...scripted.engines.vertexRag.corpora().keys()][0]
    const spec = { corpus: corpusName, topK: 2, question: 'Where is the book about sandworms?', shelfTool: true }
    writeCredentialsFile(join(dir, 'scripted-adc.json'), scripted.credentials())
    const { stdout } = await execFileAsync(process.execPath, [ADK_SCRIPT, JSON.stringify(spec)], {
      env: { ...env, GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'scripted-adc.json'), GOOGLE_GENAI_USE_VERTEXAI: 'true', GOOGLE_CLOUD_LOCATION: 'us-central1', GOOGLE_VERTEX_BASE_URL: scriptedUrl },
      timeout: 60_000,
    })
    const events = JSON.parse(stdout.trim().split('\n').pop() ?? '') as { author: string; text: string; functionCalls?: string[]; groundingMetadata?: Grounding }[]
    // The model's call, the tool's answer (ADK's own event), the model's text.
    expect(events.map((e) => [e.author, e.functionCalls ?? [], e.text])).toEqual([
      ['librarian', ['shelf'], ''],
      ['librarian', [], ''],
      ['librarian', [], 'dune.txt is on shelf B3.'],
    ])
    expect(events[2]?.groundingMetadata?.groundingSupports).toEqual([{ segment: { endIndex: 8, text: 'dune.txt' }, groundingChunkIndices: [0], confidenceScores: [1] }])
  })
})

describe('quarry serve --model', () => {
  it('serves generateContent from the module given', async () => {
    const file = join(dir, 'echo-model.mjs')
    writeFileSync(file, "export const model = async ({ model, contents }) => ({ parts: [{ text: `${model.split('/').pop()}: ${contents.at(-1).parts[0].text}` }], modelVersion: 'echo-1' })\n")
    const served = await startServe(['--embedder', 'hashing', '--model', file])
    try {
      const response = await fetch(`${served.base}/v1/${LOCATION}/publishers/google/models/${MODEL}:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }) })
      expect(await response.json()).toEqual({ candidates: [{ content: { role: 'model', parts: [{ text: `${MODEL}: hi` }] }, finishReason: 'STOP' }], modelVersion: 'echo-1' })
    } finally {
      await served.kill()
    }
  })

  it('refuses a module without a model function: a usage error (exit 2) saying which', async () => {
    const file = join(dir, 'no-model.mjs')
    writeFileSync(file, 'export const answer = 42\n')
    const result = await runQuarry(['serve', '--model', file])
    expect([result.code, result.err]).toEqual([2, expect.stringContaining(`--model ${file} must export a function, as its default export or as "model"; it exports answer`)])
    const missing = await runQuarry(['serve', '--model', join(dir, 'nope.mjs')])
    expect([missing.code, missing.err]).toEqual([2, expect.stringContaining('nope.mjs: no such file; give the path of an ES module (.mjs or .js)')])
  })
})
