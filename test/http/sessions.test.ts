import { execFile } from 'node:child_process'
import { cpSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, seededRandomId, writeCredentialsFile, type ExtractRequest, type QuarryServer } from '@quarry/adapters'
import { aiplatform, grpc } from './google-gax.js'

/**
 * Agent Engine Sessions through real clients (issue 19): ADK 2.0's VertexAiSessionService and
 * VertexAiMemoryBankService (over @google-cloud/vertexai's `Client` with `apiEndpoint`, in a child
 * process: test/support/adk-sessions.mjs) against `createServer` with a data folder; the answers
 * are compared with the engine in process, and the sessions, events and memories must read the
 * same after a restart. Then @google-cloud/aiplatform's v1 and v1beta1 SessionServiceClient over
 * gRPC, and the documented REST paths of both versions.
 */
const ADK_SCRIPT = fileURLToPath(new URL('../support/adk-sessions.mjs', import.meta.url))
const execFileAsync = promisify(execFile)

const embedder = createHashingEmbedder({ dimensions: 64 })
const ENGINE = 'projects/demo/locations/us-central1/reasoningEngines/5'
const ENV = ['GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_CLOUD_PROJECT'] as const

/** The test's model: one fact per text part of a user turn. */
const extracted: ExtractRequest[] = []
async function extractor(request: ExtractRequest): Promise<string[]> {
  extracted.push(request)
  return request.events.filter((e) => e.author === undefined || e.author === 'user').flatMap((e) => ((e.content?.['parts'] ?? []) as { text?: string }[]).flatMap((p) => (p.text === undefined ? [] : [p.text])))
}

let dir: string
let dataDir: string
let server: QuarryServer
const savedEnv = new Map<string, string | undefined>()

function start(): QuarryServer {
  return createServer({ embedder, dataDir, grpcPort: 0, memoryBank: { randomId: seededRandomId(9), extractor } })
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-sessions-'))
  dataDir = join(dir, 'data')
  for (const name of ENV) savedEnv.set(name, process.env[name])
})

afterAll(async () => {
  await server?.close()
  for (const [name, value] of savedEnv) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  rmSync(dir, { recursive: true, force: true })
})

interface AdkOut {
  created: { id: string; userId: string; state: Record<string, unknown> }[]
  read: { id: string; userId: string; state: Record<string, unknown>; events: { id: string; author: string; invocationId: string; timestamp: number; text: string; stateDelta: Record<string, unknown> }[] }
  after: string[]
  wrongUser: string
  listed: { id: string; userId: string }[]
  generated: { fact: string; scope: Record<string, string>; action: string }[]
  search: string[]
  deleted: null
  remaining: string[]
}

