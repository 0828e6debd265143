/**
 * PDF text through Mozilla's PDF.js as unpdf ships it: one self-contained module (PDF.js 5.6,
 * its worker inlined, ~2 MB, no dependencies) where pdfjs-dist's npm install also brings its
 * optional 33 MB canvas binary, which text extraction never uses. The ONLY importer of unpdf,
 * loaded on the first PDF. No network, no eval, no font files: text needs none.
 */
interface PdfText {
  readonly text: string
  /** Character offset where each page (1-based: index + 1) starts in `text`. */
  readonly pageStarts: readonly number[]
}

export async function pdfText(bytes: Uint8Array): Promise<PdfText> {
  const pdfjs = await import('unpdf/pdfjs')
  // PDF.js may detach the buffer it is given: hand it a copy.
  const task = pdfjs.getDocument({ data: new Uint8Array(bytes), isEvalSupported: false, disableFontFace: true, verbosity: 0 })
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
