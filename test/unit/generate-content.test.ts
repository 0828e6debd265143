import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { VertexRagEngine, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { LOCAL_MODEL_LABEL, type GenerativeModel, type ModelRequest } from '../../packages/adapters/src/generative/model.js'
import { predictionSurfaces } from '../../packages/adapters/src/generative/service.js'
import { failure } from '../../packages/adapters/src/rpc/status.js'
import type { ContextJson } from '../../packages/adapters/src/vertex-rag/resources.js'

/**
 * generateContent on a publisher model (generative/): a retrieval.vertexRagStore tool runs
 * retrieveContexts with the tool's settings — the oracle is retrieveContexts itself, called with
 * the same store and the last user turn — and the candidate's groundingMetadata cites exactly those
 * contexts, in order; the default model's supports point at the bytes it copied from each.
 */
const GCS = fileURLToPath(new URL('../contract/fixtures/gcs', import.meta.url))
const L = 'projects/p/locations/l'
const MODEL = `${L}/publishers/google/models/gemini-2.5-flash`
const rag = new VertexRagEngine({ embedder: createHashingEmbedder({ dimensions: 32 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(5), gcsRoot: GCS })
let corpus = ''

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.status))
  return outcome.response
}

function failed(outcome: Outcome<unknown>): { code: number; message: string; details?: unknown } {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.response)}`)
  return outcome.status
}

beforeAll(async () => {
  corpus = (ok(await rag.v1beta1.createRagCorpus({ parent: L, ragCorpus: { displayName: 'books' } })).response as unknown as { name: string }).name
  ok(
    await rag.v1beta1.importRagFiles({
      parent: corpus,
      importRagFilesConfig: { gcsSource: { uris: ['gs://library/dune.txt', 'gs://library/emma.md'] }, ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 40, chunkOverlap: 0 } } } },
    }),
  )
})

const ask = (text: string, store: Record<string, unknown> = { ragResources: [{ ragCorpus: corpus }] }): Record<string, unknown> => ({
  model: MODEL,
  contents: [
    { role: 'user', parts: [{ text: 'hello' }] },
    { role: 'model', parts: [{ text: 'hi' }] },
    { role: 'user', parts: [{ text }] },
  ],
  tools: [{ retrieval: { vertexRagStore: store } }],
})

async function oracle(version: 'v1' | 'v1beta1', text: string, topK?: number): Promise<ContextJson[]> {
  const surface = version === 'v1' ? rag.v1 : rag.v1beta1
  const query = topK === undefined ? { text } : { text, ragRetrievalConfig: { topK } }
  return [...(ok(await surface.retrieveContexts({ parent: L, vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query })).contexts.contexts ?? [])]
}

describe('generateContent with the default model', () => {
  const models = predictionSurfaces(rag)

  for (const version of ['v1', 'v1beta1'] as const) {
    it(`${version}: grounds the answer in exactly the contexts retrieveContexts finds, supports on the copied bytes`, async () => {
      const expected = await oracle(version, 'sandworms on the desert planet', 3)
      const response = ok(await models[version].generateContent(ask('sandworms on the desert planet', { ragResources: [{ ragCorpus: corpus }], similarityTopK: 3 })))
      expect(response.modelVersion).toBe('quarry-local-model')
      const [candidate] = response.candidates
      const text = candidate?.content.parts[0]?.['text'] as string
      expect(text.startsWith(`${LOCAL_MODEL_LABEL} from 3 retrieved contexts.`)).toBe(true)
      const grounding = candidate?.groundingMetadata
      expect(grounding?.retrievalQueries).toEqual(['sandworms on the desert planet'])
      expect(grounding?.groundingChunks).toEqual(expected.map((c) => ({ retrievedContext: { uri: c.sourceUri, title: c.sourceDisplayName, text: c.text, ragChunk: c.chunk } })))
      const bytes = Buffer.from(text, 'utf8')
      const supports = grounding?.groundingSupports as { segment: { startIndex: number; endIndex: number; text: string }; groundingChunkIndices: number[]; confidenceScores: number[] }[]
      expect(supports.map((s) => s.groundingChunkIndices)).toEqual([[0], [1], [2]])
      supports.forEach((s, i) => {
        expect(bytes.subarray(s.segment.startIndex, s.segment.endIndex).toString('utf8')).toBe(s.segment.text)
        // The copied words are the start of context i's text (whitespace collapsed).
        expect(expected[i]?.text.replace(/\s+/g, ' ').trim().startsWith(s.segment.text)).toBe(true)
        expect(s.confidenceScores).toEqual([1])
      })
      expect(candidate?.finishReason).toBe('STOP')
    })
  }

  it("takes the tool's ragRetrievalConfig (topK) and names the tool's fields in its failures", async () => {
    const two = ok(await models.v1beta1.generateContent(ask('Emma matchmaking', { ragResources: [{ ragCorpus: corpus }], ragRetrievalConfig: { topK: 2 } })))
    expect(two.candidates[0]?.groundingMetadata?.groundingChunks?.map((c) => c.retrievedContext['text'])).toEqual((await oracle('v1beta1', 'Emma matchmaking', 2)).map((c) => c.text))
    const bad = failed(await models.v1beta1.generateContent(ask('x', { ragResources: [{ ragCorpus: corpus }], ragRetrievalConfig: { filter: { metadataFilter: 'year >' } } })))
    expect(bad.code).toBe(3)
    expect(bad.message).toContain('tools[0].retrieval.vertexRagStore.ragRetrievalConfig.filter.metadataFilter')
  })

  it('says when nothing was retrieved, and echoes the last user turn without a retrieval tool', async () => {
    const empty = ok(await models.v1beta1.generateContent(ask('Emma', { ragResources: [{ ragCorpus: corpus }], ragRetrievalConfig: { filter: { vectorDistanceThreshold: 0 } } })))
    expect(empty.candidates[0]?.content.parts).toEqual([{ text: `${LOCAL_MODEL_LABEL} no context was retrieved for "Emma".` }])
    expect(empty.candidates[0]?.groundingMetadata).toEqual({ retrievalQueries: ['Emma'] })
    const echo = ok(await models.v1.generateContent({ model: MODEL, contents: [{ role: 'user', parts: [{ text: 'Who are you?' }] }] }))
    expect(echo).toEqual({ candidates: [{ content: { role: 'model', parts: [{ text: `${LOCAL_MODEL_LABEL} no retrieval tool was given; you said: Who are you?` }] }, finishReason: 'STOP' }], modelVersion: 'quarry-local-model' })
  })

  it('refuses what it cannot serve, saying how to fix it', async () => {
    const model = failed(await models.v1beta1.generateContent({ model: `${L}/models/x`, contents: [{ parts: [{ text: 'a' }] }] }))
    expect([model.code, model.message.startsWith('model: model must be a resource name like "projects/my-project/locations/my-location/publishers/my-publisher/models/my-model"')]).toEqual([3, true])
    const search = failed(await models.v1beta1.generateContent({ model: MODEL, contents: [{ parts: [{ text: 'a' }] }], tools: [{ googleSearch: {} }] }))
    expect([search.code, search.message]).toEqual([9, "Quarry runs retrieval.vertexRagStore tools and hands functionDeclarations to the model; googleSearch needs Google's service."])
    const none = failed(await models.v1beta1.generateContent({ model: MODEL, contents: [] }))
    expect(none.code).toBe(3)
    // Content.parts is "Required. Ordered Parts that constitute a single message" (REST reference, Content).
    const noParts = failed(await models.v1beta1.generateContent({ model: MODEL, contents: [{ role: 'user', parts: [{ text: 'a' }] }, { role: 'model', parts: [] }] }))
    expect([noParts.code, noParts.message]).toEqual([3, 'contents[1].parts: contents[1].parts must not be empty: a turn has at least one part, e.g. { text: "..." }.'])
    expect(failed(await models.v1.generateContent({ model: MODEL, contents: [{ role: 'user' }] })).code).toBe(3)
    const missing = failed(await models.v1beta1.generateContent(ask('a', { ragResources: [{ ragCorpus: `${L}/ragCorpora/nope` }] })))
    expect([missing.code, missing.message, missing.details]).toEqual([5, `RagCorpus "${L}/ragCorpora/nope" not found.`, undefined])
  })

  it('reads each turn as content.proto has it: a role of user or model, parts with their data, a retrieval tool with a source', async () => {
    const field = (status: { details?: unknown }): string | undefined => (status.details as { fieldViolations: { field: string }[] }[] | undefined)?.[0]?.fieldViolations[0]?.field
    const refused = async (request: Record<string, unknown>): Promise<[number, string | undefined, string]> => {
      const status = failed(await models.v1beta1.generateContent({ model: MODEL, ...request }))
      return [status.code, field(status), status.message]
    }
    // Content.role: "Must be either 'user' or 'model'"; Vertex answers "Please use a valid role: user, model."
    expect(await refused({ contents: [{ role: 'robot', parts: [{ text: 'hello' }] }] })).toEqual([3, 'contents[0].role', 'contents[0].role: Please use a valid role: user, model; received "robot".'])
    // A Part holds one of its data members (the `data` oneof): a misspelt one is an unknown field, none at all is refused.
    expect(await refused({ contents: [{ role: 'user', parts: [{ txt: 'hello' }] }] })).toEqual([3, 'contents[0].parts[0]', `Invalid JSON payload received. Unknown name "txt" at 'contents[0].parts[0]': Cannot find field.`])
    expect(await refused({ contents: [{ parts: [{ text: 'a' }, { thought: true }] }] })).toEqual([3, 'contents[0].parts[1]', 'contents[0].parts[1]: a part holds its data in one of text, inlineData, fileData, functionCall, functionResponse, executableCode, codeExecutionResult; this one has none.'])
    expect((await refused({ contents: [{ parts: [{ text: 123 }] }] })).slice(0, 2)).toEqual([3, 'contents[0].parts[0].text'])
    expect((await refused({ contents: [{ parts: [{ text: 'a', functionCall: { name: 'f' } }] }] })).slice(0, 2)).toEqual([3, 'contents[0].parts[0].functionCall'])
    expect((await refused({ contents: [{ parts: [{ text: 'a' }] }], systemInstruction: { parts: [{ bogus: 1 }] } })).slice(0, 2)).toEqual([3, 'systemInstruction.parts[0]'])
    // Retrieval's `source` oneof names what it retrieves from (tool.proto): an empty retrieval tool has nothing to run.
    expect(await refused({ contents: [{ parts: [{ text: 'a' }] }], tools: [{ retrieval: {} }] })).toEqual([3, 'tools[0].retrieval', 'tools[0].retrieval: a retrieval tool names its source: vertexRagStore (ragResources to retrieve from), or vertexAiSearch.'])
    // What every part may hold still reads: media, calls, a thought and its signature; a system instruction's role is not checked.
    const parts = [{ text: 'a', thought: true, thoughtSignature: 'c2lnbmF0dXJl' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }, { fileData: { mimeType: 'application/pdf', fileUri: 'gs://b/f.pdf' } }, { functionResponse: { name: 'f', response: { output: 1 } } }]
    const answer = ok(await models.v1beta1.generateContent({ model: MODEL, contents: [{ role: 'user', parts }], systemInstruction: { role: 'system', parts: [{ text: 'be brief' }] } }))
    expect(answer.candidates[0]?.content.parts).toEqual([{ text: `${LOCAL_MODEL_LABEL} no retrieval tool was given; you said: a` }])
  })
})

describe('generateContent with a plugged-in model', () => {
  it('hands the model the request and the retrieved contexts, and answers its parts and supports', async () => {
    const seen: ModelRequest[] = []
    const scripted: GenerativeModel = async (request) => {
      seen.push(request)
      const first = request.retrieval?.contexts[0]?.text ?? ''
      const text = `Answer: ${first}`
      return { parts: [{ text }, { functionCall: { name: 'lookup', args: { q: 'x' } } }], modelVersion: 'scripted-1', supports: [{ startIndex: 8, endIndex: Buffer.byteLength(text), groundingChunkIndices: [0], confidenceScores: [0.5] }] }
    }
    const models = predictionSurfaces(rag, { model: scripted })
    const tools = [{ functionDeclarations: [{ name: 'lookup' }] }, { retrieval: { vertexRagStore: { ragResources: [{ ragCorpus: corpus }], similarityTopK: 1 } } }]
    const response = ok(await models.v1beta1.generateContent({ ...ask('spice'), tools, systemInstruction: { parts: [{ text: 'be brief' }] } }))
    const [context] = await oracle('v1beta1', 'spice', 1)
    expect(seen[0]?.model).toBe(MODEL)
    expect(seen[0]?.systemInstruction).toEqual({ parts: [{ text: 'be brief' }] })
    expect(seen[0]?.tools).toEqual(tools)
    expect(seen[0]?.retrieval).toEqual({ query: 'spice', contexts: [context] })
    expect(response.modelVersion).toBe('scripted-1')
    expect(response.candidates[0]?.content.parts[1]).toEqual({ functionCall: { name: 'lookup', args: { q: 'x' } } })
    expect(response.candidates[0]?.groundingMetadata?.groundingSupports).toEqual([{ segment: { startIndex: 8, endIndex: Buffer.byteLength(`Answer: ${context?.text}`), text: context?.text }, groundingChunkIndices: [0], confidenceScores: [0.5] }])
  })

  it("answers INTERNAL, reported, when the model's supports do not fit its answer", async () => {
    const errors: unknown[] = []
    const models = predictionSurfaces(rag, { model: async () => ({ parts: [{ text: 'short' }], supports: [{ startIndex: 0, endIndex: 99, groundingChunkIndices: [0] }] }), onInternalError: (e) => errors.push(e) })
    const status = failed(await models.v1beta1.generateContent(ask('spice')))
    expect(status.code).toBe(13)
    expect(String(errors[0])).toContain("the generative model's supports[0] [0, 99) is not a byte span of the 5-byte part 0")
  })
})

describe('NOT_FOUND carries what Google\'s carries', () => {
  // Vertex AI's own 404, as quoted in google/adk-python#833: {'error': {'code': 404, 'message':
  // 'Publisher Model `projects/ID/locations/asia-south1/publishers/google/models/gemini-2.0-flash` not found.',
  // 'status': 'NOT_FOUND'}} — a message and no details. Field problems keep their BadRequest.
  it('is the message alone, while other failures keep the field they concern', () => {
    expect(failure('NOT_FOUND', 'RagCorpus "x" not found.', 'name').status).toEqual({ code: 5, message: 'RagCorpus "x" not found.' })
    expect(failure('ALREADY_EXISTS', 'Corpus "corpora/a" already exists.', 'corpus.name').status.details).toEqual([
      { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'corpus.name', description: 'Corpus "corpora/a" already exists.' }] },
    ])
  })
})