describe("ADK's VertexAiSessionService and VertexAiMemoryBankService against a server", () => {
  it('creates, reads, lists, appends to and deletes sessions, and generates memories from one; all of it survives a restart', async () => {
    server = start()
    const { url } = await server.listen({ port: 0, host: '127.0.0.1' })
    const adc = join(dir, 'adc.json')
    writeCredentialsFile(adc, server.credentials())
    process.env.GOOGLE_APPLICATION_CREDENTIALS = adc
    process.env.GOOGLE_CLOUD_PROJECT = 'demo'
    const { stdout } = await execFileAsync(process.execPath, [ADK_SCRIPT, url, JSON.stringify({ engine: '5' })], { env: { ...process.env }, timeout: 60_000 })
    // ADK logs warnings on stdout; the answers are the last line.
    const lines = stdout.trim().split('\n')
    // No warning but the experimental notice: in particular no retry of appendEvent without rawEvent (a 400).
    expect(lines.filter((l) => l.includes('WARN') && !l.includes('is experimental')), 'ADK warned').toEqual([])
    const out = JSON.parse(lines[lines.length - 1] ?? '') as AdkOut
    const sessions = server.engines.memoryBank.sessions
    const ok = <T>(o: { ok: true; response: T } | { ok: false; status: { message: string } }): T => {
      if (!o.ok) throw new Error(o.status.message)
      return o.response
    }

    // Created: a generated numeric id, and the ids given.
    const [first, second] = out.created
    expect(first?.id).toMatch(/^[1-9][0-9]{18}$/)
    expect(first?.state).toEqual({ lang: 'en' })
    expect(second).toEqual({ id: 'trip-2', userId: 'ana', state: {} })
    const stored = ok(await sessions.getSession({ name: `${ENGINE}/sessions/${first?.id ?? ''}` }))
    // The planner's stateDelta reached the stored session state.
    expect(stored.sessionState).toEqual({ lang: 'en', city: 'Oslo' })
    expect(stored.userId).toBe('ana')

    // Read back: the events in timestamp order, with the ids and times the server stored.
    const events = ok(await sessions.listEvents({ parent: `${ENGINE}/sessions/${first?.id ?? ''}` })).sessionEvents ?? []
    expect(events.map((e) => e.content?.['parts'])).toEqual([[{ text: 'I am planning a trip to Oslo.' }], [{ text: 'When do you leave?' }], [{ text: 'I prefer window seats.' }]])
    expect(out.read.events.map((e) => [e.id, e.author, e.invocationId, e.timestamp, e.text])).toEqual(
      events.map((e, i) => [e.name.split('/').pop(), e.author, `inv-${i}`, Date.parse(e.timestamp), (e.content?.['parts'] as { text: string }[])[0]?.text]),
    )
    expect(out.read.events[1]?.stateDelta).toEqual({ city: 'Oslo' })
    expect(out.read.state).toEqual({ lang: 'en', city: 'Oslo' })
    // getSession({ afterTimestamp }) is listEvents with filter timestamp>=...
    expect(out.after).toEqual(['When do you leave?', 'I prefer window seats.'])
    expect(out.wrongUser).toMatch(/does not belong to user bo/)
    // listSessions({ userId }) is listSessions with filter user_id="ana".
    expect(out.listed).toEqual([{ id: first?.id, userId: 'ana' }, { id: 'trip-2', userId: 'ana' }].sort((a, b) => String(a.id).localeCompare(String(b.id))))

    // addSessionToMemory: directContentsSource through the extractor; the session source: its events from startTime.
    expect(extracted.map((x) => [x.kind, x.scope, x.events.map((e) => (e.content?.['parts'] as { text: string }[])[0]?.text)])).toEqual([
      ['directContentsSource', { app_name: 'travel', user_id: 'ana' }, ['I am planning a trip to Oslo.', 'When do you leave?', 'I prefer window seats.']],
      ['vertexSessionSource', { user_id: 'ana' }, ['I prefer window seats.']],
    ])
    expect(extracted[1]?.events[0]?.author).toBe('user')
    // Without a scope, a session's memories are scoped to its user ({user_id}, as Google documents).
    expect(out.generated).toEqual([{ fact: 'I prefer window seats.', scope: { user_id: 'ana' }, action: 'CREATED' }])
    expect(out.search).toContain('I prefer window seats.')
    expect(out.search).toContain('I am planning a trip to Oslo.')

    // Deleted: gone for ADK (undefined) and in process.
    expect(out.deleted).toBeNull()
    expect((await sessions.getSession({ name: `${ENGINE}/sessions/trip-2` })).ok).toBe(false)
    expect(out.remaining).toEqual(['bo-1', first?.id].sort())

    // The data folder: the same sessions, events and memories after a restart.
    const before = {
      sessions: ok(await sessions.listSessions({ parent: ENGINE })),
      events: ok(await sessions.listEvents({ parent: `${ENGINE}/sessions/${first?.id ?? ''}` })),
      memories: ok(await server.engines.memoryBank.listMemories({ parent: ENGINE })),
    }
    expect(before.sessions.sessions?.length).toBe(2)
    // A crash now: the folder as it is (the first checkpoint and the write-ahead log) replays to the same state.
    const crashed = join(dir, 'crashed')
    cpSync(dataDir, crashed, { recursive: true })
    rmSync(join(crashed, 'LOCK'), { force: true })
    expect(readdirSync(crashed).filter((f) => f.startsWith('wal-')).reduce((n, f) => n + statSync(join(crashed, f)).size, 0), 'the writes are in the log').toBeGreaterThan(0)
    const replayed = createServer({ embedder, dataDir: crashed, memoryBank: { extractor } })
    await replayed.listen({ port: 0, host: '127.0.0.1' })
    const fromLog = replayed.engines.memoryBank.sessions
    expect({
      sessions: ok(await fromLog.listSessions({ parent: ENGINE })),
      events: ok(await fromLog.listEvents({ parent: `${ENGINE}/sessions/${first?.id ?? ''}` })),
      memories: ok(await replayed.engines.memoryBank.listMemories({ parent: ENGINE })),
    }).toEqual(before)
    await replayed.close()
    await server.close()
    server = start()
    await server.listen({ port: 0, host: '127.0.0.1' })
    const again = server.engines.memoryBank.sessions
    expect({
      sessions: ok(await again.listSessions({ parent: ENGINE })),
      events: ok(await again.listEvents({ parent: `${ENGINE}/sessions/${first?.id ?? ''}` })),
      memories: ok(await server.engines.memoryBank.listMemories({ parent: ENGINE })),
    }).toEqual(before)
  }, 90_000)
})

