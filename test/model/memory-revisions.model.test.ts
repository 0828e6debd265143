import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { Code, MemoryBank, seededRandomId, type Outcome } from '@quarry/adapters'
import { runs } from '../support/runs.js'

/**
 * Model-based test of memory revisions: create / update / generate (consolidating into an existing
 * memory) / rollback / delete / time passing against plain per-memory histories. After every step,
 * `revisions.list` (paged, with and without a `labels` filter) must give exactly the model's live
 * revisions, newest first, with their facts, labels and times; `revisions.get` each of them; and
 * a rollback restores the target revision's fact exactly.
 *
 * Defaults asserted here: revisions are kept 365 days unless the request says otherwise
 * (memoryRevisionDefaultTtl, "If not set, a default TTL of 365 days will be used":
 * https://pub.dev/documentation/googleapis/latest/aiplatform_v1/GoogleCloudAiplatformV1ReasoningEngineContextSpecMemoryBankConfigTtlConfig/memoryRevisionDefaultTtl.html);
 * the labels filter is equality only ("Supported fields (equality match only): * labels":
 * https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1beta1/projects.locations.reasoningEngines.memories.revisions/list).
 */
const E = 'projects/p/locations/l/reasoningEngines/7'
const YEAR_MS = 365 * 24 * 3600 * 1000
const SCOPES = [{ user: 'a' }, { user: 'b' }]
const LABELS: readonly Record<string, string>[] = [{}, { k: 'a' }, { k: 'b' }, { k: 'a', t: 'x' }]
/** revisions.list filters and what each selects. */
const FILTERS: readonly { readonly filter: string | undefined; readonly test: (l: Readonly<Record<string, string>>) => boolean }[] = [
  { filter: undefined, test: () => true },
  { filter: 'labels.k = "a"', test: (l) => l['k'] === 'a' },
  { filter: 'labels.k="b"', test: (l) => l['k'] === 'b' },
  { filter: 'NOT labels.k = "a"', test: (l) => l['k'] !== 'a' },
  { filter: 'labels.k = "a" AND labels.t = "x"', test: (l) => l['k'] === 'a' && l['t'] === 'x' },
  { filter: 'labels.k = "b" OR labels.t = "x"', test: (l) => l['k'] === 'b' || l['t'] === 'x' },
]

interface MRevision { id: number; fact: string; labels: Record<string, string>; createMs: number; expireMs: number; extracted?: string[] }
interface MMemory { name: string; fact: string; scope: Record<string, string>; expireMs: number | undefined; revisions: MRevision[]; last: number }
interface Model { memories: MMemory[]; now: { ms: number } }
interface Real { bank: MemoryBank; now: { ms: number } }
type Cmd = fc.AsyncCommand<Model, Real>

const normalized = (fact: string): string => fact.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim().replace(/[.!?]+$/, '')
const liveMemories = (m: Model): MMemory[] => m.memories.filter((x) => x.expireMs === undefined || x.expireMs > m.now.ms)
const liveRevisions = (x: MMemory, now: number): MRevision[] => x.revisions.filter((r) => r.expireMs > now)
const iso = (ms: number): string => new Date(ms).toISOString()

function ok<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw new Error(`expected a response, got ${JSON.stringify(outcome.status)}`)
  return outcome.response
}

/** What a write asks of its revision: labels, a TTL in seconds, or none. */
interface RevisionAsk { readonly labels: number; readonly ttl: number | undefined; readonly disable: boolean }
const askFields = (a: RevisionAsk): Record<string, unknown> => ({
  ...(a.labels > 0 ? { revisionLabels: LABELS[a.labels] } : {}),
  ...(a.ttl !== undefined ? { revisionTtl: `${a.ttl}s` } : {}),
  ...(a.disable ? { disableMemoryRevisions: true } : {}),
})

/** The model's side of a write: the revision it records (none when disabled). */
function record(x: MMemory, now: number, a: RevisionAsk, extracted?: string[]): void {
  if (a.disable) return
  x.last += 1
  x.revisions = [...liveRevisions(x, now), { id: x.last, fact: x.fact, labels: { ...LABELS[a.labels] }, createMs: now, expireMs: now + (a.ttl === undefined ? YEAR_MS : a.ttl * 1000), ...(extracted ? { extracted } : {}) }]
}

const latestName = (x: MMemory, now: number): string | undefined => {
  const live = liveRevisions(x, now)
  const last = live[live.length - 1]
  return last ? `${x.name}/revisions/${last.id}` : undefined
}

class Create implements Cmd {
  constructor(readonly fact: string, readonly scope: number, readonly ttl: number | undefined, readonly ask: RevisionAsk) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    const scope = SCOPES[this.scope] as Record<string, string>
    const op = ok(await r.bank.createMemory({ parent: E, memory: { fact: this.fact, scope, ...(this.ttl ? { ttl: `${this.ttl}s` } : {}), ...askFields(this.ask) } }))
    const name = (op.response as unknown as { name: string }).name
    const x: MMemory = { name, fact: this.fact, scope, expireMs: this.ttl ? m.now.ms + this.ttl * 1000 : undefined, revisions: [], last: 0 }
    record(x, m.now.ms, this.ask)
    m.memories.push(x)
  }
  toString = (): string => `Create(${this.fact}, scope ${this.scope}, ttl ${this.ttl}, ${JSON.stringify(this.ask)})`
}

