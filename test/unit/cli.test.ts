import { describe, expect, it, vi } from 'vitest'
import { packageDocs, runCli } from '@quarry/adapters'

describe('quarry command line', () => {
  it('prints usage for help and refuses unknown commands and empty queries', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    expect(await runCli(['help'])).toBe(0)
    expect(log.mock.calls.flat().join('\n')).toContain('query "..."')
    expect(await runCli(['frobnicate'])).toBe(2)
    expect(await runCli(['query'])).toBe(2)
    expect(error.mock.calls.flat().join('\n')).toMatch(/unknown command "frobnicate"[\s\S]*give a question/)
    log.mockRestore()
    error.mockRestore()
  })

  it('refuses bad quarry serve options with the usage, before binding anything', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {})
    const log = vi.spyOn(console, 'log').mockImplementation(() => {})
    expect(await runCli(['serve', '--bogus', '1'])).toBe(1)
    expect(await runCli(['serve', '--port', 'eighty'])).toBe(1)
    expect(await runCli(['serve', '--embedder', 'bert'])).toBe(1)
    expect(await runCli(['serve', '--port'])).toBe(1)
    const text = error.mock.calls.flat().join('\n')
    expect(text).toMatch(/unknown option --bogus[\s\S]*usage: quarry serve/)
    expect(text).toMatch(/--port must be 0 to 65535; received eighty/)
    expect(text).toMatch(/--embedder is glove or hashing; received bert/)
    expect(text).toMatch(/--port needs a value/)
    expect(await runCli(['serve', '--help'])).toBe(0)
    expect(log.mock.calls.flat().join('\n')).toMatch(/--gcs-root/)
    error.mockRestore()
    log.mockRestore()
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
