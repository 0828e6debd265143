import fc from 'fast-check'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createHashingEmbedder, type Embedder } from '@quarry/core'
import { MemoryBank, SemanticRetriever, VertexRagEngine, seededRandomId, type Outcome } from '@quarry/adapters'
import { DataDir } from '../../packages/adapters/src/transport/data-dir.js'
import { CUSTOM_TOPICS_FIELD, MANAGED_TOPICS_FIELD, memoryMetadata } from '../../packages/adapters/src/memory-bank/state.js'
import { engineState, scratchDir } from '../support/engine-state.js'
import { current } from '../support/generation-files.js'
import { runs } from '../support/runs.js'

/**
 * A server's checkpoint links the Memory Bank's `state.json` (every memory, revision, session,
 * event, reasoning engine and operation) from the last generation when no Memory Bank write ran
 * and no expiry sweep removed anything since, instead of writing it again (a checkpoint after
 * writes to the other engines). What must hold: every kind of write, even one that fails, and a
 * sweep make the next checkpoint write it; reads and the other engines' writes do not; and every
 * checkpoint loads back as the state it was taken from.
 */
// On tmpfs where there is one: the test checks what checkpoints hold, not that they reach a disk.
const root = scratchDir('quarry-mb-link-')
afterAll(() => rmSync(root, { recursive: true, force: true }))
let scratchCount = 0
const scratch = (): string => join(root, `s${scratchCount++}`)
const embedder = createHashingEmbedder({ dimensions: 16 })
const STATE = 'memory-bank/state.json'
const E = 'projects/p/locations/l/reasoningEngines/1'

/** A clock the test moves (the engines read it; nothing else does). */
function manualClock(): { clock: () => Date; advance: (ms: number) => void } {
  let ms = Date.UTC(2026, 0, 1)
  return { clock: () => new Date(ms), advance: (by) => void (ms += by) }
}

type Engines = { semanticRetriever: SemanticRetriever; vertexRag: VertexRagEngine; memoryBank: MemoryBank }

function enginesWith(memoryBank: MemoryBank): Engines {
  return { semanticRetriever: new SemanticRetriever({ embedder }), vertexRag: new VertexRagEngine({ embedder }), memoryBank }
}

async function ok<T>(call: Promise<Outcome<T>>): Promise<T> {
  const out = await call
  if (!out.ok) throw new Error(out.status.message)
  return out.response
}

/** Every page of a list call: its items under `key`. */
async function everyPage<T>(list: (pageToken: string | undefined) => Promise<Outcome<unknown>>, key: string): Promise<T[]> {
  const items: T[] = []
  let token: string | undefined
  do {
    const page = (await ok(list(token))) as Record<string, unknown>
    items.push(...((page[key] as T[] | undefined) ?? []))
    token = page['nextPageToken'] as string | undefined
  } while (token !== undefined)
  return items
}

/**
 * All a Memory Bank holds, as its API reads it (reads only: nothing is saved elsewhere, so what the
 * next checkpoint links is left alone): the reasoning engines, and under `engines` each one's
 * memories with their revisions and its sessions with their events, every field; and each of
 * `operations` as getOperation answers it.
 */
async function bankContents(mb: MemoryBank, engines: readonly string[], operations: readonly string[]): Promise<unknown> {
  const out: unknown[] = [await everyPage((pageToken) => mb.reasoningEngines.listReasoningEngines({ parent: 'projects/p/locations/l', pageSize: 100, pageToken }), 'reasoningEngines')]
  for (const engine of engines) {
    const memories = await everyPage<{ name: string }>((pageToken) => mb.listMemories({ parent: engine, pageSize: 100, pageToken }), 'memories')
    const revisions = await Promise.all(memories.map((m) => everyPage((pageToken) => mb.listMemoryRevisions({ parent: m.name, pageSize: 100, pageToken }), 'memoryRevisions')))
    const sessions = await everyPage<{ name: string }>((pageToken) => mb.sessions.listSessions({ parent: engine, pageSize: 100, pageToken }), 'sessions')
    const events = await Promise.all(sessions.map((s) => everyPage((pageToken) => mb.sessions.listEvents({ parent: s.name, pageSize: 100, pageToken }), 'sessionEvents')))
    out.push({ engine, memories, revisions, sessions, events })
  }
  out.push(await Promise.all(operations.map((name) => mb.getOperation({ name }))))
  return out
}

