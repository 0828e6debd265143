import { execFile } from 'node:child_process'
import diagnostics from 'node:diagnostics_channel'
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { createRequire } from 'node:module'
import type { Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { createServer, localCredentials, seededRandomId, writeCredentialsFile, type QuarryServer } from '@quarry/adapters'
import { runServe } from '../../packages/adapters/src/cli/serve.js'
import { LOCAL_ACCESS_TOKEN } from '../../packages/adapters/src/http/token-exchange.js'
import { runQuarry } from '../support/run-cli.js'

/**
 * Issue 17 part 3: Google's REST SDKs with no auth code here. The only setup is what a user does:
 * GOOGLE_APPLICATION_CREDENTIALS names the `external_account` file the server wrote, and
 * GOOGLE_CLOUD_PROJECT is set. google-auth-library (inside each SDK) then reads its subject token
 * from the server and exchanges it at the server's /v1/token; every call carries that token.
 * Clients: aiplatform 6.11 (REST, no authClient), @google-cloud/vertexai 1.12's `Client`, and ADK
 * 2.0's VertexAiMemoryBankService (in a child process: test/support/adk-memory-bank.mjs says why);
 * every answer is compared with the same call in process.
 */
const require = createRequire(import.meta.url)
const aiplatform = require('@google-cloud/aiplatform') as typeof import('@google-cloud/aiplatform')
const { Client } = require('@google-cloud/vertexai') as typeof import('@google-cloud/vertexai')
/** ADK runs in a plain Node child process (why: the script's header); it prints searchMemory's answer. */
const ADK_SCRIPT = fileURLToPath(new URL('../support/adk-memory-bank.mjs', import.meta.url))
const execFileAsync = promisify(execFile)

const GCS = fileURLToPath(new URL('../contract/fixtures/gcs', import.meta.url))
const embedder = createHashingEmbedder({ dimensions: 64 })
const LOCATION = 'projects/demo/locations/us-central1'
const ENV = ['GOOGLE_APPLICATION_CREDENTIALS', 'GOOGLE_CLOUD_PROJECT'] as const
/** Host headers the guard test sends on purpose (over loopback all the same). */
const FORGED_HOSTS = new Set(['rebound.attacker.example'])

let quarryServer: QuarryServer
let port: number
let url: string
let dir: string
let adcFile: string
const savedEnv = new Map<string, string | undefined>()
/** Every request the server received: method, Host, path and the bearer token it carried. */
const requests: { method: string; host: string; path: string; auth: string }[] = []
/** Every outgoing connection of this process (fetch through undici, and node:net sockets). */
const dialed: string[] = []
const onFetchConnect = (message: unknown): void => void dialed.push(`fetch ${(message as { connectParams: { hostname: string } }).connectParams.hostname}`)
const onSocket = (message: unknown): void => {
  const socket = (message as { socket: Socket }).socket
  socket.once('connect', () => dialed.push(`net ${socket.remoteAddress ?? '?'}`))
}

beforeAll(async () => {
  diagnostics.subscribe('undici:client:beforeConnect', onFetchConnect)
  diagnostics.subscribe('net.client.socket', onSocket)
  for (const name of ENV) savedEnv.set(name, process.env[name])
  quarryServer = createServer({ embedder, vertexRag: { randomId: seededRandomId(2), gcsRoot: GCS }, memoryBank: { randomId: seededRandomId(3) } })
  quarryServer.server.on('request', (req) => requests.push({ method: req.method ?? '', host: req.headers.host ?? '', path: (req.url ?? '').split('?')[0] ?? '', auth: req.headers.authorization ?? '' }))
  ;({ port, url } = await quarryServer.listen({ port: 0, host: '127.0.0.1' }))
  dir = mkdtempSync(join(tmpdir(), 'quarry-credentials-'))
  adcFile = join(dir, 'adc.json')
  writeCredentialsFile(adcFile, quarryServer.credentials())
  process.env.GOOGLE_APPLICATION_CREDENTIALS = adcFile
  process.env.GOOGLE_CLOUD_PROJECT = 'demo'
})

afterAll(async () => {
  await quarryServer.close()
  for (const [name, value] of savedEnv) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  diagnostics.unsubscribe('undici:client:beforeConnect', onFetchConnect)
  diagnostics.unsubscribe('net.client.socket', onSocket)
  rmSync(dir, { recursive: true, force: true })
  // No request left the machine: every one reached a loopback server, and every connection this
  // process opened was to loopback (the SDKs fetch through undici: it was seen).
  expect(requests.length).toBeGreaterThan(0)
  for (const r of requests.filter((r) => !FORGED_HOSTS.has(r.host))) expect(`${r.method} ${r.host} ${r.path}`).toMatch(/^\w+ 127\.0\.0\.1:\d+ \//)
  expect(dialed.some((d) => d.startsWith('fetch '))).toBe(true)
  for (const d of dialed) expect(d).toMatch(/^(fetch|net) (127\.0\.0\.1|::1|::ffff:127\.0\.0\.1|localhost)$/)
})

/** The API calls (not the token ones) made since `from`: each carried the exchanged token, and the exchange happened. */
function expectExchangedToken(from: number): void {
  const since = requests.slice(from)
  const api = since.filter((r) => !r.path.startsWith('/v1/token') && !r.path.startsWith('/quarry/'))
  expect(api.length).toBeGreaterThan(0)
  for (const r of api) expect(r.auth, `${r.method} ${r.path}`).toBe(`Bearer ${LOCAL_ACCESS_TOKEN}`)
  expect(since.filter((r) => r.method === 'POST' && r.path === '/v1/token').length).toBeGreaterThanOrEqual(1)
  expect(since.filter((r) => r.method === 'GET' && r.path === '/quarry/v1/subject-token').length).toBeGreaterThanOrEqual(1)
}

describe('the credentials file', () => {
  it('is an external_account file whose token exchange and subject token are this server, mode 0600', () => {
    expect(JSON.parse(readFileSync(adcFile, 'utf8'))).toEqual({
      type: 'external_account',
      audience: '//quarry.localhost/token-exchange',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: `${url}/v1/token`,
      credential_source: { url: `${url}/quarry/v1/subject-token`, format: { type: 'json', subject_token_field_name: 'subject_token' } },
    })
    expect(statSync(adcFile).mode & 0o777).toBe(0o600)
    // A wildcard bind is dialed on loopback; IPv6 in brackets.
    expect(localCredentials({ host: '0.0.0.0', port: 8080 }).token_url).toBe('http://127.0.0.1:8080/v1/token')
    expect(localCredentials({ host: '::', port: 8080 }).token_url).toBe('http://[::1]:8080/v1/token')
    expect(() => localCredentials({ host: '127.0.0.1', port: 0 })).toThrow(/port must be an integer from 1 to 65535/)
  })

  it('replaces an existing file, leaving it 0600 whatever its mode was', () => {
    const file = join(dir, 'loose.json')
    writeFileSync(file, 'old')
    chmodSync(file, 0o644)
    writeCredentialsFile(file, quarryServer.credentials())
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(quarryServer.credentials())
  })
})

describe('aiplatform REST clients (fallback: true, no authClient): ADC only', () => {
  const opts = (): { apiEndpoint: string; port: number; protocol: string; fallback: boolean } => ({ apiEndpoint: '127.0.0.1', port, protocol: 'http', fallback: true })

  it('RAG Engine: creates a corpus, imports, retrieves like the engine in process', async () => {
    const from = requests.length
    const data = new aiplatform.v1beta1.VertexRagDataServiceClient(opts())
    const rag = new aiplatform.v1beta1.VertexRagServiceClient(opts())
    const [createOp] = await data.createRagCorpus({ parent: LOCATION, ragCorpus: { displayName: 'Library' } })
    const [corpus] = await createOp.promise()
    expect(corpus.displayName).toBe('Library')
    const [importOp] = await data.importRagFiles({ parent: corpus.name, importRagFilesConfig: { gcsSource: { uris: ['gs://library'] }, ragFileTransformationConfig: { ragFileChunkingConfig: { fixedLengthChunking: { chunkSize: 24, chunkOverlap: 6 } } } } })
    const [imported] = await importOp.promise()
    expect(Number(imported.importedRagFilesCount)).toBe(6)
    const request = { parent: LOCATION, vertexRagStore: { ragResources: [{ ragCorpus: corpus.name }] }, query: { text: 'sandworms in the desert', ragRetrievalConfig: { topK: 3 } } }
    const [response] = await rag.retrieveContexts(request)
    const local = await quarryServer.engines.vertexRag.v1beta1.retrieveContexts(request)
    if (!local.ok) throw new Error(local.status.message)
    const contexts = response.contexts?.contexts ?? []
    expect(contexts.map((c) => [c.sourceUri, c.text, c.score])).toEqual(local.response.contexts.contexts?.map((c) => [c.sourceUri, c.text, c.score]))
    expect(contexts.length).toBe(3)
    expect(contexts.map((c) => c.sourceUri)).toContain('gs://library/dune.txt')
    expectExchangedToken(from)
    await Promise.all([data.close(), rag.close()])
  })

  it('Memory Bank: creates memories and retrieves them by scope and similarity like the engine in process', async () => {
    const from = requests.length
    const client = new aiplatform.v1beta1.MemoryBankServiceClient(opts())
    const parent = `${LOCATION}/reasoningEngines/1`
    const created = []
    for (const [fact, user] of [['I like green tea.', 'u1'], ['I live in Lyon.', 'u1'], ['I like coffee.', 'u2']] as const) {
      const [op] = await client.createMemory({ parent, memory: { fact, scope: { user_id: user } } })
      created.push((await op.promise())[0])
    }
    const request = { parent, scope: { user_id: 'u1' }, similaritySearchParams: { searchQuery: 'which tea do I like', topK: 5 } }
    const [found] = await client.retrieveMemories(request)
    const local = await quarryServer.engines.memoryBank.retrieveMemories(request)
    if (!local.ok) throw new Error(local.status.message)
    const retrieved = found.retrievedMemories ?? []
    expect(retrieved.map((r) => [r.memory?.name, r.memory?.fact, r.distance])).toEqual(local.response.retrievedMemories?.map((r) => [r.memory.name, r.memory.fact, r.distance]))
    expect(retrieved.map((r) => r.memory?.name)).toEqual([created[0]?.name, created[1]?.name])
    expectExchangedToken(from)
    await client.close()
  })
})

describe("@google-cloud/vertexai's Client (agent engines) with apiEndpoint: ADC only", () => {
  it('creates and retrieves memories like the engine in process', async () => {
    const from = requests.length
    const client = new Client({ project: 'demo', location: 'us-central1', apiEndpoint: url })
    const memories = client.agentEnginesInternal.memories
    const engine = 'reasoningEngines/2'
    const parent = `${LOCATION}/${engine}`
    const names: string[] = []
    for (const fact of ['My bike is red.', 'I cycle to work.', 'I own a red car.']) {
      const operation = await memories.createInternal({ name: engine, fact, scope: { user_id: 'u9' } })
      expect(operation.done).toBe(true)
      const local = await quarryServer.engines.memoryBank.getMemory({ name: operation.response?.name ?? '' })
      if (!local.ok) throw new Error(local.status.message)
      expect(operation.response).toMatchObject({ name: local.response.name, fact, scope: { user_id: 'u9' }, createTime: local.response.createTime })
      names.push(local.response.name)
    }
    expect(names.every((n) => n.startsWith(`${parent}/memories/`))).toBe(true)
    const answer = await memories.retrieveInternal({ name: engine, scope: { user_id: 'u9' }, similaritySearchParams: { searchQuery: 'red bike', topK: 2 } })
    const local = await quarryServer.engines.memoryBank.retrieveMemories({ parent, scope: { user_id: 'u9' }, similaritySearchParams: { searchQuery: 'red bike', topK: 2 } })
    if (!local.ok) throw new Error(local.status.message)
    expect(answer.retrievedMemories?.map((r) => [r.memory?.name, r.memory?.fact, r.distance])).toEqual(local.response.retrievedMemories?.map((r) => [r.memory.name, r.memory.fact, r.distance]))
    expect(answer.retrievedMemories?.[0]?.memory?.name).toBe(names[0])
    expectExchangedToken(from)
  })
})

describe("ADK's VertexAiMemoryBankService, given that Client", () => {
  it('adds memories and searches them like the engine in process', async () => {
    const from = requests.length
    const facts = ['I prefer window seats.', 'My flight to Oslo leaves on Friday.', 'I am vegetarian.']
    const spec = {
      engine: '3',
      adds: [
        { appName: 'travel', userId: 'ana', memories: facts.map((text) => ({ content: { role: 'user', parts: [{ text }] } })) },
        { appName: 'travel', userId: 'bo', memories: [{ content: { parts: [{ text: 'I prefer aisle seats.' }] } }] },
      ],
      search: { appName: 'travel', userId: 'ana', query: 'window seats please' },
    }
    // The child gets the environment a user sets, nothing else of ours.
    const { stdout } = await execFileAsync(process.execPath, [ADK_SCRIPT, url, JSON.stringify(spec)], { env: { ...process.env }, timeout: 60_000 })
    const found = JSON.parse(stdout) as { memories: { author?: string; content: { parts?: { text?: string }[] }; timestamp?: string }[] }

    const parent = `${LOCATION}/reasoningEngines/3`
    const local = await quarryServer.engines.memoryBank.retrieveMemories({ parent, scope: { app_name: 'travel', user_id: 'ana' }, similaritySearchParams: { searchQuery: 'window seats please' } })
    if (!local.ok) throw new Error(local.status.message)
    const expected = local.response.retrievedMemories ?? []
    expect(expected.length).toBe(3)
    expect(found.memories.map((m) => [m.author, m.content.parts?.map((p) => p.text), m.timestamp])).toEqual(expected.map((r) => ['user', [r.memory.fact], r.memory.updateTime]))
    expect(found.memories[0]?.content.parts?.[0]?.text).toBe('I prefer window seats.')
    // Scope kept: bo's memory is not ana's.
    expect(found.memories.flatMap((m) => m.content.parts?.map((p) => p.text))).not.toContain('I prefer aisle seats.')
    const listed = await quarryServer.engines.memoryBank.listMemories({ parent })
    if (!listed.ok) throw new Error(listed.status.message)
    expect(listed.response.memories?.map((m) => [m.fact, m.scope]).sort()).toEqual([...facts.map((f) => [f, { app_name: 'travel', user_id: 'ana' }]), ['I prefer aisle seats.', { app_name: 'travel', user_id: 'bo' }]].sort())
    expectExchangedToken(from)
  })
})

/** One request over raw HTTP (any Host), for the token endpoint's refusals. */
function send(method: string, path: string, options: { body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; headers: Record<string, unknown>; json: Record<string, unknown> }> {
  const headers = { ...(options.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(options.body)) }), ...options.headers }
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown> }))
    })
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer`)))
    req.on('error', reject)
    req.end(options.body)
  })
}

describe('the token endpoint', () => {
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
  const exchange = (fields: Record<string, string>): string => new URLSearchParams(fields).toString()
  const valid = { grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: 'anything at all', subject_token_type: 'urn:ietf:params:oauth:token-type:id_token', audience: 'any', scope: 'https://www.googleapis.com/auth/cloud-platform', requested_token_type: 'urn:ietf:params:oauth:token-type:access_token' }

  it("answers RFC 8693's shape for any subject token, uncached", async () => {
    const answer = await send('POST', '/v1/token', { body: exchange(valid), headers: FORM })
    expect(answer.status).toBe(200)
    expect(answer.json).toEqual({ access_token: LOCAL_ACCESS_TOKEN, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: 3600 })
    expect(answer.headers['cache-control']).toBe('no-store')
    const minimal = await send('POST', '/v1/token', { body: exchange({ grant_type: valid.grant_type, subject_token: 'x', subject_token_type: 'y' }), headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' } })
    expect(minimal.status).toBe(200)
    const subject = await send('GET', '/quarry/v1/subject-token')
    expect(subject).toMatchObject({ status: 200, json: { subject_token: 'quarry-local-subject-token' } })
  })

  it('refuses malformed requests with OAuth errors that say what to send, never a stack', async () => {
    const without = (name: string): Record<string, string> => Object.fromEntries(Object.entries(valid).filter(([k]) => k !== name))
    const cases: [string, Promise<{ status: number; json: Record<string, unknown> }>, number, string, RegExp][] = [
      ['GET', send('GET', '/v1/token'), 405, 'invalid_request', /takes POST/],
      ['JSON body', send('POST', '/v1/token', { body: JSON.stringify(valid), headers: { 'content-type': 'application/json' } }), 400, 'invalid_request', /form-encoded.*received "application\/json"/],
      ['no subject_token', send('POST', '/v1/token', { body: exchange(without('subject_token')), headers: FORM }), 400, 'invalid_request', /subject_token is required/],
      ['no subject_token_type', send('POST', '/v1/token', { body: exchange(without('subject_token_type')), headers: FORM }), 400, 'invalid_request', /subject_token_type is required/],
      ['no grant_type', send('POST', '/v1/token', { body: exchange(without('grant_type')), headers: FORM }), 400, 'invalid_request', /grant_type is required/],
      ['other grant', send('POST', '/v1/token', { body: exchange({ ...valid, grant_type: 'client_credentials' }), headers: FORM }), 400, 'unsupported_grant_type', /grant_type must be urn:ietf:params:oauth:grant-type:token-exchange; received "client_credentials"/],
      ['other token type', send('POST', '/v1/token', { body: exchange({ ...valid, requested_token_type: 'urn:ietf:params:oauth:token-type:jwt' }), headers: FORM }), 400, 'invalid_request', /requested_token_type must be/],
      ['twice', send('POST', '/v1/token', { body: `${exchange(valid)}&subject_token=again`, headers: FORM }), 400, 'invalid_request', /subject_token is given 2 times/],
      ['too large', send('POST', '/v1/token', { body: `${exchange(valid)}&pad=${'a'.repeat(70_000)}`, headers: FORM }), 413, 'invalid_request', /larger than 65536 bytes/],
      ['POST subject token', send('POST', '/quarry/v1/subject-token', { body: '', headers: FORM }), 405, 'invalid_request', /takes GET/],
    ]
    for (const [what, answer, status, error, description] of cases) {
      const { status: got, json } = await answer
      expect({ what, status: got, error: json.error }).toEqual({ what, status, error })
      expect(json.error_description, what).toMatch(description)
      expect(Object.keys(json).sort()).toEqual(['error', 'error_description'])
      expect(String(json.error_description)).not.toMatch(/\n\s+at /)
    }
  })

  it('goes through the Host and Origin guard like every route', async () => {
    const body = exchange(valid)
    const rebound = await send('POST', '/v1/token', { body, headers: { ...FORM, host: 'rebound.attacker.example' } })
    expect(rebound.status).toBe(403)
    expect(rebound.json.error).toMatchObject({ status: 'PERMISSION_DENIED' })
    expect((await send('GET', '/quarry/v1/subject-token', { headers: { origin: 'https://attacker.example' } })).status).toBe(403)
    FORGED_HOSTS.add(`localhost:${port}`)
    expect((await send('POST', '/v1/token', { body, headers: { ...FORM, host: `localhost:${port}` } })).status).toBe(200)
  })
})

describe('quarry serve --credentials-out and quarry credentials', () => {
  it('serve writes the file once listening (--port 0 included), mode 0600, and a client runs on it alone', async () => {
    const file = join(dir, 'from-cli.json')
    const lines: string[] = []
    const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => void lines.push(parts.join(' ')))
    const stop = new AbortController()
    try {
      const serving = runServe(['--port', '0', '--embedder', 'hashing', '--credentials-out', file], { signal: stop.signal })
      await vi.waitFor(() => expect(lines.some((l) => l.includes('credentials in '))).toBe(true), { timeout: 30_000 })
      const served = /serving on http:\/\/127\.0\.0\.1:(\d+)/.exec(lines.join('\n'))
      const cliPort = Number(served?.[1])
      expect(cliPort).toBeGreaterThan(0)
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(localCredentials({ host: '127.0.0.1', port: cliPort }))
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(lines.find((l) => l.includes('credentials in '))?.trim()).toBe(`credentials in ${file} (for GOOGLE_APPLICATION_CREDENTIALS; token exchange at http://127.0.0.1:${cliPort}/v1/token)`)

      process.env.GOOGLE_APPLICATION_CREDENTIALS = file
      const client = new aiplatform.v1beta1.MemoryBankServiceClient({ apiEndpoint: '127.0.0.1', port: cliPort, protocol: 'http', fallback: true })
      const parent = `${LOCATION}/reasoningEngines/5`
      await (await client.createMemory({ parent, memory: { fact: 'I like green tea.', scope: { user_id: 'u1' } } }))[0].promise()
      const [listed] = await client.listMemories({ parent })
      expect(listed.map((m) => m.fact)).toEqual(['I like green tea.'])
      await client.close()
      stop.abort()
      expect(await serving).toBe(0)
    } finally {
      process.env.GOOGLE_APPLICATION_CREDENTIALS = adcFile
      stop.abort()
      log.mockRestore()
    }
  })

  it('serve refuses a --credentials-out in a missing folder before starting', async () => {
    const missing = join(dir, 'no-such-folder', 'adc.json')
    const run = await runQuarry(['serve', '--port', '0', '--embedder', 'hashing', '--credentials-out', missing])
    expect(run.code).toBe(2)
    expect(run.out).toBe('')
    expect(run.err).toMatch(new RegExp(`^quarry serve: --credentials-out ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the folder .* does not exist; create it or name a file in another folder`))
  })

  it('quarry credentials prints the environment and every SDK endpoint option for the server it names', async () => {
    const run = await runQuarry(['credentials', '--port', '9090', '--file', 'my-adc.json'])
    expect(run.code).toBe(0)
    expect(run.err).toBe('')
    for (const line of [
      'serve --port 9090 --credentials-out my-adc.json',
      'GOOGLE_APPLICATION_CREDENTIALS=my-adc.json GOOGLE_CLOUD_PROJECT=my-project',
      "new v1beta1.MemoryBankServiceClient({ apiEndpoint: '127.0.0.1', port: 9090, protocol: 'http', fallback: true })",
      "const client = new Client({ project: 'my-project', location: 'us-central1', apiEndpoint: 'http://127.0.0.1:9090' })",
      "new VertexAiMemoryBankService({ projectId: 'my-project', location: 'us-central1', agentEngineId: '1', client })",
      "httpOptions: { baseUrl: 'http://127.0.0.1:9090' }",
      'VertexRagServiceClient(client_options={"api_endpoint": "http://127.0.0.1:9090"}, transport="rest")',
      'http_options={"base_url": "http://127.0.0.1:9090"}',
      'POST http://127.0.0.1:9090/v1/token) accepts any subject token',
    ]) {
      expect(run.out).toContain(line)
    }
    // generateContent is served (docs/generate-content.md), by a local model: the guide says so, not that no model is served.
    expect(run.out).toContain(`@google/genai (GOOGLE_VERTEX_BASE_URL=http://127.0.0.1:9090 does the same; generateContent answers from a local model, not Gemini):`)
    expect(run.out).not.toContain('serves no models')
    expect((await runQuarry(['credentials', '--host', '::1'])).out).toContain("apiEndpoint: 'http://[::1]:8080'")
    expect(await runQuarry(['credentials', '--port', '0'])).toMatchObject({ code: 2, err: expect.stringMatching(/--port must be an integer from 1 to 65535; received 0[\s\S]*usage: .*credentials/) })
    expect(await runQuarry(['credentials', '--host', 'a b'])).toMatchObject({ code: 2, err: expect.stringMatching(/--host must be a host name or an IP address/) })
    expect((await runQuarry(['credentials', '--help'])).out).toMatch(/--port[\s\S]*--host[\s\S]*--file/)
    expect((await runQuarry(['help'])).out).toMatch(/^ {2}credentials \[options\] +\S/m)
  })
})
