/**
 * PDF text through Mozilla's PDF.js as unpdf ships it: one self-contained module (PDF.js 5.6,
 * its worker inlined, ~2 MB, no dependencies) where pdfjs-dist's npm install also brings its
 * optional 33 MB canvas binary, which text extraction never uses. The ONLY importer of unpdf,
 * loaded on the first PDF. No network, no eval, no font files: text needs none.
 */
import { overBound, type FileBounds } from './file-bounds.js'
import { inflatedSize } from './inflate-scan.js'

interface PdfText {
  readonly text: string
  /** Character offset where each page (1-based: index + 1) starts in `text`. */
  readonly pageStarts: readonly number[]
}

/**
 * The PDF's text, or the message of the bound it goes over (file-bounds.ts): its streams' inflated
 * size (before parsing), its page count, its text's length. Throws what PDF.js throws on a broken file.
 */
export async function pdfText(bytes: Uint8Array, label: string, bounds: FileBounds): Promise<PdfText | { readonly over: string }> {
  const inflated = inflatedSize(bytes, bounds.maxInflatedBytes)
  if (inflated > bounds.maxInflatedBytes) return { over: overBound(label, 'inflated', `its compressed streams inflate to more than ${bounds.maxInflatedBytes} bytes`, bounds) }
  const pdfjs = await import('unpdf/pdfjs')
  // PDF.js may detach the buffer it is given: hand it a copy.
  const task = pdfjs.getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, verbosity: 0 })
  const doc = await task.promise
  try {
    if (doc.numPages > bounds.maxPages) return { over: overBound(label, 'pages', `${doc.numPages} pages`, bounds) }
    let text = ''
    const pageStarts: number[] = []
    for (let i = 1; i <= doc.numPages; i++) {
      const page = await doc.getPage(i)
      const content = await page.getTextContent()
      const pageText = content.items
        .map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : ''))
        .join('')
        .trim()
      if (text !== '') text += '\n\n'
      pageStarts.push(text.length)
      text += pageText
      if (text.length > bounds.maxInflatedBytes) return { over: overBound(label, 'inflated', `its text runs past ${bounds.maxInflatedBytes} characters`, bounds) }
    }
    return { text, pageStarts }
  } finally {
    await task.destroy()
  }
}

/** The 1-based page holding character `offset`. */
export function pageAt(pageStarts: readonly number[], offset: number): number {
  let lo = 0
  let hi = pageStarts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1
    if ((pageStarts[mid] as number) <= offset) lo = mid
    else hi = mid - 1
  }
  return lo + 1
}
