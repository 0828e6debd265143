import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, type Outcome } from '@quarry/adapters'
import { done, failed } from '../support/rpc-failure.js'

/**
 * Agent Engine resources (reasoning-engines.ts, engine-config.ts) at their edges: what a create or
 * an update may store, and that a refused one changes nothing.
 */
const embedder = createHashingEmbedder({ dimensions: 16 })
const L = 'projects/p/locations/l'
const TTL = 'reasoningEngine.contextSpec.memoryBankConfig.ttlConfig'

async function engineNames(bank: MemoryBank): Promise<string[]> {
  const listed = await bank.reasoningEngines.listReasoningEngines({ parent: L })
  return listed.ok ? (listed.response.reasoningEngines ?? []).map((e) => e.name) : []
}

describe('an engine TTL (contextSpec.memoryBankConfig.ttlConfig)', () => {
  it('is refused at create unless positive and ending by 9999-12-31T23:59:59Z, naming its path; nothing is created', async () => {
    const bank = new MemoryBank({ embedder, clock: () => new Date('2026-01-01T00:00:00Z') })
    const create = (ttlConfig: unknown): Promise<Outcome<unknown>> => bank.reasoningEngines.createReasoningEngine({ parent: L, reasoningEngine: { contextSpec: { memoryBankConfig: { ttlConfig } } } })
    const duration = "type.googleapis.com/google.protobuf.Duration"
    // Past google.protobuf.Duration's range ("from -315,576,000,000 to +315,576,000,000 inclusive", duration.proto).
    expect(failed(await create({ defaultTtl: '9999999999999s' }))).toEqual({ code: 3, field: `${TTL}.defaultTtl`, message: `Invalid value at '${TTL}.defaultTtl' (${duration}), "9999999999999s": a Duration is at most 315576000000s (about 10,000 years) either way.` })
    expect(failed(await create({ defaultTtl: '999999999999s' }))).toMatchObject({ code: 3, field: `${TTL}.defaultTtl` })
    // A Duration, but every memory written would expire after the year 9999 (its expireTime has no RFC 3339 form).
    expect(failed(await create({ defaultTtl: '315000000000s' }))).toEqual({ code: 3, field: `${TTL}.defaultTtl`, message: `${TTL}.defaultTtl: defaultTtl 315000000000s ends after the year 9999; give a shorter one.` })
    // A memory's time to live is positive ("The expiration time is computed: now + TTL", Memory.ttl): a negative one was ignored.
    expect(failed(await create({ defaultTtl: '-5s' }))).toEqual({ code: 3, field: `${TTL}.defaultTtl`, message: `${TTL}.defaultTtl: defaultTtl must be positive, like "3600s"; received -5s.` })
    expect(failed(await create({ defaultTtl: '0s' }))).toMatchObject({ code: 3, field: `${TTL}.defaultTtl` })
    expect(failed(await create({ granularTtlConfig: { createTtl: '60s', generateUpdatedTtl: '-1s' } }))).toEqual({ code: 3, field: `${TTL}.granularTtlConfig.generateUpdatedTtl`, message: `${TTL}.granularTtlConfig.generateUpdatedTtl: generateUpdatedTtl must be positive, like "3600s"; received -1s.` })
    expect(failed(await create({ granularTtlConfig: { generateCreatedTtl: '315000000000s' } }))).toMatchObject({ code: 3, field: `${TTL}.granularTtlConfig.generateCreatedTtl` })
    expect(failed(await create({ defaultTtl: '60s', memoryRevisionDefaultTtl: '-60s' }))).toMatchObject({ code: 3, field: `${TTL}.memoryRevisionDefaultTtl` })
    expect(await engineNames(bank)).toEqual([])
    expect(bank.engines().size).toBe(0)
  })

  it('is refused at update too, leaving the engine and its memories as they were', async () => {
    const bank = new MemoryBank({ embedder, clock: () => new Date('2026-01-01T00:00:00Z') })
    const engine = done<{ name: string }>(await bank.reasoningEngines.createReasoningEngine({ parent: L, reasoningEngine: { contextSpec: { memoryBankConfig: { ttlConfig: { defaultTtl: '60s' } } } } }))
    const before = await bank.reasoningEngines.getReasoningEngine({ name: engine.name })
    for (const defaultTtl of ['-5s', '315000000000s']) {
      const update = await bank.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name: engine.name, contextSpec: { memoryBankConfig: { ttlConfig: { defaultTtl } } } }, updateMask: 'contextSpec.memoryBankConfig.ttlConfig.defaultTtl' })
      expect(failed(update)).toMatchObject({ code: 3, field: `${TTL}.defaultTtl` })
    }
    expect(await bank.reasoningEngines.getReasoningEngine({ name: engine.name })).toEqual(before)
    const memory = done<{ createTime: string; expireTime: string }>(await bank.createMemory({ parent: engine.name, memory: { fact: 'I like tea', scope: { u: '1' } } }))
    expect(Date.parse(memory.expireTime) - Date.parse(memory.createTime)).toBe(60_000)
  })

  it('gives every memory written under the engine an expireTime in RFC 3339, the last instant at most', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z')
    const bank = new MemoryBank({ embedder, clock: () => new Date(now) })
    // 7,900 years: within range when the engine is created...
    const ttl = 7900 * 365 * 24 * 3600
    const engine = done<{ name: string }>(await bank.reasoningEngines.createReasoningEngine({ parent: L, reasoningEngine: { contextSpec: { memoryBankConfig: { ttlConfig: { defaultTtl: `${ttl}s` } } } } }))
    const first = done<{ expireTime: string }>(await bank.createMemory({ parent: engine.name, memory: { fact: 'I like tea', scope: { u: '1' } } }))
    expect(first.expireTime).toBe(new Date(Date.parse('2026-01-01T00:00:00Z') + ttl * 1000).toISOString())
    // ...and no further than the last instant once the clock has moved on (it was +0xxxxx-… text, then INTERNAL).
    now = Date.parse('2500-01-01T00:00:00Z')
    const later = done<{ name: string; expireTime: string }>(await bank.createMemory({ parent: engine.name, memory: { fact: 'I like jazz', scope: { u: '1' } } }))
    expect(later.expireTime).toBe('9999-12-31T23:59:59.999Z')
    const listed = await bank.listMemories({ parent: engine.name })
    expect(listed.ok && listed.response.memories?.map((m) => m.expireTime)).toEqual(['9999-12-31T23:59:59.999Z', first.expireTime])
    const generated = await bank.generateMemories({ parent: engine.name, scope: { u: '1' }, directMemoriesSource: { directMemories: [{ fact: 'I cycle to work.' }] } })
    expect(done<{ generatedMemories: { memory: { expireTime: string } }[] }>(generated).generatedMemories.map((g) => g.memory.expireTime)).toEqual(['9999-12-31T23:59:59.999Z'])
  })
})