describe('SessionService over gRPC (aiplatform 6.11) and the documented REST paths', () => {
  it('v1beta1 and v1 clients create, append, list and delete through gRPC like REST', async () => {
    const local = createServer({ embedder, grpcPort: 0 })
    const { url, grpcPort } = await local.listen({ port: 0, host: '127.0.0.1' })
    const options = { apiEndpoint: '127.0.0.1', port: grpcPort as number, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' }
    const beta = new aiplatform.v1beta1.SessionServiceClient(options)
    const ga = new aiplatform.v1.SessionServiceClient(options)
    try {
      const parent = 'projects/demo/locations/us-central1/reasoningEngines/77'
      const [op] = await beta.createSession({ parent, sessionId: 'grpc-1', session: { userId: 'u1', displayName: 'over gRPC', sessionState: { fields: { step: { numberValue: 1 } } } } })
      const [created] = await op.promise()
      expect(created.name).toBe(`${parent}/sessions/grpc-1`)
      expect(created.sessionState?.fields?.['step']?.numberValue).toBe(1)
      await beta.appendEvent({ name: created.name, event: { author: 'user', invocationId: 'i1', timestamp: { seconds: 1_767_261_600 }, content: { role: 'user', parts: [{ text: 'hello over gRPC' }] } } })
      const [v1op] = await ga.createSession({ parent, sessionId: 'grpc-2', session: { userId: 'u2' } })
      const [v1created] = await v1op.promise()
      expect(v1created.userId).toBe('u2')
      const [listed] = await ga.listSessions({ parent, filter: 'user_id="u1"' })
      expect(listed.map((s) => [s.name, s.displayName])).toEqual([[created.name, 'over gRPC']])
      const [events] = await beta.listEvents({ parent: created.name })
      expect(events.map((e) => [e.author, e.content?.parts?.[0]?.text, Number(e.timestamp?.seconds)])).toEqual([['user', 'hello over gRPC', 1_767_261_600]])

      // The same sessions over REST: v1beta1 (and its short binding) and v1.
      const rest = async (path: string, init?: RequestInit): Promise<Record<string, unknown>> => (await (await fetch(`${url}${path}`, init)).json()) as Record<string, unknown>
      const viaRest = await rest(`/v1/${created.name}/events`)
      expect((viaRest['sessionEvents'] as { content: unknown }[]).map((e) => e.content)).toEqual([{ role: 'user', parts: [{ text: 'hello over gRPC' }] }])
      const patched = await rest(`/v1beta1/${created.name}?updateMask=displayName`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ displayName: 'patched' }) })
      expect(patched['displayName']).toBe('patched')
      const short = await fetch(`${url}/v1beta1/reasoningEngines/77/sessions`)
      expect(short.status).toBe(200)
      // v1 has no short binding (session_service.proto of v1).
      expect((await fetch(`${url}/v1/reasoningEngines/77/sessions`)).status).toBe(404)

      const [del] = await beta.deleteSession({ name: created.name })
      await del.promise()
      const missing = await beta.getSession({ name: created.name }).then(() => undefined, (e: unknown) => e as { code: number })
      expect(missing?.code).toBe(grpc.status.NOT_FOUND)
    } finally {
      await beta.close()
      await ga.close()
      await local.close()
    }
  }, 60_000)
})
