import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { prepareLoad, QuarryError } from '@quarry/core'
import { CliError, usageError } from './fail.js'
import { packageVersion } from '../package-root.js'
import { quarryCommand } from './invocation.js'
import { INDEXED_EXTENSIONS } from './walk.js'

/**
 * A command: how `help` lists it and what runs it (resolving to the exit code). Each command's
 * module is imported when it runs: a start loads only what its command needs (`serve` answers
 * sooner without the demos' and the indexer's modules).
 */
interface Command {
  readonly name: string
  readonly args: string
  readonly summary: string
  readonly run: (args: readonly string[]) => Promise<number>
}

const COMMANDS: readonly Command[] = [
  { name: 'index', args: '<path>...', summary: `index files and folders (${INDEXED_EXTENSIONS.join(' ')}) into .quarry; re-runs read changed files only`, run: async (args) => (await import('./index-files.js')).runIndex(args) },
  { name: 'search', args: '"<text>"', summary: 'search that index: ranked passages with the matched words marked', run: async (args) => (await import('./search.js')).runSearch(args) },
  { name: 'eval', args: '--corpus --queries --qrels', summary: 'score BM25, dense and hybrid search on your own judged queries (BEIR / TREC files; --example)', run: async (args) => (await import('./eval.js')).runEval(args) },
  {
    name: 'demo',
    args: '',
    summary: 'index the docs of the installed npm packages, answer example questions',
    run: async (args) => {
      if (noArguments('demo', args)) return 0
      await (await import('./demo-docs.js')).runDocsDemo()
      return 0
    },
  },
  { name: 'query', args: '"<question>"', summary: 'ask the saved demo index a question', run: runQueryCommand },
  {
    name: 'words',
    args: '',
    summary: "dense search over GloVe word vectors: filters and the planner's choices",
    run: async (args) => {
      if (noArguments('words', args)) return 0
      ;(await import('./demo-words.js')).runWordDemo()
      return 0
    },
  },
  {
    name: 'serve',
    args: '[options]',
    summary: "serve Google's retrieval REST APIs locally (Semantic Retriever, RAG Engine, Memory Bank)",
    run: async (args) => {
      // With --data, the checkpoint's load will hash its files on a worker thread: booted now, its
      // start overlaps importing the server's modules instead of delaying the load.
      if (args.some((a) => a === '--data' || a.startsWith('--data='))) prepareLoad()
      return (await import('./serve.js')).runServe(args)
    },
  },
  { name: 'credentials', args: '[options]', summary: "how Google's REST SDKs and ADK get their token from quarry serve (application-default credentials)", run: async (args) => (await import('./credentials.js')).runCredentials(args) },
  { name: 'help', args: '[command]', summary: "this text, or a command's options", run: async (args) => runHelp(args) },
]

/** The usage of a command without options: its line of the command table. */
function commandUsage(name: string): string {
  const command = COMMANDS.find((c) => c.name === name) as Command
  return `usage: ${quarryCommand()} ${name}${command.args ? ` ${command.args}` : ''}\n\n  ${command.summary}`
}

/**
 * For the commands without options: `--help` prints their line of the command table (true: done),
 * anything else is a usage error.
 */
function noArguments(name: string, args: readonly string[]): boolean {
  const help = commandUsage(name)
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    console.log(help)
    return true
  }
  if (args.length > 0) throw usageError(`${name} takes no arguments; received ${args.join(' ')}`, help)
  return false
}

function usage(): string {
  const q = quarryCommand()
  const heads = COMMANDS.map((c) => `${c.name}${c.args ? ` ${c.args}` : ''}`)
  const width = Math.max(...heads.map((h) => h.length))
  return `usage: ${q} <command> [options]

commands:
${COMMANDS.map((c, i) => `  ${(heads[i] as string).padEnd(width)}  ${c.summary}`).join('\n')}

${q} <command> --help shows a command's options; ${q} --version (-v) the version.`
}

async function printUsage(): Promise<number> {
  console.log(usage())
  return 0
}

/** `quarry help [command]`: the command list, or what `quarry <command> --help` prints. */
async function runHelp(args: readonly string[]): Promise<number> {
  const [name, ...extra] = args
  if (name === undefined || ((name === '--help' || name === '-h') && extra.length === 0)) return printUsage()
  const command = COMMANDS.find((c) => c.name === name)
  if (!command || extra.length > 0) throw usageError(command ? `help takes one command; received ${args.join(' ')}` : `unknown command "${name}"`, usage())
  return command.run(['--help'])
}

async function runQueryCommand(args: readonly string[]): Promise<number> {
  if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
    console.log(commandUsage('query'))
    return 0
  }
  const question = args.join(' ').trim()
  if (!question) throw new CliError(`give a question, e.g. ${quarryCommand()} query "how do I pin a version"`, { exitCode: 2 })
  await (await import('./demo-docs.js')).runQuery(question)
  return 0
}

/**
 * Runs the `quarry` command line; resolves to the process exit code. Failures are one line on
 * stderr (`quarry <command>: ...`), never a stack trace: 2 for bad usage, 1 otherwise.
 */
export async function runCli(args: readonly string[]): Promise<number> {
  const [name = 'help', ...rest] = args
  if (name === '--version' || name === '-v') {
    console.log(packageVersion())
    return 0
  }
  const command = name === '--help' || name === '-h' ? COMMANDS.find((c) => c.name === 'help') : COMMANDS.find((c) => c.name === name)
  if (!command) {
    console.error(`quarry: unknown command "${name}"\n\n${usage()}`)
    return 2
  }
  try {
    return await command.run(rest)
  } catch (error) {
    const prefix = `quarry ${command.name}`
    if (error instanceof CliError) {
      console.error(`${prefix}: ${error.message}${error.usage ? `\n\n${error.usage}` : ''}`)
      return error.exitCode
    }
    if (error instanceof QuarryError) {
      console.error(`${prefix}: ${error.message}`)
      return 1
    }
    // Anything else is unexpected: one line, the stack only on request.
    const message = error instanceof Error ? error.message : String(error)
    console.error(`${prefix}: ${message}${process.env.QUARRY_DEBUG ? `\n${error instanceof Error ? error.stack : ''}` : ' (QUARRY_DEBUG=1 shows where)'}`)
    return 1
  }
}

/**
 * Whether this module is the process's script (tsx src/cli/main.ts, node dist/cli/main.js), not
 * imported (by bin/quarry.mjs, the package's index or a bundle; or under `node -e`, where the
 * first argument need not be a file).
 */
function runDirectly(): boolean {
  const script = process.argv[1]
  if (!script) return false
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url))
  } catch {
    return false
  }
}

if (runDirectly()) process.exitCode = await runCli(process.argv.slice(2))
