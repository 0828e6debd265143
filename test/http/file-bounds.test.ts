import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inflatingPdf, wordsText } from '../support/hostile-files.js'
import { multipartUpload } from '../support/multipart-upload.js'
import { startServe, type ServeProcess } from '../support/quarry-process.js'
import { createGloveEmbedder } from '@quarry/core'
import { createServer } from '@quarry/adapters'
import { longestHold, type Holds } from '../support/event-loop.js'
import { full } from '../support/tier.js'

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

/**
 * A client in another process sends `requests` ([path, content type, body file]) to `url` at once;
 * resolves with each response's status and JSON.
 */
async function fromAnotherProcess(url: string, requests: readonly (readonly [string, string, string])[]): Promise<{ status: number; json: Record<string, unknown> }[]> {
  const script = `Promise.all(${JSON.stringify(requests)}.map(([path, type, file]) => fetch(${JSON.stringify(url)} + path, { method: 'POST', headers: { 'content-type': type }, body: require('node:fs').readFileSync(file) }).then(async (r) => ({ status: r.status, json: await r.json() })))).then((r) => process.stdout.write(JSON.stringify(r)))`
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (c: Buffer) => (out += c.toString()))
  await new Promise((resolve) => child.once('exit', resolve))
  return JSON.parse(out) as { status: number; json: Record<string, unknown> }[]
}

describe('a server with a data folder while big files are read', () => {
  // The server runs in this process (its event loop measured in CPU time); the client in another.
  full.it('holds its event loop at most 50 ms at a time through a 25 MB upload and a file:// import of it and the inflating PDF, their log records included', async () => {
    const root = mkdtempSync(join(tmpdir(), 'quarry-held-'))
    try {
      const imports = join(root, 'imports')
      mkdirSync(imports)
      const text = Buffer.from(wordsText(25 * 1024 * 1024))
      writeFileSync(join(imports, 'big.txt'), text)
      writeFileSync(join(imports, 'bomb.pdf'), inflatingPdf(100 * 1024 * 1024))
      const upload = multipartUpload('big.txt', text)
      writeFileSync(join(root, 'upload'), upload.body)
      const server = createServer({ embedder: createGloveEmbedder(), dataDir: join(root, 'data'), importRoots: [imports], vertexRag: { maxFileBytes: 64 * 1024 * 1024 } })
      const { url } = await server.listen()
      try {
        // A collection or a cold function can stretch any one stretch: the bound holds if one of three runs shows it.
        let best: Holds = { hold: Infinity, collecting: 0, idle: 0 }
        for (let attempt = 0; attempt < 3 && best.hold - best.idle > 50; attempt++) {
          const op = (await (await fetch(`${url}/v1beta1/${LOCATION}/ragCorpora`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ displayName: `held ${attempt}` }) })).json()) as { response: { name: string } }
          const corpus = op.response.name
          writeFileSync(join(root, 'import'), JSON.stringify({ importRagFilesConfig: { gcsSource: { uris: ['big.txt', 'bomb.pdf'].map((f) => pathToFileURL(join(imports, f)).href) } } }))
          // The first text a process analyzes loads the language model (once, some 0.4 s): not a file's work.
          if (attempt === 0) await fromAnotherProcess(url, [[`/upload/v1beta1/${corpus}/ragFiles:upload`, multipartUpload('warm.txt', 'warm up').contentType, join(root, 'upload')]])
          let answers: { status: number; json: Record<string, unknown> }[] = []
          const measured = await longestHold(async () => {
            answers = await fromAnotherProcess(url, [
              [`/upload/v1beta1/${corpus}/ragFiles:upload`, upload.contentType, join(root, 'upload')],
              [`/v1beta1/${corpus}/ragFiles:import`, 'application/json', join(root, 'import')],
            ])
          })
          console.log(`run ${attempt + 1}: longest hold of the server's event loop ${measured.hold.toFixed(1)} ms of CPU (idle loop ${measured.idle.toFixed(1)} ms; collections ${measured.collecting.toFixed(1)} ms)`)
          expect(answers.map((a) => a.status)).toEqual([200, 200])
          expect(answers[0]?.json).toMatchObject({ ragFile: { displayName: 'big.txt', sizeBytes: String(text.length) } })
          expect(answers[1]?.json).toMatchObject({ response: { importedRagFilesCount: '1', failedRagFilesCount: '1' } })
          if (measured.hold - measured.idle < best.hold - best.idle) best = measured
        }
        expect(best.hold - best.idle).toBeLessThanOrEqual(50)
      } finally {
        await server.close()
      }
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 600_000)
})
