import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { readCollection } from '@quarry/adapters'
import type { OptionDoc } from '../../packages/adapters/src/cli/args.js'
import { runMemoryBankDemo } from '../../packages/adapters/src/cli/demo-memory-bank.js'
import { runSemanticRetrieverDemo } from '../../packages/adapters/src/cli/demo-semantic-retriever.js'
import { runVertexRagDemo } from '../../packages/adapters/src/cli/demo-vertex-rag.js'
import { EVAL_OPTIONS, EXAMPLE_DIR } from '../../packages/adapters/src/cli/eval.js'
import { CREDENTIALS_OPTIONS } from '../../packages/adapters/src/cli/credentials.js'
import { INDEX_OPTIONS } from '../../packages/adapters/src/cli/index-files.js'
import { SERVE_OPTIONS } from '../../packages/adapters/src/cli/serve.js'
import { SEARCH_OPTIONS } from '../../packages/adapters/src/cli/search.js'
import { markerFor } from '../../packages/adapters/src/cli/snippet.js'
import { INDEXED_EXTENSIONS } from '../../packages/adapters/src/cli/walk.js'
import { runQuarry } from '../support/run-cli.js'

const BIN = join(import.meta.dirname, '../../packages/adapters/bin/quarry.mjs')
const VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, '../../packages/adapters/package.json'), 'utf8')) as { version: string }).version
const scratch = mkdtempSync(join(tmpdir(), 'quarry-usage-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

/** The `quarry` command as a child process: stdout and stderr are pipes (not a terminal). */
function spawnQuarry(args: readonly string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd, timeout: 60_000, env: { ...process.env, NO_COLOR: undefined } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, out: stdout, err: stderr })
    })
  })
}

/** The option names a help text lists in its option lines (`  --name ...` at the start of a line). */
function listedOptions(help: string): string[] {
  return [...help.matchAll(/^ {2}--([a-z-]+)/gm)].map((m) => m[1] as string)
}

describe('quarry --version', () => {
  it('prints the version of @quarry/adapters from its package.json, with -v too, and exits 0', async () => {
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+/)
    expect(await runQuarry(['--version'])).toEqual({ code: 0, out: VERSION, err: '' })
    expect(await runQuarry(['-v'])).toEqual({ code: 0, out: VERSION, err: '' })
    // The installed command (bin/quarry.mjs) in its own process.
    const child = await spawnQuarry(['--version'], scratch)
    expect(child).toEqual({ code: 0, out: `${VERSION}\n`, err: '' })
    expect((await runQuarry(['help'])).out).toMatch(/--version \(-v\) the version\.$/m)
  })
})

describe('each command\'s help lists every option its parser takes, and nothing else', () => {
  const commands: [string, readonly OptionDoc[]][] = [
    ['index', INDEX_OPTIONS],
    ['search', SEARCH_OPTIONS],
    ['eval', EVAL_OPTIONS],
    ['serve', SERVE_OPTIONS],
    ['credentials', CREDENTIALS_OPTIONS],
  ]
  for (const [command, options] of commands) {
    it(`quarry ${command} --help`, async () => {
      const help = await runQuarry([command, '--help'])
      expect(help.code).toBe(0)
      expect(listedOptions(help.out)).toEqual(options.map((o) => o.name))
      // The synopsis (the lines before the first blank one) names each of them too.
      const synopsis = help.out.split('\n\n')[0] as string
      for (const o of options) expect(synopsis, `--${o.name}`).toMatch(new RegExp(`--${o.name}(?![a-z-])`))
      // The parser takes each listed option (a value where it says so) ...
      for (const o of options) {
        const taken = await runQuarry([command, `--${o.name}`, ...(o.value === undefined ? [] : ['x']), '--help'])
        expect(taken, `--${o.name}`).toEqual({ code: 0, out: help.out, err: '' })
      }
      // ... and refuses one it does not list, as a usage error.
      const unknown = await runQuarry([command, '--frobnicate', 'x'])
      expect(unknown.code).toBe(2)
      expect(unknown.err.split('\n')[0]).toBe(`quarry ${command}: unknown option --frobnicate`)
    })
  }

  it('quarry index --help names --embedder', async () => {
    expect((await runQuarry(['index', '--help'])).out).toMatch(/^usage: .*index <path>\.\.\. \[--index DIR\] \[--embedder glove\|hashing\]$/m)
  })

  it('quarry help and quarry index --help list the same file types: the ones the walk picks up', async () => {
    const help = (await runQuarry(['help'])).out
    const index = (await runQuarry(['index', '--help'])).out
    const listed = (text: string): string[] => (/(\.[a-z]+(?: \.[a-z]+)+)/.exec(text.replace(/\n\s*/g, ' '))?.[1] ?? '').split(' ')
    expect(listed(help)).toEqual([...INDEXED_EXTENSIONS])
    expect(listed(index)).toEqual([...INDEXED_EXTENSIONS])
    expect(INDEXED_EXTENSIONS).toContain('.pdf')
    expect(INDEXED_EXTENSIONS).toContain('.markdown')
  })
})

