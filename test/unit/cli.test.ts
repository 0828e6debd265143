import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { packageDocs, quarryCommand, runCli } from '@quarry/adapters'
import { runServe } from '../../packages/adapters/src/cli/serve.js'
import { runQuarry } from '../support/run-cli.js'

describe('quarry command line', () => {
  it('prints usage for help and refuses unknown commands and empty queries', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    expect(await runCli(['help'])).toBe(0)
    const help = log.mock.calls.flat().join('\n')
    for (const command of ['index <path>...', 'search "<text>"', 'eval --corpus --queries --qrels', 'demo', 'query "<question>"', 'words', 'serve [options]', 'help']) {
      expect(help).toMatch(new RegExp(`^  ${command.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +\\S`, 'm'))
    }
    expect(await runCli(['frobnicate'])).toBe(2)
    expect(await runCli(['query'])).toBe(2)
    expect(error.mock.calls.flat().join('\n')).toMatch(/unknown command "frobnicate"[\s\S]*quarry query: give a question/)
    log.mockRestore()
    error.mockRestore()
  })

  it('refuses bad quarry serve options with the usage, before binding anything', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    expect(await runCli(['serve', '--bogus', '1'])).toBe(2)
    expect(await runCli(['serve', '--port', 'eighty'])).toBe(2)
    expect(await runCli(['serve', '--embedder', 'bert'])).toBe(2)
    expect(await runCli(['serve', '--port'])).toBe(2)
    const text = error.mock.calls.flat().join('\n')
    expect(text).toMatch(/unknown option --bogus[\s\S]*usage: .*quarry serve/)
    expect(text).toMatch(/--port must be an integer from 0 to 65535; received eighty/)
    expect(text).toMatch(/--embedder is glove or hashing; received bert/)
    expect(text).toMatch(/--port needs a value/)
    expect(await runCli(['serve', '--durability', 'log'])).toBe(2)
    expect(await runCli(['serve', '--data', 'x', '--durability', 'sometimes'])).toBe(2)
    expect(await runCli(['serve', '--max-in-flight', '0'])).toBe(2)
    expect(await runCli(['serve', '--checkpoint-mb', '-1'])).toBe(2)
    const more = error.mock.calls.flat().join('\n')
    expect(more).toMatch(/--durability needs --data DIR/)
    expect(more).toMatch(/--durability is log, checkpoint or none; received sometimes/)
    expect(more).toMatch(/--max-in-flight must be/)
    expect(more).toMatch(/--checkpoint-mb must be/)
    expect(await runCli(['serve', '--help'])).toBe(0)
    expect(log.mock.calls.flat().join('\n')).toMatch(/--gcs-root[\s\S]*--log/)
    error.mockRestore()
    log.mockRestore()
  })

  it('quarry query before any demo run says to run the demo, at once (nothing loaded)', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'quarry-cache-'))
    const saved = process.env.QUARRY_CACHE_DIR
    process.env.QUARRY_CACHE_DIR = cache
    try {
      const start = performance.now()
      const r = await runQuarry(['query', 'how do I pin a version'])
      expect(r).toEqual({ code: 1, out: '', err: `quarry query: no index in ${join(cache, 'demo-index')}: run \`${quarryCommand()} demo\` first (it builds the index that query answers from)` })
      expect(performance.now() - start).toBeLessThan(1000)
      expect(readdirSync(cache)).toEqual([])
    } finally {
      if (saved === undefined) delete process.env.QUARRY_CACHE_DIR
      else process.env.QUARRY_CACHE_DIR = saved
      rmSync(cache, { recursive: true, force: true })
    }
  })

  it('quarry serve on a port in use says so in one line and exits non-zero', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = (taken.address() as AddressInfo).port
    try {
      expect(await runQuarry(['serve', '--port', String(port), '--embedder', 'hashing'])).toEqual({
        code: 1,
        out: '',
        err: `quarry serve: port ${port} is in use; pass --port N (another port, or 0 for any free one)`,
      })
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  })

  it('quarry serve --log prints one line per request: method, path (no query string), status, milliseconds', async () => {
    const lines: string[] = []
    const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void lines.push(parts.join(' ')))
    const stop = new AbortController()
    try {
      const serving = runServe(['--port', '0', '--embedder', 'hashing', '--log'], { signal: stop.signal })
      await vi.waitFor(() => expect(lines.some((l) => l.startsWith('Quarry is serving on '))).toBe(true))
      const url = /serving on (\S+)/.exec(lines.find((l) => l.startsWith('Quarry is serving on ')) ?? '')?.[1] as string
      const before = lines.length
      expect((await fetch(`${url}/v1beta/corpora?key=secret`)).status).toBe(200)
      expect((await fetch(`${url}/v1beta/nothing`, { method: 'POST' })).status).toBe(404)
      await vi.waitFor(() => expect(lines.length).toBe(before + 2))
      expect(lines.slice(before)).toEqual([expect.stringMatching(/^GET \/v1beta\/corpora 200 \d+\.\d+ms$/), expect.stringMatching(/^POST \/v1beta\/nothing 404 \d+\.\d+ms$/)])
      stop.abort()
      expect(await serving).toBe(0)
      // Without --data there is no snapshot to write at the stop: it says the state was in memory.
      expect(lines.at(-1)).toBe('\nQuarry: stopping (the state was in memory only)...')
    } finally {
      log.mockRestore()
    }
  })

  it('finds the markdown docs of the installed packages, once each, in a stable order', () => {
    const docs = packageDocs()
    expect(docs.length).toBeGreaterThan(20)
    const sources = docs.map((d) => d.source)
    expect(new Set(sources).size).toBe(sources.length)
    expect([...sources].sort()).toEqual(sources)
    expect(sources.some((s) => /^vitest\/README\.md$/.test(s))).toBe(true)
    for (const d of docs) expect(d.text.trim().length).toBeGreaterThanOrEqual(200)
  })
})

describe('indexes built before the GloVe default changed', () => {
  it('quarry search rebuilds the GloVe embedder an index recorded (a=0.001), and refuses one it cannot', async () => {
    const { embedderOfIndex } = await import('../../packages/adapters/src/cli/embedders.js')
    const { createIndex, createGloveEmbedder } = await import('@quarry/core')
    const former = 'glove-6b-100d-sif(a=0.001,vocabulary=100000)'
    const recorded = (name: string) => createIndex({ embedder: { name, dimensions: 100, embed: async (texts) => texts.map(() => new Float32Array(100)) } })
    const rebuilt = embedderOfIndex(recorded(former), 'idx')
    expect(rebuilt?.name).toBe(former)
    const [mine] = await (rebuilt as NonNullable<typeof rebuilt>).embed(['green tea'])
    const [reference] = await createGloveEmbedder({ a: 1e-3 }).embed(['green tea'])
    expect(mine).toEqual(reference)
    expect(() => embedderOfIndex(recorded('glove-6b-100d-sif(a=0.001,vocabulary=5)x'), 'idx')).toThrow(/cannot rebuild/)
  })
})
