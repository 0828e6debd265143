/**
 * JSON bodies with bounded nesting. `JSON.parse` itself copes with deep input, but every later
 * walk over the value (request reading, error messages) would recurse as deep: a body nested
 * 10,000 levels is refused here, in one linear scan, before it is parsed. Google's front end
 * refuses deep payloads the same way (protobuf's JSON parser stops at 100 levels).
 */
const MAX_JSON_DEPTH = 100

/**
 * At most this many values in one request: a JSON body's objects, lists and commas (about two per
 * item of a list of objects), counted in the same scan, and a gRPC message's field values
 * (grpc/codec.ts). JSON.parse of a 30 MB body of ten million `{}` holds the event loop for
 * seconds, before any field limit is checked; Google's own caps keep every request far below this
 * (100 chunks a batch, 20 metadata entries a chunk).
 */
export const MAX_REQUEST_VALUES = 200_000

type ParsedJson = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }

/** Where the text goes past `maxDepth` levels or `maxValues` objects, lists and commas (strings skipped, escapes honoured), or undefined. */
function boundExceeded(text: string, maxDepth: number, maxValues: number): { readonly at: number; readonly what: 'depth' | 'values' } | undefined {
  let depth = 0
  let values = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return { at: i, what: 'depth' }
      if (++values > maxValues) return { at: i, what: 'values' }
    } else if (c === 0x7d || c === 0x5d) depth--
    else if (c === 0x2c && ++values > maxValues) return { at: i, what: 'values' }
  }
  return undefined
}

/** Parses JSON whose objects and arrays nest at most `maxDepth` levels, with at most `maxValues` objects, lists and commas. */
export function parseJsonBounded(text: string, maxDepth = MAX_JSON_DEPTH, maxValues = MAX_REQUEST_VALUES): ParsedJson {
  const over = boundExceeded(text, maxDepth, maxValues)
  if (over?.what === 'depth') return { ok: false, message: `objects and lists nest deeper than ${maxDepth} levels (at character ${over.at + 1}).` }
  if (over?.what === 'values') return { ok: false, message: `it holds more than ${maxValues} objects, lists and commas (at character ${over.at + 1}): send fewer items per request.` }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (error) {
    return { ok: false, message: `${error instanceof SyntaxError ? error.message.slice(0, 200) : 'it does not parse'}.` }
  }
}
