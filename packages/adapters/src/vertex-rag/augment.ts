import { checkContent, isUserTurn } from '../rpc/content.js'
import { omitUnset } from '../rpc/omit.js'
import { readMessage } from '../rpc/proto-json.js'
import { invalidArgument } from '../rpc/status.js'
import type { RagContext } from './context.js'
import { retrieveFromStore } from './rag-store.js'
import type { AugmentPromptResponseJson, ContentJson, ContextJson, FactJson } from './resources.js'
import { AugmentPromptRequest, requestSchema, type ApiVersion } from './schema.js'

/**
 * AugmentPrompt: the contexts retrieved for the prompt's last user turn, woven into that turn, and
 * cited as facts. No model is involved. The format (Google documents none):
 *
 * - the query is the text of the last turn whose role is `user` (or unset), its text parts joined
 *   by newlines; earlier turns are context for the model, not the retrieval;
 * - `augmentedPrompt` is `contents` unchanged except that turn, which gains one text part before
 *   its own parts: `Context:` then, for each context best first, a blank line, `[n] title (uri)`
 *   and the chunk's text;
 * - `facts[n-1]` cites context n: the query, the file's display name as `title`, its URI, the
 *   chunk's text as `summary`, the retrieval `score` and the chunk.
 *
 * With no context retrieved the contents come back unchanged and there are no facts.
 */

/** Where the retrieval query comes from: the last user turn with text (its index and text), or undefined. */
export function lastUserTurn(contents: readonly ContentJson[]): { index: number; text: string } | undefined {
  for (let i = contents.length - 1; i >= 0; i--) {
    const turn = contents[i] as ContentJson
    if (!isUserTurn(turn)) continue
    const texts = (turn.parts ?? []).map((p) => p.text).filter((t): t is string => typeof t === 'string' && t !== '')
    if (texts.length > 0) return { index: i, text: texts.join('\n') }
  }
  return undefined
}

/** A retrieved context as the fact citing it (proto3 `optional` fields: `score` written even when 0). */
export function factOf(query: string, context: ContextJson): FactJson {
  return omitUnset({ query, title: context.sourceDisplayName, uri: context.sourceUri, summary: context.text, score: context.score, chunk: context.chunk }, ['score'])
}

/** The text part added to the user turn: `Context:` and each fact numbered from 1, best first. */
export function contextPart(facts: readonly FactJson[]): string {
  const blocks = facts.map((f, i) => {
    const source = f.title !== undefined && f.uri !== undefined && f.title !== f.uri ? `${f.title} (${f.uri})` : (f.uri ?? f.title ?? '')
    return `[${i + 1}] ${source}\n${f.summary ?? ''}`
  })
  return ['Context:', ...blocks].join('\n\n')
}

/** `contents` with the context part put first in turn `index` (the others unchanged; none with no facts). */
export function augmentContents(contents: readonly ContentJson[], index: number, facts: readonly FactJson[]): ContentJson[] {
  if (facts.length === 0) return [...contents]
  return contents.map((turn, i) => (i === index ? { ...turn, parts: [{ text: contextPart(facts) }, ...(turn.parts ?? [])] } : turn))
}

export async function augmentPrompt(ctx: RagContext, version: ApiVersion, request: unknown): Promise<AugmentPromptResponseJson> {
  const req = readMessage(requestSchema(AugmentPromptRequest, version), request)
  ctx.location(req.parent, 'parent')
  if (!req.vertexRagStore) throw invalidArgument('vertexRagStore', 'vertexRagStore is required: the RagCorpus (ragResources) to retrieve contexts from.')
  for (const [i, c] of (req.contents ?? []).entries()) checkContent(c, `contents[${i}]`)
  const contents = (req.contents ?? []) as readonly ContentJson[]
  const turn = lastUserTurn(contents)
  if (!turn) throw invalidArgument('contents', 'contents needs a user turn with text (role "user" or unset, a text part): its text is the query contexts are retrieved for.')
  const retrieved = await retrieveFromStore(ctx, version, req.parent, req.vertexRagStore, { text: turn.text }, { store: 'vertexRagStore', query: `contents[${turn.index}]` })
  const facts = (retrieved.contexts.contexts ?? []).map((c) => factOf(turn.text, c))
  return omitUnset({ augmentedPrompt: augmentContents(contents, turn.index, facts), facts })
}
