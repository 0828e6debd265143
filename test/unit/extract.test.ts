import { describe, expect, it } from 'vitest'
import { extractText, htmlToText } from '../../packages/adapters/src/vertex-rag/extract.js'

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
    expect(await extractText('x.html', new TextEncoder().encode('<'.repeat(200_000)))).toEqual({ ok: false, message: 'x.html: the file has no text.' })
  })
})
