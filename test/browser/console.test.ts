import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { ConsoleMessage, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServe, type ServeProcess } from '../support/quarry-process.js'
import { findChromium, launchChromium, skipNote, type Browser } from './chromium.js'
import { runNodeSnippet } from './node-snippet.js'

// The console in a real browser: `quarry serve` (hashing embedder) in its own process, Debian's
// Chromium through playwright-core, data seeded over the REST API, and every figure the page shows
// compared with what the API answers.

const ARTIFACTS = fileURLToPath(new URL('./artifacts/', import.meta.url))
const executable = findChromium()
if (!executable) console.warn(skipNote())

const LOCATION = 'projects/p1/locations/us-central1'
const ENGINE = `${LOCATION}/reasoningEngines/1`

let serve: ServeProcess
let browser: Browser
let page: Page
let ragCorpus = ''
/** Browser console errors and uncaught page errors, with the URL each came from. */
const problems: { text: string; url: string }[] = []
/** Requests the tests make fail on purpose: Chromium logs their status as a console error. */
const expectedFailures = new Set<string>()

async function rest(method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${serve.base}${path}`, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const json = await response.json()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

async function upload(corpus: string, name: string, text: string): Promise<void> {
  const form = new FormData()
  form.append('metadata', new Blob([JSON.stringify({ ragFile: { displayName: name } })], { type: 'application/json' }))
  form.append('file', new Blob([text], { type: 'text/markdown' }), name)
  const response = await fetch(`${serve.base}/upload/v1beta1/${corpus}/ragFiles:upload`, { method: 'POST', body: form })
  expect(response.status).toBe(200)
}

async function seed(): Promise<void> {
  await rest('POST', '/v1beta/corpora', { name: 'corpora/books', displayName: 'Books' })
  await rest('POST', '/v1beta/corpora/books/documents', { name: 'corpora/books/documents/dune', displayName: 'Dune', customMetadata: [{ key: 'author', stringValue: 'Herbert' }] })
  await rest('POST', '/v1beta/corpora/books/documents/dune/chunks:batchCreate', {
    requests: [
      { chunk: { name: 'corpora/books/documents/dune/chunks/spice', data: { stringValue: 'The spice must flow across the desert planet.' }, customMetadata: [{ key: 'page', numericValue: 1 }] } },
      { chunk: { name: 'corpora/books/documents/dune/chunks/fear', data: { stringValue: 'Fear is the mind-killer. I will face my fear.' } } },
      { chunk: { name: 'corpora/books/documents/dune/chunks/sand', data: { stringValue: 'Sand worms rise from the desert when the spice harvest begins.' } } },
    ],
  })
  await rest('POST', '/v1beta/corpora/books/documents', { name: 'corpora/books/documents/many', displayName: 'Many lines' })
  const lines = Array.from({ length: 25 }, (_, i) => ({ chunk: { data: { stringValue: `Line ${i + 1} of a long scroll.` } } }))
  await rest('POST', '/v1beta/corpora/books/documents/many/chunks:batchCreate', { requests: lines })
  const op = await rest('POST', `/v1beta1/${LOCATION}/ragCorpora`, { displayName: 'Manuals' })
  ragCorpus = op.response.name
  await upload(ragCorpus, 'kettle.md', '# Kettle\nTo reset the kettle, hold its button for five seconds. The kettle boils water quickly.')
  await upload(ragCorpus, 'lamp.md', '# Lamp\nThe lamp dims when you turn its ring. Replace the lamp bulb every year.')
  for (const [fact, user] of [['I like green tea.', 'u1'], ['I drink my tea without sugar.', 'u1'], ['I drink black coffee.', 'u2']] as const) {
    await rest('POST', `/v1beta1/${ENGINE}/memories`, { fact, scope: { user_id: user } })
  }
  await rest('POST', `/v1beta1/${ENGINE}/sessions?sessionId=chat-1`, { userId: 'u1', displayName: 'Trip planning' })
  for (const [i, [author, text]] of [['user', 'I prefer window seats.'], ['planner', 'Noted!']].entries()) {
    await rest('POST', `/v1beta1/${ENGINE}/sessions/chat-1:appendEvent`, { author, invocationId: 'inv-1', timestamp: `2026-03-01T10:00:0${i}Z`, content: { role: author, parts: [{ text }] } })
  }
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true })
}

/** Cell texts of a table, by its caption (within `root`, the page by default). */
async function column(caption: string, index: number, root: Locator = page.locator('main')): Promise<string[]> {
  const table = root.locator('table', { has: page.locator('caption', { hasText: caption }) })
  await table.waitFor()
  return table.locator(`tbody tr td:nth-child(${index + 1})`).allInnerTexts()
}

/** Whether each visible character of `text` (where a text node under `root` holds it) stands right of the one before: it reads left to right. */
async function ascending(root: Locator, text: string): Promise<boolean> {
  const lefts = await root.evaluate((element, wanted) => {
    const web = globalThis as any // the page's DOM: this function runs in the browser
    const walker = web.document.createTreeWalker(element, 4)
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.textContent.indexOf(wanted)
      if (at < 0) continue
      const out: number[] = []
      for (let i = at; i < at + wanted.length; i++) {
        if (/\s/.test(node.textContent[i])) continue
        const range = web.document.createRange()
        range.setStart(node, i)
        range.setEnd(node, i + 1)
        out.push(range.getBoundingClientRect().left)
      }
      return out
    }
    return []
  }, text)
  return lefts.length > 1 && lefts.every((left, i) => i === 0 || left > lefts[i - 1]!)
}

/** Form controls with no accessible name from a label (evaluated in the page). */
const UNLABELLED_CONTROLS = `[...document.querySelectorAll('input, select, textarea, button')]
  .filter((el) => !el.classList.contains('offscreen'))
  .filter((el) => !(el.labels && el.labels.length > 0) && !el.getAttribute('aria-label') && !(el.tagName === 'BUTTON' && el.textContent.trim() !== ''))
  .map((el) => el.outerHTML.slice(0, 120))`

/** Visible text whose colour against its background is under 4.5:1 (WCAG 2 relative luminance). */
const LOW_CONTRAST = `(() => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number)
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4 }).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0)
  const background = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || c[3] > 0) return c } return [255, 255, 255] }
  const bad = []
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '')
    if (!own || el.getClientRects().length === 0) continue
    const fg = lum(rgb(getComputedStyle(el).color)), bg = lum(background(el))
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05)
    if (ratio < 4.5) bad.push(el.tagName + ' ' + ratio.toFixed(2) + ' ' + el.textContent.trim().slice(0, 40))
  }
  return bad
})()`

describe.skipIf(!executable)('the console in headless Chromium', () => {
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true })
    serve = await startServe(['--embedder', 'hashing'])
    await seed()
    // The seeded engine is one that memories brought into being, with no ReasoningEngine resource:
    // its page's GET of the resource is answered 404 (and the page says so).
    expectedFailures.add(`${serve.base}/v1beta1/${ENGINE}`)
    browser = await launchChromium(executable ?? '', { width: 1280, height: 800 })
    page = await browser.context.newPage()
    page.on('console', (message: ConsoleMessage) => {
      if (message.type() === 'error') problems.push({ text: message.text(), url: message.location().url })
    })
    page.on('pageerror', (error) => problems.push({ text: String(error), url: page.url() }))
    // Offline: the console loads nothing from anywhere but its own server.
    page.on('request', (request) => {
      if (!request.url().startsWith(`${serve.base}/`)) problems.push({ text: `request to another origin: ${request.url()}`, url: request.url() })
    })
  })

  afterAll(async () => {
    await browser?.close()
    await serve?.kill()
  })

  it('start page: the corpora and reasoning engines of all three APIs, with their counts', async () => {
    const overview = await rest('GET', '/console/api/overview')
    await page.goto(`${serve.base}/`)
    expect(await column('Semantic Retriever corpora', 0)).toEqual(overview.semanticRetriever.corpora.map((c: any) => c.name))
    expect(await column('Semantic Retriever corpora', 3)).toEqual(overview.semanticRetriever.corpora.map((c: any) => String(c.chunks)))
    const location = overview.locations.find((l: any) => l.project === 'p1')
    expect(await column('RAG corpora', 0)).toEqual([ragCorpus])
    expect(await column('RAG corpora', 2)).toEqual(location.ragCorpora.map((c: any) => String(c.files)))
    expect(await column('Memory Bank reasoning engines', 0)).toEqual([ENGINE])
    // What was seeded: 1 corpus of 2 documents and 3 + 25 chunks; 2 files; 3 memories in 2 scopes, 1 session.
    expect(await column('Semantic Retriever corpora', 0)).toEqual(['corpora/books'])
    expect(await column('Semantic Retriever corpora', 2)).toEqual(['2'])
    expect(await column('Semantic Retriever corpora', 3)).toEqual(['28'])
    expect(await column('RAG corpora', 2)).toEqual(['2'])
    expect(await column('Memory Bank reasoning engines', 2)).toEqual(['3'])
    expect(await column('Memory Bank reasoning engines', 3)).toEqual(['2'])
    expect(await column('Memory Bank reasoning engines', 4)).toEqual(['1'])
    await shot('overview-1280')
  })

  it('browses a Semantic Retriever corpus → document → chunks', async () => {
    await page.getByRole('link', { name: 'corpora/books', exact: true }).click()
    await page.getByRole('link', { name: 'corpora/books/documents/dune' }).click()
    const chunks = await rest('GET', '/v1beta/corpora/books/documents/dune/chunks')
    expect(await column('Chunks', 1)).toEqual(chunks.chunks.map((c: any) => c.data.stringValue))
    expect(await column('Chunks', 0)).toEqual(chunks.chunks.map((c: any) => c.name.split('/').pop()))
    await shot('chunks-1280')
  })

  it('pages through a list with "Next page", as the API pages it', async () => {
    await page.goto(`${serve.base}/#/corpora/books/documents/many`)
    const first = await rest('GET', '/v1beta/corpora/books/documents/many/chunks?pageSize=20')
    const second = await rest('GET', `/v1beta/corpora/books/documents/many/chunks?pageSize=20&pageToken=${encodeURIComponent(first.nextPageToken)}`)
    expect(await column('Chunks', 1)).toEqual(first.chunks.map((c: any) => c.data.stringValue))
    await page.getByRole('button', { name: 'Next page' }).click()
    await expect.poll(() => column('Chunks', 1)).toEqual(second.chunks.map((c: any) => c.data.stringValue))
    expect(second.chunks).toHaveLength(5)
    expect(await page.getByRole('button', { name: 'Next page' }).count()).toBe(0)
  })

  it('answers a query typed into "Query" with the REST call\'s ranks, ids and scores', async () => {
    await page.goto(`${serve.base}/#/corpora/books`)
    await page.getByLabel('Query', { exact: true }).fill('spice desert')
    await page.getByLabel('resultsCount').fill('3')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.locator('.hit').first().waitFor()
    const expected = await rest('POST', '/v1beta/corpora/books:query', { query: 'spice desert', resultsCount: 3 })
    const ids = await page.locator('.hit .hit-id').allInnerTexts()
    const scores = await page.locator('.hit .score-value').evaluateAll((els) => els.map((e) => Number(e.getAttribute('value'))))
    const ranks = await page.locator('.hit').evaluateAll((els) => els.map((e) => e.getAttribute('data-rank')))
    expect(ids).toEqual(expected.relevantChunks.map((r: any) => r.chunk.name))
    expect(scores).toEqual(expected.relevantChunks.map((r: any) => r.chunkRelevanceScore ?? 0))
    expect(ranks).toEqual(expected.relevantChunks.map((_: unknown, i: number) => String(i + 1)))
    // Each score says which way it goes: chunkRelevanceScore, higher is better.
    expect(await page.locator('.hit .score').allInnerTexts()).toEqual(expected.relevantChunks.map((r: any) => expect.stringMatching(new RegExp(`^score ${String(Number((r.chunkRelevanceScore ?? 0).toPrecision(6))).replace('.', '\\.')} \\(higher is better\\)$`))))
    expect(await page.locator('.hit mark').first().innerText()).toMatch(/^(spice|desert)$/i)
    const curl = await page.locator('figure.code pre').first().innerText()
    expect(curl).toContain(`curl -X POST ${serve.base}/v1beta/corpora/books:query`)
    expect(curl).toContain(`-d '${JSON.stringify({ query: 'spice desert', resultsCount: 3 })}'`)
    await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: serve.base })
    await page.getByRole('button', { name: 'Copy curl' }).click()
    await expect.poll(() => page.locator('figure.code .copied').first().innerText()).toBe('Copied.')
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(curl)
    // The curl command, run by a shell as shown, answers what the REST call answers.
    const shell = await new Promise<string>((resolve, reject) => execFile('sh', ['-c', curl.replace(/^curl /, 'curl -sS ')], { timeout: 30_000 }, (error, stdout) => (error ? reject(error) : resolve(stdout))))
    expect(JSON.parse(shell)).toEqual(expected)
    // The Node client code runs as shown and gets the same chunks, best first.
    const node = await runNodeSnippet(await page.locator('figure.code pre').nth(1).innerText())
    expect(node.stderr.replace(/^.*ExperimentalWarning.*$|^\(Use `node --trace-warnings.*$/gm, '').trim()).toBe('')
    expect(node.exitCode).toBe(0)
    const named = [...node.stdout.matchAll(/name: '(corpora\/books\/documents\/[^/']+\/chunks\/[^']+)'/g)].map((m) => m[1])
    expect(named).toEqual(ids)
    await shot('query-1280')
  })

  it('explains a RAG hybrid result: the BM25 terms shown are the explain endpoint\'s', async () => {
    await page.goto(`${serve.base}/#/${ragCorpus}`)
    await page.getByLabel('Query', { exact: true }).fill('reset the kettle')
    await page.getByLabel('alpha').fill('0.5')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.locator('.hit').first().waitFor()
    const request = { vertexRagStore: { ragResources: [{ ragCorpus }] }, query: { text: 'reset the kettle', ragRetrievalConfig: { hybridSearch: { alpha: 0.5 } } } }
    const explained = await rest('POST', '/console/api/explain', { method: 'vertexRag.retrieveContexts', version: 'v1beta1', parent: LOCATION, request })
    const direct = await rest('POST', `/v1beta1/${LOCATION}:retrieveContexts`, request)
    expect(explained.response).toEqual(direct)
    const scores = await page.locator('.hit .score-value').evaluateAll((els) => els.map((e) => Number(e.getAttribute('value'))))
    expect(scores).toEqual(direct.contexts.contexts.map((c: any) => c.score))
    // The corpus's COSINE_DISTANCE: every score says lower is better, as the explain answer does.
    expect(explained.better).toBe('lower')
    expect(await page.locator('.hit .direction').allInnerTexts()).toEqual(direct.contexts.contexts.map(() => ' (lower is better)'))
    expect(await page.locator('.hit .hit-id').allInnerTexts()).toEqual(explained.explanations.map((e: any) => e.id))
    const hit = page.locator('.hit').first()
    await hit.getByText('Explain result #1').click()
    const first = explained.explanations[0]
    expect(first.sparse.terms.length).toBeGreaterThan(0)
    expect(await column('BM25 terms', 0, hit)).toEqual(first.sparse.terms.map((t: any) => t.term))
    expect((await column('BM25 terms', 1, hit)).map(Number)).toEqual(first.sparse.terms.map((t: any) => t.tf))
    expect((await column('BM25 terms', 2, hit)).map(Number)).toEqual(first.sparse.terms.map((t: any) => t.df))
    await expect.poll(() => page.locator('.explain').first().innerText()).toContain(`alpha ${first.fused.alpha}`)
    await shot('explain-1280')
  })

  it('shows the start of long results with "Show more" / "Show less": 5 long RAG results make a short page', async () => {
    const long = await rest('POST', `/v1beta1/${LOCATION}/ragCorpora`, { displayName: 'Long chunks' })
    const corpus = long.response.name
    // Five files of one chunk each, ~1,400 characters: as long as the trial's chunks.
    for (let i = 0; i < 5; i++) {
      const sentences = Array.from({ length: 20 }, (_, j) => `Sentence ${j} of manual ${i} says the boiler pressure must stay between one and two bar.`)
      await upload(corpus, `manual-${i}.md`, sentences.join(' '))
    }
    await page.goto(`${serve.base}/#/${corpus}`)
    await page.getByLabel('Query', { exact: true }).fill('boiler pressure')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.locator('.hit').first().waitFor()
    const direct = await rest('POST', `/v1beta1/${LOCATION}:retrieveContexts`, { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'boiler pressure' } })
    expect(direct.contexts.contexts).toHaveLength(5)
    expect(direct.contexts.contexts.every((c: any) => c.text.length > 1000)).toBe(true)
    const hits = page.locator('.hit')
    expect(await hits.count()).toBe(5)
    const textHeights = await page.locator('.hit .text').evaluateAll((els) => els.map((e) => e.getBoundingClientRect().height))
    const lineHeight = await page.locator('.hit .text').first().evaluate((e) => parseFloat((globalThis as any).getComputedStyle(e).lineHeight))
    // Four lines each, whatever the text's length.
    for (const height of textHeights) expect(height).toBeLessThanOrEqual(4 * lineHeight + 1)
    const results = await page.locator('.hits').evaluate((e) => e.getBoundingClientRect().height)
    expect(results).toBeLessThan(1500)
    // The full text is there (the API's), shown on demand; keyboard: a button, Enter toggles it.
    expect(await page.locator('.hit .text').allTextContents()).toEqual(direct.contexts.contexts.map((c: any) => c.text))
    const more = hits.first().getByRole('button', { name: 'Show more' })
    expect(await more.getAttribute('aria-expanded')).toBe('false')
    await more.click()
    const less = hits.first().getByRole('button', { name: 'Show less' })
    expect(await less.getAttribute('aria-expanded')).toBe('true')
    const open = await page.locator('.hit .text').first().evaluate((e) => e.getBoundingClientRect().height)
    expect(open).toBeGreaterThan(2 * textHeights[0]!)
    expect(await page.locator('.hit .text').nth(1).evaluate((e) => e.getBoundingClientRect().height)).toBe(textHeights[1])
    await less.focus()
    await page.keyboard.press('Enter')
    expect(await hits.first().getByRole('button', { name: 'Show more' }).getAttribute('aria-expanded')).toBe('false')
    expect(await page.locator('.hit .text').first().evaluate((e) => e.getBoundingClientRect().height)).toBe(textHeights[0])
    // A short result has no button.
    await page.goto(`${serve.base}/#/${ragCorpus}`)
    await page.getByLabel('Query', { exact: true }).fill('reset the kettle')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.locator('.hit').first().waitFor()
    expect(await page.locator('.hit button.more').count()).toBe(0)
    await shot('long-results-1280')
  })

  it('uploads a file through the file input and lists it', async () => {
    await page.goto(`${serve.base}/#/${ragCorpus}`)
    await page.getByLabel(/Upload files/).setInputFiles({ name: 'toaster.md', mimeType: 'text/markdown', buffer: Buffer.from('# Toaster\nThe toaster browns bread on both sides.') })
    await page.locator('td', { hasText: 'toaster.md' }).waitFor()
    // Drag and drop: a drop event carrying a file, as the browser dispatches it.
    await page.locator('.drop').evaluate((zone) => {
      const web = globalThis as any // the page's DOM: this function runs in the browser
      const data = new web.DataTransfer()
      data.items.add(new web.File(['# Dropped\nA file dropped on the corpus page.'], 'dropped.md', { type: 'text/markdown' }))
      zone.dispatchEvent(new web.DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }))
    })
    await page.locator('td', { hasText: 'dropped.md' }).waitFor()
    const files = await rest('GET', `/v1beta1/${ragCorpus}/ragFiles`)
    expect(files.ragFiles.map((f: any) => f.displayName)).toContain('dropped.md')
    expect(await column('Files', 0)).toEqual(files.ragFiles.map((f: any) => f.displayName))
    expect(files.ragFiles.map((f: any) => f.displayName)).toContain('toaster.md')
    // A two-page PDF: its chunk's page span shows in the playground's results, as the API gives it.
    await page.getByLabel(/Upload files/).setInputFiles(fileURLToPath(new URL('../contract/fixtures/gcs/library/dune-pages.pdf', import.meta.url)))
    await page.locator('td', { hasText: 'dune-pages.pdf' }).waitFor()
    await page.getByLabel('Query', { exact: true }).fill('sandworms guard the spice')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.locator('.hit').first().waitFor()
    const spans = await rest('POST', `/v1beta1/${LOCATION}:retrieveContexts`, { vertexRagStore: { ragResources: [{ ragCorpus }] }, query: { text: 'sandworms guard the spice' } })
    const pdf = spans.contexts.contexts.find((c: any) => c.sourceDisplayName === 'dune-pages.pdf')
    expect(pdf.chunk.pageSpan).toBeDefined()
    expect(await page.locator('.hit .source').allInnerTexts()).toContain(`Source: dune-pages.pdf (pages ${pdf.chunk.pageSpan.firstPage}–${pdf.chunk.pageSpan.lastPage})`)
    // The PDF's own page: its chunks (the console's list; the API has none) with the page spans and text retrieval gave.
    const pdfFile = (await rest('GET', `/v1beta1/${ragCorpus}/ragFiles`)).ragFiles.find((f: any) => f.displayName === 'dune-pages.pdf')
    await page.goto(`${serve.base}/#/${ragCorpus}`)
    await page.locator('td', { hasText: 'dune-pages.pdf' }).waitFor()
    const counts = await rest('GET', `/console/api/rag-chunk-counts?parent=${encodeURIComponent(ragCorpus)}`)
    const names = (await rest('GET', `/v1beta1/${ragCorpus}/ragFiles`)).ragFiles.map((f: any) => f.name)
    expect(await column('Files', 3)).toEqual(names.map((n: string) => String(counts.files.find((c: any) => c.name === n).chunks)))
    await page.getByRole('link', { name: 'dune-pages.pdf' }).click()
    const chunkIds = await column('Chunks', 0)
    const row = chunkIds.indexOf(pdf.chunk.chunkId)
    expect(row).toBeGreaterThanOrEqual(0)
    expect((await column('Chunks', 1))[row]).toBe(pdf.chunk.pageSpan.firstPage === pdf.chunk.pageSpan.lastPage ? `page ${pdf.chunk.pageSpan.firstPage}` : `pages ${pdf.chunk.pageSpan.firstPage}–${pdf.chunk.pageSpan.lastPage}`)
    expect((await column('Chunks', 2))[row]).toBe(pdf.text)
    expect(pdfFile.name).toBe(`${ragCorpus}/ragFiles/${pdf.chunk.fileId}`)
    await page.goto(`${serve.base}/#/${ragCorpus}`)
    const toaster = files.ragFiles.find((f: any) => f.displayName === 'toaster.md')
    await page.getByRole('link', { name: 'toaster.md' }).click()
    await expect.poll(() => page.locator('dl.facts').innerText()).toContain(toaster.name)
    expect(await page.locator('dl.facts').innerText()).toContain(`size (bytes)\n${toaster.sizeBytes}`)
  })

  it('Memory Bank: scopes, memories and a session\'s events', async () => {
    await page.goto(`${serve.base}/#/${ENGINE}`)
    const scopes = await rest('GET', `/console/api/scopes?parent=${ENGINE}`)
    expect(await column('Scopes', 0)).toEqual(scopes.scopes.map((s: any) => JSON.stringify(s.scope)))
    expect(await column('Scopes', 1)).toEqual(scopes.scopes.map((s: any) => String(s.memories)))
    const memories = await rest('GET', `/v1beta1/${ENGINE}/memories?pageSize=20`)
    expect(await column('Memories', 1)).toEqual(memories.memories.map((m: any) => m.fact))
    await page.getByLabel('Filter memories', { exact: true }).fill('scope.user_id = "u2"')
    await page.getByRole('button', { name: 'Apply filter' }).first().click()
    await expect.poll(() => column('Memories', 1)).toEqual(['I drink black coffee.'])
    // retrieveMemories: dense only, no explain; the page shows the answer's distances.
    await page.getByLabel('scope (JSON)').fill('{"user_id":"u1"}')
    await page.getByLabel('Query', { exact: true }).fill('green tea')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.locator('.hit').first().waitFor()
    const retrieved = await rest('POST', `/v1beta1/${ENGINE}/memories:retrieve`, { scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'green tea' } })
    expect(await page.locator('.hit .hit-id').allInnerTexts()).toEqual(retrieved.retrievedMemories.map((r: any) => r.memory.name))
    const distances = await page.locator('.hit .score-value').evaluateAll((els) => els.map((e) => Number(e.getAttribute('value'))))
    expect(distances).toEqual(retrieved.retrievedMemories.map((r: any) => r.distance ?? 0))
    expect(await page.locator('.hit .score').allInnerTexts()).toEqual(retrieved.retrievedMemories.map((r: any) => `distance ${Number((r.distance ?? 0).toPrecision(6))} (lower is better)`))
    expect(await page.locator('.hit .text').first().innerText()).toBe(retrieved.retrievedMemories[0].memory.fact)
    await shot('memory-bank-1280')
    const coffee = memories.memories.find((m: any) => m.fact === 'I drink black coffee.')
    const revisions = await rest('GET', `/v1beta1/${coffee.name}/revisions`)
    await page.getByRole('link', { name: coffee.name.split('/').pop() }).click()
    expect(await column('Revisions', 1)).toEqual(revisions.memoryRevisions.map((r: any) => r.fact))
    await page.goBack()
    await page.getByRole('link', { name: 'chat-1' }).click()
    expect(await column('Events', 2)).toEqual(['I prefer window seats.', 'Noted!'])
  })

  it('shows the API\'s own error message inline for a bad filter', async () => {
    await page.goto(`${serve.base}/#/${ENGINE}`)
    const bad = 'fact = ('
    const path = `/v1beta1/${ENGINE}/memories?${new URLSearchParams({ pageSize: '20', filter: bad })}` // as the page sends it
    expectedFailures.add(`${serve.base}${path}`)
    const response = await fetch(`${serve.base}${path}`)
    expect(response.status).toBe(400)
    const { error } = (await response.json()) as { error: { message: string } }
    await page.getByLabel('Filter memories', { exact: true }).fill(bad)
    await page.getByRole('button', { name: 'Apply filter' }).first().click()
    await expect.poll(() => page.getByRole('alert').first().innerText()).toContain(error.message)
  })

  it('creates and deletes a corpus through the same API calls, the start page updating live', async () => {
    await page.goto(`${serve.base}/`)
    await column('Semantic Retriever corpora', 0)
    await page.getByLabel(/Corpus id/).fill('made-in-console')
    await page.getByLabel('Display name').first().fill('Made in the console')
    await page.getByRole('button', { name: 'Create corpus' }).click()
    await expect.poll(() => column('Semantic Retriever corpora', 0), { timeout: 10_000 }).toContain('corpora/made-in-console')
    expect((await rest('GET', '/v1beta/corpora/made-in-console')).displayName).toBe('Made in the console')
    await page.goto(`${serve.base}/#/corpora/made-in-console`)
    await page.getByRole('button', { name: 'Delete…' }).click()
    await page.getByRole('button', { name: 'Confirm: delete corpora/made-in-console' }).click()
    await expect.poll(() => column('Semantic Retriever corpora', 0)).not.toContain('corpora/made-in-console')
    expect((await fetch(`${serve.base}/v1beta/corpora/made-in-console`)).status).toBe(404)
    // A RAG corpus: a long-running operation, polled to its end.
    await page.getByLabel('Display name').nth(1).fill('Made in the console too')
    await page.getByRole('button', { name: 'Create RAG corpus' }).click()
    const created = page.getByText(/^Created projects\/p1\/locations\/us-central1\/ragCorpora\//)
    await created.waitFor()
    const name = (await created.innerText()).replace(/^Created (.*)\.$/, '$1')
    expect((await rest('GET', `/v1beta1/${name}`)).displayName).toBe('Made in the console too')
  })

  it('labels every control, runs a query from the keyboard, keeps text contrast at 4.5:1 or more', async () => {
    await page.goto(`${serve.base}/#/${ragCorpus}`)
    await page.getByLabel('Query', { exact: true }).waitFor()
    const unlabelled = await page.evaluate<string[]>(UNLABELLED_CONTROLS)
    expect(unlabelled).toEqual([])
    await page.getByLabel('Query', { exact: true }).focus()
    await page.keyboard.type('lamp ring')
    await page.keyboard.press('Enter')
    await page.locator('.hit').first().waitFor()
    await page.locator('.hit summary').first().focus()
    await page.keyboard.press('Enter')
    await expect.poll(() => page.locator('.hit details').first().getAttribute('open')).toBe('')
    expect(await page.evaluate<string[]>(LOW_CONTRAST)).toEqual([])
    await page.goto(`${serve.base}/`)
    await column('Semantic Retriever corpora', 0)
    expect(await page.evaluate<string[]>(LOW_CONTRAST)).toEqual([])
  })

  it('works in a narrow window (420×800)', async () => {
    await page.setViewportSize({ width: 420, height: 800 })
    await page.goto(`${serve.base}/`)
    await column('Semantic Retriever corpora', 0)
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
    expect(overflow).toBeLessThanOrEqual(0)
    await shot('overview-420')
    await page.goto(`${serve.base}/#/corpora/books`)
    await page.getByLabel('Query', { exact: true }).fill('spice')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.locator('.hit').first().waitFor()
    await shot('query-420')
  })

  it('isolates user text: a display name holding U+202E reverses neither the name beside it nor the page span', async () => {
    await rest('POST', '/v1beta/corpora', { name: 'corpora/bidi', displayName: 'Atlas \u202Eof maps' })
    await page.goto(`${serve.base}/#/corpora/bidi`)
    await page.locator('h1 small').waitFor()
    // Each character of the name further right than the one before: read left to right.
    expect(await ascending(page.locator('h1'), 'corpora/bidi')).toBe(true)
    const op = await rest('POST', `/v1beta1/${LOCATION}/ragCorpora`, { displayName: 'Bidi' })
    const corpus = op.response.name
    const form = new FormData()
    form.append('metadata', new Blob([JSON.stringify({ ragFile: { displayName: 'dune\u202E-pages.pdf' } })], { type: 'application/json' }))
    form.append('file', new Blob([readFileSync(fileURLToPath(new URL('../contract/fixtures/gcs/library/dune-pages.pdf', import.meta.url)))], { type: 'application/pdf' }), 'dune.pdf')
    expect((await fetch(`${serve.base}/upload/v1beta1/${corpus}/ragFiles:upload`, { method: 'POST', body: form })).status).toBe(200)
    await page.goto(`${serve.base}/#/${corpus}`)
    await page.getByLabel('Query', { exact: true }).fill('sandworms guard the spice')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.locator('.hit').first().waitFor()
    const direct = await rest('POST', `/v1beta1/${LOCATION}:retrieveContexts`, { vertexRagStore: { ragResources: [{ ragCorpus: corpus }] }, query: { text: 'sandworms guard the spice' } })
    const span = direct.contexts.contexts[0].chunk.pageSpan
    const pages = ` (pages ${span.firstPage}–${span.lastPage})`
    expect(await page.locator('.hit .source').first().textContent()).toBe(`Source: dune\u202E-pages.pdf${pages}`)
    expect(await ascending(page.locator('.hit .source').first(), pages)).toBe(true)
  })

  it('shows "Not found" for an address with a malformed percent escape, throwing nothing', async () => {
    await page.goto(`${serve.base}/#/corpora/books`)
    await page.locator('h1', { hasText: 'Books' }).waitFor()
    const before = problems.length
    await page.evaluate('location.hash = "#/corpora/%E0%A4"')
    await expect.poll(() => page.locator('main h1').innerText()).toBe('Not found')
    expect(await page.locator('main p').first().innerText()).toBe('No page for "corpora/%E0%A4". Back to the overview')
    expect(problems.slice(before)).toEqual([])
  })

  it('marks the RAG corpus form\'s Display name required: an empty one sends nothing', async () => {
    await page.goto(`${serve.base}/`)
    await column('RAG corpora', 0)
    const before = await rest('GET', `/v1beta1/${LOCATION}/ragCorpora`)
    const input = page.locator('form.create').nth(1).getByLabel('Display name')
    expect(await input.evaluate((e) => (e as unknown as { required: boolean }).required)).toBe(true)
    await input.fill('')
    let sent = 0
    const count = (request: { method(): string; url(): string }): void => void (request.method() === 'POST' && request.url().includes('/ragCorpora') && sent++)
    page.on('request', count)
    await page.getByRole('button', { name: 'Create RAG corpus' }).click()
    expect(await input.evaluate((e) => (e as unknown as { validity: { valueMissing: boolean } }).validity.valueMissing)).toBe(true)
    await expect.poll(() => page.evaluate('document.activeElement?.name')).toBe('displayName')
    page.off('request', count)
    expect(sent).toBe(0)
    expect(await rest('GET', `/v1beta1/${LOCATION}/ragCorpora`)).toEqual(before)
  })

  it('suggests a memories filter per scope that lists exactly that scope\'s memories, for any key and value', async () => {
    const engine = `${LOCATION}/reasoningEngines/2`
    expectedFailures.add(`${serve.base}/v1beta1/${engine}`) // no engine resource: the page's GET of it is a 404
    const quoted = { 'user-id': 'say "hi"' }
    const seeded = [
      ['Quote one.', quoted],
      ['Quote two.', quoted],
      ['Quote and app.', { 'user-id': 'say "hi"', app: 'x' }],
      ['Other user.', { 'user-id': 'other' }],
    ] as const
    for (const [fact, scope] of seeded) await rest('POST', `/v1beta1/${engine}/memories`, { fact, scope })
    await page.goto(`${serve.base}/#/${engine}`)
    // The whole-scope comparison, the scope (keys as the API gives them) as a JSON string in a filter string (quotes escaped twice).
    expect(await column('Scopes', 2)).toEqual([
      'scope = "{\\"user-id\\":\\"say \\\\\\"hi\\\\\\"\\"}"',
      'scope = "{\\"app\\":\\"x\\",\\"user-id\\":\\"say \\\\\\"hi\\\\\\"\\"}"',
      'scope = "{\\"user-id\\":\\"other\\"}"',
    ])
    const all = (await rest('GET', `/v1beta1/${engine}/memories?pageSize=100`)).memories
    expect(all).toHaveLength(4)
    const scopes = (await rest('GET', `/console/api/scopes?parent=${engine}`)).scopes
    for (const [i, filter] of (await column('Scopes', 2)).entries()) {
      const scope = scopes[i].scope
      const oracle = all.filter((m: any) => JSON.stringify(Object.entries(m.scope).sort()) === JSON.stringify(Object.entries(scope).sort()))
      const listed = await rest('GET', `/v1beta1/${engine}/memories?${new URLSearchParams({ pageSize: '100', filter })}`)
      expect(listed.memories.map((m: any) => m.name)).toEqual(oracle.map((m: any) => m.name))
      await page.getByLabel('Filter memories', { exact: true }).fill(filter)
      await page.getByRole('button', { name: 'Apply filter' }).first().click()
      await expect.poll(() => column('Memories', 1)).toEqual(oracle.map((m: any) => m.fact))
    }
    expect(all.filter((m: any) => m.scope.app === undefined && m.scope['user-id'] === 'say "hi"').map((m: any) => m.fact)).toEqual(['Quote two.', 'Quote one.'])
  })

  it('a reasoning engine\'s display name on the start page and its own; its page deletes it and its memories after a confirm', async () => {
    const created = await rest('POST', `/v1beta1/${LOCATION}/reasoningEngines`, { displayName: 'Trip planner', description: 'Plans trips.' })
    const name = created.response.name
    await rest('POST', `/v1beta1/${name}/memories`, { fact: 'Prefers trains.', scope: { user_id: 'u7' } })
    await rest('POST', `/v1beta1/${name}/sessions?sessionId=s1`, { userId: 'u7' })
    const resource = await rest('GET', `/v1beta1/${name}`)
    const overview = await rest('GET', '/console/api/overview')
    const engines = overview.locations.find((l: any) => l.project === 'p1').reasoningEngines
    expect(engines.find((e: any) => e.name === name).displayName).toBe('Trip planner')
    await page.goto(`${serve.base}/`)
    expect(await column('Memory Bank reasoning engines', 0)).toEqual(engines.map((e: any) => e.name))
    expect(await column('Memory Bank reasoning engines', 1)).toEqual(engines.map((e: any) => e.displayName ?? ''))
    await page.getByRole('link', { name, exact: true }).click()
    await expect.poll(() => page.locator('main h1').innerText()).toBe(`Trip planner ${name}`)
    expect(await page.locator('dl.facts').innerText()).toBe(`name\n${name}\ndisplay name\nTrip planner\ndescription\nPlans trips.\ncreated\n${resource.createTime}\nupdated\n${resource.updateTime}`)
    await page.getByRole('button', { name: 'Delete…' }).click()
    expect(await page.locator('.danger p').innerText()).toBe(`Delete ${name} and everything under it (its memories with their revisions, its sessions with their events)? This cannot be undone.`)
    await page.getByRole('button', { name: `Confirm: delete ${name}` }).click()
    await expect.poll(() => page.evaluate('location.hash')).toBe('#/')
    expect((await fetch(`${serve.base}/v1beta1/${name}`)).status).toBe(404)
    await expect.poll(() => column('Memory Bank reasoning engines', 0)).toEqual(engines.map((e: any) => e.name).filter((n: string) => n !== name))
    // An engine that memories brought into being has no resource: its page says so and offers no delete.
    await page.goto(`${serve.base}/#/${ENGINE}`)
    await expect.poll(() => page.locator('main .note').first().innerText()).toBe('No ReasoningEngine resource by this name (getReasoningEngine answers NOT_FOUND): its memories and sessions were written under the name without creating the engine, so there is nothing to delete but them.')
    expect(await page.getByRole('button', { name: 'Delete…' }).count()).toBe(0)
  })

  it('logged no browser console errors', () => {
    expect(problems.filter((p) => !expectedFailures.has(p.url))).toEqual([])
  })
})

// Without a Chromium the run says so in its report: this one test, skipped with the reason.
if (!executable) {
  describe('the console in headless Chromium', () => {
    it('is skipped: no Chromium', (ctx) => ctx.skip(skipNote()))
  })
}
