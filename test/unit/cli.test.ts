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