describe('an update mask', () => {
  // field_mask.proto: an implementation "should verify the included field paths, and return an
  // INVALID_ARGUMENT error if any path is unmappable"; only a message has fields inside it.
  async function engineWith(bank: MemoryBank): Promise<string> {
    const reasoningEngine = {
      displayName: 'd',
      labels: { env: 'prod', team: 'a' },
      spec: { agentFramework: 'google-adk', packageSpec: { pythonVersion: '3.12', requirementsGcsUri: 'gs://b/r.txt' } },
      contextSpec: { memoryBankConfig: { ttlConfig: { defaultTtl: '60s' }, customizationConfigs: [{ memoryTopics: [] }] } },
    }
    return done<{ name: string }>(await bank.reasoningEngines.createReasoningEngine({ parent: L, reasoningEngine })).name
  }

  it('refuses a path inside a field that is no message, or naming no field, and changes nothing', async () => {
    const bank = new MemoryBank({ embedder, clock: () => new Date('2026-01-01T00:00:00Z') })
    const name = await engineWith(bank)
    const before = await bank.reasoningEngines.getReasoningEngine({ name })
    const cases: [string, unknown, string][] = [
      ['labels.env.x', {}, 'labels.env is a string, not a message: a path ends there; name "labels.env" whole.'],
      ['displayName.x', {}, 'displayName is a string, not a message: a path ends there; name "displayName" whole.'],
      ['contextSpec.memoryBankConfig.ttlConfig.defaultTtl.seconds', { contextSpec: { memoryBankConfig: { ttlConfig: { defaultTtl: '5s' } } } }, 'contextSpec.memoryBankConfig.ttlConfig.defaultTtl is a Duration, not a message: a path ends there; name "contextSpec.memoryBankConfig.ttlConfig.defaultTtl" whole.'],
      ['contextSpec.memoryBankConfig.customizationConfigs.x', {}, 'contextSpec.memoryBankConfig.customizationConfigs is a list, not a message: a path ends there; name "contextSpec.memoryBankConfig.customizationConfigs" whole.'],
      ['contextSpec.memoryBankConfig.ttl', {}, 'contextSpec.memoryBankConfig (google.cloud.aiplatform.v1beta1.ReasoningEngineContextSpec.MemoryBankConfig) has no field "ttl"; its fields: generationConfig, similaritySearchConfig, ttlConfig, customizationConfigs, disableMemoryRevisions.'],
      ['labels..env', {}, '"labels..env" is not a field path: field names joined by single dots, like "displayName".'],
      // Through JSON Quarry keeps as given: objects only.
      ['spec.agentFramework.name', { spec: { agentFramework: { name: 'x' } } }, '"spec.agentFramework.name" goes inside spec.agentFramework, which is not an object; name "spec.agentFramework" instead.'],
    ]
    for (const [updateMask, fields, description] of cases) {
      const update = await bank.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name, ...(fields as object) }, updateMask: `displayName,${updateMask}` })
      expect(failed(update), updateMask).toEqual({ code: 3, field: 'updateMask.paths[1]', message: `updateMask.paths[1]: ${description}` })
    }
    expect(await bank.reasoningEngines.getReasoningEngine({ name })).toEqual(before)
    // The engine still works: a memory written under it gets the configured expiry.
    const memory = done<{ createTime: string; expireTime: string }>(await bank.createMemory({ parent: name, memory: { fact: 'I like tea', scope: { u: '1' } } }))
    expect(Date.parse(memory.expireTime) - Date.parse(memory.createTime)).toBe(60_000)
  })

  it('sets or clears one key of a map, and a path inside a message or the JSON of spec', async () => {
    const bank = new MemoryBank({ embedder, clock: () => new Date('2026-01-01T00:00:00Z') })
    const name = await engineWith(bank)
    // AIP-161: "Field masks may permit the specification of specific fields in a map" with string keys.
    const labels = done<{ labels: unknown }>(await bank.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name, labels: { team: 'b', other: 'ignored' } }, updateMask: 'labels.team,labels.env' }))
    expect(labels.labels).toEqual({ team: 'b' })
    // A mask's paths are lowerCamelCase (proto3 JSON's FieldMask): labels.cost_center arrives as labels.costCenter,
    // and names the snake_case key the map holds, to set or to clear.
    await bank.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name, labels: { cost_center: 'a' } }, updateMask: 'labels.cost_center' })
    const renamed = done<{ labels: unknown }>(await bank.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name, labels: { cost_center: 'b' } }, updateMask: 'labels.cost_center' }))
    expect(renamed.labels).toEqual({ team: 'b', cost_center: 'b' })
    const cleared = done<{ labels: unknown }>(await bank.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name, labels: {} }, updateMask: 'labels.costCenter' }))
    expect(cleared.labels).toEqual({ team: 'b' })
    // The paths Google's Python SDK sends (agent_engines.update): inside spec, the rest of it kept.
    const spec = done<{ spec: unknown }>(await bank.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name, spec: { packageSpec: { pickleObjectGcsUri: 'gs://b/agent.pkl' } } }, updateMask: 'spec.package_spec.pickle_object_gcs_uri' }))
    expect(spec.spec).toEqual({ agentFramework: 'google-adk', packageSpec: { pythonVersion: '3.12', requirementsGcsUri: 'gs://b/r.txt', pickleObjectGcsUri: 'gs://b/agent.pkl' } })
  })

  it('setting one member of a oneof clears the other, as protobuf merges a mask (defaultTtl | granularTtlConfig)', async () => {
    const bank = new MemoryBank({ embedder, clock: () => new Date('2026-01-01T00:00:00Z') })
    const name = await engineWith(bank)
    const granular = { contextSpec: { memoryBankConfig: { ttlConfig: { granularTtlConfig: { createTtl: '120s' } } } } }
    const updated = done<{ contextSpec: unknown }>(await bank.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name, ...granular }, updateMask: 'contextSpec.memoryBankConfig.ttlConfig.granularTtlConfig' }))
    expect(updated.contextSpec).toEqual({ memoryBankConfig: { ttlConfig: { granularTtlConfig: { createTtl: '120s' } }, customizationConfigs: [{ memoryTopics: [] }] } })
    const memory = done<{ createTime: string; expireTime: string }>(await bank.createMemory({ parent: name, memory: { fact: 'I like tea', scope: { u: '1' } } }))
    expect(Date.parse(memory.expireTime) - Date.parse(memory.createTime)).toBe(120_000)
    // A path into the other member sets it back: granularTtlConfig goes.
    const back = done<{ contextSpec: unknown }>(await bank.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name, contextSpec: { memoryBankConfig: { ttlConfig: { defaultTtl: '30s' } } } }, updateMask: 'contextSpec.memoryBankConfig.ttlConfig.defaultTtl' }))
    expect(back.contextSpec).toEqual({ memoryBankConfig: { ttlConfig: { defaultTtl: '30s' }, customizationConfigs: [{ memoryTopics: [] }] } })
    // A path inside a member that neither side has sets nothing; one inside granularTtlConfig makes it the member.
    const inside = done<{ contextSpec: unknown }>(await bank.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name, ...granular }, updateMask: 'contextSpec.memoryBankConfig.ttlConfig.granularTtlConfig.createTtl' }))
    expect(inside.contextSpec).toEqual({ memoryBankConfig: { ttlConfig: { granularTtlConfig: { createTtl: '120s' } }, customizationConfigs: [{ memoryTopics: [] }] } })
  })

  it('of a memory or a session names whole fields: a path inside one is refused, nothing changes', async () => {
    const bank = new MemoryBank({ embedder, clock: () => new Date('2026-01-01T00:00:00Z') })
    const engine = await engineWith(bank)
    const memory = done<{ name: string }>(await bank.createMemory({ parent: engine, memory: { fact: 'I like tea', scope: { u: '1' }, metadata: { k: { stringValue: 'v' } } } }))
    const before = await bank.getMemory({ name: memory.name })
    expect(failed(await bank.updateMemory({ memory: { name: memory.name, fact: 'x' }, updateMask: 'fact.x' }))).toEqual({ code: 3, field: 'updateMask.paths[0]', message: 'updateMask.paths[0]: "fact.x": fact is updated whole; name it alone ("fact").' })
    expect(failed(await bank.updateMemory({ memory: { name: memory.name }, updateMask: 'displayName,metadata.k' }))).toMatchObject({ code: 3, field: 'updateMask.paths[1]' })
    expect(failed(await bank.updateMemory({ memory: { name: memory.name }, updateMask: 'scope.u' }))).toEqual({ code: 3, field: 'updateMask.paths[0]', message: 'updateMask.paths[0]: scope is immutable: create a memory in the other scope instead.' })
    expect(await bank.getMemory({ name: memory.name })).toEqual(before)
    const op = await bank.sessions.createSession({ parent: engine, session: { userId: 'u1', labels: { a: '1' } } })
    const session = done<{ name: string }>(op)
    const sessionBefore = await bank.sessions.getSession({ name: session.name })
    expect(failed(await bank.sessions.updateSession({ session: { name: session.name, labels: { a: '2' } }, updateMask: 'labels.a' }))).toEqual({ code: 3, field: 'updateMask.paths[0]', message: 'updateMask.paths[0]: "labels.a": labels is updated whole; name it alone ("labels").' })
    expect(await bank.sessions.getSession({ name: session.name })).toEqual(sessionBefore)
  })
})

