import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '@quarry/core'
import { MemoryBank, seededRandomId, steppingClock, type Outcome, type SessionEventJson, type SessionJson } from '@quarry/adapters'
import { runs } from '../support/runs.js'

/**
 * Model-based test of Agent Engine Sessions: create (ttl or not) / update / delete / append /
 * time passing, against plain arrays, on a clock the test moves. After any step, listSessions
 * (every filter field, every order, any page size) and listEvents (timestamp ranges, both orders,
 * any page size) must return exactly the model's ids in the model's order, paging neither
 * skipping nor repeating. The rules, from session_service.proto
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1beta1/projects.locations.reasoningEngines.sessions/list
 * and .../sessions.events/list): filter on display_name, user_id, labels; orderBy create_time /
 * update_time with "desc"; events "ordered by timestamp in ascending order", filtered by a
 * `timestamp` range; ttl "The minimum value is 24 hours". Quarry's choices (README): ties in
 * creation (append) order, default order create_time ascending, a session dies at expireTime.
 */
const E = 'projects/p/locations/l/reasoningEngines/9'
const HOUR = 3600_000
const T0 = Date.parse('2026-01-01T00:00:00Z')

interface MEvent { name: string; ts: number; seq: number }
interface MSession { name: string; userId: string; label: string | undefined; displayName: string | undefined; createMs: number; updateMs: number; expireMs: number; seq: number; events: MEvent[] }
interface Model { sessions: MSession[]; now: { ms: number }; seq: { n: number } }
interface Real { bank: MemoryBank; now: { ms: number } }
type Cmd = fc.AsyncCommand<Model, Real>

const USERS = ['u0', 'u1', 'u2']
const LABELS = ['a', 'b']
const live = (m: Model): MSession[] => m.sessions.filter((s) => s.expireMs > m.now.ms)
function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`${o.status.code}: ${o.status.message}`)
  return o.response
}

class Create implements Cmd {
  constructor(readonly user: number, readonly label: number | undefined, readonly ttlHours: number | undefined) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    const labels = this.label === undefined ? {} : { k: LABELS[this.label] as string }
    const session = { userId: USERS[this.user], labels, ...(this.ttlHours === undefined ? {} : { ttl: `${this.ttlHours * 3600}s` }) }
    const op = ok(await r.bank.sessions.createSession({ parent: E, session }))
    const created = op.response as unknown as SessionJson
    // Without ttl or expireTime: 365 days (Quarry's default, README).
    const expireMs = m.now.ms + (this.ttlHours === undefined ? 365 * 24 * HOUR : this.ttlHours * HOUR)
    expect(Date.parse(created.expireTime)).toBe(expireMs)
    m.sessions.push({ name: created.name, userId: USERS[this.user] as string, label: labels.k, displayName: undefined, createMs: m.now.ms, updateMs: m.now.ms, expireMs, seq: m.seq.n++, events: [] })
  }
  toString = (): string => `Create(user ${this.user}, label ${this.label}, ttl ${this.ttlHours}h)`
}

class Update implements Cmd {
  constructor(readonly i: number, readonly displayName: string) {}
  check = (m: Readonly<Model>): boolean => live(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const target = live(m)[this.i % live(m).length] as MSession
    const updated = ok(await r.bank.sessions.updateSession({ session: { name: target.name, displayName: this.displayName }, updateMask: 'displayName' }))
    expect(updated.displayName).toBe(this.displayName)
    target.displayName = this.displayName
    target.updateMs = m.now.ms
  }
  toString = (): string => `Update(${this.i}, ${this.displayName})`
}

class Delete implements Cmd {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>): boolean => live(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const target = live(m)[this.i % live(m).length] as MSession
    ok(await r.bank.sessions.deleteSession({ name: target.name }))
    m.sessions.splice(m.sessions.indexOf(target), 1)
    expect((await r.bank.sessions.getSession({ name: target.name })).ok).toBe(false)
  }
  toString = (): string => `Delete(${this.i})`
}

