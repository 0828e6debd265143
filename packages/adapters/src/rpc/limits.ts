import { invalidPayload, type RpcFailure } from './status.js'

/**
 * Size limits of request fields. Each request schema declares its fields' limits (`text`,
 * `repeated`, `mapOf` in proto-json.ts) and `readMessage` checks them before an operation does
 * any work. A limit is Google's where Google documents one (its source is the page that says so)
 * and Quarry's own cap elsewhere; a string, list or map that declares none gets `DEFAULT_LIMITS`,
 * so no field of any request is unbounded.
 *
 * Lengths are counted in Unicode code points ("characters", as Google's pages say), not UTF-16
 * code units: an emoji is one character, as it is to Google's front end.
 */
type LimitSource =
  /** Google documents the limit: the URL of the page that states it. */
  | { readonly google: string }
  /** Google documents none: why Quarry caps the field where it does. */
  | { readonly quarry: string }

export interface Limit {
  readonly max: number
  readonly source: LimitSource
}

/** A limit Google documents, with the page that states it. */
export function googleLimit(max: number, url: string): Limit {
  return { max, source: { google: url } }
}

/** A limit of Quarry's own where Google documents none, with the reason for its size. */
export function quarryCap(max: number, why: string): Limit {
  return { max, source: { quarry: why } }
}

/** The limits of everything no schema limits explicitly. */
export const DEFAULT_LIMITS = {
  /** Characters of a string: 1 Mi, far above any text field of the three APIs (uploaded files are not request fields), yet a bound on the work one field causes. */
  string: quarryCap(1_048_576, 'no request field of the three APIs carries more text; file contents arrive as uploads, not fields'),
  /** Characters of a map key (and of a key inside an opaque message): keys name things, and they end up in field paths and messages. */
  key: quarryCap(256, 'keys name metadata fields and scopes; 256 characters is far above any real key and keeps field paths and messages short'),
  /** Entries of a list or map: RAG Engine's files per ImportRagFiles request, the largest count the three APIs document. */
  entries: quarryCap(10_000, "the largest count the three APIs document (RAG Engine's files per import)"),
  /** Nesting of any value (messages, lists, maps, the contents of opaque messages): protobuf's default recursion limit. */
  depth: quarryCap(100, "protobuf's default recursion limit for parsing messages"),
  /** Values (objects, lists, scalars) inside one opaque message: configs of backends Quarry does not serve are small. */
  opaqueValues: quarryCap(10_000, 'opaque messages are configs of sources and backends Quarry does not serve; they are kept, never interpreted'),
} as const

/** Caps shared by fields of the three APIs that Google leaves unlimited. */
export const CAPS = {
  /** A metadata, scope, filter or topic key: the default for keys. */
  key: DEFAULT_LIMITS.key,
  /** A display name Google does not limit (Memory.displayName). */
  displayName: quarryCap(1_024, 'twice the longest display name Google documents (512, Semantic Retriever)'),
  /** A description, a memory fact, a metadata string value. */
  text: quarryCap(10_000, 'a few pages of text: descriptions, facts and metadata values are short; a fact is embedded on every write'),
  /** A query that is embedded (and analyzed for BM25) on every call. */
  query: quarryCap(10_000, "about 2,500 tokens, above the 2,048-token input of Google's text embedding models"),
  /** A string value of a list, a scope value, a topic label. */
  value: quarryCap(1_024, 'scope values and list members are identifiers and labels'),
  /** Members of a metadata string list. */
  listValues: quarryCap(1_000, 'list metadata holds tags and labels; each member becomes a posting of the value index'),
} as const

/** Unicode code points of `s` (UTF-16 surrogate pairs count once). */
export function characterCount(s: string): number {
  let n = s.length
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--
        i++
      }
    }
  }
  return n
}

function count(n: number): string {
  return n.toLocaleString('en-US')
}

function sourceText(source: LimitSource): string {
  return 'google' in source ? `Google's documented limit, ${source.google}` : "Quarry's cap; Google documents none"
}

/**
 * `'field' is N characters; at most M (source).` — or undefined when `value` is within the limit.
 * `subject` names what is measured when it is not the field's value (a key of a map).
 */
export function checkLength(value: string, limit: Limit, field: string, subject = `'${field}'`): RpcFailure | undefined {
  // Code points never outnumber code units: most strings pass without being counted.
  if (value.length <= limit.max) return undefined
  const n = characterCount(value)
  if (n <= limit.max) return undefined
  return invalidPayload(field, `${subject} is ${count(n)} characters; at most ${count(limit.max)} (${sourceText(limit.source)}).`)
}

/** `'field' has N entries; at most M (source).` */
export function tooMany(n: number, limit: Limit, field: string, what = 'entries'): RpcFailure {
  return invalidPayload(field, `'${field}' has ${count(n)} ${what}; at most ${count(limit.max)} (${sourceText(limit.source)}).`)
}

/** `tooMany` when `n` is over the limit, else undefined. */
export function checkCount(n: number, limit: Limit, field: string, what = 'entries'): RpcFailure | undefined {
  return n <= limit.max ? undefined : tooMany(n, limit, field, what)
}

/** A limit an engine's options lowered below the schema's: the message names the option. */
export function loweredLimit(n: number, max: number, field: string, option: string, what: 'entries' | 'characters' = 'entries'): RpcFailure {
  return invalidPayload(field, `'${field}' ${what === 'characters' ? 'is' : 'has'} ${count(n)} ${what}; at most ${count(max)} (this engine's ${option}).`)
}

/** `'field' nests deeper than N levels` — the field path is where the limit was crossed. */
export function tooDeep(field: string, limit: Limit = DEFAULT_LIMITS.depth): RpcFailure {
  return invalidPayload(field, `'${field}' nests deeper than ${count(limit.max)} levels; at most ${count(limit.max)} (${sourceText(limit.source)}).`)
}
