/** What an extractor gets: a generateMemories source Quarry cannot read without a model. */
export interface ExtractRequest {
  readonly kind: 'vertexSessionSource' | 'directContentsSource'
  readonly source: Readonly<Record<string, unknown>>
  readonly scope: Readonly<Record<string, string>>
  /**
   * The conversation, oldest first: for vertexSessionSource the session's events in the time range
   * (as listEvents returns them), for directContentsSource one event per content given.
   */
  readonly events: readonly ExtractEvent[]
}

/** One turn of the conversation an extractor reads: a SessionEvent's JSON (or only its content). */
export interface ExtractEvent {
  readonly content?: Readonly<Record<string, unknown>>
  readonly author?: string
  readonly timestamp?: string
}

/**
 * Turns a session or conversation into facts (an LLM, typically); Quarry then stores them like
 * direct memories. Each fact holds at most 10,000 characters, as a memory's fact does: an answer
 * with a longer one fails the request (INTERNAL) and nothing is written. Blank facts are dropped.
 */
export type FactExtractor = (request: ExtractRequest) => Promise<readonly string[]>