class Append implements Cmd {
  constructor(readonly i: number, readonly minute: number) {}
  check = (m: Readonly<Model>): boolean => live(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const target = live(m)[this.i % live(m).length] as MSession
    const ts = T0 + this.minute * 60_000
    ok(await r.bank.sessions.appendEvent({ name: target.name, event: { author: 'user', invocationId: `inv-${m.seq.n}`, timestamp: new Date(ts).toISOString(), content: { parts: [{ text: `m${this.minute}` }] } } }))
    // The event's name is the server's: read it back as the one event with this invocation id.
    const all = ok(await r.bank.sessions.listEvents({ parent: target.name, pageSize: 1000 })).sessionEvents ?? []
    const mine = all.filter((e) => e.invocationId === `inv-${m.seq.n}`)
    expect(mine.length).toBe(1)
    target.events.push({ name: (mine[0] as SessionEventJson).name, ts, seq: m.seq.n++ })
    target.updateMs = m.now.ms
  }
  toString = (): string => `Append(${this.i}, minute ${this.minute})`
}

class Advance implements Cmd {
  constructor(readonly hours: number) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    m.now.ms += this.hours * HOUR
    r.now.ms = m.now.ms
    for (const s of m.sessions.filter((x) => x.expireMs <= m.now.ms)) {
      const got = await r.bank.sessions.getSession({ name: s.name })
      expect(got.ok ? 'found' : got.status.code).toBe(5)
    }
    m.sessions = live(m)
  }
  toString = (): string => `Advance(${this.hours}h)`
}

/** Every page of a list, concatenated (each page at most `pageSize`). */
async function pages<T>(list: (pageToken: string | undefined) => Promise<{ items: T[] | undefined; next: string | undefined }>, pageSize: number): Promise<T[]> {
  const out: T[] = []
  let token: string | undefined
  do {
    const page = await list(token)
    expect((page.items ?? []).length).toBeLessThanOrEqual(pageSize)
    out.push(...(page.items ?? []))
    token = page.next
  } while (token !== undefined)
  return out
}

const FILTERS: readonly { readonly filter: string | undefined; readonly test: (s: MSession) => boolean }[] = [
  { filter: undefined, test: () => true },
  { filter: 'user_id = "u0"', test: (s) => s.userId === 'u0' },
  { filter: 'labels.k = "a" OR user_id = "u2"', test: (s) => s.label === 'a' || s.userId === 'u2' },
  { filter: 'display_name = "x"', test: (s) => s.displayName === 'x' },
  { filter: 'NOT user_id = "u1"', test: (s) => s.userId !== 'u1' },
]
const ORDERS: readonly { readonly orderBy: string | undefined; readonly key: (s: MSession) => number; readonly desc: boolean }[] = [
  { orderBy: undefined, key: (s) => s.createMs, desc: false },
  { orderBy: 'create_time desc', key: (s) => s.createMs, desc: true },
  { orderBy: 'update_time', key: (s) => s.updateMs, desc: false },
  { orderBy: 'update_time desc', key: (s) => s.updateMs, desc: true },
]

class CheckSessions implements Cmd {
  constructor(readonly pageSize: number, readonly filter: number, readonly order: number) {}
  check = (): boolean => true
  async run(m: Model, r: Real): Promise<void> {
    const { filter, test } = FILTERS[this.filter] as (typeof FILTERS)[number]
    const { orderBy, key, desc } = ORDERS[this.order] as (typeof ORDERS)[number]
    const got = await pages(async (pageToken) => {
      const res = ok(await r.bank.sessions.listSessions({ parent: E, pageSize: this.pageSize, ...(filter ? { filter } : {}), ...(orderBy ? { orderBy } : {}), ...(pageToken ? { pageToken } : {}) }))
      return { items: res.sessions, next: res.nextPageToken }
    }, this.pageSize)
    // Ties (equal times) in creation order whatever the direction.
    const expected = live(m)
      .filter(test)
      .sort((a, b) => (key(a) - key(b)) * (desc ? -1 : 1) || a.seq - b.seq)
    expect(got.map((s) => [s.name, s.userId, Date.parse(s.updateTime)])).toEqual(expected.map((s) => [s.name, s.userId, s.updateMs]))
  }
  toString = (): string => `CheckSessions(pageSize ${this.pageSize}, filter ${this.filter}, order ${this.order})`
}

