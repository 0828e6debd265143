import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { analyzeSource, fromWire, toWire, type SourceJob } from '../../packages/adapters/src/vertex-rag/analysis.js'
import { importWorker } from '../../packages/adapters/src/vertex-rag/import-worker.js'

/**
 * The import worker reads, hashes and chunks a file exactly as the calling thread does
 * (analysis.ts `analyzeSource`): the same bytes, sha256, text, chunks (texts, offsets, tokens) and
 * pages for every file type, the same refusals for files it must not read, and no analysis of
 * bytes the import would skip. The oracle is the same function run on this thread.
 */
const LIBRARY = fileURLToPath(new URL('../contract/fixtures/gcs/library', import.meta.url))
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

function jobOf(path: string, name: string, extra: Partial<SourceJob> = {}): SourceJob {
  return { file: { uri: `gs://library/${name}`, path }, maxBytes: 1 << 20, readAs: name, label: `gs://library/${name}`, chunking: { size: 12, overlap: 3 }, skipSha256: undefined, ...extra }
}

describe('the import worker', () => {
  it('answers every file type of the fixtures as the calling thread does (PDF pages and chunk offsets too)', async () => {
    const names = readdirSync(LIBRARY).filter((n) => statSync(join(LIBRARY, n)).isFile())
    expect(names).toEqual(expect.arrayContaining(['dune-pages.pdf', 'dune.txt', 'emma.md', 'facts.json', 'ocean.html', 'broken.pdf', 'binary.txt']))
    const answered = importWorker.answered
    for (const name of names) {
      const job = jobOf(join(LIBRARY, name), name)
      const here = await analyzeSource(job)
      const there = await importWorker.analyze(job)
      expect(there, name).toEqual(here)
      if (name === 'dune-pages.pdf') {
        expect(there.analysis).toMatchObject({ ok: true, type: 'RAG_FILE_TYPE_PDF' })
        expect(there.analysis?.ok && there.analysis.pageStarts?.length).toBe(2)
      }
      if (name === 'broken.pdf') expect(there.analysis).toEqual({ ok: false, message: 'gs://library/broken.pdf: not a readable PDF (InvalidPDFException).' })
    }
    expect(importWorker.answered - answered).toBe(names.length)
    expect(importWorker.running).toBe(true)
  })

  it('refuses what the calling thread refuses: a missing file, a FIFO, a file over the limit, a link out of the roots', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'quarry-worker-')))
    dirs.push(root)
    writeFileSync(join(root, 'big.txt'), 'word '.repeat(100))
    execFileSync('mkfifo', [join(root, 'pipe.txt')])
    const jobs = [
      jobOf(join(root, 'missing.txt'), 'missing.txt'),
      jobOf(join(root, 'pipe.txt'), 'pipe.txt'),
      jobOf(join(root, 'big.txt'), 'big.txt', { maxBytes: 10 }),
      { ...jobOf('/etc/hostname', 'hostname.txt'), file: { uri: 'file:///hostname.txt', path: '/etc/hostname', roots: [root] } },
    ]
    const statuses = []
    for (const job of jobs) {
      const there = await importWorker.analyze(job)
      expect(there).toEqual(await analyzeSource(job))
      expect(there.read.ok).toBe(false)
      statuses.push(there.read.ok ? 0 : there.read.status.code)
    }
    // NOT_FOUND, INVALID_ARGUMENT (not a regular file), INVALID_ARGUMENT (too large), PERMISSION_DENIED.
    expect(statuses).toEqual([5, 3, 3, 7])
  })

  it('reads and hashes but does not chunk bytes the import would skip (the sha256 of the file imported before)', async () => {
    const job = jobOf(join(LIBRARY, 'dune.txt'), 'dune.txt')
    const full = await importWorker.analyze(job)
    expect(full.analysis?.ok).toBe(true)
    const skipped = await importWorker.analyze({ ...job, skipSha256: full.sha256 })
    expect(skipped).toEqual({ read: full.read, sha256: full.sha256 })
  })

  it('carries chunks as offsets that slice back to the same texts', async () => {
    const root = mkdtempSync(join(tmpdir(), 'quarry-worker-'))
    dirs.push(root)
    const text = '  # Title\n\nÉté — naïve café; emoji 🌵 cactus, “quotes”, tabs\tand\nnew lines. '.repeat(40)
    writeFileSync(join(root, 'u.md'), text)
    const here = await analyzeSource(jobOf(join(root, 'u.md'), 'u.md'))
    const { wire } = toWire(await analyzeSource(jobOf(join(root, 'u.md'), 'u.md')))
    const back = fromWire(structuredClone(wire))
    expect(back).toEqual(here)
    expect(back.analysis?.ok && back.analysis.pieces.every((p) => p.text === text.slice(p.start, p.end))).toBe(true)
  })
})
