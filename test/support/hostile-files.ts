import { deflateSync } from 'node:zlib'
import { prng } from './random.js'

/**
 * Files that cost far more to read than their size (issue 41's review), generated: no data is
 * downloaded or committed.
 */

/**
 * A one-page PDF whose content stream inflates to `inflatedBytes`: a line of text ("bomb page")
 * followed by spaces, compressed (100 MB of spaces deflate to about 100 KB).
 */
export function inflatingPdf(inflatedBytes: number): Buffer {
  const head = Buffer.from('BT /F1 12 Tf 72 720 Td (bomb page) Tj ET\n')
  const content = deflateSync(Buffer.concat([head, Buffer.alloc(Math.max(0, inflatedBytes - head.length), 0x20)]), { level: 9 })
  return pdfOf([content])
}

/** A PDF of one page per text (uncompressed content streams): what the page and text bounds see. */
export function pagesPdf(texts: readonly string[]): Buffer {
  return pdfOf(texts.map((t) => Buffer.from(`BT /F1 12 Tf 72 720 Td (${t.replace(/[()\\]/g, ' ')}) Tj ET\n`)), false)
}

function pdfOf(contents: readonly Buffer[], deflated = true): Buffer {
  const pages = contents.length
  // Objects: 1 catalog, 2 pages, 3 font, then a page and its content per page.
  const kids = contents.map((_, i) => `${4 + 2 * i} 0 R`).join(' ')
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from(`<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
  ]
  contents.forEach((content, i) => {
    objects.push(Buffer.from(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`))
    objects.push(Buffer.concat([Buffer.from(`<< /Length ${content.length}${deflated ? ' /Filter /FlateDecode' : ''} >>\nstream\n`), content, Buffer.from('\nendstream')]))
  })
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')]
  const offsets: number[] = []
  let length = parts[0]?.length ?? 0
  objects.forEach((body, i) => {
    offsets.push(length)
    const object = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), body, Buffer.from('\nendobj\n')])
    parts.push(object)
    length += object.length
  })
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`))
  return Buffer.concat(parts)
}

const WORDS = 'the quick brown fox jumps over lazy dogs while seven wizards quietly box river stone harbor'.split(' ')

/** About `bytes` of seeded English-like text: lines of twelve words. */
export function wordsText(bytes: number, seed = 7): string {
  const random = prng(seed)
  const lines: string[] = []
  let length = 0
  while (length < bytes) {
    const line = `${Array.from({ length: 12 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ')}.\n`
    lines.push(line)
    length += line.length
  }
  return lines.join('')
}
