import { constants, inflateSync } from 'node:zlib'

/**
 * Bytes a PDF's zlib (FlateDecode) streams inflate to together, counted up to `limit` (a result
 * above `limit` means "more"): checked before PDF.js parses the file, so a small file that inflates
 * to gigabytes fails on its size instead of holding a thread and its memory. Every `stream` keyword
 * is tried (a stream that is not zlib counts 0; one cut short counts what inflates); zlib stops
 * at the budget left, so the scan never holds more than `limit` bytes. Other filters are left to the
 * time bound (bounded-analysis.ts).
 */
export function inflatedSize(pdf: Uint8Array, limit: number): number {
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength)
  let total = 0
  let at = 0
  for (;;) {
    const found = bytes.indexOf('stream', at, 'latin1')
    if (found < 0) return total
    at = found + 6
    // "endstream" holds the keyword too.
    if (found >= 3 && bytes.toString('latin1', found - 3, found) === 'end') continue
    let start = at
    if (bytes[start] === 0x0d) start++
    if (bytes[start] === 0x0a) start++
    // A zlib header: deflate (low nibble 8) and a multiple of 31.
    const cmf = bytes[start]
    const flg = bytes[start + 1]
    if (cmf === undefined || flg === undefined || (cmf & 0x0f) !== 8 || ((cmf << 8) | flg) % 31 !== 0) continue
    const end = bytes.indexOf('endstream', start, 'latin1')
    try {
      total += inflateSync(bytes.subarray(start, end < 0 ? bytes.length : end), { maxOutputLength: limit - total + 1, finishFlush: constants.Z_SYNC_FLUSH }).length
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return limit + 1
    }
    if (total > limit) return total
  }
}