class CheckEvents implements Cmd {
  constructor(readonly i: number, readonly pageSize: number, readonly from: number | undefined, readonly to: number | undefined, readonly desc: boolean) {}
  check = (m: Readonly<Model>): boolean => live(m as Model).length > 0
  async run(m: Model, r: Real): Promise<void> {
    const target = live(m)[this.i % live(m).length] as MSession
    const at = (minute: number): string => new Date(T0 + minute * 60_000).toISOString()
    const clauses = [...(this.from === undefined ? [] : [`timestamp >= "${at(this.from)}"`]), ...(this.to === undefined ? [] : [`timestamp < "${at(this.to)}"`])]
    const got = await pages(async (pageToken) => {
      const res = ok(await r.bank.sessions.listEvents({ parent: target.name, pageSize: this.pageSize, ...(clauses.length > 0 ? { filter: clauses.join(' AND ') } : {}), ...(this.desc ? { orderBy: 'timestamp desc' } : {}), ...(pageToken ? { pageToken } : {}) }))
      return { items: res.sessionEvents, next: res.nextPageToken }
    }, this.pageSize)
    const lo = this.from === undefined ? -Infinity : T0 + this.from * 60_000
    const hi = this.to === undefined ? Infinity : T0 + this.to * 60_000
    const expected = target.events.filter((e) => e.ts >= lo && e.ts < hi).sort((a, b) => (a.ts - b.ts) * (this.desc ? -1 : 1) || a.seq - b.seq)
    expect(got.map((e) => [e.name, Date.parse(e.timestamp)])).toEqual(expected.map((e) => [e.name, e.ts]))
  }
  toString = (): string => `CheckEvents(${this.i}, pageSize ${this.pageSize}, [${this.from}, ${this.to}), desc ${this.desc})`
}

const minute = fc.integer({ min: 0, max: 10 })
const commands = [
  fc.tuple(fc.nat({ max: USERS.length - 1 }), fc.option(fc.nat({ max: LABELS.length - 1 }), { nil: undefined }), fc.option(fc.integer({ min: 24, max: 72 }), { nil: undefined })).map(([u, l, t]) => new Create(u, l, t)),
  fc.tuple(fc.nat(), fc.constantFrom('x', 'y')).map(([i, d]) => new Update(i, d)),
  fc.nat().map((i) => new Delete(i)),
  fc.tuple(fc.nat(), minute).map(([i, t]) => new Append(i, t)),
  fc.tuple(fc.nat(), minute).map(([i, t]) => new Append(i, t)),
  fc.integer({ min: 1, max: 30 }).map((h) => new Advance(h)),
  fc.tuple(fc.integer({ min: 1, max: 4 }), fc.nat({ max: FILTERS.length - 1 }), fc.nat({ max: ORDERS.length - 1 })).map(([n, f, o]) => new CheckSessions(n, f, o)),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 4 }), fc.option(minute, { nil: undefined }), fc.option(minute, { nil: undefined }), fc.boolean()).map(([i, n, a, b, d]) => new CheckEvents(i, n, a, b, d)),
]

describe('Agent Engine Sessions against a plain model', () => {
  it('create / update / delete / append / expire / list sessions and events agree with the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: 'max' }), async (cmds) => {
        const now = { ms: T0 }
        const bank = new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 16 }), clock: () => new Date(now.ms), randomId: seededRandomId(11) })
        const final = [...ORDERS.keys()].map((o) => new CheckSessions(1000, 0, o))
        await fc.asyncModelRun(() => ({ model: { sessions: [], now: { ms: now.ms }, seq: { n: 0 } }, real: { bank, now } }), [...cmds, ...final])
      }),
      { numRuns: runs(60) },
    )
  })

  it('session pages neither skip nor repeat a session when sessions are created and deleted between pages', async () => {
    const bank = new MemoryBank({ embedder: createHashingEmbedder({ dimensions: 16 }), clock: steppingClock('2026-01-01T00:00:00Z'), randomId: seededRandomId(12) })
    const names: string[] = []
    for (let i = 0; i < 9; i++) names.push((ok(await bank.sessions.createSession({ parent: E, session: { userId: 'u' } })).response as unknown as SessionJson).name)
    const seen: string[] = []
    let pageToken: string | undefined
    let round = 0
    do {
      const res = ok(await bank.sessions.listSessions({ parent: E, pageSize: 2, orderBy: 'create_time desc', ...(pageToken ? { pageToken } : {}) }))
      seen.push(...(res.sessions ?? []).map((s) => s.name))
      pageToken = res.nextPageToken
      // A newer session (before the cursor in this order) and the deletion of one already seen change nothing ahead.
      if (pageToken && round++ < 3) {
        ok(await bank.sessions.createSession({ parent: E, session: { userId: 'u' } }))
        ok(await bank.sessions.deleteSession({ name: seen[seen.length - 1] as string }))
      }
    } while (pageToken)
    expect(seen).toEqual([...names].reverse())
  })
})
