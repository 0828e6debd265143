/** One part of a multipart body: its headers (lower-case names) and bytes. */
interface Part {
  readonly headers: Readonly<Record<string, string>>
  readonly name: string | undefined
  readonly body: Buffer
}

/** Parts past this many make the body no upload (undefined). */
export const MAX_PARTS = 16

/**
 * The longest boundary RFC 2046 allows (§5.1.1: 1 to 70 characters). Searching a body for a longer
 * one is not linear: a 12 KB boundary absent from a 32 MB body held the server for 30 s.
 */
export const MAX_BOUNDARY = 70

/** The boundary a multipart content type names, if any (any length: the caller checks it). */
export function boundaryOf(contentType: string): string | undefined {
  const m = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType)
  return m?.[1] ?? m?.[2]
}

/** Splits a multipart/form-data or multipart/related body on its boundary (undefined: not one, a boundary over MAX_BOUNDARY, or over MAX_PARTS parts). */
export function parseMultipart(body: Buffer, contentType: string): Part[] | undefined {
  const boundary = boundaryOf(contentType)
  if (!boundary || boundary.length > MAX_BOUNDARY) return undefined
  const delimiter = Buffer.from(`--${boundary}`)
  const parts: Part[] = []
  let at = body.indexOf(delimiter)
  while (at >= 0) {
    let start = at + delimiter.length
    if (body.subarray(start, start + 2).toString() === '--') break
    // An upload has two parts; millions of empty ones would cost seconds and hundreds of MB to list.
    if (parts.length === MAX_PARTS) return undefined
    if (body.subarray(start, start + 2).toString() === '\r\n') start += 2
    const next = body.indexOf(delimiter, start)
    if (next < 0) return undefined
    let chunk = body.subarray(start, next)
    if (chunk.subarray(chunk.length - 2).toString() === '\r\n') chunk = chunk.subarray(0, chunk.length - 2)
    const split = chunk.indexOf('\r\n\r\n')
    if (split < 0) return undefined
    const headers: Record<string, string> = {}
    for (const line of chunk.subarray(0, split).toString('utf8').split('\r\n')) {
      const colon = line.indexOf(':')
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const name = /name="([^"]*)"/.exec(headers['content-disposition'] ?? '')?.[1]
    parts.push({ headers, name, body: chunk.subarray(split + 4) })
    at = next
  }
  return parts
}