describe('deleting an engine', () => {
  it('without force counts only live sessions: one holding an expired session goes, and the session with it', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z')
    const bank = new MemoryBank({ embedder, clock: () => new Date(now) })
    const engine = done<{ name: string }>(await bank.reasoningEngines.createReasoningEngine({ parent: L, reasoningEngine: { displayName: 'e' } }))
    const session = done<{ name: string }>(await bank.sessions.createSession({ parent: engine.name, session: { userId: 'u1', ttl: '86400s' } }))
    // A live session holds the engine back.
    expect(failed(await bank.reasoningEngines.deleteReasoningEngine({ name: engine.name }))).toEqual({ code: 9, field: undefined, message: `ReasoningEngine "${engine.name}" holds 0 memories and 1 session; delete them first, or pass force=true to delete them with it.` })
    now += 2 * 86_400_000
    // Expired: NOT_FOUND and listed nowhere, so it holds nothing back.
    expect(failed(await bank.sessions.getSession({ name: session.name })).code).toBe(5)
    expect(await bank.sessions.listSessions({ parent: engine.name })).toEqual({ ok: true, response: {} })
    const deleted = await bank.reasoningEngines.deleteReasoningEngine({ name: engine.name })
    expect(deleted.ok && deleted.response.done).toBe(true)
    expect(bank.engines().has(engine.name)).toBe(false)
    expect(await engineNames(bank)).toEqual([])
    expect(failed(await bank.sessions.getSession({ name: session.name })).code).toBe(5)
  })
})
