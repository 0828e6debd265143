import { lastUserTurn } from '../vertex-rag/augment.js'
import type { ContentJson, ContextJson } from '../vertex-rag/resources.js'

/** A Part of generative content in proto3 JSON (`{ text }`, `{ functionCall }` ...), as sent or answered. */
export type PartJson = Readonly<Record<string, unknown>>

/** What a {@link GenerativeModel} is asked: the request as sent, and what Quarry retrieved for it. */
export interface ModelRequest {
  /** The model's resource name as called: `projects/p/locations/l/publishers/google/models/gemini-2.5-flash`. */
  readonly model: string
  readonly contents: readonly ContentJson[]
  readonly systemInstruction?: ContentJson
  /** The request's tools as sent (function declarations included); Quarry has run the retrieval one. */
  readonly tools: readonly Readonly<Record<string, unknown>>[]
  readonly generationConfig?: Readonly<Record<string, unknown>>
  /** With a `retrieval.vertexRagStore` tool: the query (the last user turn's text) and the contexts retrieveContexts found for it, best first. */
  readonly retrieval?: { readonly query: string; readonly contexts: readonly ContextJson[] }
}

/**
 * A span of the answer that retrieved contexts support, in Google's terms: `startIndex` and
 * `endIndex` are UTF-8 byte offsets into the text part `partIndex` (end exclusive),
 * `groundingChunkIndices` index `retrieval.contexts`, `confidenceScores` (each in [0, 1]) pair with them.
 */
export interface ModelSupport {
  readonly partIndex?: number
  readonly startIndex: number
  readonly endIndex: number
  readonly groundingChunkIndices: readonly number[]
  readonly confidenceScores?: readonly number[]
}

/** What a {@link GenerativeModel} answers: one candidate's parts, and which parts of it the contexts support. */
export interface ModelReply {
  /** The candidate's parts in proto3 JSON: text, a functionCall for an agent's tool, ... */
  readonly parts: readonly PartJson[]
  /** A Candidate.FinishReason name. @defaultValue 'STOP' */
  readonly finishReason?: string
  /** The response's `modelVersion`. @defaultValue 'quarry-local-model' */
  readonly modelVersion?: string
  /** Checked against the parts and contexts (a bad span is the model's bug: INTERNAL); the segment's text is filled in by Quarry. */
  readonly supports?: readonly ModelSupport[]
}

/**
 * The model behind `generateContent`: `createServer({ model })` or `quarry serve --model
 * ./module.mjs` (its default export). Quarry runs the retrieval tool first; the model only
 * writes the answer, so a scripted one can drive an agent's whole turn (tool calls included).
 */
export type GenerativeModel = (request: ModelRequest) => Promise<ModelReply>

/** The label every answer of the default model starts with: it is no Gemini, and says so. */
export const LOCAL_MODEL_LABEL = 'Local model (Quarry, not Gemini):'

/** Contexts the default model quotes from. */
const QUOTED = 3
/** A quote runs to the first sentence end after this many characters (a chunk may start mid-sentence)... */
const QUOTE_MIN = 40
/** ...and stops at a word boundary before this many. */
const QUOTE_MAX = 300

/** The start of a context's text (whitespace collapsed): up to the first sentence end past QUOTE_MIN characters, at most QUOTE_MAX. */
function quoteOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  const end = /[.!?](\s|$)/g
  end.lastIndex = Math.min(QUOTE_MIN, flat.length)
  const found = end.exec(flat)
  if (found !== null && found.index < QUOTE_MAX) return flat.slice(0, found.index + 1)
  if (flat.length <= QUOTE_MAX) return flat
  const cut = flat.lastIndexOf(' ', QUOTE_MAX)
  return flat.slice(0, cut > 0 ? cut : QUOTE_MAX)
}

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8')

/**
 * The default model: deterministic, labelled, and grounded only in what was retrieved. With
 * contexts it answers `Local model (Quarry, not Gemini): from N retrieved contexts.` followed by
 * the start of each of the top three (to a sentence end), each sentence a grounding support of its context
 * (confidence 1: the words are the context's own). With a retrieval tool that found nothing it
 * says so; without one it echoes the last user turn. No tokens are counted (no usageMetadata):
 * its words are not Gemini's tokens.
 */
export const localModel: GenerativeModel = async (request) => {
  const retrieval = request.retrieval
  if (retrieval === undefined) return { parts: [{ text: `${LOCAL_MODEL_LABEL} no retrieval tool was given; you said: ${lastUserTurn(request.contents)?.text ?? ''}` }] }
  if (retrieval.contexts.length === 0) return { parts: [{ text: `${LOCAL_MODEL_LABEL} no context was retrieved for "${retrieval.query}".` }] }
  const quoted = retrieval.contexts.slice(0, QUOTED)
  let text = `${LOCAL_MODEL_LABEL} from ${quoted.length} retrieved context${quoted.length === 1 ? '' : 's'}.`
  const supports: ModelSupport[] = []
  quoted.forEach((context, i) => {
    const sentence = quoteOf(context.text)
    if (sentence === '') return
    text += ' '
    const startIndex = bytes(text)
    text += sentence
    supports.push({ startIndex, endIndex: bytes(text), groundingChunkIndices: [i], confidenceScores: [1] })
  })
  return { parts: [{ text }], supports }
}
