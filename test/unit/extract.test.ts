import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { extractText, htmlToText } from '../../packages/adapters/src/vertex-rag/extract.js'
import { pageAt } from '../../packages/adapters/src/vertex-rag/pdf.js'

/** The text RAG imports and uploads read from a file, whatever the file holds. */
describe('htmlToText', () => {
  it('keeps the visible text: tags as spaces, blocks as lines, entities decoded, scripts, styles and comments dropped', () => {
    expect(htmlToText('<h1>Title</h1><p>Hi <b>there</b><!-- hidden --> &amp; &#x263A; <script>alert(1)</script><style>p{}</style>bye</p>')).toBe('Title\nHi there & ☺ bye')
  })

  it('runs an unclosed comment, script or tag to the end of the file, as browsers do', () => {
    expect(htmlToText('before <!-- never closed <p>secret</p>')).toBe('before')
    expect(htmlToText('before <script>let x = "</p>"')).toBe('before')
    expect(htmlToText('text <unclosed tag')).toBe('text')
  })

  it('reads a megabyte of unclosed "<", "<!--" or "<script" (a 200 kB "<" took 43 s when each pattern looked for its end from every start)', () => {
    // Quadratic patterns would take minutes here (past the test timeout); linear ones milliseconds.
    for (const unit of ['<', '<!--', '<script', '<a href="']) expect(htmlToText(unit.repeat(Math.ceil(1_000_000 / unit.length)))).toBe('')
    expect(htmlToText(`${'<p>a'.repeat(100_000)}`)).toBe(Array.from({ length: 100_000 }, () => 'a').join(' '))
  })
})

describe('extractText', () => {
  it('an .html file of nothing but "<" has no text and fails alone', async () => {
    expect(await extractText('x.html', new TextEncoder().encode('<'.repeat(200_000)))).toEqual({ ok: false, message: 'x.html: the file has no text.', empty: true })
  })
})

/** PDFs made with qpdf from the contract fixture dune-pages.pdf (two pages, Helvetica, not embedded). */
describe('extractText on PDFs', () => {
  const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(name, import.meta.url)))
  const dune = fixture('../contract/fixtures/gcs/library/dune-pages.pdf')
  const DUNE = { ok: true, type: 'RAG_FILE_TYPE_PDF', text: 'The spice must flow.\nArrakis is a desert planet.\n\nSandworms guard the spice.', pageStarts: [0, 50] }

  it('reads the text of every page, pages joined by a blank line, with the offset each page starts at', async () => {
    const read = await extractText('dune.pdf', dune)
    expect(read).toEqual(DUNE)
    if (!read.ok) return
    expect([0, 49, 50, 75].map((offset) => pageAt(read.pageStarts ?? [], offset))).toEqual([1, 1, 2, 2])
    // The caller's bytes are not detached by the parser.
    expect(dune.byteLength).toBe(916)
  })

  it('reads an encrypted PDF that opens without a password (owner password only)', async () => {
    expect(await extractText('open.pdf', fixture('fixtures/pdf/encrypted-no-user-password.pdf'))).toEqual(DUNE)
  })

  it('names the reason it cannot read a PDF: password, damage, no text layer', async () => {
    expect(await extractText('locked.pdf', fixture('fixtures/pdf/encrypted.pdf'))).toEqual({ ok: false, message: 'locked.pdf: not a readable PDF (PasswordException).' })
    expect(await extractText('broken.pdf', fixture('../contract/fixtures/gcs/library/broken.pdf'))).toEqual({ ok: false, message: 'broken.pdf: not a readable PDF (InvalidPDFException).' })
    expect(await extractText('empty.pdf', new Uint8Array(0))).toEqual({ ok: false, message: 'empty.pdf: not a readable PDF (InvalidPDFException).' })
    expect(await extractText('scan.pdf', fixture('fixtures/pdf/no-text.pdf'))).toEqual({ ok: false, message: 'scan.pdf: the PDF has no text layer (scanned pages need OCR first).', empty: true })
  })
})
