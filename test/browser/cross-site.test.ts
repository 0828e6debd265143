import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startServe, type ServeProcess } from '../support/quarry-process.js'
import { findChromium, launchChromium, skipNote, type Browser } from './chromium.js'

/**
 * Issue 41's frame attack in a real browser: a page of another site (and one of another port of
 * localhost: same-site) points frames at `hN.localhost:PORT/console/api/events` and a no-cors fetch
 * at the API. Chromium marks them with Fetch Metadata and the server refuses each;
 * a top-level navigation to the console's page still opens it.
 */
const CHROMIUM = findChromium()
const FRAMES = 20

let serve: ServeProcess
let browser: Browser
let attacker: Server
let attackerPort: number
/** The HTML the attacker's server answers, per test. */
let attackerPage = ''

beforeAll(async () => {
  if (!CHROMIUM) return
  serve = await startServe(['--embedder', 'hashing'])
  attacker = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(attackerPage)
  })
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve))
  attackerPort = (attacker.address() as AddressInfo).port
  browser = await launchChromium(CHROMIUM, { width: 800, height: 600 })
})

afterAll(async () => {
  await browser?.close()
  attacker?.close()
  await serve?.kill()
})

/** Loads `html` from the attacker's `origin` and collects the status of every response from the Quarry port. */
async function attack(origin: string, html: string): Promise<{ page: Page; statuses: Map<string, number[]> }> {
  attackerPage = html
  const page = await browser.context.newPage()
  const statuses = new Map<string, number[]>()
  page.on('response', (response) => {
    const url = new URL(response.url())
    if (url.port !== String(serve.port)) return
    const key = `${url.hostname}${url.pathname}${url.search}`
    statuses.set(key, [...(statuses.get(key) ?? []), response.status()])
  })
  await page.goto(`${origin}/`)
  // Every frame and the fetch answered (frames load in any order, some before a script could listen).
  await expect.poll(() => [...statuses.values()].reduce((n, list) => n + list.length, 0), { timeout: 20_000 }).toBe(FRAMES + 1)
  return { page, statuses }
}

function framesAndProbes(quarryHost: (i: number) => string): string {
  const frames = Array.from({ length: FRAMES }, (_, i) => `<iframe src="http://${quarryHost(i)}:${serve.port}/console/api/events"></iframe>`).join('')
  return `<!doctype html><body>${frames}
<script>
  fetch('http://localhost:${serve.port}/v1beta/corpora?from=fetch', { mode: 'no-cors' }).catch(() => undefined)
</script></body>`
}

describe.skipIf(!CHROMIUM)('a page of another site, in Chromium', () => {
  it(`gets 403 for ${FRAMES} event-stream frames on hN.localhost, and a no-cors fetch of the API; streams stay free`, async () => {
    const { page, statuses } = await attack(`http://127.0.0.1:${attackerPort}`, framesAndProbes((i) => `h${i}.localhost`))
    try {
      for (let i = 0; i < FRAMES; i++) expect(statuses.get(`h${i}.localhost/console/api/events`), `frame ${i}`).toEqual([403])
      expect(statuses.get('localhost/v1beta/corpora?from=fetch')).toEqual([403])
      // None of them holds a stream: one opened from Node is answered 200.
      const stream = await fetch(`${serve.base}/console/api/events`)
      expect(stream.status).toBe(200)
      await stream.body?.cancel()
    } finally {
      await page.close()
    }
  })

  it('gets 403 from another port of localhost (same-site) too', async () => {
    const { page, statuses } = await attack(`http://localhost:${attackerPort}`, framesAndProbes(() => 'localhost'))
    try {
      expect(statuses.get('localhost/console/api/events')).toEqual(Array(FRAMES).fill(403))
      expect(statuses.get('localhost/v1beta/corpora?from=fetch')).toEqual([403])
    } finally {
      await page.close()
    }
  })

  it("opens the console's page when the user follows a link to it", async () => {
    attackerPage = `<!doctype html><a id="go" href="http://localhost:${serve.port}/">the console</a>`
    const page = await browser.context.newPage()
    try {
      await page.goto(`http://127.0.0.1:${attackerPort}/`)
      const [response] = await Promise.all([page.waitForNavigation(), page.click('#go')])
      expect(response?.status()).toBe(200)
      expect(response?.url()).toBe(`http://localhost:${serve.port}/`)
      // Its own requests are same-origin: the live stream opens.
      await expect.poll(() => page.locator('#live').textContent(), { timeout: 10_000 }).toBe('Live')
    } finally {
      await page.close()
    }
  })
})

// Without a Chromium the run says so in its report: this one test, skipped with the reason.
if (CHROMIUM === undefined) {
  describe('a page of another site, in Chromium', () => {
    it('is skipped: no Chromium', (ctx) => ctx.skip(skipNote()))
  })
}
