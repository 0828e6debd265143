import { realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { QuarryError } from '@quarry/core'
import { runDocsDemo, runQuery } from './demo-docs.js'
import { runWordDemo } from './demo-words.js'
import { runServe } from './serve.js'

const USAGE = `usage: quarry <command>

commands:
  demo             index the markdown docs of the installed npm packages (chunk, embed with the
                   offline GloVe SIF embedder, BM25 + HNSW), answer example questions, save the index
  query "..."      answer a question against the saved demo index (no re-ingest)
  words            dense search over GloVe word vectors, with filters and the planner's choices
  serve [options]  serve Google's Semantic Retriever, Vertex AI RAG Engine and Memory Bank REST APIs
                   locally (quarry serve --help)
  help             this text`

/** Runs the `quarry` command line; resolves to the process exit code. */
export async function runCli(args: readonly string[]): Promise<number> {
  const [command = 'help', ...rest] = args
  try {
    switch (command) {
      case 'demo':
        await runDocsDemo()
        return 0
      case 'query': {
        const question = rest.join(' ').trim()
        if (!question) {
          console.error('quarry query: give a question, e.g. quarry query "how do I pin a version"')
          return 2
        }
        await runQuery(question)
        return 0
      }
      case 'serve':
        await runServe(rest)
        return 0
      case 'words':
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
  process.exitCode = await runCli(process.argv.slice(2))
}
