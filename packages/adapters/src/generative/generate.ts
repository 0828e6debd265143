import { checkContent } from '../rpc/content.js'
import { parseName } from '../rpc/names.js'
import { omitUnset } from '../rpc/omit.js'
import { readMessage, type Infer } from '../rpc/proto-json.js'
import { RpcFailure, failure, invalidArgument } from '../rpc/status.js'
import { lastUserTurn } from '../vertex-rag/augment.js'
import { storeRetrieval } from '../vertex-rag/rag-store.js'
import type { ContentJson, ContextJson } from '../vertex-rag/resources.js'
import { Tool, ToolRagStore, requestSchema, type ApiVersion } from '../vertex-rag/schema.js'
import type { VertexRagSurface } from '../vertex-rag/service.js'
import { groundingMetadata, type GroundingMetadataJson } from './grounding.js'
import type { GenerativeModel, ModelReply, PartJson } from './model.js'
import { FinishReason, GenerateContentRequest } from './schema.js'

/** What generateContent runs on: the RAG surface of its version (retrieval tools) and the model. */
export interface PredictionCall {
  readonly version: ApiVersion
  readonly rag: VertexRagSurface
  readonly model: GenerativeModel
}

export interface CandidateJson {
  readonly content: { readonly role: 'model'; readonly parts: readonly PartJson[] }
  readonly finishReason: string
  readonly groundingMetadata?: GroundingMetadataJson
}

/** GenerateContentResponse in proto3 JSON (no usageMetadata: the local model counts no tokens). */
export interface GenerateContentResponseJson {
  readonly candidates: readonly CandidateJson[]
  readonly modelVersion: string
}

const MODEL = 'projects/{project}/locations/{location}/publishers/{publisher}/models/{model}'
/** Publisher model ids carry dots and versions: `gemini-2.5-flash`, `claude-3-5@20240620`. */
const MODEL_ID = { test: /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, says: 'letters, digits, ".", "_", "@" and "-"' }

/** Tools Quarry hands to the model as they are (an agent's own functions). */
const MODEL_TOOLS: ReadonlySet<string> = new Set(['functionDeclarations', 'retrieval'])

/** The one `retrieval.vertexRagStore` among the tools (or none), with where it is; tools only Google can run are refused. */
function ragStoreOf(tools: readonly Infer<typeof Tool>[]): { store: Infer<typeof ToolRagStore>; at: string } | undefined {
  const found: { store: Infer<typeof ToolRagStore>; at: string }[] = []
  tools.forEach((tool, i) => {
    // Retrieval's `source` oneof (tool.proto) is what the tool retrieves from: without one there is nothing to run.
    if (tool.retrieval !== undefined && tool.retrieval.vertexRagStore === undefined && tool.retrieval.vertexAiSearch === undefined) {
      throw invalidArgument(`tools[${i}].retrieval`, 'a retrieval tool names its source: vertexRagStore (ragResources to retrieve from), or vertexAiSearch.')
    }
    const other = Object.keys(tool).find((k) => !MODEL_TOOLS.has(k)) ?? (tool.retrieval?.vertexAiSearch === undefined ? undefined : 'retrieval.vertexAiSearch')
    if (other !== undefined) throw failure('FAILED_PRECONDITION', `Quarry runs retrieval.vertexRagStore tools and hands functionDeclarations to the model; ${other} needs Google's service.`, `tools[${i}].${other}`)
    if (tool.retrieval?.vertexRagStore !== undefined) found.push({ store: tool.retrieval.vertexRagStore, at: `tools[${i}].retrieval.vertexRagStore` })
  })
  if (found.length > 1) throw invalidArgument('tools', `give at most one tool with retrieval.vertexRagStore; received ${found.length}.`)
  return found[0]
}

/** The reply checked: parts as a list of objects, a known finish reason (a bad one is the model's bug: INTERNAL). */
function checkedReply(reply: ModelReply): ModelReply {
  if (!Array.isArray(reply.parts) || !reply.parts.every((p) => typeof p === 'object' && p !== null)) throw new Error('the generative model returned no parts list')
  if (reply.finishReason !== undefined && !Object.hasOwn(FinishReason.values, reply.finishReason)) throw new Error(`the generative model's finishReason ${reply.finishReason} is not a Candidate.FinishReason`)
  return reply
}

// A model named by its endpoint (the http rule's first binding, projects/*/locations/*/endpoints/*).
const ENDPOINT = /^projects\/[^/]+\/locations\/[^/]+\/endpoints\/[^/]+$/

/**
 * GenerateContent on a publisher model: a `retrieval.vertexRagStore` tool runs retrieveContexts
 * with the tool's own settings (rag-store.ts) for the last user turn, then the model answers; the
 * candidate's groundingMetadata lists the query, every retrieved context as a chunk and the
 * model's supports.
 */
export async function generateContent(call: PredictionCall, request: unknown): Promise<GenerateContentResponseJson> {
  const req = readMessage(requestSchema(GenerateContentRequest, call.version), request)
  // The proto's first binding, a deployed or tuned model's endpoint: Google's service, not Quarry's.
  if (ENDPOINT.test(req.model ?? '')) throw failure('UNIMPLEMENTED', `GenerateContent on an endpoint (${(req.model ?? '').slice(0, 200)}) is not implemented by Quarry: it serves publisher models (projects/*/locations/*/publishers/*/models/*), a local or plugged-in model over RAG Engine retrieval.`)
  const model = parseName(req.model, MODEL, 'model', { model: MODEL_ID })
  if (req.contents === undefined || req.contents.length === 0) throw invalidArgument('contents', 'contents is required: at least one turn (role "user", a text part) for the model to answer.')
  // Each turn as content.proto has it (rpc/content.ts): parts required, each with its data, a role of user or model.
  req.contents.forEach((c, i) => checkContent(c, `contents[${i}]`))
  if (req.systemInstruction !== undefined) checkContent(req.systemInstruction, 'systemInstruction', { role: false })
  const contents = req.contents as readonly ContentJson[]
  const tools = req.tools ?? []
  const rag = ragStoreOf(tools)
  let retrieval: { query: string; contexts: readonly ContextJson[] } | undefined
  if (rag !== undefined) {
    const turn = lastUserTurn(contents)
    if (!turn) throw invalidArgument('contents', 'contents needs a user turn with text (role "user" or unset, a text part): its text is the query the retrieval tool runs.')
    const { request: retrieve, rebase } = storeRetrieval(model.names.location, rag.store, { text: turn.text }, { store: rag.at, query: `contents[${turn.index}]` })
    // Copied as any caller's in process: its contexts go to the model hook, which may change them.
    const outcome = await call.rag.retrieveContexts(retrieve)
    if (!outcome.ok) throw rebase(new RpcFailure(outcome.status))
    retrieval = { query: turn.text, contexts: outcome.response.contexts.contexts ?? [] }
  }
  const reply = checkedReply(
    await call.model(
      omitUnset({
        model: model.name,
        contents,
        systemInstruction: req.systemInstruction as ContentJson | undefined,
        tools: tools as readonly Readonly<Record<string, unknown>>[],
        generationConfig: req.generationConfig,
        retrieval,
      }, ['contents', 'tools']),
    ),
  )
  const grounding = retrieval === undefined ? undefined : groundingMetadata(retrieval.query, retrieval.contexts, reply.parts, reply.supports ?? [])
  const candidate = omitUnset({ content: { role: 'model' as const, parts: reply.parts }, finishReason: reply.finishReason ?? 'STOP', groundingMetadata: grounding })
  return { candidates: [candidate], modelVersion: reply.modelVersion ?? 'quarry-local-model' }
}
