import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, type Outcome } from '@quarry/adapters'

/**
 * Agent Engine resources (reasoning-engines.ts, engine-config.ts) at their edges: what a create or
 * an update may store, and that a refused one changes nothing.
 */
const embedder = createHashingEmbedder({ dimensions: 16 })
const L = 'projects/p/locations/l'
const TTL = 'reasoningEngine.contextSpec.memoryBankConfig.ttlConfig'

function failed(outcome: Outcome<unknown>): { code: number; message: string; field: string | undefined } {
  if (outcome.ok) throw new Error(`expected a failure, got ${JSON.stringify(outcome.response)}`)
  return { code: outcome.status.code, message: outcome.status.message, field: outcome.status.details?.[0]?.fieldViolations[0]?.field }
}

/** The operation's response of a finished long-running call. */
function done<T = Record<string, unknown>>(outcome: Outcome<unknown>): T {
  if (!outcome.ok) throw new Error(`expected a response, got ${JSON.stringify(outcome.status)}`)
  return (outcome.response as { response: T }).response
}

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
