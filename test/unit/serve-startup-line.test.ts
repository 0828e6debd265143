import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { runServe } from '../../packages/adapters/src/cli/serve.js'

/** Runs `quarry serve args` in process until it prints its start-up line; returns that line. */
async function startupLine(args: readonly string[]): Promise<string> {
  const lines: string[] = []
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void lines.push(parts.join(' ')))
  const stop = new AbortController()
  try {
    const serving = runServe(['--port', '0', '--embedder', 'hashing', ...args], { signal: stop.signal })
    await vi.waitFor(() => expect(lines.some((l) => l.startsWith('  started in '))).toBe(true))
    stop.abort()
    expect(await serving).toBe(0)
    return lines.find((l) => l.startsWith('  started in ')) as string
  } finally {
    log.mockRestore()
  }
}

describe('quarry serve start-up line', () => {
  it('says how long the start took; with --data, how much of it reading the checkpoint took (a part of it)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-startup-line-'))
    try {
      expect(await startupLine([])).toMatch(/^ {2}started in \d+\.\d{3} s$/)
      // The first start writes a checkpoint, the second reads it.
      await startupLine(['--data', dir])
      const line = await startupLine(['--data', dir])
      const match = /^ {2}started in (\d+\.\d{3}) s \(the checkpoint of --data read in (\d+\.\d{3}) s\)$/.exec(line)
      expect(match, line).not.toBeNull()
      expect(Number(match?.[2])).toBeLessThanOrEqual(Number(match?.[1]))
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
