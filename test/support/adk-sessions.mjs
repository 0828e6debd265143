// ADK's VertexAiSessionService and VertexAiMemoryBankService in a plain Node process, for
// test/http/adk-sessions.test.ts (not inside vitest: see adk-memory-bank.mjs for why). Both get
// the sessions / memories of @google-cloud/vertexai's `Client` pointed at the server with
// `apiEndpoint`. Usage: node adk-sessions.mjs BASE_URL '{"engine"}' with GOOGLE_APPLICATION_CREDENTIALS
// and GOOGLE_CLOUD_PROJECT set; prints what each step answered as JSON.
import { createEvent, createEventActions } from '@google/adk'
import { adkServices } from './adk-services.mjs'

const [apiEndpoint, spec] = process.argv.slice(2)
const { engine } = JSON.parse(spec)
const { project, client, sessions, memory } = adkServices(apiEndpoint, engine)
const appName = 'travel'
const out = {}

const first = await sessions.createSession({ appName, userId: 'ana', state: { lang: 'en' } })
const second = await sessions.createSession({ appName, userId: 'ana', sessionId: 'trip-2', ttl: '172800s' })
await sessions.createSession({ appName, userId: 'bo', sessionId: 'bo-1' })
out.created = JSON.parse(JSON.stringify([first, second].map((s) => ({ id: s.id, userId: s.userId, state: s.state }))))

const turns = [
  { author: 'user', text: 'I am planning a trip to Oslo.', at: Date.parse('2026-03-01T10:00:00Z') },
  { author: 'planner', text: 'When do you leave?', at: Date.parse('2026-03-01T10:00:02Z'), stateDelta: { city: 'Oslo' } },
  { author: 'user', text: 'I prefer window seats.', at: Date.parse('2026-03-01T10:00:04Z') },
]
for (const [i, t] of turns.entries()) {
  const event = createEvent({ invocationId: `inv-${i}`, author: t.author, timestamp: t.at, content: { role: t.author === 'user' ? 'user' : 'model', parts: [{ text: t.text }] }, actions: createEventActions(t.stateDelta ? { stateDelta: t.stateDelta } : {}) })
  await sessions.appendEvent({ session: first, event })
}

const read = await sessions.getSession({ appName, userId: 'ana', sessionId: first.id })
out.read = { id: read.id, userId: read.userId, state: read.state, events: read.events.map((e) => ({ id: e.id, author: e.author, invocationId: e.invocationId, timestamp: e.timestamp, text: e.content?.parts?.[0]?.text, stateDelta: e.actions?.stateDelta })) }
const after = await sessions.getSession({ appName, userId: 'ana', sessionId: first.id, config: { afterTimestamp: turns[1].at } })
out.after = after.events.map((e) => e.content?.parts?.[0]?.text)
out.wrongUser = await sessions.getSession({ appName, userId: 'bo', sessionId: first.id }).then(() => 'returned', (e) => String(e.message))
const listed = await sessions.listSessions({ appName, userId: 'ana' })
out.listed = listed.sessions.map((s) => ({ id: s.id, userId: s.userId })).sort((a, b) => a.id.localeCompare(b.id))

// ADK adds a session to memory through generateMemories (directContentsSource) ...
await memory.addSessionToMemory(read)
// ... and the same Client generates from the stored session itself (vertexSessionSource).
const generated = await client.agentEnginesInternal.memories.generateInternal({ name: `reasoningEngines/${engine}`, vertexSessionSource: { session: `projects/${project}/locations/us-central1/reasoningEngines/${engine}/sessions/${first.id}`, startTime: '2026-03-01T10:00:03Z' } })
out.generated = generated.response?.generatedMemories?.map((g) => ({ fact: g.memory?.fact, scope: g.memory?.scope, action: g.action }))
out.search = (await memory.searchMemory({ appName, userId: 'ana', query: 'window seat' })).memories.map((m) => m.content.parts?.[0]?.text)

await sessions.deleteSession({ appName, userId: 'ana', sessionId: 'trip-2' })
out.deleted = await sessions.getSession({ appName, userId: 'ana', sessionId: 'trip-2' }).then((s) => s ?? null)
out.remaining = (await sessions.listSessions({ appName })).sessions.map((s) => s.id).sort()
process.stdout.write(`\n${JSON.stringify(out)}\n`)
