import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { QuarryError } from '@quarry/core'
import { runWordDemo } from './demo-words.js'

const USAGE = `usage: quarry <command>

commands:
  demo     dense search over real GloVe word vectors, offline (the README's first command)
  help     this text`

/** Runs the `quarry` command line; returns the process exit code. */
export function runCli(args: readonly string[]): number {
  const [command = 'help'] = args
  try {
    switch (command) {
      case 'demo':
        runWordDemo()
        return 0
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE)
        return 0
      default:
        console.error(`quarry: unknown command "${command}"\n\n${USAGE}`)
        return 2
    }
  } catch (error) {
    if (error instanceof QuarryError) {
      console.error(`quarry: ${error.code}: ${error.message}`)
      return 1
    }
    throw error
  }
}

// Run when executed directly (tsx src/cli/main.ts, or the bin), not when imported.
if (process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  process.exitCode = runCli(process.argv.slice(2))
}
