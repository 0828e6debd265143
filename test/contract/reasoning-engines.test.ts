import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MEMORY_METHODS, MemoryBank, REASONING_ENGINE_METHODS, SESSION_METHODS, seededRandomId, steppingClock, type Outcome } from '@quarry/adapters'
import { describeGolden, type GoldenCall, loadGolden } from './golden-runner.js'

/**
 * Agent Engine resources (ReasoningEngineService, v1beta1 and v1) over Memory Bank's engines:
 * golden request/response pairs, then the resource surviving a save and a load.
 */
const FILE = fileURLToPath(new URL('./golden/reasoning-engines.json', import.meta.url))
const scenarios = loadGolden(FILE)

type Surface = Readonly<Record<string, (request: unknown) => Promise<Outcome<unknown>>>>

function newBank(): MemoryBank {
  return new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 64 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(11) })
}

function engine(): GoldenCall {
  const bank = newBank()
  return (step, request) => {
    const v1 = step.version === 'v1'
    const has = (names: readonly string[]): boolean => names.includes(step.call)
    // Operations are answered by every surface alike: the reasoning engine one serves them here.
    const surface = (has(REASONING_ENGINE_METHODS) ? (v1 ? bank.reasoningEngines.v1 : bank.reasoningEngines) : has(SESSION_METHODS) ? bank.sessions : has(MEMORY_METHODS) ? bank : undefined) as Surface | undefined
    const method = surface?.[step.call]
    if (!surface || !method) throw new Error(`unknown method ${step.call}`)
    return method.call(surface, request)
  }
}

describeGolden('ReasoningEngineService golden request/response pairs', FILE, scenarios, engine)

describe('reasoning engines are saved with their memory bank', () => {
  it('the resource, its config and its memories survive saveTo / loadFrom; an implicit engine stays implicit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-engines-'))
    try {
      const bank = newBank()
      const created = await bank.reasoningEngines.createReasoningEngine({ parent: 'projects/p/locations/l', reasoningEngine: { displayName: 'e', contextSpec: { memoryBankConfig: { ttlConfig: { defaultTtl: '60s' } } } } })
      const name = created.ok ? (created.response as unknown as { response: { name: string } }).response.name : ''
      await bank.createMemory({ parent: 'projects/p/locations/l/reasoningEngines/9', memory: { fact: 'I like tea', scope: { u: '1' } } })
      const before = await bank.reasoningEngines.getReasoningEngine({ name })
      bank.saveTo(dir)
      const loaded = newBank()
      loaded.loadFrom(dir)
      expect(await loaded.reasoningEngines.getReasoningEngine({ name })).toEqual(before)
      expect(await loaded.reasoningEngines.listReasoningEngines({ parent: 'projects/p/locations/l' })).toEqual({ ok: true, response: { reasoningEngines: [before.ok ? before.response : undefined] } })
      const implicit = await loaded.reasoningEngines.getReasoningEngine({ name: 'projects/p/locations/l/reasoningEngines/9' })
      expect(implicit.ok ? 'found' : implicit.status.code).toBe(5)
      // The config still applies after the load: a new memory expires 60 s after it is written.
      const memory = await loaded.createMemory({ parent: name, memory: { fact: 'I like jazz', scope: { u: '1' } } })
      const m = memory.ok ? (memory.response as unknown as { response: { createTime: string; expireTime?: string } }).response : undefined
      expect(Date.parse(m?.expireTime ?? '') - Date.parse(m?.createTime ?? '')).toBe(60_000)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
