import { statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import type { QuarryServer } from '../server/options.js'
import { localBaseUrl, localCredentials, writeCredentialsFile } from '../http/local-credentials.js'
import { TOKEN_LIFETIME_SECONDS } from '../http/token-exchange.js'
import { numberOption, optionLines, parseArgs, specOf, type OptionDoc } from './args.js'
import { CliError, usageError } from './fail.js'
import { quarryCommand } from './invocation.js'

/** The file `quarry credentials` names when not given --file. */
const DEFAULT_FILE = 'quarry-credentials.json'

/** The options of `quarry credentials`: its parser and its help. */
export const CREDENTIALS_OPTIONS: readonly OptionDoc[] = [
  { name: 'port', value: 'N', help: 'the port of the server to describe (default 8080)' },
  { name: 'host', value: 'HOST', help: 'its address (default 127.0.0.1)' },
  { name: 'file', value: 'FILE', help: `the credentials file that \`quarry serve --credentials-out\` writes (default ${DEFAULT_FILE})` },
]

function usage(): string {
  return `usage: ${quarryCommand()} credentials [--port 8080] [--host 127.0.0.1] [--file ${DEFAULT_FILE}]

  Prints how Google's SDKs that speak REST (@google/genai, @google-cloud/vertexai, ADK, the
  aiplatform / generativelanguage clients with fallback: true) get their OAuth token from
  \`quarry serve\` through application-default credentials, and how to point each at it.
${optionLines(CREDENTIALS_OPTIONS)}`
}

/** What `quarry credentials` prints for a server at host:port and a credentials file. */
function credentialsGuide(options: { readonly host: string; readonly port: number; readonly file: string }): string {
  const base = localBaseUrl(options)
  const tokenUrl = localCredentials(options).token_url
  const { hostname } = new URL(base)
  const q = quarryCommand()
  return `Google's SDKs that speak REST always fetch an OAuth token through application-default credentials
(ADC). Quarry answers that fetch itself, so they run against it with no auth code of yours:

1. Start the server; once it listens it writes the credentials file (mode 0600):
     ${q} serve --port ${options.port}${options.host === '127.0.0.1' ? '' : ` --host ${options.host}`} --credentials-out ${options.file}
2. Run your program with:
     GOOGLE_APPLICATION_CREDENTIALS=${options.file} GOOGLE_CLOUD_PROJECT=my-project
   Any project id will do: with one set, no SDK looks the project up online.
3. Point each SDK at ${base}:

   @google-cloud/aiplatform, @google-ai/generativelanguage (Node, REST transport):
     new v1beta1.MemoryBankServiceClient({ apiEndpoint: '${hostname}', port: ${options.port}, protocol: 'http', fallback: true })
   @google-cloud/vertexai Client (agent engines: Memory Bank):
     const client = new Client({ project: 'my-project', location: 'us-central1', apiEndpoint: '${base}' })
   Agent Development Kit (@google/adk), given that client:
     new VertexAiMemoryBankService({ projectId: 'my-project', location: 'us-central1', agentEngineId: '1', client })
   @google/genai (GOOGLE_VERTEX_BASE_URL=${base} does the same; generateContent answers from a local model, not Gemini):
     new GoogleGenAI({ vertexai: true, project: 'my-project', location: 'us-central1', httpOptions: { baseUrl: '${base}' } })
   Python, google-cloud-aiplatform / google-ai-generativelanguage:
     VertexRagServiceClient(client_options={"api_endpoint": "${base}"}, transport="rest")
   Python, google-genai:
     genai.Client(vertexai=True, project="my-project", location="us-central1", http_options={"base_url": "${base}"})

The token exchange (POST ${tokenUrl}) accepts any subject token and answers an access token
said to last ${TOKEN_LIFETIME_SECONDS} s that nothing checks: whoever can reach the port can call Quarry.`
}

/** `quarry credentials`: prints {@link credentialsGuide}. */
export async function runCredentials(args: readonly string[]): Promise<number> {
  const help = usage()
  const flags = parseArgs(args, specOf(CREDENTIALS_OPTIONS, false), help)
  if (flags.has('help')) {
    console.log(help)
    return 0
  }
  const port = numberOption(flags, 'port', { min: 1, max: 65535, integer: true, fallback: 8080 }, help)
  const host = flags.value('host') ?? '127.0.0.1'
  if (!/^(?:[\w.-]+|\[?[0-9A-Fa-f:.]+\]?)$/.test(host)) throw usageError(`--host must be a host name or an IP address; received ${host.slice(0, 100)}`, help)
  const file = flags.value('file') ?? DEFAULT_FILE
  if (file.trim() === '') throw usageError('--file must name a file', help)
  console.log(credentialsGuide({ host, port, file }))
  return 0
}

/** `quarry serve --credentials-out FILE`, before anything loads: its folder must exist. */
export function checkCredentialsOut(file: string, help: string): void {
  const folder = dirname(resolve(file))
  let isFolder = false
  try {
    isFolder = statSync(folder).isDirectory()
  } catch {
    // Reported below with the fix.
  }
  if (!isFolder) throw usageError(`--credentials-out ${file}: the folder ${folder} does not exist; create it or name a file in another folder`, help)
}

/**
 * Writes the server's credentials file once it listens (the port is known, also with --port 0);
 * resolves to the line saying where it is. A failure closes the server and ends the command.
 */
export async function writeServeCredentials(server: QuarryServer, file: string): Promise<string> {
  const credentials = server.credentials()
  try {
    writeCredentialsFile(file, credentials)
  } catch (error) {
    await server.close()
    const code = (error as NodeJS.ErrnoException).code
    throw new CliError(`cannot write --credentials-out ${file}${code ? ` (${code})` : ''}: name a file in a folder you can write`)
  }
  return `credentials in ${resolve(file)} (for GOOGLE_APPLICATION_CREDENTIALS; token exchange at ${credentials.token_url})`
}
