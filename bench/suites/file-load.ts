import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { inflatingPdf, wordsText } from '../../test/support/hostile-files.js'
import { multipartUpload } from '../../test/support/multipart-upload.js'
import { startServe, type ServeProcess } from '../../test/support/quarry-process.js'
import { median, percentile } from '../lib/stats.js'
import { printTable } from '../lib/table.js'
import type { SuiteContext } from '../run.js'

const LOCATION = 'projects/bench/locations/local'
const PDF_INFLATED = 100 * 1024 * 1024
/** Pause between one client's calls: a steady stream of small requests, not a flood. */
const PAUSE_MS = 10
/** Sampling the idle server first: the same calls with no file being read. */
const IDLE_MS = 3000

type Json = Record<string, unknown>

async function call(server: ServeProcess, method: string, path: string, body?: Json | Uint8Array, headers: Record<string, string> = {}): Promise<{ status: number; ms: number; json: Json }> {
  const started = performance.now()
  const init = body === undefined ? {} : body instanceof Uint8Array ? { body, headers } : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
  const answer = await fetch(`${server.base}${path}`, { method, ...init })
  const json = (await answer.json()) as Json
  return { status: answer.status, ms: performance.now() - started, json }
}

function upload(server: ServeProcess, corpus: string, name: string, content: Uint8Array): Promise<{ status: number; json: Json }> {
  const { body, contentType } = multipartUpload(name, content)
  return call(server, 'POST', `/upload/v1beta1/${corpus}/ragFiles:upload`, body, { 'content-type': contentType })
}

/** The small calls another client makes, one after another with a pause, until `until` settles: each one's latency. */
async function sample(server: ServeProcess, probeCorpus: string, until: Promise<unknown>): Promise<Record<string, number[]>> {
  let done = false
  void until.finally(() => (done = true))
  const times: Record<string, number[]> = { 'GET /v1beta/corpora': [], retrieveContexts: [] }
  const retrieve = { vertexRagStore: { ragResources: [{ ragCorpus: probeCorpus }] }, query: { text: 'kestrels over the dunes', ragRetrievalConfig: { topK: 3 } } }
  while (!done) {
    const listed = await call(server, 'GET', '/v1beta/corpora')
    if (listed.status !== 200) throw new Error(`GET /v1beta/corpora answered ${listed.status}`)
    times['GET /v1beta/corpora']?.push(listed.ms)
    await new Promise((r) => setTimeout(r, PAUSE_MS))
    const found = await call(server, 'POST', `/v1beta1/${LOCATION}:retrieveContexts`, retrieve)
    if (found.status !== 200) throw new Error(`retrieveContexts answered ${found.status}`)
    times['retrieveContexts']?.push(found.ms)
    await new Promise((r) => setTimeout(r, PAUSE_MS))
  }
  return times
}

/**
 * Issue 41, bounded work per file: while a spawned `quarry serve --data` (default GloVe embedder,
 * bounds and durability: every write in the write-ahead log before it is answered; the
 * workspace's bin) reads a PDF whose content stream inflates to 100 MB, a 25 MB text
 * upload, and a `file://` import of both (all at once), another client's small calls, `GET
 * /v1beta/corpora` and a top-3 retrieveContexts on a small corpus, one after another with a 10 ms
 * pause, keep their latency: p50, p99 and the slowest, against the same calls on the idle server
 * just before. Target: p99 under 100 ms. The inputs are generated (zlib; seeded words). `--quick`:
 * a 5 MB text.
 */
export async function runFileLoad(ctx: SuiteContext): Promise<void> {
  const textBytes = ctx.quick ? 5 * 1024 * 1024 : 25 * 1024 * 1024
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-files-'))
  const imports = join(dir, 'imports')
  mkdirSync(imports)
  const pdf = inflatingPdf(PDF_INFLATED)
  const text = Buffer.from(wordsText(textBytes))
  writeFileSync(join(imports, 'bomb.pdf'), pdf)
  writeFileSync(join(imports, 'big.txt'), text)
  const server = await startServe(['--import-root', imports, '--data', join(dir, 'data')])
  try {
    const corpus = async (name: string): Promise<string> => ((await call(server, 'POST', `/v1beta1/${LOCATION}/ragCorpora`, { displayName: name })).json.response as { name: string }).name
    const probe = await corpus('probe')
    const target = await corpus('load')
    // The first text loads the analyzer's language model (once per process): done before timing.
    await upload(server, probe, 'notes.md', Buffer.from('# Notes\nKestrels hover over the dunes at dawn.'))
    const idle = await sample(server, probe, new Promise((r) => setTimeout(r, IDLE_MS)))
    const loadBefore = loadavg()[0]
    const started = performance.now()
    const work = Promise.all([
      upload(server, target, 'bomb.pdf', pdf),
      upload(server, target, 'big.txt', text),
      call(server, 'POST', `/v1beta1/${target}/ragFiles:import`, { importRagFilesConfig: { gcsSource: { uris: [pathToFileURL(join(imports, 'bomb.pdf')).href, pathToFileURL(join(imports, 'big.txt')).href] } } }),
    ])
    const loaded = await sample(server, probe, work)
    const loadSeconds = (performance.now() - started) / 1000
    const [pdfUpload, textUpload, imported] = await work
    const outcome = {
      pdfUpload: (pdfUpload.json.error as { message?: string } | undefined)?.message ?? 'imported',
      textUpload: textUpload.json.error === undefined ? 'imported' : String((textUpload.json.error as { message?: string }).message),
      import: imported.json.response,
    }
    const rows = Object.keys(idle).flatMap((name) =>
      (['idle', 'files being read'] as const).map((phase) => {
        const xs = (phase === 'idle' ? idle : loaded)[name] ?? []
        return { call: name, phase, n: xs.length, 'p50 ms': median(xs), 'p99 ms': percentile(xs, 0.99), 'max ms': Math.max(...xs) }
      }),
    )
    printTable('other requests while files are read', rows)
    console.log(`load: ${loadSeconds.toFixed(1)} s; ${JSON.stringify(outcome)}`)
    const result = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: ctx.cpus,
      inputs: { pdfBytes: pdf.length, pdfInflatedBytes: PDF_INFLATED, textBytes: text.length },
      loadSeconds,
      // The machine is shared: its 1-minute load average before and after the files, for reading the figures.
      loadAverage: { before: loadBefore, after: loadavg()[0] },
      outcome,
      rows,
    }
    writeFileSync(join(ctx.resultsDir, 'file-load.json'), `${JSON.stringify(result, null, 2)}\n`)
  } finally {
    await server.kill()
    rmSync(dir, { recursive: true, force: true })
  }
}
