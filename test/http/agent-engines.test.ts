import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { QUARRY_BIN, startServe, type ServeProcess } from '../support/quarry-process.js'
import { aiplatform, grpc, localAuth } from './google-gax.js'

/**
 * Agent Engine resources and the local extractor against the `quarry serve` command in its own
 * process: ADK 2.0's addSessionToMemory then searchMemory (in a child process:
 * test/support/adk-agent-memory.mjs), the Memory Bank quickstart's flow (an engine with a
 * memoryBankConfig, memories generated and retrieved under it) with @google-cloud/aiplatform over
 * REST and gRPC, and `--extractor` with a scripted module.
 */
const ADK_SCRIPT = fileURLToPath(new URL('../support/adk-agent-memory.mjs', import.meta.url))
const SCRIPTED = fileURLToPath(new URL('../support/scripted-extractor.mjs', import.meta.url))
const execFileAsync = promisify(execFile)
const LOCATION = 'projects/demo/locations/us-central1'

let dir: string
let serve: ServeProcess
let adc: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-agent-engines-'))
  adc = join(dir, 'adc.json')
  serve = await startServe(['--embedder', 'hashing', '--grpc-port', '0', '--credentials-out', adc, '--no-console'])
}, 60_000)

afterAll(async () => {
  await serve?.kill()
  rmSync(dir, { recursive: true, force: true })
})

