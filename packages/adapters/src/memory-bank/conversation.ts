import { checkContent } from '../rpc/content.js'
import type { Infer } from '../rpc/proto-json.js'
import { invalidArgument } from '../rpc/status.js'
import type { MemoryContext } from './context.js'
import { eventsInRange } from './events.js'
import type { ExtractEvent, FactExtractor } from './extractor.js'
import type { GenerateMemoriesRequest } from './schema.js'
import { findSession } from './sessions.js'
import type { EngineState } from './state.js'

/** What the extractor hook reads for one generateMemories request from a conversation. */
interface Conversation {
  readonly kind: 'vertexSessionSource' | 'directContentsSource'
  readonly source: Readonly<Record<string, unknown>>
  readonly events: readonly ExtractEvent[]
  /** The scope the source implies when the request gives none: `{ user_id: session.userId }`. */
  readonly scope: Readonly<Record<string, string>> | undefined
  readonly extractor: FactExtractor
}

type Request = Infer<typeof GenerateMemoriesRequest>

/**
 * The conversation of a vertexSessionSource (the session's events from startTime, inclusive, to
 * endTime, exclusive; "If `scope` is not provided, the scope will be extracted from the Session
 * (i.e. {"user_id": sesison.user_id})", memory_bank_service.proto) or of a directContentsSource
 * (its contents); undefined for directMemoriesSource. Without an extractor: UNIMPLEMENTED.
 */
export function conversationOf(ctx: MemoryContext, engine: EngineState, req: Request): Conversation | undefined {
  if (req.directMemoriesSource) return undefined
  const kind = req.vertexSessionSource ? 'vertexSessionSource' : req.directContentsSource ? 'directContentsSource' : undefined
  if (!kind) throw invalidArgument('directMemoriesSource', 'give a source: directMemoriesSource (facts), vertexSessionSource (a session) or directContentsSource (a conversation).')
  const extractor = ctx.options.extractor
  if (kind === 'directContentsSource') {
    const events = req.directContentsSource?.events ?? []
    if (events.length === 0) throw invalidArgument('directContentsSource.events', 'events is required: the conversation to generate memories from, one content each.')
    return {
      kind,
      source: req.directContentsSource ?? {},
      events: events.map((e, i) => {
        if (e.content === undefined) throw invalidArgument(`directContentsSource.events[${i}].content`, 'content is required.')
        // Read as generateContent reads its turns (rpc/content.ts): parts with data, a role of user or model.
        checkContent(e.content, `directContentsSource.events[${i}].content`)
        return { content: e.content }
      }),
      scope: undefined,
      extractor,
    }
  }
  const source = req.vertexSessionSource ?? {}
  const { engine: owner, session } = findSession(ctx, source.session, 'vertexSessionSource.session')
  if (owner !== engine) throw invalidArgument('vertexSessionSource.session', `the session must belong to the reasoning engine "${engine.name}" the memories are generated for; received "${session.name}".`)
  const startMs = source.startTime === undefined ? undefined : Date.parse(source.startTime)
  const endMs = source.endTime === undefined ? undefined : Date.parse(source.endTime)
  if (startMs !== undefined && endMs !== undefined && endMs < startMs) throw invalidArgument('vertexSessionSource.endTime', `endTime ${source.endTime ?? ''} is before startTime ${source.startTime ?? ''}.`)
  // Copies: whatever the hook does with them, the stored events stay as they are.
  return { kind, source, events: structuredClone(eventsInRange(session, startMs, endMs)), scope: { user_id: session.userId }, extractor }
}
