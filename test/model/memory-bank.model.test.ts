import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { ApiError, Code, MemoryBankServiceClient, seededRandomId } from '@quarry/adapters'
import { runs } from '../support/runs.js'

/**
 * Model-based test of Memory Bank: create (with or without ttl) / update / delete / time passing /
 * list / retrieve against a plain array, on a clock the test moves. After every step, listing and
 * retrieving every scope must give exactly the live (unexpired) memories of the model.
 */
const E = 'projects/p/locations/l/reasoningEngines/7'
interface MMemory { name: string; fact: string; scope: Record<string, string>; expireMs: number | undefined; createMs: number }
interface Model { memories: MMemory[]; now: { ms: number } }
interface Real { client: MemoryBankServiceClient; now: { ms: number } }
type Cmd = fc.AsyncCommand<Model, Real>

const SCOPES = [{ user_id: 'a' }, { user_id: 'b' }, { user_id: 'a', agent: 'x' }]
const live = (m: Model): MMemory[] => m.memories.filter((x) => x.expireMs === undefined || x.expireMs > m.now.ms)
const sameScope = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort())

class Create implements Cmd {
  constructor(readonly fact: string, readonly scope: number, readonly ttl: number | undefined) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    const scope = SCOPES[this.scope] as Record<string, string>
    const [op] = await r.client.createMemory({ parent: E, memory: { fact: this.fact, scope, ...(this.ttl ? { ttl: `${this.ttl}s` } : {}) } })
    const [memory] = await op.promise()
    expect(memory.fact).toBe(this.fact)
    m.memories.push({ name: memory.name, fact: this.fact, scope, expireMs: this.ttl ? m.now.ms + this.ttl * 1000 : undefined, createMs: m.now.ms })
  }
  toString = (): string => `Create(${this.fact}, scope ${this.scope}, ttl ${this.ttl})`
}

class Update implements Cmd {
  constructor(readonly i: number, readonly fact: string) {}
  check = (m: Readonly<Model>): boolean => live(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const target = live(m)[this.i % live(m).length] as MMemory
    const [op] = await r.client.updateMemory({ memory: { name: target.name, fact: this.fact }, updateMask: { paths: ['fact'] } })
    expect((await op.promise())[0].fact).toBe(this.fact)
    target.fact = this.fact
  }
  toString = (): string => `Update(${this.i}, ${this.fact})`
}

class Delete implements Cmd {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>): boolean => live(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const target = live(m)[this.i % live(m).length] as MMemory
    await r.client.deleteMemory({ name: target.name })
    m.memories.splice(m.memories.indexOf(target), 1)
    const error = await r.client.getMemory({ name: target.name }).then(() => undefined, (e: unknown) => e)
    expect((error as ApiError).code).toBe(Code.NOT_FOUND)
  }
  toString = (): string => `Delete(${this.i})`
}

class Advance implements Cmd {
  constructor(readonly seconds: number) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    m.now.ms += this.seconds * 1000
    r.now.ms = m.now.ms
    for (const x of m.memories.filter((y) => y.expireMs !== undefined && y.expireMs <= m.now.ms)) {
      const error = await r.client.getMemory({ name: x.name }).then(() => undefined, (e: unknown) => e)
      expect((error as ApiError).code).toBe(Code.NOT_FOUND)
    }
    m.memories = live(m)
  }
  toString = (): string => `Advance(${this.seconds}s)`
}

class Check implements Cmd {
  constructor(readonly pageSize: number) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    const [all] = await r.client.listMemories({ parent: E, pageSize: this.pageSize })
    const expected = [...live(m)].reverse()
    expect(all.map((x) => [x.name, x.fact])).toEqual(expected.map((x) => [x.name, x.fact]))
    for (const scope of SCOPES) {
      const names: string[] = []
      let pageToken: string | undefined
      do {
        const [res] = await r.client.retrieveMemories({ parent: E, scope, simpleRetrievalParams: { pageSize: this.pageSize, ...(pageToken ? { pageToken } : {}) } })
        names.push(...(res.retrievedMemories ?? []).map((x) => x.memory.name))
        pageToken = res.nextPageToken
      } while (pageToken)
      expect(names).toEqual(live(m).filter((x) => sameScope(x.scope, scope)).map((x) => x.name))
      const [sim] = await r.client.retrieveMemories({ parent: E, scope, similaritySearchParams: { searchQuery: 'tea', topK: 100 } })
      expect((sim.retrievedMemories ?? []).map((x) => x.memory.name).sort()).toEqual(live(m).filter((x) => sameScope(x.scope, scope)).map((x) => x.name).sort())
    }
  }
  toString = (): string => `Check(pageSize ${this.pageSize})`
}

const fact = fc.array(fc.constantFrom('tea', 'dog', 'lyon', 'cello'), { minLength: 1, maxLength: 3 }).map((w) => w.join(' '))
const commands = [
  fc.tuple(fact, fc.nat({ max: SCOPES.length - 1 }), fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined })).map(([f, s, t]) => new Create(f, s, t)),
  fc.tuple(fc.nat(), fact).map(([i, f]) => new Update(i, f)),
  fc.nat().map((i) => new Delete(i)),
  fc.integer({ min: 1, max: 20 }).map((s) => new Advance(s)),
  fc.integer({ min: 1, max: 4 }).map((n) => new Check(n)),
]

describe('Memory Bank against a plain model', () => {
  it('create / update / delete / expire / list / retrieve agree with the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: 'max' }), async (cmds) => {
        const now = { ms: Date.parse('2026-01-01T00:00:00Z') }
        const client = new MemoryBankServiceClient({ embedder: createHashingEmbedder({ dimensions: 16 }), clock: () => new Date(now.ms), randomId: seededRandomId(8) })
        await fc.asyncModelRun(() => ({ model: { memories: [], now: { ms: now.ms } }, real: { client, now } }), [...cmds, new Check(100)])
      }),
      { numRuns: runs(60) },
    )
  })

  it('simple retrieval pages neither skip nor repeat a memory when memories are added between pages', async () => {
    const client = new MemoryBankServiceClient({ embedder: createHashingEmbedder({ dimensions: 16 }), randomId: seededRandomId(9) })
    const scope = { user_id: 'p' }
    const before: string[] = []
    for (let i = 0; i < 10; i++) {
      const [op] = await client.createMemory({ parent: E, memory: { fact: `fact ${i}`, scope } })
      before.push((await op.promise())[0].name)
    }
    const seen: string[] = []
    const added: string[] = []
    let pageToken: string | undefined
    do {
      const [res] = await client.retrieveMemories({ parent: E, scope, simpleRetrievalParams: { pageSize: 3, ...(pageToken ? { pageToken } : {}) } })
      seen.push(...(res.retrievedMemories ?? []).map((x) => x.memory.name))
      pageToken = res.nextPageToken
      if (pageToken && added.length < 4) {
        const [op] = await client.createMemory({ parent: E, memory: { fact: `late ${added.length}`, scope } })
        added.push((await op.promise())[0].name)
        await client.createMemory({ parent: E, memory: { fact: 'other scope', scope: { user_id: 'q' } } })
      }
    } while (pageToken)
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen).toEqual([...before, ...added])
  })
})
