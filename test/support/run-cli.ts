import { vi } from 'vitest'
import { runCli } from '@quarry/adapters'

/** What one `quarry` run printed: stdout and stderr lines (progress bars left out) and its exit code. */
export interface CliRun {
  readonly code: number
  readonly out: string
  readonly err: string
}

/** Runs the command line in process, capturing console output and silencing progress bars. */
export async function runQuarry(args: readonly string[]): Promise<CliRun> {
  const out: string[] = []
  const err: string[] = []
  const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void out.push(parts.join(' ')))
  const error = vi.spyOn(console, 'error').mockImplementation((...parts: unknown[]) => void err.push(parts.join(' ')))
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
  try {
    const code = await runCli(args)
    return { code, out: out.join('\n'), err: err.join('\n') }
  } finally {
    log.mockRestore()
    error.mockRestore()
    stderr.mockRestore()
  }
}
