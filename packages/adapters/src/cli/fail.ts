/**
 * A failure the command line reports in one line, without a stack: bad usage (exit 2, the
 * command's usage follows) or a command that could not do its work (exit 1).
 */
export class CliError extends Error {
  override readonly name = 'CliError'
  readonly exitCode: number
  /** Printed after the message (usage errors). */
  readonly usage: string | undefined

  constructor(message: string, options: { exitCode?: number; usage?: string } = {}) {
    super(message)
    this.exitCode = options.exitCode ?? 1
    this.usage = options.usage
  }
}

/** A usage error: exit code 2, the usage printed after the message. */
export function usageError(message: string, usage: string): CliError {
  return new CliError(message, { exitCode: 2, usage })
}