async function rest(path: string, init?: { method?: string; body?: unknown }): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${serve.base}${path}`, { method: init?.method ?? 'GET', ...(init?.body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(init.body) }) })
  return { status: response.status, json: (await response.json()) as Record<string, unknown> }
}

describe("ADK's addSessionToMemory, then searchMemory, with the local extractor", () => {
  it("turns the user's statements into memories that searchMemory finds, in the server's order", async () => {
    const spec = {
      engine: '31',
      turns: [
        { author: 'user', text: 'I live in Paris. Can you suggest a museum?' },
        { author: 'guide', text: 'I recommend the Orangerie.' },
        { author: 'user', text: 'My favorite painter is Monet.' },
      ],
      query: 'Which painter do I like?',
    }
    const { stdout } = await execFileAsync(process.execPath, [ADK_SCRIPT, serve.base, JSON.stringify(spec)], { env: { ...process.env, GOOGLE_APPLICATION_CREDENTIALS: adc, GOOGLE_CLOUD_PROJECT: 'demo' }, timeout: 60_000 })
    const lines = stdout.trim().split('\n')
    const out = JSON.parse(lines[lines.length - 1] ?? '') as { session: string; search: string[] }
    // The memories the server holds: the two user statements, scoped as ADK scopes them; not the guide's turn, not the question.
    const listed = await rest(`/v1beta1/${LOCATION}/reasoningEngines/31/memories`)
    const memories = (listed.json['memories'] as { fact: string; scope: Record<string, string> }[]).map((m) => [m.fact, m.scope])
    expect(memories.sort()).toEqual([
      ['I live in Paris.', { app_name: 'travel', user_id: 'ana' }],
      ['My favorite painter is Monet.', { app_name: 'travel', user_id: 'ana' }],
    ])
    // searchMemory is retrieveMemories with the query: the same facts in the same order.
    const retrieved = await rest(`/v1beta1/${LOCATION}/reasoningEngines/31/memories:retrieve`, { method: 'POST', body: { scope: { app_name: 'travel', user_id: 'ana' }, similaritySearchParams: { searchQuery: spec.query } } })
    const order = (retrieved.json['retrievedMemories'] as { memory: { fact: string } }[]).map((r) => r.memory.fact)
    expect(order[0]).toBe('My favorite painter is Monet.')
    expect(out.search).toEqual(order)
  }, 90_000)
})

type Clients = {
  readonly engines: InstanceType<typeof aiplatform.v1beta1.ReasoningEngineServiceClient>
  readonly ga: InstanceType<typeof aiplatform.v1.ReasoningEngineServiceClient>
  readonly memories: InstanceType<typeof aiplatform.v1beta1.MemoryBankServiceClient>
}

function clients(transport: 'rest' | 'grpc'): Clients {
  const options =
    transport === 'rest'
      ? { apiEndpoint: '127.0.0.1', port: serve.port, protocol: 'http', fallback: true, authClient: localAuth() }
      : { apiEndpoint: '127.0.0.1', port: serve.grpcPort as number, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' }
  return { engines: new aiplatform.v1beta1.ReasoningEngineServiceClient(options), ga: new aiplatform.v1.ReasoningEngineServiceClient(options), memories: new aiplatform.v1beta1.MemoryBankServiceClient(options) }
}

/**
 * The status of a failed call by name: gRPC gives its code; over REST, gaxios rejects first, with
 * the `{"error": {...}}` JSON as its message (test/http/google-clients.test.ts).
 */
function statusOf(e: unknown): string {
  const error = e as { code?: number; message?: string }
  if (error.message?.startsWith('{') === true) return (JSON.parse(error.message) as { error: { status: string } }).error.status
  return Object.entries(grpc.status).find(([, code]) => code === error.code)?.[0] ?? String(error.code)
}

describe("the Memory Bank quickstart with @google-cloud/aiplatform (aiplatform 6.11)", () => {
  for (const transport of ['rest', 'grpc'] as const) {
    it(`over ${transport}: an Agent Engine with a memoryBankConfig, memories generated and retrieved under it, deleted with force`, async () => {
      const { engines, ga, memories } = clients(transport)
      try {
        const memoryBankConfig = {
          generationConfig: { model: `${LOCATION}/publishers/google/models/gemini-2.5-flash` },
          similaritySearchConfig: { embeddingModel: `${LOCATION}/publishers/google/models/text-embedding-005` },
          ttlConfig: { defaultTtl: { seconds: 86_400 } },
        }
        const [op] = await engines.createReasoningEngine({ parent: LOCATION, reasoningEngine: { displayName: `quickstart-${transport}`, contextSpec: { memoryBankConfig } } })
        const [engine] = await op.promise()
        const name = engine.name as string
        expect(name).toMatch(new RegExp(`^${LOCATION}/reasoningEngines/[1-9][0-9]{18}$`))
        const [got] = await engines.getReasoningEngine({ name })
        expect([got.displayName, got.contextSpec?.memoryBankConfig?.generationConfig?.model, String(got.contextSpec?.memoryBankConfig?.ttlConfig?.defaultTtl?.seconds)]).toEqual([
          `quickstart-${transport}`,
          memoryBankConfig.generationConfig.model,
          '86400',
        ])
        const [listed] = await engines.listReasoningEngines({ parent: LOCATION, pageSize: 1 })
        expect(listed.map((e) => e.name)).toContain(name)

        const [uop] = await engines.updateReasoningEngine({ reasoningEngine: { name, displayName: 'renamed' }, updateMask: { paths: ['display_name'] } })
        const [updated] = await uop.promise()
        expect([updated.displayName, updated.contextSpec?.memoryBankConfig?.similaritySearchConfig?.embeddingModel]).toEqual(['renamed', memoryBankConfig.similaritySearchConfig.embeddingModel])

        // generateMemories from contents: the local extractor, then consolidation (the same slot: UPDATED).
        const scope = { user_id: `ana-${transport}` }
        const generate = async (text: string): Promise<[string, string][]> => {
          const [gop] = await memories.generateMemories({ parent: name, scope, directContentsSource: { events: [{ content: { role: 'user', parts: [{ text }] } }] } })
          const [generated] = await gop.promise()
          // The client decodes the enum to its number.
          const actions = ['ACTION_UNSPECIFIED', 'CREATED', 'UPDATED', 'DELETED']
          return (generated.generatedMemories ?? []).map((g) => [typeof g.action === 'number' ? (actions[g.action] ?? '') : String(g.action), String(g.memory?.fact)])
        }
        expect(await generate('I live in Paris. What is good to eat there? My favorite painter is Monet.')).toEqual([
          ['CREATED', 'I live in Paris.'],
          ['CREATED', 'My favorite painter is Monet.'],
        ])
        expect(await generate('I moved to Lyon.')).toEqual([['UPDATED', 'I moved to Lyon.']])
        const [retrieved] = await memories.retrieveMemories({ parent: name, scope, similaritySearchParams: { searchQuery: 'Which painter?' } })
        const facts = (retrieved.retrievedMemories ?? []).map((r) => r.memory?.fact)
        expect([...facts].sort()).toEqual(['I moved to Lyon.', 'My favorite painter is Monet.'])
        expect(facts[0]).toBe('My favorite painter is Monet.')
        // The engine's ttlConfig.defaultTtl set each memory's expiry.
        for (const r of retrieved.retrievedMemories ?? []) expect(Number(r.memory?.expireTime?.seconds) - Number(r.memory?.updateTime?.seconds)).toBe(86_400)

        const refused = await engines.deleteReasoningEngine({ name }).then(() => undefined, statusOf)
        expect(refused).toBe('FAILED_PRECONDITION')
        const [dop] = await engines.deleteReasoningEngine({ name, force: true })
        await dop.promise()
        expect(await engines.getReasoningEngine({ name }).then(() => undefined, statusOf)).toBe('NOT_FOUND')

        // v1: the same service, the same engines.
        const [gaop] = await ga.createReasoningEngine({ parent: LOCATION, reasoningEngine: { displayName: `ga-${transport}` } })
        const [gaEngine] = await gaop.promise()
        const [gaGot] = await engines.getReasoningEngine({ name: gaEngine.name as string })
        expect(gaGot.displayName).toBe(`ga-${transport}`)
        const [gadop] = await ga.deleteReasoningEngine({ name: gaEngine.name as string })
        await gadop.promise()
      } finally {
        await Promise.all([engines.close(), ga.close(), memories.close()])
      }
    }, 60_000)
  }

  it('over REST: the short bindings (v1beta1 only) and query answering 501', async () => {
    const created = await rest('/v1beta1/reasoningEngines', { method: 'POST', body: { displayName: 'short' } })
    const engine = (created.json['response'] as { name: string }).name
    expect(engine).toMatch(/^reasoningEngines\/[1-9][0-9]{18}$/)
    expect((await rest(`/v1beta1/${engine}`)).json['displayName']).toBe('short')
    expect((await rest('/v1/reasoningEngines')).status).toBe(404)
    const query = await rest(`/v1beta1/${engine}:query`, { method: 'POST', body: { input: {} } })
    expect([query.status, (query.json['error'] as { status: string }).status]).toEqual([501, 'UNIMPLEMENTED'])
    // The newer memory methods @google-cloud/vertexai 1.12 calls (ingestEventsInternal, retrieveProfiles): 501 saying what to call instead.
    for (const [verb, instead] of [['ingestEvents', 'memories:generate'], ['retrieveProfiles', 'memories:retrieve']] as const) {
      const answer = await rest(`/v1beta1/${engine}/memories:${verb}`, { method: 'POST', body: {} })
      expect([answer.status, answer.json['error']]).toEqual([501, { code: 501, status: 'UNIMPLEMENTED', message: expect.stringContaining(`Quarry does not serve memories:${verb}; `) as string }])
      expect((answer.json['error'] as { message: string }).message).toContain(instead)
    }
  })

  it('over gRPC: query and the streamed query answer UNIMPLEMENTED, saying why', async () => {
    const options = { apiEndpoint: '127.0.0.1', port: serve.grpcPort as number, sslCreds: grpc.credentials.createInsecure(), universeDomain: 'googleapis.com' }
    const execution = new aiplatform.v1beta1.ReasoningEngineExecutionServiceClient(options)
    const name = `${LOCATION}/reasoningEngines/1`
    try {
      const why = /runs no deployed agent code/
      const unary = await execution.queryReasoningEngine({ name, input: {} }).then(() => undefined, (e: unknown) => e as { code: number; details: string })
      expect([unary?.code, unary?.details]).toEqual([grpc.status.UNIMPLEMENTED, expect.stringMatching(why)])
      const streamed = await new Promise<{ code: number; details: string }>((resolve, reject) => {
        const stream = execution.streamQueryReasoningEngine({ name, input: {} })
        stream.on('data', () => reject(new Error('a streamed query sent a message')))
        stream.on('error', (e: { code: number; details: string }) => resolve(e))
        stream.on('end', () => reject(new Error('a streamed query ended without an error')))
      })
      expect([streamed.code, streamed.details]).toEqual([grpc.status.UNIMPLEMENTED, expect.stringMatching(why)])
    } finally {
      await execution.close()
    }
  })
})

describe('reasoning engines in the data folder', () => {
  it('survive a SIGKILL: the write-ahead log replays the engine, its config and its generated memories', async () => {
    const data = join(dir, 'data')
    const first = await startServe(['--embedder', 'hashing', '--no-console', '--data', data])
    const post = async (base: string, path: string, body: unknown): Promise<Record<string, unknown>> =>
      (await (await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as Record<string, unknown>
    let before: unknown[]
    let name: string
    try {
      const created = await post(first.base, `/v1beta1/${LOCATION}/reasoningEngines`, { displayName: 'kept', contextSpec: { memoryBankConfig: { ttlConfig: { defaultTtl: '600s' } } } })
      name = (created['response'] as { name: string }).name
      await post(first.base, `/v1beta1/${name}/memories:generate`, { scope: { user_id: 'u' }, directContentsSource: { events: [{ content: { role: 'user', parts: [{ text: 'My name is Ana. I live in Oslo.' }] } }] } })
      before = [await (await fetch(`${first.base}/v1beta1/${name}`)).json(), await (await fetch(`${first.base}/v1beta1/${name}/memories`)).json()]
    } finally {
      await first.kill()
    }
    const second = await startServe(['--embedder', 'hashing', '--no-console', '--data', data])
    try {
      // Ready once the log is replayed.
      for (let i = 0; i < 600 && (await fetch(`${second.base}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 50))
      const after = [await (await fetch(`${second.base}/v1beta1/${name}`)).json(), await (await fetch(`${second.base}/v1beta1/${name}/memories`)).json()]
      expect(after).toEqual(before)
      const memories = (after[1] as { memories: { fact: string; expireTime: string; createTime: string }[] }).memories
      expect(memories.map((m) => [m.fact, Date.parse(m.expireTime) - Date.parse(m.createTime)]).sort()).toEqual([
        ['I live in Oslo.', 600_000],
        ['My name is Ana.', 600_000],
      ])
    } finally {
      await second.kill()
    }
  }, 60_000)
})

