/**
 * JSON bodies with bounded nesting. `JSON.parse` itself copes with deep input, but every later
 * walk over the value (request reading, error messages) would recurse as deep: a body nested
 * 10,000 levels is refused here, in one linear scan, before it is parsed. Google's front end
 * refuses deep payloads the same way (protobuf's JSON parser stops at 100 levels).
 */
const MAX_JSON_DEPTH = 100

type ParsedJson = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string }

/** The first position where nesting exceeds `maxDepth`, or -1 (strings are skipped, escapes honoured). */
function depthExceededAt(text: string, maxDepth: number): number {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: skip the escaped character
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return i
    } else if (c === 0x7d || c === 0x5d) depth--
  }
  return -1
}

/** Parses JSON whose objects and arrays nest at most `maxDepth` levels. */
export function parseJsonBounded(text: string, maxDepth = MAX_JSON_DEPTH): ParsedJson {
  const at = depthExceededAt(text, maxDepth)
  if (at >= 0) return { ok: false, message: `objects and lists nest deeper than ${maxDepth} levels (at character ${at + 1}).` }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (error) {
    return { ok: false, message: `${error instanceof SyntaxError ? error.message.slice(0, 200) : 'it does not parse'}.` }
  }
}
