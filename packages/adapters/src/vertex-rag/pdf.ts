import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

/**
 * PDF text through Mozilla's PDF.js (pdfjs-dist, the legacy build that runs on Node 20): the ONLY
 * importer of pdfjs-dist, loaded on the first PDF. Fonts come from the package's own folder; no
 * network, no eval.
 */
export interface PdfText {
  readonly text: string
  /** Character offset where each page (1-based: index + 1) starts in `text`. */
  readonly pageStarts: readonly number[]
}

const require = createRequire(import.meta.url)

export async function pdfText(bytes: Uint8Array): Promise<PdfText> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs')
  const standardFontDataUrl = `${join(dirname(require.resolve('pdfjs-dist/package.json')), 'standard_fonts')}/`
  // PDF.js may detach the buffer it is given: hand it a copy.
  const task = pdfjs.getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, standardFontDataUrl, verbosity: 0 })
  const doc = await task.promise
  try {
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
