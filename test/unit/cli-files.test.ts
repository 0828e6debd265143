import { execFile } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bestPassage, quarryCommand, renderSnippet, shortenPath } from '@quarry/adapters'
import { Analyzer, createIndex, DirectoryLock } from '@quarry/core'
import { runQuarry } from '../support/run-cli.js'
import { QUARRY_BIN } from '../support/quarry-process.js'

const q = quarryCommand()
const roots: string[] = []
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true })
})
beforeAll(() => {
  process.env.NO_COLOR = '1'
})

const INSTALL = '# Install\n\nTo pin an exact version when installing a package, use the --save-exact flag. Pinning keeps builds reproducible.\n'
const LOGGING = 'Logging is configured with the LOG_LEVEL environment variable. Set it to debug for verbose logs.\n'
// 300 words: chunks of 200 tokens with 40 shared are words 0-199 and 160-299; "zebra" is word 250.
const LONG = Array.from({ length: 300 }, (_, i) => (i === 250 ? 'zebra' : `w${i}`)).join(' ')

interface JsonHit {
  id: string
  source: string
  score: number
  text: string
  chunk: number
  start: number
  end: number
}

/**
 * A folder of its own for one test, holding the same docs: each test builds (or not) its own
 * index, so no test depends on what another wrote.
 */