describe('quarry serve --extractor MODULE', () => {
  it('generates memories with the scripted extractor', async () => {
    const scripted = await startServe(['--embedder', 'hashing', '--no-console', '--extractor', SCRIPTED])
    try {
      const parent = `${LOCATION}/reasoningEngines/8`
      const generate = async (text: string): Promise<[string, string][]> => {
        const op = await fetch(`${scripted.base}/v1beta1/${parent}/memories:generate`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ scope: { user_id: 'u' }, directContentsSource: { events: [{ content: { role: 'user', parts: [{ text }] } }] } }),
        })
        const json = (await op.json()) as { response: { generatedMemories?: { action: string; memory: { fact: string } }[] } }
        return (json.response.generatedMemories ?? []).map((g) => [g.action, g.memory.fact])
      }
      expect(await generate('Book me a flight to Rome.')).toEqual([['CREATED', 'The user is planning a trip to Rome.']])
      expect(await generate('I always fly economy.')).toEqual([
        ['CREATED', 'The user flies economy class.'],
        ['CREATED', 'The user is price-conscious.'],
      ])
      expect(await generate('Nothing scripted.')).toEqual([])
    } finally {
      await scripted.kill()
    }
  }, 60_000)

  it('refuses a module that exports no function: exit 2 and what to give', async () => {
    const module = join(dir, 'not-a-function.mjs')
    writeFileSync(module, 'export const facts = []\n')
    const run = await execFileAsync(process.execPath, [QUARRY_BIN, 'serve', '--port', '0', '--embedder', 'hashing', '--extractor', module], { timeout: 30_000 }).then(
      () => ({ code: 0, err: '' }),
      (e: { code: number; stderr: string }) => ({ code: e.code, err: e.stderr }),
    )
    expect(run.code).toBe(2)
    expect(run.err.split('\n')[0]).toBe(`quarry serve: --extractor ${module} must export a function, as its default export or as "extractor"; it exports facts`)
  }, 30_000)
})