describe('quarry help <command>', () => {
  it('prints what quarry <command> --help prints, for every command; an unknown one is a usage error', async () => {
    const list = await runQuarry(['help'])
    const names = [...list.out.matchAll(/^ {2}([a-z]+)[ [<"-]/gm)].map((m) => m[1] as string)
    expect(names).toEqual(['index', 'search', 'eval', 'demo', 'query', 'words', 'serve', 'credentials', 'help'])
    for (const name of names) {
      const viaHelp = await runQuarry(['help', name])
      expect(viaHelp.code, name).toBe(0)
      expect(viaHelp).toEqual(await runQuarry([name, '--help']))
      expect(viaHelp.out.split('\n')[0]).toMatch(name === 'help' ? /^usage: .*<command> \[options\]$/ : new RegExp(`^usage: \\S*(quarry|pnpm@[\\d.]+ quarry) ${name}`))
    }
    const unknown = await runQuarry(['help', 'frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.err.split('\n')[0]).toBe('quarry help: unknown command "frobnicate"')
  })
})

describe('usage errors exit 2', () => {
  it('commands without options refuse arguments (2) and print their line for --help (0)', async () => {
    for (const command of ['demo', 'words']) {
      const extra = await runQuarry([command, '--fast'])
      expect(extra.code).toBe(2)
      expect(extra.err.split('\n')[0]).toBe(`quarry ${command}: ${command} takes no arguments; received --fast`)
      const help = await runQuarry([command, '--help'])
      expect(help.code).toBe(0)
      expect(help.out.split('\n')[0]).toMatch(new RegExp(`^usage: .*${command}$`))
    }
  })

  it('bad values, missing values and missing arguments are 2; eval --example with files is 2', async () => {
    expect((await runQuarry(['search'])).code).toBe(2)
    expect((await runQuarry(['search', 'x', '--top', '0'])).code).toBe(2)
    expect((await runQuarry(['search', 'x', '--alpha'])).code).toBe(2)
    expect((await runQuarry(['index'])).code).toBe(2)
    expect((await runQuarry(['index', 'docs', '--embedder', 'bert'])).code).toBe(2)
    expect((await runQuarry(['eval', '--corpus', 'c.jsonl'])).code).toBe(2)
    const both = await runQuarry(['eval', '--example', '--qrels', 'q.tsv'])
    expect(both.code).toBe(2)
    expect(both.err.split('\n')[0]).toBe('quarry eval: --example evaluates the shipped files; leave out --qrels')
    expect((await runQuarry(['credentials', '--port', 'x'])).code).toBe(2)
    expect((await runQuarry(['query'])).code).toBe(2)
  })
})

describe('quarry eval --example', () => {
  it('writes the shipped judged example, scores it, and scores the same as those files passed by name', async () => {
    const cwd = mkdtempSync(join(scratch, 'example-'))
    const example = await spawnQuarry(['eval', '--example', '--embedder', 'hashing', '--json', '--plot', 'plot.svg'], cwd)
    expect(example.code).toBe(0)
    const dir = join(cwd, EXAMPLE_DIR)
    const files = { corpus: join(dir, 'corpus.jsonl'), queries: join(dir, 'queries.jsonl'), qrels: join(dir, 'qrels.tsv') }
    // The files are a valid collection in the documented formats: every judgment names a known query and document.
    const collection = readCollection(files)
    expect(collection.docs.map((d) => d.id)).toEqual(['kettle-descale', 'kettle-reset', 'toaster-crumbs', 'toaster-shade', 'grinder-clean', 'grinder-size', 'warranty', 'recycling'])
    expect(collection.queries.map((q) => q.id)).toEqual(['q1', 'q2', 'q3', 'q4'])
    for (const [q, grades] of collection.qrels) {
      expect(collection.queries.map((x) => x.id)).toContain(q)
      for (const d of grades.keys()) expect(collection.docs.map((x) => x.id)).toContain(d)
    }
    const named = await spawnQuarry(['eval', '--corpus', files.corpus, '--queries', files.queries, '--qrels', files.qrels, '--embedder', 'hashing', '--json', '--plot', 'plot.svg'], cwd)
    expect(named.code).toBe(0)
    expect(JSON.parse(example.out)).toEqual(JSON.parse(named.out))
    expect(JSON.parse(example.out)).toMatchObject({ documents: 8, queries: 4, embedder: 'hashing-256' })

    const help = await runQuarry(['eval', '--help'])
    expect(help.out).toMatch(/--example +score the small judged example shipped with Quarry/)
    expect(help.out).toMatch(/a BEIR dataset is read as it is \(corpus\.jsonl, queries\.jsonl, qrels\/test\.tsv\)/)
    expect(help.out).toMatch(/From\s+TREC:\s+qrels are read as they are \(4 columns\)/)
  }, 120_000)
})

describe('quarry search piped', () => {
  it('prints plain text when stdout is not a terminal: no ** and no terminal styling', async () => {
    const cwd = mkdtempSync(join(scratch, 'piped-'))
    writeFileSync(join(cwd, 'install.md'), 'To pin an exact version when installing a package, use the --save-exact flag.\n')
    expect((await spawnQuarry(['index', '.', '--embedder', 'hashing'], cwd)).code).toBe(0)
    const piped = await spawnQuarry(['search', 'pin exact', '--alpha', '0'], cwd)
    expect(piped.code).toBe(0)
    const lines = piped.out.trimEnd().split('\n')
    expect(lines[0]).toBe('rank  score (higher is better)  file        passage')
    expect(lines[2]).toMatch(/^1     \d\.\d{4} {18}  install\.md  To pin an exact version when installing a package, use the --save-exact flag$/)
    expect(piped.out).not.toContain('**')
    expect(piped.out).not.toContain('\x1b')
  }, 60_000)

  it('marks matched words in bold on a terminal, with ** on a terminal under NO_COLOR, not at all when piped', () => {
    expect(markerFor({ isTTY: true }, {})('pin')).toBe('\x1b[1mpin\x1b[22m')
    expect(markerFor({ isTTY: true }, { NO_COLOR: '1' })('pin')).toBe('**pin**')
    expect(markerFor({ isTTY: false }, {})('pin')).toBe('pin')
    expect(markerFor({}, { NO_COLOR: '1' })('pin')).toBe('pin')
  })
})

describe('demo tables say which way each score goes', () => {
  /** Runs a demo with console.log captured (progress bars on stderr silenced); the printed lines. */
  async function printed(run: () => Promise<void>): Promise<string[]> {
    const out: string[] = []
    const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void out.push(parts.join(' ')))
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    try {
      await run()
    } finally {
      log.mockRestore()
      stderr.mockRestore()
    }
    return out.join('\n').split('\n')
  }
  /** The numbers of a table's column under `header`, read from its rows. */
  function column(lines: readonly string[], headerLine: number, header: string): number[] {
    const at = (lines[headerLine] as string).indexOf(header)
    const rows: number[] = []
    for (let i = headerLine + 2; i < lines.length && /^\s+\d+\s/.test(lines[i] as string); i++) rows.push(Number((lines[i] as string).slice(at).trim().split(/\s+/)[0]))
    return rows
  }
  const embedder = createHashingEmbedder({ dimensions: 64 })

  it('RAG Engine: score and distances, lower is better, and the rows are in that order', async () => {
    const lines = await printed(() => runVertexRagDemo(embedder, 'how do I pin a version'))
    const headers = lines.flatMap((l, i) => (/^\s+rank\s/.test(l) ? [i] : []))
    expect(headers).toHaveLength(3)
    for (const h of headers) {
      expect(lines[h]).toMatch(/^ {2}rank {2}score \(lower is better\) {2}distance \(lower is better\) {2}sparseDistance \(lower is better\) {2}source/)
      const scores = column(lines, h, 'score (lower is better)')
      expect(scores.length).toBe(5)
      expect(scores).toEqual([...scores].sort((a, b) => a - b))
    }
  }, 120_000)

  it('Semantic Retriever and Memory Bank: higher relevance is better, lower distance is better', async () => {
    const sr = await printed(() => runSemanticRetrieverDemo(embedder, 'how do I pin a version'))
    const srHeader = sr.findIndex((l) => /^\s+rank\s/.test(l))
    expect(sr[srHeader]).toMatch(/^ {2}rank {2}chunkRelevanceScore \(higher is better\) {2}file/)
    const relevance = column(sr, srHeader, 'chunkRelevanceScore (higher is better)')
    expect(relevance.length).toBeGreaterThan(1)
    expect(relevance).toEqual([...relevance].sort((a, b) => b - a))
    const mb = await printed(() => runMemoryBankDemo(embedder))
    const mbHeader = mb.findIndex((l) => /^\s+rank\s/.test(l))
    expect(mb[mbHeader]).toMatch(/^ {2}rank {2}distance \(lower is better\) {2}fact/)
    const distances = column(mb, mbHeader, 'distance (lower is better)')
    expect(distances).toHaveLength(2)
    expect(distances).toEqual([...distances].sort((a, b) => a - b))
  }, 120_000)
})
