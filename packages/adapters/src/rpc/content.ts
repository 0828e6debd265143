import { bool, bytes, message, opaque, repeated, string, type Infer } from './proto-json.js'
import { invalidArgument } from './status.js'

/**
 * Generative content (google.cloud.aiplatform Content and Part, content.proto), read the same way
 * wherever a request carries turns: generateContent's `contents`, RAG Engine's AugmentPrompt and
 * CorroborateContent, Memory Bank's `directContentsSource`. A Part's members are read as the
 * protos name them (an unknown one, `{ txt: "..." }`, is refused); the media, calls and results
 * they hold are kept as given (Quarry reads text parts only).
 */
const P = 'google.cloud.aiplatform.v1beta1'

/** The members of Part's `data` oneof: a part holds exactly one. */
const PART_DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'] as const

export const Part = message(
  `${P}.Part`,
  {
    text: string,
    inlineData: opaque(`${P}.Blob`),
    fileData: opaque(`${P}.FileData`),
    functionCall: opaque(`${P}.FunctionCall`),
    functionResponse: opaque(`${P}.FunctionResponse`),
    executableCode: opaque(`${P}.ExecutableCode`),
    codeExecutionResult: opaque(`${P}.CodeExecutionResult`),
    videoMetadata: opaque(`${P}.VideoMetadata`),
    thought: bool,
    thoughtSignature: bytes,
    // In v1's pinned protos and Google's REST reference, not yet in the pinned v1beta1 protos (NEWER_PART_FIELDS).
    mediaResolution: opaque(`${P}.Part.MediaResolution`),
  },
  [[...PART_DATA], ['videoMetadata']],
)

export const Content = message(`${P}.Content`, { role: string, parts: repeated(Part) })

/** Part fields newer than the pinned client's v1beta1 protos (the protos test skips exactly these). */
export const NEWER_PART_FIELDS: Readonly<Record<string, readonly string[]>> = { [`${P}.Part`]: ['mediaResolution'] }

export type ContentInput = Infer<typeof Content>

/** A turn's roles: "The producer of the content. Must be either 'user' or 'model'" (content.proto, Content.role). */
const ROLES: ReadonlySet<string> = new Set(['user', 'model'])

/**
 * Checks a turn read with {@link Content}: "Required. Ordered `Parts`" (content.proto), each
 * holding one of the data members, and a role, if any, of user or model ("Please use a valid role:
 * user, model", as Vertex answers). A system instruction's role is not checked (`role: false`):
 * Google's SDKs send it as they please. INVALID_ARGUMENT at the field under `field`.
 */
export function checkContent(content: ContentInput, field: string, options: { readonly role: boolean } = { role: true }): void {
  if (options.role && content.role !== undefined && !ROLES.has(content.role)) {
    throw invalidArgument(`${field}.role`, `Please use a valid role: user, model; received "${content.role.slice(0, 60)}".`)
  }
  const parts = content.parts ?? []
  if (parts.length === 0) throw invalidArgument(`${field}.parts`, `${field}.parts must not be empty: a turn has at least one part, e.g. { text: "..." }.`)
  parts.forEach((part, j) => {
    if (!PART_DATA.some((k) => part[k] !== undefined)) throw invalidArgument(`${field}.parts[${j}]`, `a part holds its data in one of ${PART_DATA.join(', ')}; this one has none.`)
  })
}

/**
 * Whether a turn is the user's: by its role; without one, by its author where it has one (a
 * session event's `author`); else it is the user's. content.proto leaves the role to multi-turn
 * conversations ("Useful to set for multi-turn conversations, otherwise can be left blank or
 * unset"): a turn without one is the user's prompt, as generateContent reads it.
 */
export function isUserTurn(content: { readonly role?: unknown } | undefined, author?: string): boolean {
  const role = typeof content?.role === 'string' && content.role !== '' ? content.role : undefined
  if (role !== undefined) return role === 'user'
  return author === undefined || author === 'user'
}
