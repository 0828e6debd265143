import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inflatingPdf, wordsText } from '../support/hostile-files.js'
import { multipartUpload } from '../support/multipart-upload.js'
import { startServe, type ServeProcess } from '../support/quarry-process.js'

/**
 * Issue 41, bounded work per file, against the real `quarry serve`: a PDF whose content stream
 * inflates to 100 MB fails alone (the import's other file is imported) with the bound's message,
 * while a large text is read and a plain GET keeps answering; a text over --max-inflated-mb and a
 * file over --file-timeout-s are refused with the bound's message, and a small file after them is read.
 */
const LOCATION = 'projects/p/locations/l'
let dir: string
let I: string
let sized: ServeProcess
let timed: ServeProcess

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-file-bounds-'))
  I = join(dir, 'imports')
  mkdirSync(I)
  writeFileSync(join(I, 'bomb.pdf'), inflatingPdf(100 * 1024 * 1024))
  writeFileSync(join(I, 'notes.md'), '# Notes\nKestrels hover over the dunes at dawn.')
  ;[sized, timed] = await Promise.all([
    startServe(['--embedder', 'hashing', '--import-root', I, '--max-inflated-mb', '8']),
    startServe(['--embedder', 'hashing', '--import-root', I, '--file-timeout-s', '0.01']),
  ])
}, 120_000)

afterAll(async () => {
  await Promise.all([sized?.kill(), timed?.kill()])
  rmSync(dir, { recursive: true, force: true })
})

async function call(server: ServeProcess, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; ms: number; json: Record<string, unknown> }> {
  const started = performance.now()
  const init = body === undefined ? {} : body instanceof Uint8Array ? { body } : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
  const answer = await fetch(`${server.base}${path}`, { method, ...init, ...(Object.keys(headers).length > 0 ? { headers } : {}), signal: AbortSignal.timeout(120_000) })
  const json = (await answer.json()) as Record<string, unknown>
  return { status: answer.status, ms: performance.now() - started, json }
}

async function createCorpus(server: ServeProcess): Promise<string> {
  const created = await call(server, 'POST', `/v1beta1/${LOCATION}/ragCorpora`, { displayName: 'bounds' })
  expect(created.status).toBe(200)
  return (created.json.response as { name: string }).name
}

function upload(server: ServeProcess, corpus: string, name: string, content: string | Uint8Array): Promise<{ status: number; ms: number; json: Record<string, unknown> }> {
  const { body, contentType } = multipartUpload(name, content)
  return call(server, 'POST', `/upload/v1beta1/${corpus}/ragFiles:upload`, body, { 'content-type': contentType })
}

/** Plain GETs, one after another, until `during` settles: their times. */
async function getsDuring(server: ServeProcess, during: Promise<unknown>): Promise<number[]> {
  let done = false
  void during.finally(() => (done = true))
  const times: number[] = []
  while (!done) {
    const answer = await call(server, 'GET', '/v1beta/corpora')
    expect(answer.status).toBe(200)
    times.push(answer.ms)
    await new Promise((r) => setTimeout(r, 20))
  }
  return times
}

describe('quarry serve bounds the work of each file', () => {
  it('fails the inflating PDF of an import alone while a large text is uploaded, and keeps answering', async () => {
    const corpus = await createCorpus(sized)
    // The machine's own pace: the slowest of a few GETs on an idle server.
    const idle = Math.max(...(await getsDuring(sized, new Promise((r) => setTimeout(r, 300)))))
    const text = wordsText(6 * 1024 * 1024)
    const work = Promise.all([
      call(sized, 'POST', `/v1beta1/${corpus}/ragFiles:import`, { importRagFilesConfig: { gcsSource: { uris: [pathToFileURL(join(I, 'bomb.pdf')).href, pathToFileURL(join(I, 'notes.md')).href] } } }),
      upload(sized, corpus, 'big.txt', text),
    ])
    const times = await getsDuring(sized, work)
    const [imported, uploaded] = await work
    const bomb = `${pathToFileURL(join(I, 'bomb.pdf')).href}: its compressed streams inflate to more than 8388608 bytes; a file may expand to at most 8388608 bytes (the maxInflatedBytes option, quarry serve --max-inflated-mb). Not read.`
    expect(imported.json.response).toEqual({ '@type': 'type.googleapis.com/google.cloud.aiplatform.v1beta1.ImportRagFilesResponse', importedRagFilesCount: '1', failedRagFilesCount: '1' })
    expect((imported.json.metadata as { genericMetadata: { partialFailures: unknown } }).genericMetadata.partialFailures).toEqual([{ code: 3, message: bomb }])
    expect(uploaded.json).toMatchObject({ ragFile: { displayName: 'big.txt', sizeBytes: String(Buffer.byteLength(text)) } })
    const listed = await call(sized, 'GET', `/v1beta1/${corpus}/ragFiles`)
    expect((listed.json.ragFiles as { displayName: string }[]).map((f) => f.displayName).sort()).toEqual(['big.txt', 'notes.md'])
    // Before the bound, reading such a text held the server for seconds; now a GET waits at most a
    // second more than on the idle server.
    expect(times.length).toBeGreaterThan(0)
    console.log(`GET /v1beta/corpora while the files were read: ${times.length} answers, slowest ${Math.max(...times).toFixed(0)} ms (idle: ${idle.toFixed(0)} ms)`)
    expect(Math.max(...times)).toBeLessThan(idle + 1000)
  }, 120_000)

  it('refuses a text upload over --max-inflated-mb with the bound, and reads a small one after it', async () => {
    const corpus = await createCorpus(sized)
    const text = wordsText(9 * 1024 * 1024)
    const refused = await upload(sized, corpus, 'huge.txt', text)
    expect(refused.status).toBe(200)
    expect(refused.json).toEqual({ error: { code: 3, message: `huge.txt: its text runs to ${text.length} characters; a file may expand to at most 8388608 bytes (the maxInflatedBytes option, quarry serve --max-inflated-mb). Not read.` } })
    expect((await upload(sized, corpus, 'small.txt', 'Kestrels hover over the dunes.')).json).toMatchObject({ ragFile: { displayName: 'small.txt' } })
  }, 120_000)

  it('stops a file at --file-timeout-s, fails it alone with the bound, and reads the next file', async () => {
    const corpus = await createCorpus(timed)
    const refused = await upload(timed, corpus, 'slow.txt', wordsText(2 * 1024 * 1024))
    expect(refused.json).toEqual({ error: { code: 3, message: 'slow.txt: reading it took more than 0.01 s; a file gets at most 0.01 s (the fileTimeoutMs option, quarry serve --file-timeout-s). Not read.' } })
    const imported = await call(timed, 'POST', `/v1beta1/${corpus}/ragFiles:import`, { importRagFilesConfig: { gcsSource: { uris: [pathToFileURL(join(I, 'notes.md')).href] } } })
    expect(imported.json.response).toEqual({ '@type': 'type.googleapis.com/google.cloud.aiplatform.v1beta1.ImportRagFilesResponse', importedRagFilesCount: '1' })
  }, 120_000)
})