describe("the Memory Bank's state.json in a checkpoint", () => {
  it('is linked while no write or sweep changed the Memory Bank, written after every kind of write, a failed one and a sweep', async () => {
    const time = manualClock()
    const engines = enginesWith(new MemoryBank({ embedder, clock: time.clock }))
    const mb = engines.memoryBank
    const created = await ok(mb.createMemory({ parent: E, memoryId: 'tea', memory: { fact: 'I like green tea', scope: { user_id: 'u' } } }))
    await ok(mb.sessions.createSession({ parent: E, sessionId: 's1', session: { userId: 'u' } }))
    const dir = scratch()
    const data = new DataDir(dir, engines)
    await data.save()
    let last = current(dir)
    const stateIno = (files: ReturnType<typeof current>): number | undefined => files.get(STATE)?.ino
    expect(stateIno(last)).toBeDefined()

    // Reads, and writes to the other engines: the Memory Bank's state is linked.
    await ok(engines.semanticRetriever.createCorpus({ corpus: { name: 'corpora/c' } }))
    await ok(mb.listMemories({ parent: E }))
    await ok(mb.retrieveMemories({ parent: E, scope: { user_id: 'u' }, similaritySearchParams: { searchQuery: 'tea' } }))
    await ok(mb.sessions.listEvents({ parent: `${E}/sessions/s1` }))
    await ok(mb.reasoningEngines.listReasoningEngines({ parent: 'projects/p/locations/l' }))
    await data.save()
    let now = current(dir)
    expect(stateIno(now)).toBe(stateIno(last))
    last = now

    // Each kind of write (the services' tables, the bank's own createReasoningEngine), and one refused: written.
    const memory = `${E}/memories/tea`
    // The ReasoningEngine resource the create below makes (its id is generated).
    let resource = ''
    const writes: [string, () => Promise<Outcome<unknown>>, boolean][] = [
      ['createMemory', () => mb.createMemory({ parent: E, memoryId: 'dog', memory: { fact: 'My dog is called Rex', scope: { user_id: 'u' } } }), true],
      ['updateMemory', () => mb.updateMemory({ memory: { name: memory, fact: 'I like black tea' }, updateMask: { paths: ['fact'] } }), true],
      ['rollbackMemory', () => mb.rollbackMemory({ name: memory, targetRevisionId: '1' }), true],
      ['generateMemories', () => mb.generateMemories({ parent: E, scope: { user_id: 'v' }, directMemoriesSource: { directMemories: [{ fact: 'I live by the sea' }] } }), true],
      ['deleteMemory', () => mb.deleteMemory({ name: `${E}/memories/dog` }), true],
      ['purgeMemories', () => mb.purgeMemories({ parent: E, filter: 'scope.user_id = "v"', force: true }), true],
      ['deleteOperation', () => mb.deleteOperation({ name: (created as { name: string }).name }), true],
      ['createSession', () => mb.sessions.createSession({ parent: E, sessionId: 's2', session: { userId: 'u' } }), true],
      ['appendEvent', () => mb.sessions.appendEvent({ name: `${E}/sessions/s1`, event: { author: 'user', invocationId: 'i', timestamp: '2026-01-01T00:00:00Z' } }), true],
      ['updateSession', () => mb.sessions.updateSession({ session: { name: `${E}/sessions/s1`, displayName: 'renamed' }, updateMask: 'displayName' }), true],
      ['deleteSession', () => mb.sessions.deleteSession({ name: `${E}/sessions/s2` }), true],
      ['createReasoningEngine (MemoryBank)', () => mb.createReasoningEngine('projects/p/locations/l/reasoningEngines/2'), true],
      ['createReasoningEngine', async () => {
        const made = await mb.reasoningEngines.createReasoningEngine({ parent: 'projects/p/locations/l', reasoningEngine: { displayName: 'three' } })
        if (made.ok) resource = ((made.response as { response?: { name?: string } }).response?.name ?? '')
        return made
      }, true],
      ['updateReasoningEngine', () => mb.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name: resource, displayName: 'renamed' }, updateMask: { paths: ['display_name'] } }), true],
      ['deleteReasoningEngine', () => mb.reasoningEngines.deleteReasoningEngine({ name: resource, force: true }), true],
      ['a refused createMemory', () => mb.createMemory({ parent: E, memory: { fact: '', scope: { user_id: 'u' } } }), false],
    ]
    for (const [what, write, succeeds] of writes) {
      expect((await write()).ok, what).toBe(succeeds)
      await data.save()
      now = current(dir)
      expect(stateIno(now), what).not.toBe(stateIno(last))
      last = now
    }

    // A memory that expires: its sweep (by a read, once its time has passed) removes it, and the next checkpoint writes the state.
    await ok(mb.createMemory({ parent: E, memoryId: 'brief', memory: { fact: 'I am in Rome this week', scope: { user_id: 'u' }, ttl: '60s' } }))
    await data.save()
    last = current(dir)
    time.advance(61_000)
    await data.save()
    now = current(dir)
    expect(stateIno(now)).toBe(stateIno(last))
    last = now
    const listed = await ok(mb.listMemories({ parent: E }))
    expect((listed as { memories?: { name: string }[] }).memories?.map((m) => m.name)).toEqual([memory])
    await data.save()
    now = current(dir)
    expect(stateIno(now)).not.toBe(stateIno(last))
    const expected = engineState(engines)['memory-bank']
    data.close()

    // A restart reads it back as it was, and its first checkpoint links it.
    const again = enginesWith(new MemoryBank({ embedder, clock: time.clock }))
    const reopened = new DataDir(dir, again)
    expect(reopened.load()).toBe(true)
    await reopened.save()
    expect(stateIno(current(dir))).toBe(stateIno(now))
    expect(engineState(again)['memory-bank']).toEqual(expected)
    reopened.close()
  })

  it('a save that does not wait for the write lock (saveTo), taken while a write waits for its embedder, does not stand for the state after it', async () => {
    const base = createHashingEmbedder({ dimensions: 16 })
    let entered: () => void = () => undefined
    let release: () => void = () => undefined
    const waiting = new Promise<void>((resolve) => (entered = resolve))
    const slow: Embedder = {
      name: base.name,
      dimensions: base.dimensions,
      async embed(texts) {
        if (texts[0] === 'a slow fact') {
          entered()
          await new Promise<void>((resolve) => (release = resolve))
        }
        return base.embed(texts)
      },
    }
    const mb = new MemoryBank({ embedder: slow })
    await ok(mb.createMemory({ parent: E, memoryId: 'a', memory: { fact: 'first', scope: { user_id: 'u' } } }))
    const dir = scratch()
    mb.saveTo(dir)
    const pending = mb.createMemory({ parent: E, memoryId: 'b', memory: { fact: 'a slow fact', scope: { user_id: 'u' } } })
    await waiting
    // Between the write's start and its change: what this save writes is the state before it.
    mb.saveTo(dir)
    release()
    await ok(pending)
    mb.saveTo(dir)
    const again = new MemoryBank({ embedder: base })
    again.loadFrom(dir)
    const listed = (await ok(again.listMemories({ parent: E }))) as { memories?: { name: string }[] }
    expect(listed.memories?.map((m) => m.name).sort()).toEqual([`${E}/memories/a`, `${E}/memories/b`])
  })

  it("an index an earlier Quarry saved with empty topic lists is read without them: topics:* and NOT topics:* hold in similarity retrieval too", async () => {
    const mb = new MemoryBank({ embedder })
    await ok(mb.createMemory({ parent: E, memoryId: 'a', memory: { fact: 'I like green tea', scope: { user_id: 'u' } } }))
    await ok(mb.createMemory({ parent: E, memoryId: 'b', memory: { fact: 'I like black tea', scope: { user_id: 'u' }, topics: [{ customMemoryTopicLabel: 'drinks' }] } }))
    await ok(mb.createMemory({ parent: E, memoryId: 'c', memory: { fact: 'I like tea at noon', scope: { user_id: 'u' } } }))
    // The records as an earlier Quarry wrote them: all three topic lists, empty ones too (b's managed list).
    const engine = mb.engines().get(E)
    for (const m of engine?.memories.values() ?? []) {
      const stored = engine?.index.get(m.name)
      if (stored?.vector) engine?.index.upsert({ id: m.name, vector: stored.vector, metadata: { topics: [], [CUSTOM_TOPICS_FIELD]: [], [MANAGED_TOPICS_FIELD]: [], ...memoryMetadata(m) } })
    }
    const dir = scratch()
    mb.saveTo(dir)
    const again = new MemoryBank({ embedder })
    again.loadFrom(dir)
    const similar = async (filter: string, topK: number): Promise<string[]> =>
      (((await ok(again.retrieveMemories({ parent: E, scope: { user_id: 'u' }, filter, similaritySearchParams: { searchQuery: 'tea', topK } }))) as { readonly retrievedMemories?: readonly { readonly memory: { readonly name: string } }[] }).retrievedMemories ?? []).map((r) => r.memory.name).sort()
    expect(await similar('NOT topics:*', 10)).toEqual([`${E}/memories/a`, `${E}/memories/c`])
    expect(await similar('topics:*', 1)).toEqual([`${E}/memories/b`])
    // b has a custom topic only: its managed list, empty, is gone too.
    expect(await similar('topics.managed_memory_topic:*', 10)).toEqual([])
    expect(await similar('NOT topics.managed_memory_topic:*', 10)).toEqual([`${E}/memories/a`, `${E}/memories/b`, `${E}/memories/c`])
    expect(await similar('topics.custom_memory_topic_label:*', 10)).toEqual([`${E}/memories/b`])
  })

  it('random writes, reads, checkpoints and restarts: every checkpoint loads back as the state it was taken from, and it is linked exactly when no write ran since', async () => {
    type Op =
      | { kind: 'memory'; op: 'create' | 'update' | 'delete' | 'generate' | 'rollback' | 'purge' | 'refused'; m: number; word: string }
      | { kind: 'session'; op: 'create' | 'append' | 'update' | 'delete'; s: number }
      | { kind: 'engine'; op: 'create' | 'update' | 'delete' }
      | { kind: 'operation' }
      | { kind: 'read' }
      | { kind: 'other' }
      | { kind: 'checkpoint' }
      | { kind: 'restart' }
    const small = (max: number): fc.Arbitrary<number> => fc.integer({ min: 0, max })
    const op: fc.Arbitrary<Op> = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('memory' as const), op: fc.constantFrom('create' as const, 'update' as const, 'delete' as const, 'generate' as const, 'rollback' as const, 'purge' as const, 'refused' as const), m: small(2), word: fc.constantFrom('tea', 'sea', 'rome') }), weight: 6 },
      { arbitrary: fc.record({ kind: fc.constant('session' as const), op: fc.constantFrom('create' as const, 'append' as const, 'update' as const, 'delete' as const), s: small(1) }), weight: 3 },
      { arbitrary: fc.record({ kind: fc.constant('engine' as const), op: fc.constantFrom('create' as const, 'update' as const, 'delete' as const) }), weight: 2 },
      { arbitrary: fc.constant({ kind: 'operation' as const }), weight: 1 },
      { arbitrary: fc.constant({ kind: 'read' as const }), weight: 2 },
      { arbitrary: fc.constant({ kind: 'other' as const }), weight: 1 },
      { arbitrary: fc.constant({ kind: 'checkpoint' as const }), weight: 3 },
      { arbitrary: fc.constant({ kind: 'restart' as const }), weight: 1 },
    )
    const numRuns = runs(20)
    const done = new Map<string, number>()
    const ENGINES = [E, 'projects/p/locations/l/reasoningEngines/2']
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 15, maxLength: 35 }), async (ops) => {
        const time = manualClock()
        // One id sequence for every bank of the run: a restarted bank goes on where the last one stopped.
        const randomId = seededRandomId(11)
        const bank = (): MemoryBank => new MemoryBank({ embedder, clock: time.clock, randomId })
        const dir = scratch()
        let engines = enginesWith(bank())
        let data = new DataDir(dir, engines)
        // Whether a Memory Bank write ran since the last checkpoint or load; the state.json then.
        let wrote = true
        let lastIno: number | undefined
        let checkpointed: unknown
        // Operations a write returned: those still held, one of which the next deleteOperation takes, and every one (read back by getOperation).
        let operations: string[] = []
        let seen: string[] = []
        // ReasoningEngine resources the RPC made (lost with the writes after a checkpoint at a restart: refound then).
        let resources: string[] = []
        let seenAtCheckpoint: string[] = []
        try {
          // Memories to start from (most writes then find what they name; every kind is counted below).
        const start: Op[] = [...[0, 1, 2].flatMap((m) => ['create' as const, 'update' as const].map((op): Op => ({ kind: 'memory', op, m, word: 'tea' }))), { kind: 'session', op: 'create', s: 0 }, { kind: 'session', op: 'create', s: 1 }, { kind: 'engine', op: 'update' }, { kind: 'engine', op: 'update' }]
        for (const o of [...start, { kind: 'checkpoint' } as Op, ...ops, { kind: 'checkpoint' } as Op, { kind: 'restart' } as Op, { kind: 'checkpoint' } as Op]) {
            const mb = engines.memoryBank
            const write = async (what: string, call: Promise<Outcome<unknown>>): Promise<void> => {
              wrote = true
              const out = await call
              if (out.ok) {
                done.set(what, (done.get(what) ?? 0) + 1)
                const name = (out.response as { name?: unknown } | undefined)?.name
                const made = (out.response as { response?: { '@type'?: string; name?: string } } | undefined)?.response
                if (made?.['@type']?.endsWith('.ReasoningEngine') === true && made.name !== undefined) resources.push(made.name)
                if (typeof name === 'string' && name.includes('/operations/')) {
                  operations.push(name)
                  seen.push(name)
                }
              }
            }
            if (o.kind === 'checkpoint') {
              await data.save()
              const ino = current(dir).get(STATE)?.ino
              expect(ino).toBeDefined()
              if (wrote) expect(ino).not.toBe(lastIno)
              else expect(ino).toBe(lastIno)
              lastIno = ino
              wrote = false
              seenAtCheckpoint = [...seen]
              checkpointed = await bankContents(mb, ENGINES, seen)
            } else if (o.kind === 'restart') {
              data.close()
              engines = enginesWith(bank())
              data = new DataDir(dir, engines)
              data.load()
              // Exactly what the last checkpoint held (the writes since are gone: no log here), every field.
              seen = [...seenAtCheckpoint]
              resources = ((await ok(engines.memoryBank.reasoningEngines.listReasoningEngines({ parent: 'projects/p/locations/l', pageSize: 100 }))) as { reasoningEngines?: { name: string }[] }).reasoningEngines?.map((r) => r.name) ?? []
              expect(await bankContents(engines.memoryBank, ENGINES, seen)).toEqual(checkpointed)
              wrote = false
              operations = []
            } else if (o.kind === 'memory') {
              const name = `${E}/memories/m${o.m}`
              const scope = { user_id: `u${o.m % 2}` }
              if (o.op === 'create') await write('memory create', mb.createMemory({ parent: E, memoryId: `m${o.m}`, memory: { fact: `I like the ${o.word}`, scope } }))
              if (o.op === 'update') await write('memory update', mb.updateMemory({ memory: { name, fact: `I love the ${o.word}` }, updateMask: { paths: ['fact'] } }))
              if (o.op === 'delete') await write('memory delete', mb.deleteMemory({ name }))
              if (o.op === 'generate') await write('memory generate', mb.generateMemories({ parent: E, scope, directMemoriesSource: { directMemories: [{ fact: `I went to ${o.word}` }] } }))
              if (o.op === 'rollback') await write('memory rollback', mb.rollbackMemory({ name, targetRevisionId: '1' }))
              if (o.op === 'purge') await write('memory purge', mb.purgeMemories({ parent: E, filter: `scope.user_id = "u${o.m % 2}"`, force: true }))
              if (o.op === 'refused') await write('never', mb.createMemory({ parent: E, memory: { fact: '', scope } }))
            } else if (o.kind === 'session') {
              const name = `${E}/sessions/s${o.s}`
              if (o.op === 'create') await write('session create', mb.sessions.createSession({ parent: E, sessionId: `s${o.s}`, session: { userId: 'u0' } }))
              if (o.op === 'append') await write('session append', mb.sessions.appendEvent({ name, event: { author: 'user', invocationId: 'i', timestamp: '2026-01-01T00:00:00Z' } }))
              if (o.op === 'update') await write('session update', mb.sessions.updateSession({ session: { name, displayName: `session ${o.s}` }, updateMask: 'displayName' }))
              if (o.op === 'delete') await write('session delete', mb.sessions.deleteSession({ name }))
            } else if (o.kind === 'engine') {
              const name = 'projects/p/locations/l/reasoningEngines/2'
              if (o.op === 'create') await write('engine create', mb.createReasoningEngine(name))
              // A resource made by the RPC (generated id), renamed and deleted: the latest one.
              const resource = resources.at(-1)
              if (o.op === 'update' && resource === undefined) await write('engine resource create', mb.reasoningEngines.createReasoningEngine({ parent: 'projects/p/locations/l', reasoningEngine: { displayName: 'made' } }))
              if (o.op === 'update' && resource !== undefined) await write('engine update', mb.reasoningEngines.updateReasoningEngine({ reasoningEngine: { name: resource, displayName: 'renamed' }, updateMask: { paths: ['display_name'] } }))
              if (o.op === 'delete' && resource !== undefined) {
                resources.pop()
                await write('engine delete', mb.reasoningEngines.deleteReasoningEngine({ name: resource, force: true }))
              }
            } else if (o.kind === 'operation') {
              const name = operations.pop()
              if (name !== undefined) await write('operation delete', mb.deleteOperation({ name }))
            } else if (o.kind === 'read') {
              await mb.listMemories({ parent: E })
              await mb.retrieveMemories({ parent: E, scope: { user_id: 'u0' }, similaritySearchParams: { searchQuery: 'tea' } })
              await mb.sessions.listSessions({ parent: E })
            } else {
              await engines.semanticRetriever.createCorpus({ corpus: { displayName: 'other' } })
            }
          }
        } finally {
          data.close()
        }
      }),
      { numRuns },
    )
    // Every kind of write succeeded in some run (a write a missing change note would leave stale); the quick tier's few runs may miss one.
    if (numRuns >= 20) {
      for (const what of ['memory create', 'memory update', 'memory delete', 'memory generate', 'memory rollback', 'memory purge', 'session create', 'session append', 'session update', 'session delete', 'engine create', 'engine resource create', 'engine update', 'engine delete', 'operation delete']) {
        expect(done.get(what) ?? 0, what).toBeGreaterThan(0)
      }
    }
  })
})