async function workspace(options: { indexed: boolean } = { indexed: true }) {
  const root = mkdtempSync(join(tmpdir(), 'quarry-files-'))
  roots.push(root)
  const dir = join(root, '.quarry')
  const put = (path: string, text: string): void => {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  put('docs/guide/install.md', INSTALL)
  put('docs/logging.txt', LOGGING)
  put('docs/testing.html', '<html><body><h1>Testing</h1><p>Run tests in watch mode with vitest --watch.</p><script>var pin = 1</script></body></html>')
  put('docs/long.md', LONG)
  put('docs/.hidden/secret.md', 'pin pin pin')
  put('docs/node_modules/pkg/README.md', 'pin pin pin')
  put('docs/image.png', 'not text')
  const index = (...args: string[]) => runQuarry(['index', ...args, '--index', dir, '--embedder', 'hashing'])
  const search = (...args: string[]) => runQuarry(['search', ...args, '--index', dir])
  const hits = async (...args: string[]): Promise<JsonHit[]> => {
    const r = await search(...args, '--json')
    expect(r.err).toBe('')
    expect(r.code).toBe(0)
    return (JSON.parse(r.out) as { hits: JsonHit[] }).hits
  }
  if (options.indexed) expect((await index(join(root, 'docs'))).code).toBe(0)
  return { root, dir, put, index, search, hits }
}

/** The oracle for BM25 scores: a plain text index of the chunks the files should become. */
function bm25Oracle(chunks: Record<string, string>, text: string): { id: string; score: number }[] {
  const oracle = createIndex({})
  oracle.addMany(Object.entries(chunks).map(([id, t]) => ({ id, text: t })))
  return oracle.search({ text, topK: 10 }).hits.map((h) => ({ id: h.id, score: h.score }))
}

describe('quarry index and quarry search on your own files', () => {
  it('indexes folders recursively (hidden folders, node_modules and other types skipped) and finds the matching passages', async () => {
    const { root, dir, index, hits } = await workspace({ indexed: false })
    const first = await index(join(root, 'docs'))
    expect(first.err).toBe('')
    expect(first.code).toBe(0)
    expect(first.out).toBe(`${dir}: 4 new, 0 changed, 0 unchanged, 0 removed, 0 failed; 4 files, 5 chunks (embedder hashing-256)\nSearch it: ${q} search "your question" --index ${dir}`)
    expect(readdirSync(dir).sort()).toEqual(['CURRENT', 'snapshot-000001'])

    // BM25 only: exactly the oracle's scores, on chunks that are the files' text (HTML as its visible text).
    const chunks = {
      'docs/guide/install.md#0': INSTALL.slice(2, -2),
      'docs/logging.txt#0': LOGGING.slice(0, -2),
      'docs/testing.html#0': 'Testing\nRun tests in watch mode with vitest --watch',
      'docs/long.md#0': LONG.slice(0, LONG.indexOf(' w200')),
      'docs/long.md#1': LONG.slice(LONG.indexOf('w160')),
    }
    const pin = await hits('pin a version', '--alpha', '0')
    expect(pin.map((h) => ({ id: `${h.source}#${h.chunk}`, score: h.score }))).toEqual(bm25Oracle(chunks, 'pin a version'))
    expect(pin.map((h) => [h.source, h.chunk, h.start, h.end, h.text])).toEqual([['docs/guide/install.md', 0, 2, INSTALL.length - 2, chunks['docs/guide/install.md#0']]])
    const zebra = await hits('zebra', '--alpha', '0')
    expect(zebra.map((h) => [h.source, h.chunk, h.text === chunks['docs/long.md#1'], h.start])).toEqual([['docs/long.md', 1, true, LONG.indexOf('w160')]])

    // Hybrid (the default): the file with the words first, every file's chunks behind it.
    const hybrid = await hits('pin exact version')
    expect(hybrid[0]).toMatchObject({ source: 'docs/guide/install.md', score: 1 })
    expect(hybrid.map((h) => h.source).sort()).toEqual(['docs/guide/install.md', 'docs/logging.txt', 'docs/long.md', 'docs/long.md', 'docs/testing.html'])
    expect(hybrid.map((h) => h.score)).toEqual([...hybrid.map((h) => h.score)].sort((a, b) => b - a))
  })

  it('prints a table: rank, score, file, the passage that matched (plain text when not on a terminal)', async () => {
    const { dir, search, hits } = await workspace()
    const table = await search('pinning exact versions', '--alpha', '0', '--top', '3')
    expect(table.code).toBe(0)
    const score = (await hits('pinning exact versions', '--alpha', '0'))[0]?.score.toFixed(4)
    expect(table.out).toBe(
      [
        'rank  score (higher is better)  file                   passage',
        `----  ${'-'.repeat(24)}  ---------------------  ${'-'.repeat(100)}`,
        `1     ${score?.padEnd(24)}  docs/guide/install.md  Install To pin an exact version when installing a package, use the --save-exact flag. Pinning keeps…`,
      ].join('\n'),
    )
    // In a long chunk the passage is the one holding the match, whole words, cut on both sides.
    const zebra = await search('zebra', '--alpha', '0')
    expect(zebra.out.split('\n')[2]).toBe(`1     ${(await hits('zebra', '--alpha', '0'))[0]?.score.toFixed(4).padEnd(24)}  docs/long.md  …w240 w241 w242 w243 w244 w245 w246 w247 w248 w249 zebra w251 w252 w253 w254 w255 w256 w257 w258 w259…`)
    expect(await search('zzzzqqq', '--alpha', '0')).toEqual({ code: 0, out: `No passage in ${dir} matches "zzzzqqq".`, err: '' })
  })

  it('filters by file: AIP-160 over source, ext, chunk and page, with * wildcards', async () => {
    const { search, hits } = await workspace()
    const sources = async (filter: string): Promise<string[]> => (await hits('pin version logging tests w1 zebra', '--filter', filter, '--top', '20')).map((h) => `${h.source}#${h.chunk}`).sort()
    expect(await sources('ext = "md"')).toEqual(['docs/guide/install.md#0', 'docs/long.md#0', 'docs/long.md#1'])
    expect(await sources('source = "docs/g*"')).toEqual(['docs/guide/install.md#0'])
    expect(await sources('source = "*.txt" OR ext = html')).toEqual(['docs/logging.txt#0', 'docs/testing.html#0'])
    expect(await sources('ext = "md" AND NOT chunk = 0')).toEqual(['docs/long.md#1'])
    expect(await sources('source != "docs/*"')).toEqual([])
    // A filter that does not parse or names an unknown field is a usage error: 2, the usage after it.
    const unknown = await search('x', '--filter', 'size > 3')
    expect(unknown.code).toBe(2)
    expect(unknown.err).toMatch(/^quarry search: --filter: unknown field "size"; filters read source, ext, chunk, page\n\nusage: .*search "<text>"/)
    const bad = await search('x', '--filter', 'source = ')
    expect(bad.code).toBe(2)
    expect(bad.err.split('\n')[0]).toBe('quarry search: --filter: invalid filter at position 10 ("source = "): the filter ends where a value is expected.')
  })

  it('says which form paths take when a source filter matches no indexed file', async () => {
    const { root, dir, search, hits } = await workspace()
    const example = (await hits('pin', '--alpha', '0'))[0]?.source as string
    expect(example).toBe('docs/guide/install.md')
    const hint = (values: string): string => `No indexed file's source matches ${values}. Sources are paths relative to ${root} (the folder holding the index), with / separators, e.g. source = "${example}" or source = "docs/*".`
    for (const form of ['./docs/*', `${root}/docs/*`, 'install.md']) {
      const r = await search('pin', '--alpha', '0', '--filter', `source = "${form}"`)
      expect(r).toEqual({ code: 0, out: `No passage in ${dir} matches "pin" with that filter.\n${hint(`"${form}"`)}`, err: '' })
    }
    // --json keeps stdout JSON: the hint goes to stderr.
    const json = await search('pin', '--alpha', '0', '--filter', 'source = "./docs/*"', '--json')
    expect(json).toEqual({ code: 0, out: JSON.stringify({ hits: [] }, null, 2), err: hint('"./docs/*"') })
    // A source filter that matches files, but no passage: no hint.
    expect(await search('zzzzqqq', '--alpha', '0', '--filter', 'source = "docs/*"')).toEqual({ code: 0, out: `No passage in ${dir} matches "zzzzqqq" with that filter.`, err: '' })
  })

  it('re-reads only changed files and drops files that are gone', async () => {
    const { root, dir, put, index, hits } = await workspace()
    const before = await hits('pin', '--alpha', '0')
    put('docs/logging.txt', 'Logs are written as JSON lines to stdout. Pin the format with LOG_FORMAT.\n')
    const changed = await index(join(root, 'docs'))
    expect(changed.out.split('\n')[0]).toBe(`${dir}: 0 new, 1 changed, 3 unchanged, 0 removed, 0 failed; 4 files, 5 chunks (embedder hashing-256)`)
    const after = await hits('pin', '--alpha', '0')
    expect(after.map((h) => h.source)).toEqual(['docs/logging.txt', 'docs/guide/install.md'].sort((a, b) => (after.find((h) => h.source === a)?.score ?? 0) < (after.find((h) => h.source === b)?.score ?? 0) ? 1 : -1))
    expect(after.find((h) => h.source === 'docs/guide/install.md')?.id).toBe(before[0]?.id)
    expect(after.find((h) => h.source === 'docs/logging.txt')?.text).toBe('Logs are written as JSON lines to stdout. Pin the format with LOG_FORMAT')

    unlinkSync(join(root, 'docs/logging.txt'))
    const dropped = await index(join(root, 'docs'))
    expect(dropped.out.split('\n')[0]).toBe(`${dir}: 0 new, 0 changed, 3 unchanged, 1 removed, 0 failed; 3 files, 4 chunks (embedder hashing-256)`)
    expect((await hits('pin', '--alpha', '0')).map((h) => h.source)).toEqual(['docs/guide/install.md'])

    // Indexing another folder adds to the index: files elsewhere stay while they exist, and go when they are gone.
    unlinkSync(join(root, 'docs/testing.html'))
    put('notes/todo.txt', 'Remember to pin the toolchain.')
    const other = await index(join(root, 'notes'))
    expect(other.out.split('\n')[0]).toBe(`${dir}: 1 new, 0 changed, 0 unchanged, 1 removed, 0 failed; 3 files, 4 chunks (embedder hashing-256)`)
    expect((await hits('pin', '--alpha', '0')).map((h) => h.source).sort()).toEqual(['docs/guide/install.md', 'notes/todo.txt'])
    const still = await index(join(root, 'docs'), join(root, 'notes'))
    expect(still.out.split('\n')[0]).toBe(`${dir}: 0 new, 0 changed, 3 unchanged, 0 removed, 0 failed; 3 files, 4 chunks (embedder hashing-256)`)
    // Nothing changed, nothing written: generations 1 to 4 were the four runs that changed something.
    expect(readdirSync(dir).sort()).toEqual(['CURRENT', 'snapshot-000004'])
  })

  it('a file with no words is said, dropped from the index, and no failure: the run exits 0', async () => {
    const { root, dir, put, index } = await workspace({ indexed: false })
    put('blank/empty.md', '')
    put('blank/spaces.txt', '  \n\t\n')
    expect(await index(join(root, 'blank'))).toEqual({ code: 1, out: '', err: 'quarry index: skipped blank/empty.md: the file has no text.\nquarry index: skipped blank/spaces.txt: the file has no text.\nquarry index: no file has words to index; nothing was indexed' })
    put('blank/notes.md', 'pin the toolchain')
    const first = await index(join(root, 'blank'))
    expect([first.code, first.err, first.out.split('\n')[0]]).toEqual([0, 'quarry index: skipped blank/empty.md: the file has no text.\nquarry index: skipped blank/spaces.txt: the file has no text.', `${dir}: 1 new, 0 changed, 0 unchanged, 0 removed, 0 failed, 2 without words; 1 file, 1 chunk (embedder hashing-256)`])
    // Emptied: its chunks go, and the run still exits 0.
    put('blank/notes.md', '')
    const emptied = await index(join(root, 'blank'))
    expect([emptied.code, emptied.err.split('\n')[1], emptied.out.split('\n')[0]]).toEqual([0, 'quarry index: skipped blank/notes.md: the file has no text. (its earlier chunks are dropped)', `${dir}: 0 new, 0 changed, 0 unchanged, 1 removed, 0 failed, 3 without words; 0 files, 0 chunks (embedder hashing-256)`])
  })

  it('reads PDFs (the chunk records the page it starts on) and names the ones it cannot read', async () => {
    const { root } = await workspace({ indexed: false })
    const pdfs = join(root, 'pdfs')
    mkdirSync(pdfs)
    for (const name of ['dune-pages.pdf', 'broken.pdf']) writeFileSync(join(pdfs, name), readFileSync(join(import.meta.dirname, '../contract/fixtures/gcs/library', name)))
    const pdfIndex = join(root, 'pdf-index')
    const r = await runQuarry(['index', pdfs, '--index', pdfIndex, '--embedder', 'hashing'])
    expect(r.err).toBe('quarry index: skipped pdfs/broken.pdf: not a readable PDF (InvalidPDFException).')
    expect(r.out.split('\n')[0]).toBe(`${pdfIndex}: 1 new, 0 changed, 0 unchanged, 0 removed, 1 failed; 1 file, 1 chunk (embedder hashing-256)`)
    // What could be read is saved; a file that could not be makes the run exit 1 (docs/cli.md).
    expect(r.code).toBe(1)
    const found = await runQuarry(['search', 'sandworms', '--index', pdfIndex, '--filter', 'page = 1 AND ext = "pdf"', '--json'])
    expect(JSON.parse(found.out)).toEqual({
      hits: [{ id: expect.any(String), source: 'pdfs/dune-pages.pdf', score: 1, text: 'The spice must flow.\nArrakis is a desert planet.\n\nSandworms guard the spice', chunk: 0, start: 0, end: 75, page: 1 }],
    })
  })

  it('reports unreadable files, refuses to write into a folder that is not an index, and names missing paths', async () => {
    const { root, put, index } = await workspace({ indexed: false })
    put('bad/broken.json', '{ not json')
    put('bad/empty.md', '   \n')
    const bad = await runQuarry(['index', join(root, 'bad'), '--index', join(root, 'bad-index'), '--embedder', 'hashing'])
    expect(bad).toEqual({
      code: 1,
      out: '',
      err: ['quarry index: skipped bad/broken.json: invalid JSON (it does not parse).', 'quarry index: skipped bad/empty.md: the file has no text.', 'quarry index: no file could be read; nothing was indexed'].join('\n'),
    })
    const notIndex = await runQuarry(['index', join(root, 'docs'), '--index', join(root, 'docs'), '--embedder', 'hashing'])
    expect(notIndex).toEqual({ code: 1, out: '', err: `quarry index: ${join(root, 'docs')} exists and is not a Quarry index; pass --index with a new or empty folder` })
    const missing = await index(join(root, 'nowhere'))
    expect(missing).toEqual({ code: 1, out: '', err: `quarry index: ${join(root, 'nowhere')}: no such file or folder` })
    const usage = await runQuarry(['index'])
    expect(usage.code).toBe(2)
    expect(usage.err).toMatch(/^quarry index: give the files or folders to index, e\.g\. .*quarry index docs\n\nusage: .* index <path>\.\.\. \[--index DIR\]/)
  })

  it('prints text and file names from indexed files with their control characters escaped, never sent to the terminal', async () => {
    const { root, dir, put, index, search } = await workspace({ indexed: false })
    put('esc/e\u001b[31mred.txt', 'walrus \u001b[2J\u001b]0;pwned\u0007 tusks')
    expect((await index(join(root, 'esc'))).code).toBe(0)
    const found = await search('walrus')
    expect(found.code).toBe(0)
    expect(found.out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(found.out).toContain('walrus \\u001b[2J\\u001b]0;pwned\\u0007 tusks')
    expect(found.out).toContain('esc/e\\u001b[31mred.txt')
    expect(dir).toBeTruthy()
  })

  it('two runs into one index: a run that exits 0 has every file of its own in the index (no save lost under another)', async () => {
    const { root, dir } = await workspace({ indexed: false })
    for (const side of ['a', 'b']) {
      mkdirSync(join(root, side))
      for (let i = 0; i < 150; i++) writeFileSync(join(root, side, `${side}${i}.txt`), `${side} file ${i} holds words about ${side === 'a' ? 'apples' : 'bananas'} number ${i}`)
    }
    // Two processes, as two terminals run them (runQuarry's in-process capture is one console).
    const runProcess = (side: string): Promise<{ code: number; out: string; err: string }> =>
      new Promise((resolveRun) => {
        execFile(process.execPath, [QUARRY_BIN, 'index', join(root, side), '--index', dir, '--embedder', 'hashing'], (error, out, err) => {
          resolveRun({ code: error ? ((error as { code?: number }).code ?? 1) : 0, out, err: err.split('\n').filter((l) => l.startsWith('quarry index:')).join('\n') })
        })
      })
    const runs = await Promise.all(['a', 'b'].map(runProcess))
    const listed = await runQuarry(['search', 'file', '--index', dir, '--top', '1000', '--json', '--alpha', '0'])
    const sources = new Set((JSON.parse(listed.out) as { hits: JsonHit[] }).hits.map((h) => h.source.split('/')[0]))
    runs.forEach((run, i) => {
      const side = i === 0 ? 'a' : 'b'
      // A run holds the folder's lock from start to save: the other is refused at once (LOCKED), else all its files are there.
      if (run.code === 0) expect(sources.has(side), `${side}: ${run.out}`).toBe(true)
      else expect(run.err, JSON.stringify(run)).toMatch(/^quarry index: .* is in use by process \d+ on .*: a folder has one writer at a time/)
    })
    expect(runs.some((r) => r.code === 0)).toBe(true)
  })

  it('holds the index folder\'s lock for the whole run: refused at once while another writer holds it; a first run that saves nothing leaves no folder; a stopped run\'s LOCK is taken over', async () => {
    const { root, dir, index, hits } = await workspace({ indexed: false })
    const lock = DirectoryLock.acquire(dir)
    const refused = await index(join(root, 'docs'))
    expect(refused.code).toBe(1)
    expect(refused.err).toMatch(/^quarry index: .* is in use by this process \(pid \d+\), which is saving into it already or keeps it open/)
    expect(readdirSync(dir)).toEqual(['LOCK'])
    lock.release()
    rmSync(dir, { recursive: true })
    // Nothing to index: refused, and the folder it made for the lock is gone again.
    mkdirSync(join(root, 'empty'))
    expect(await index(join(root, 'empty'))).toMatchObject({ code: 1, err: expect.stringMatching(/^quarry index: found no files to index in /) as string })
    expect(existsSync(dir)).toBe(false)
    // A first run stopped before its save (Ctrl-C) leaves its LOCK: the next run takes it over.
    mkdirSync(dir)
    writeFileSync(join(dir, 'LOCK'), JSON.stringify({ pid: 2 ** 22 + 1, host: hostname(), token: 'stopped' }))
    expect((await index(join(root, 'docs'))).code).toBe(0)
    expect(readdirSync(dir).sort()).toEqual(['CURRENT', 'snapshot-000001'])
    expect((await hits('pin', '--alpha', '0')).length).toBeGreaterThan(0)
  })

  it('says in one line, with a non-zero exit, when the index is missing or damaged', async () => {
    const { root, put } = await workspace({ indexed: false })
    put('notes/todo.txt', 'Remember to pin the toolchain.')
    const none = join(root, 'none')
    expect(await runQuarry(['search', 'pin', '--index', none])).toEqual({ code: 1, out: '', err: `quarry search: no index in ${none}: run \`${q} index <path>... --index ${none}\` first` })
    const copy = join(root, 'damaged')
    await runQuarry(['index', join(root, 'notes'), '--index', copy, '--embedder', 'hashing'])
    const snapshot = join(copy, readFileSync(join(copy, 'CURRENT'), 'utf8').trim())
    truncateSync(join(snapshot, 'texts.bin'), 10)
    const damaged = await runQuarry(['search', 'pin', '--index', copy])
    expect(damaged.code).toBe(1)
    expect(damaged.out).toBe('')
    expect(damaged.err).toBe(`quarry search: the index in ${copy} is damaged (snapshot-000001/texts.bin has 10 bytes, the manifest says ${damaged.err.match(/says (\d+)/)?.[1]} (truncated?)); delete the folder and build it again`)
    writeFileSync(join(snapshot, 'manifest.json'), 'garbage')
    expect((await runQuarry(['search', 'pin', '--index', copy])).err).toBe(`quarry search: the index in ${copy} is damaged (snapshot-000001/manifest.json is missing or not JSON); delete the folder and build it again`)
    expect((await runQuarry(['index', join(root, 'notes'), '--index', copy])).err).toBe(`quarry index: the index in ${copy} is damaged (snapshot-000001/manifest.json is missing or not JSON); delete the folder and build it again`)
  })
})

describe('snippets and paths', () => {
  const analyzer = new Analyzer()
  const passage = (text: string, query: string, width: number): string =>
    renderSnippet(bestPassage(text, analyzer.tokens(text), new Set(analyzer.terms(query)), width), (w) => `[${w}]`)

  it('picks the window with the most distinct query terms, whole words, widened around them', () => {
    const text = 'Alpha beta gamma.\n\nThe quick brown fox jumps over the lazy dog; foxes are quick.  Delta epsilon zeta eta theta.'
    expect(passage(text, 'quick fox', 40)).toBe('…gamma. The [quick] brown [fox] jumps over…')
    // Stems match inflections ("foxes" finds "fox"); of equal windows, the earliest.
    expect(passage(text, 'foxes dog', 30)).toBe('…[fox] jumps over the lazy [dog]…')
    expect(passage(text, 'foxes quick dog', 36)).toBe('…lazy [dog]; [foxes] are [quick]. Delta…')
    expect(passage(text, 'nothing here', 20)).toBe('Alpha beta gamma…')
    expect(passage(text, 'alpha', 1000)).toBe('[Alpha] beta gamma. The quick brown fox jumps over the lazy dog; foxes are quick. Delta epsilon zeta eta theta')
    // CJK text is read as overlapping pairs: each character is printed once, marked when a matched pair covers it.
    expect(passage('東京タワーは日本の首都にあります。', '首都 東京タワー', 100)).toBe('[東京タワー]は日本の[首都]にあります')
    expect(passage('', 'x', 10)).toBe('')
  })

  it('shortens long paths from the start, keeping whole trailing segments', () => {
    expect(shortenPath('docs/a.md', 40)).toBe('docs/a.md')
    expect(shortenPath('node_modules/@scope/some-package/docs/guide/install.md', 30)).toBe('…/docs/guide/install.md')
    expect(shortenPath('a/an-extremely-long-file-name-without-any-break.md', 20)).toBe('…ithout-any-break.md')
  })

  it('names the command that works where the user is', () => {
    expect(quarryCommand({}, '/usr/local/bin/quarry')).toBe('quarry')
    expect(quarryCommand({ npm_package_name: 'quarry', npm_lifecycle_event: 'quarry' }, '/repo/packages/adapters/bin/quarry.mjs')).toBe('npx -y pnpm@12.4.2 quarry')
    expect(quarryCommand({ npm_package_name: 'quarry', npm_lifecycle_event: 'demo' }, '/x')).toBe('npx -y pnpm@12.4.2 quarry')
    expect(quarryCommand({ npm_package_name: 'my-app', npm_lifecycle_event: 'quarry' }, '/app/node_modules/.bin/quarry')).toBe('quarry')
    expect(quarryCommand({}, '/repo/packages/adapters/src/cli/main.ts')).toBe('npx -y pnpm@12.4.2 quarry')
  })
})
