// ADK's addSessionToMemory, then searchMemory, against `quarry serve` (its default local extractor),
// for test/http/agent-engines.test.ts (not inside vitest: see adk-memory-bank.mjs for why). A
// session is created and written through VertexAiSessionService, read back, added to memory, and
// searched. Usage: node adk-agent-memory.mjs BASE_URL '{"engine", "turns": [{author, text}], "query"}'
// with GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CLOUD_PROJECT set; prints what each step answered as JSON.
import { createEvent } from '@google/adk'
import { adkServices } from './adk-services.mjs'

const [apiEndpoint, spec] = process.argv.slice(2)
const { engine, turns, query } = JSON.parse(spec)
const { sessions, memory } = adkServices(apiEndpoint, engine)
const appName = 'travel'

const session = await sessions.createSession({ appName, userId: 'ana' })
for (const [i, t] of turns.entries()) {
  const event = createEvent({ invocationId: `inv-${i}`, author: t.author, timestamp: Date.parse('2026-03-01T10:00:00Z') + i * 1000, content: { role: t.author === 'user' ? 'user' : 'model', parts: [{ text: t.text }] } })
  await sessions.appendEvent({ session, event })
}
const read = await sessions.getSession({ appName, userId: 'ana', sessionId: session.id })
await memory.addSessionToMemory(read)
const found = await memory.searchMemory({ appName, userId: 'ana', query })
process.stdout.write(`\n${JSON.stringify({ session: session.id, search: found.memories.map((m) => m.content.parts?.[0]?.text) })}\n`)
