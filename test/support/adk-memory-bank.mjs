// ADK's VertexAiMemoryBankService in a plain Node process, for test/http/credentials.test.ts.
// Not inside vitest: its workers run Node with the `module` export condition (vitest.config.ts's
// ssr conditions), under which ADK's @opentelemetry/api resolves to a bundler-only ESM build that
// Node refuses. Usage: node adk-memory-bank.mjs BASE_URL '{"engine", "adds": [...], "search": {...}}'
// with GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT set; prints searchMemory's answer as JSON.
import { Client } from '@google-cloud/vertexai'
import { LogLevel, VertexAiMemoryBankService, setLogLevel } from '@google/adk'

const [apiEndpoint, spec] = process.argv.slice(2)
const { engine, adds, search } = JSON.parse(spec)
setLogLevel(LogLevel.WARN)
const project = process.env.GOOGLE_CLOUD_PROJECT
const client = new Client({ project, location: 'us-central1', apiEndpoint })
const service = new VertexAiMemoryBankService({ projectId: project, location: 'us-central1', agentEngineId: engine, client })
for (const add of adds) await service.addMemory(add)
process.stdout.write(JSON.stringify(await service.searchMemory(search)))