class Update implements Cmd {
  constructor(readonly i: number, readonly fact: string, readonly ask: RevisionAsk) {}
  check = (m: Readonly<Model>): boolean => liveMemories(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const x = liveMemories(m)[this.i % liveMemories(m).length] as MMemory
    ok(await r.bank.updateMemory({ memory: { name: x.name, fact: this.fact, ...askFields(this.ask) }, updateMask: 'fact' }))
    x.fact = this.fact
    record(x, m.now.ms, this.ask)
  }
  toString = (): string => `Update(${this.i}, ${this.fact}, ${JSON.stringify(this.ask)})`
}

/** generateMemories with a rewording of an existing memory's fact: consolidated into the first memory of the scope with the same normalized fact. */
class Generate implements Cmd {
  constructor(readonly i: number, readonly ask: RevisionAsk) {}
  check = (m: Readonly<Model>): boolean => liveMemories(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const picked = liveMemories(m)[this.i % liveMemories(m).length] as MMemory
    const fact = `${picked.fact.toUpperCase()}!`
    const x = liveMemories(m).find((y) => JSON.stringify(y.scope) === JSON.stringify(picked.scope) && normalized(y.fact) === normalized(fact)) as MMemory
    const previous = latestName(x, m.now.ms)
    const op = ok(await r.bank.generateMemories({ parent: E, scope: picked.scope, directMemoriesSource: { directMemories: [{ fact }] }, ...askFields(this.ask) }))
    const generated = (op.response as unknown as { generatedMemories: { memory: { name: string; fact: string }; action: string; previousRevision?: string }[] }).generatedMemories
    expect(generated.map((g) => [g.action, g.memory.name, g.memory.fact, g.previousRevision])).toEqual([['UPDATED', x.name, fact, previous]])
    x.fact = fact
    record(x, m.now.ms, this.ask, [fact])
  }
  toString = (): string => `Generate(${this.i}, ${JSON.stringify(this.ask)})`
}

class Rollback implements Cmd {
  constructor(readonly i: number, readonly j: number) {}
  check = (m: Readonly<Model>): boolean => liveMemories(m as Model).some((x) => liveRevisions(x, m.now.ms).length > 0)
  async run(m: Model, r: Real): Promise<void> {
    const withRevisions = liveMemories(m).filter((x) => liveRevisions(x, m.now.ms).length > 0)
    const x = withRevisions[this.i % withRevisions.length] as MMemory
    const revisions = liveRevisions(x, m.now.ms)
    const target = revisions[this.j % revisions.length] as MRevision
    ok(await r.bank.rollbackMemory({ name: x.name, targetRevisionId: String(target.id) }))
    x.fact = target.fact
    record(x, m.now.ms, { labels: 0, ttl: undefined, disable: false })
    // The fact is restored exactly, and the memory reads back with it.
    expect((ok(await r.bank.getMemory({ name: x.name })) as { fact: string }).fact).toBe(target.fact)
  }
  toString = (): string => `Rollback(${this.i}, ${this.j})`
}

class Delete implements Cmd {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>): boolean => liveMemories(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const x = liveMemories(m)[this.i % liveMemories(m).length] as MMemory
    ok(await r.bank.deleteMemory({ name: x.name }))
    m.memories.splice(m.memories.indexOf(x), 1)
    const listed = await r.bank.listMemoryRevisions({ parent: x.name })
    expect(listed.ok ? 'listed' : listed.status.code).toBe(Code.NOT_FOUND)
  }
  toString = (): string => `Delete(${this.i})`
}

class Advance implements Cmd {
  constructor(readonly seconds: number) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    m.now.ms += this.seconds * 1000
    r.now.ms = m.now.ms
    // A memory that expires takes its revisions with it.
    for (const x of m.memories.filter((y) => y.expireMs !== undefined && y.expireMs <= m.now.ms)) {
      const listed = await r.bank.listMemoryRevisions({ parent: x.name })
      expect(listed.ok ? 'listed' : listed.status.code).toBe(Code.NOT_FOUND)
    }
    m.memories = liveMemories(m)
  }
  toString = (): string => `Advance(${this.seconds}s)`
}

type RevisionJson = { name: string; fact: string; labels?: Record<string, string>; createTime: string; expireTime: string; extractedMemories?: { fact: string }[] }
const view = (x: MMemory, v: MRevision): RevisionJson => ({
  name: `${x.name}/revisions/${v.id}`,
  createTime: iso(v.createMs),
  expireTime: iso(v.expireMs),
  fact: v.fact,
  ...(Object.keys(v.labels).length > 0 ? { labels: v.labels } : {}),
  ...(v.extracted ? { extractedMemories: v.extracted.map((fact) => ({ fact })) } : {}),
})

