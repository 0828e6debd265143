import { checkContent } from '../rpc/content.js'
import { omitUnset } from '../rpc/omit.js'
import { readMessage } from '../rpc/proto-json.js'
import { replayable } from '../rpc/replay.js'
import { failure } from '../rpc/status.js'
import type { RagContext } from './context.js'
import { retrieveFromStore, storeOfTools } from './rag-store.js'
import type { AskContextsResponseJson, ClaimJson, ContentJson, CorroborateContentResponseJson, FactJson } from './resources.js'
import { AskContextsRequest, CorroborateContentRequest, requestSchema, type ApiVersion } from './schema.js'

/**
 * The RPCs that need a generative model, served through the `generativeModel` option
 * (`generate`, `corroborate`); without it they answer UNIMPLEMENTED saying how to supply one.
 * The hook's answer is read through `replayable` (rpc/replay.ts) like the Memory Bank extractor's facts.
 */
function missing(rpc: string, member: 'generate' | 'corroborate', what: string): never {
  throw failure(
    'UNIMPLEMENTED',
    `VertexRagService.${rpc} is not implemented by Quarry without a generative model ${what}: pass the engine option generativeModel: { ${member}: async (request) => ... } (new VertexRagEngine({ generativeModel }), served with createServer({ engines })).`,
  )
}

/** AskContexts: the contexts retrieveContexts finds for the query (from its one retrieval tool), and the model's answer from them. */
export async function askContexts(ctx: RagContext, version: ApiVersion, request: unknown): Promise<AskContextsResponseJson> {
  const req = readMessage(requestSchema(AskContextsRequest, version), request)
  ctx.location(req.parent, 'parent')
  const generate = ctx.options.generativeModel?.generate
  if (!generate) missing('AskContexts', 'generate', 'to answer from the retrieved contexts')
  const { store, at } = storeOfTools(req.tools)
  const query = req.query ?? {}
  const { contexts } = await retrieveFromStore(ctx, version, req.parent, store, query, { store: at, query: 'query' })
  const prompt = query.text ?? ''
  const answer = await replayable('generate', async () => {
    const text: unknown = await generate({ prompt, contexts: contexts.contexts ?? [] })
    if (typeof text !== 'string') throw badHook('generate', `returned ${typeof text}, not a string`)
    return text
  })
  return omitUnset({ response: answer, contexts }, ['contexts'])
}

function badHook(member: string, what: string): Error {
  return new Error(`generativeModel.${member} ${what}`)
}

/** The text of a Content: its text parts joined by newlines. */
function textOf(content: ContentJson | undefined): string {
  return (content?.parts ?? [])
    .map((p) => p.text)
    .filter((t): t is string => typeof t === 'string')
    .join('\n')
}

/** Checks the hook's claims against the text and facts (a bad one is the hook's bug: INTERNAL). */
function checkedClaims(claims: unknown, text: string, facts: number): ClaimJson[] {
  if (!Array.isArray(claims)) throw badHook('corroborate', 'returned no claims list')
  return claims.map((c: ClaimJson, i) => {
    const { startIndex = 0, endIndex = text.length, factIndexes = [], score } = c
    if (!Number.isInteger(startIndex) || !Number.isInteger(endIndex) || startIndex < 0 || endIndex > text.length || startIndex > endIndex) {
      throw badHook('corroborate', `claims[${i}]: [${startIndex}, ${endIndex}) is not a span of the ${text.length}-character text`)
    }
    if (!factIndexes.every((f) => Number.isInteger(f) && f >= 0 && f < facts)) throw badHook('corroborate', `claims[${i}]: factIndexes must index the ${facts} facts`)
    if (score !== undefined && !(score >= 0 && score <= 1)) throw badHook('corroborate', `claims[${i}]: score ${score} is not in [0, 1]`)
    // start/end/score are proto3 `optional`: written even when 0.
    return omitUnset({ startIndex, endIndex, factIndexes: [...factIndexes], score }, ['startIndex', 'endIndex', 'score'])
  })
}

/**
 * CorroborateContent: the model's claims of the content's text, each with the facts supporting
 * it; claims scoring at or below `parameters.citationThreshold` are left out ("only return claims
 * with citation score larger than the threshold"; 0, the default, keeps every claim).
 */
export async function corroborateContent(ctx: RagContext, version: ApiVersion, request: unknown): Promise<CorroborateContentResponseJson> {
  const req = readMessage(requestSchema(CorroborateContentRequest, version), request)
  ctx.location(req.parent, 'parent')
  const corroborate = ctx.options.generativeModel?.corroborate
  if (!corroborate) missing('CorroborateContent', 'corroborate', "to find the content's claims and the facts supporting them")
  if (req.content !== undefined) checkContent(req.content, 'content')
  const text = textOf(req.content as ContentJson | undefined)
  const facts = (req.facts ?? []) as readonly FactJson[]
  const result = await replayable('corroborate', async () => {
    const answer = await corroborate({ text, facts })
    const score = answer.corroborationScore
    if (score !== undefined && !(score >= 0 && score <= 1)) throw badHook('corroborate', `corroborationScore ${score} is not in [0, 1]`)
    return { corroborationScore: score, claims: checkedClaims(answer.claims, text, facts.length) }
  })
  const threshold = req.parameters?.citationThreshold
  const claims = threshold === undefined ? result.claims : result.claims.filter((c) => (c.score ?? 0) > threshold)
  return omitUnset({ corroborationScore: result.corroborationScore, claims }, ['corroborationScore'])
}
