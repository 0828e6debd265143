import { extname } from 'node:path'
import { FILE_BOUNDS_DEFAULT, overBound, type FileBounds } from './file-bounds.js'
import { pdfText } from './pdf.js'
import type { RagFileTypeName } from './resources.js'

/** A file's text (with page offsets for a PDF), or why it has none (the import counts it failed and goes on). */
type Extracted =
  | { readonly ok: true; readonly text: string; readonly type: RagFileTypeName; readonly pageStarts?: readonly number[] }
  /**
   * `bound`: the file went over a bound of file-bounds.ts (the write-ahead log records those);
   * `empty`: it was read whole and holds no text (an empty file, a PDF without a text layer).
   */
  | { readonly ok: false; readonly message: string; readonly bound?: true; readonly empty?: true }

/** File types Quarry reads, by extension. */
export const TEXT_EXTENSIONS = ['.txt', '.text', '.md', '.markdown', '.csv', '.html', '.htm', '.json']

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' }

/**
 * Visible text of an HTML document: scripts, styles and comments dropped, tags as spaces, entities
 * decoded. An unclosed comment, script or tag runs to the end of the file, as in browsers — which
 * also keeps each pattern linear (one that must find its end retries from every start: 200 kB of
 * "<" took 43 s).
 */
export function htmlToText(html: string): string {
  return html
    .replace(/<!--[\s\S]*?(?:-->|$)/g, ' ')
    .replace(/<(script|style|noscript|template)\b[\s\S]*?(?:<\/\1\s*>|$)/gi, ' ')
    .replace(/<br\s*\/?>|<\/(p|div|li|h[1-6]|tr|section|article)>/gi, '\n')
    .replace(/<[^>]*(?:>|$)/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10)
        return Number.isFinite(code) && code > 0 && code < 0x110000 ? String.fromCodePoint(code) : m
      }
      return ENTITIES[e.toLowerCase()] ?? m
    })
    .replace(/[ \t\f\v\r]+/g, ' ')
    .replace(/ *\n[\n ]*/g, '\n')
    .trim()
}

function decodeUtf8(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '')
  } catch {
    return undefined
  }
}

/**
 * Reads the text of a file named `file` (the extension decides how) within `bounds` but their
 * time, which the caller bounds (bounded-analysis.ts runs this on a thread it can stop); messages
 * call the file `name`.
 */
export async function extractText(file: string, bytes: Uint8Array, name: string = file, bounds: FileBounds = FILE_BOUNDS_DEFAULT): Promise<Extracted> {
  const ext = extname(file).toLowerCase()
  if (ext === '.pdf') {
    try {
      const read = await pdfText(bytes, name, bounds)
      if ('over' in read) return { ok: false, message: read.over, bound: true }
      const { text, pageStarts } = read
      if (text.trim() === '') return { ok: false, message: `${name}: the PDF has no text layer (scanned pages need OCR first).`, empty: true }
      return { ok: true, text, type: 'RAG_FILE_TYPE_PDF', pageStarts }
    } catch (error) {
      return { ok: false, message: `${name}: not a readable PDF (${error instanceof Error ? error.name : 'error'}).` }
    }
  }
  if (!TEXT_EXTENSIONS.includes(ext)) {
    return { ok: false, message: `${name}: unsupported file type "${ext || '(none)'}"; Quarry imports ${[...TEXT_EXTENSIONS, '.pdf'].join(', ')}.` }
  }
  const raw = decodeUtf8(bytes)
  if (raw === undefined) return { ok: false, message: `${name}: not a text file (binary data or invalid UTF-8).` }
  let text = raw
  if (ext === '.html' || ext === '.htm') text = htmlToText(raw)
  else if (ext === '.json') {
    try {
      text = JSON.stringify(JSON.parse(raw), null, 2)
    } catch (error) {
      return { ok: false, message: `${name}: invalid JSON (${error instanceof SyntaxError ? "it does not parse" : "unreadable"}).` }
    }
  }
  if (text.length > bounds.maxInflatedBytes) return { ok: false, message: overBound(name, 'inflated', `its text runs to ${text.length} characters`, bounds), bound: true }
  if (text.trim() === '') return { ok: false, message: `${name}: the file has no text.`, empty: true }
  return { ok: true, text, type: 'RAG_FILE_TYPE_TXT' }
}