class Check implements Cmd {
  constructor(readonly pageSize: number, readonly filter: number) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    const { filter, test } = FILTERS[this.filter] as (typeof FILTERS)[number]
    for (const x of liveMemories(m)) {
      const got: RevisionJson[] = []
      let pageToken: string | undefined
      let pages = 0
      do {
        const res = ok(await r.bank.listMemoryRevisions({ parent: x.name, pageSize: this.pageSize, ...(filter ? { filter } : {}), ...(pageToken ? { pageToken } : {}) })) as { memoryRevisions?: RevisionJson[]; nextPageToken?: string }
        expect((res.memoryRevisions ?? []).length).toBeLessThanOrEqual(this.pageSize)
        got.push(...(res.memoryRevisions ?? []))
        pageToken = res.nextPageToken
        pages++
      } while (pageToken)
      const expected = liveRevisions(x, m.now.ms)
        .filter((v) => test(v.labels))
        .reverse()
        .map((v) => view(x, v))
      expect(got).toEqual(expected)
      expect(pages).toBe(Math.max(1, Math.ceil(expected.length / this.pageSize)))
      for (const v of expected) expect(ok(await r.bank.getMemoryRevision({ name: v.name }))).toEqual(v)
    }
  }
  toString = (): string => `Check(pageSize ${this.pageSize}, filter ${FILTERS[this.filter]?.filter})`
}

const fact = fc.array(fc.constantFrom('tea', 'dog', 'lyon', 'cello'), { minLength: 1, maxLength: 3 }).map((w) => w.join(' '))
const ask: fc.Arbitrary<RevisionAsk> = fc.record({ labels: fc.nat({ max: LABELS.length - 1 }), ttl: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }), disable: fc.constantFrom(false, false, false, false, true) })
const commands = [
  fc.tuple(fact, fc.nat({ max: SCOPES.length - 1 }), fc.option(fc.integer({ min: 5, max: 60 }), { nil: undefined }), ask).map(([f, s, t, a]) => new Create(f, s, t, a)),
  fc.tuple(fc.nat(), fact, ask).map(([i, f, a]) => new Update(i, f, a)),
  fc.tuple(fc.nat(), ask).map(([i, a]) => new Generate(i, a)),
  fc.tuple(fc.nat(), fc.nat()).map(([i, j]) => new Rollback(i, j)),
  fc.nat().map((i) => new Delete(i)),
  fc.integer({ min: 1, max: 20 }).map((s) => new Advance(s)),
  fc.tuple(fc.integer({ min: 1, max: 3 }), fc.nat({ max: FILTERS.length - 1 })).map(([n, f]) => new Check(n, f)),
]

const bankAt = (now: { ms: number }): MemoryBank => new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 16 }), clock: () => new Date(now.ms), randomId: seededRandomId(8), dense: 'exact' })

describe('memory revisions against a plain model', () => {
  it('revisions list the full history in order, filter by labels, page, and rollback restores the fact', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: 'max' }), async (cmds) => {
        const now = { ms: Date.parse('2026-01-01T00:00:00Z') }
        const bank = bankAt(now)
        const final = FILTERS.map((_, f) => new Check(2, f))
        await fc.asyncModelRun(() => ({ model: { memories: [], now: { ms: now.ms } }, real: { bank, now } }), [...cmds, ...final])
      }),
      { numRuns: runs(60) },
    )
  })

  const dirs: string[] = []
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })

  it('revisions and their labels survive saveTo / loadFrom', async () => {
    const now = { ms: Date.parse('2026-01-01T00:00:00Z') }
    const bank = bankAt(now)
    const name = `${E}/memories/m`
    ok(await bank.createMemory({ parent: E, memoryId: 'm', memory: { fact: 'tea', scope: { user: 'a' }, revisionLabels: { k: 'a' } } }))
    now.ms += 1000
    ok(await bank.updateMemory({ memory: { name, fact: 'coffee', revisionTtl: '60s' }, updateMask: 'fact' }))
    const before = ok(await bank.listMemoryRevisions({ parent: name }))
    const dir = mkdtempSync(join(tmpdir(), 'quarry-revisions-'))
    dirs.push(dir)
    bank.saveTo(join(dir, 'bank'))
    const loaded = bankAt(now)
    loaded.loadFrom(join(dir, 'bank'))
    expect(ok(await loaded.listMemoryRevisions({ parent: name }))).toEqual(before)
    // Ids keep counting after a reload: the next revision is 3.
    ok(await loaded.rollbackMemory({ name, targetRevisionId: '1' }))
    const after = ok(await loaded.listMemoryRevisions({ parent: name, pageSize: 1 })) as { memoryRevisions: { name: string; fact: string }[] }
    expect(after.memoryRevisions.map((v) => [v.name, v.fact])).toEqual([[`${name}/revisions/3`, 'tea']])
  })
})
